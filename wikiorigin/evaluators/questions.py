"""Multiple-choice questions as files hold them: ``mcq.parquet``, the released YokaiEval rows,
a released responses file (the question nested, with ``response``, ``judge`` and the prompt the
model saw), the released human answers (``user_answer``) or rows with a ``response``.

:func:`read_questions` reads any of them into plain rows (a row that cannot be scored is a
one-line error naming the file and row, and so is one whose ``answer`` and ``answer_index``
name different options: scoring against either would be a guess); :func:`clean_region`
turns a released row's messy region label into one of the 11 classes (built rows, which
carry their ``language``, keep the region their labels file named); :func:`attach_responses`
joins recorded responses to the benchmark's rows by their choices and the question's stem
(robust to a changed instruction).
"""

from __future__ import annotations

import hashlib
import os.path
import re
import unicodedata
from urllib.parse import unquote, urlparse

from ..errors import UnknownWikiError, WikioriginError
from ..files import read_rows
from ..languages import lookup
from ..schemas import MCQ_REGIONS
from .answers import match_key, option_labels

__all__ = ["read_questions", "clean_region", "REGION_LETTERS", "attach_responses", "url_language"]

_PREFECTURES = {
    "北海道": "北海道",
    "東北": "青森 岩手 宮城 秋田 山形 福島",
    "関東": "茨城 栃木 群馬 埼玉 千葉 東京 神奈川",
    "中部": "新潟 富山 石川 福井 山梨 長野 岐阜 静岡 愛知",
    "近畿": "三重 滋賀 京都 大阪 兵庫 奈良 和歌山",
    "中国・四国": "鳥取 島根 岡山 広島 山口 徳島 香川 愛媛 高知",
    "九州": "福岡 佐賀 長崎 熊本 大分 宮崎 鹿児島",
    "沖縄": "沖縄",
}
_REGION_OF = {pref: region for region, names in _PREFECTURES.items() for pref in names.split()}
# Other names of the regions: the 地方 forms, the two halves of 中国・四国, old and sub-regional names.
_REGION_OF.update(
    {
        "中国": "中国・四国",
        "四国": "中国・四国",
        "山陰": "中国・四国",
        "山陽": "中国・四国",
        "関西": "近畿",
        "北陸": "中部",
        "東海": "中部",
        "甲信越": "中部",
        "信越": "中部",
        "甲信": "中部",
        "琉球": "沖縄",
        "奄美": "九州",
        "蝦夷": "北海道",
        "全国": "日本全国",
        "日本各地": "日本全国",
        "各地": "日本全国",
    }
)
# The letters the YokaiEval authors labelled regions with (PUBLISHED.md); G and H, 中国 and 四国,
# are one class here as in the paper's Table 6.
REGION_LETTERS = dict(
    zip(
        "ABCDEFGHIJK",
        ["日本全国", "北海道", "東北", "関東", "中部", "近畿", "中国・四国", "中国・四国", "九州", "沖縄", "不明"],
    )
)
"""The letters YokaiEval's authors labelled regions with -> our region class (G and H, 中国
and 四国, are one class here as in the paper's Table 6)."""


def _region_of(part: str) -> str | None:
    """The class of one region name, prefecture or letter, or None."""
    if part in MCQ_REGIONS:
        return part
    if len(part) == 1 and part.upper() in REGION_LETTERS:
        return REGION_LETTERS[part.upper()]
    for name in (part, part.removesuffix("地方"), part[:-1] if part[-1:] in "都道府県" else part):
        if name in MCQ_REGIONS:
            return name
        if name in _REGION_OF:
            return _REGION_OF[name]
    if len(part) >= 2:  # a typo one edit away (中ぶ)
        from rapidfuzz.distance import Levenshtein

        close = [r for r in MCQ_REGIONS if Levenshtein.distance(part, r) == 1 and len(r) == len(part)]
        return close[0] if len(close) == 1 else None
    return None


def clean_region(value) -> str:
    """One of :data:`~wikiorigin.schemas.MCQ_REGIONS` for a released row's ``region``, which
    can be messy: ``[[不明]]``, the labellers' letters (``[[C, D]]``: A 日本全国 … K 不明, see
    :data:`REGION_LETTERS`), prefectures (``[[新潟県、京都府、愛媛県]]``), old names (``琉球``),
    ``地方`` forms or a typo one edit away (``中ぶ``). A label naming several regions (or
    prefectures of several) is 複数の地域; what cannot be read is 不明."""
    text = unicodedata.normalize("NFKC", str(value or "")).strip().strip("[]").strip()
    whole = _region_of(text) if text else None
    if whole is not None:
        return whole
    found = {
        _region_of(part)
        for part in (p.strip("[]「」()（） ") for p in re.split(r"[,、/・\s]+|と|及び|および", text))
        if part
    }
    regions = found - {None, "不明"}
    if len(regions) > 1 or "複数の地域" in regions:
        return "複数の地域"
    return regions.pop() if regions else "不明"


def _region(raw: dict) -> str:
    """A row's region: the released YokaiEval rows' (no ``language``) cleaned into the 11
    classes; a built row's (``mcq.parquet``, any language) kept as its labels file named it."""
    if raw.get("language") is None:
        return clean_region(raw.get("region"))
    return raw.get("region") or ""


def url_language(url: str | None) -> str | None:
    """The language of the Wikipedia an article's ``url`` is on (``https://ja.wikipedia.org/wiki/...``
    -> ``ja``: how the released YokaiEval rows, which have no ``language``, say theirs); None
    for any other url."""
    host = urlparse(url or "").hostname or ""
    if not host.endswith(".wikipedia.org"):
        return None
    try:
        return lookup(host.split(".", 1)[0]).language
    except UnknownWikiError:
        return None


def _check(value, kind: type, what: str, where: str) -> None:
    """A field that is absent (None) or of ``kind``; else a one-line error naming the row."""
    if value is not None and not isinstance(value, kind):
        raise WikioriginError(f"{where}: {what} is {type(value).__name__} {value!r}, expected {kind.__name__}")


def _choices(raw: dict, where: str) -> list[str]:
    """The options of a row: two or more strings that stay apart once normalized."""
    choices = raw.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        raise WikioriginError(f"{where}: no question or fewer than two choices")
    choices = [str(c) for c in choices]
    keys = [match_key(c) for c in choices]
    for i, key in enumerate(keys):
        if not key:
            raise WikioriginError(f"{where}: option {i + 1} {choices[i]!r} is empty once spaces and punctuation go")
        if keys.index(key) != i:
            raise WikioriginError(
                f"{where}: options {keys.index(key) + 1} and {i + 1} ({choices[i]!r}) are the same once normalized"
            )
    return choices


def _answer_index(raw: dict, choices: list[str], where: str) -> int:
    index = raw.get("answer_index")
    if index is None:
        if raw.get("answer") not in choices:
            raise WikioriginError(f"{where}: the answer {raw.get('answer')!r} is not one of the choices")
        return choices.index(raw["answer"])
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(choices):
        raise WikioriginError(f"{where}: answer_index {index!r} is not one of the {len(choices)} options")
    answer = raw.get("answer")
    if answer not in (None, "") and match_key(str(answer)) != match_key(choices[index]):
        said = next(
            (f"option {i + 1}" for i, c in enumerate(choices) if match_key(c) == match_key(str(answer))),
            "none of the options",
        )
        raise WikioriginError(
            f"{where}: answer {answer!r} ({said}) disagrees with answer_index {index} "
            f"(option {index + 1}, {choices[index]!r}): which is right cannot be told; mend the row"
        )
    return index


def _row(raw: dict, where: str) -> dict:
    if not isinstance(raw, dict):
        raise WikioriginError(f"{where}: expected an object with question and choices, got {type(raw).__name__}")
    response, prompt = None, None
    if isinstance(raw.get("question"), dict):  # a released responses file: the question is nested
        response, prompt = raw.get("response"), raw.get("question_prompt")
        raw = {**raw["question"], "judge": raw.get("judge")}
    elif "user_answer" in raw:  # the released human answers: the person's choice
        response = raw.get("user_answer") or ""
    else:
        response = raw.get("response")  # rows with a recorded response of any model
    question = raw.get("question")
    if not isinstance(question, str) or not question:
        raise WikioriginError(f"{where}: no question or fewer than two choices")
    choices = _choices(raw, where)
    _check(response, str, "the response", where)
    _check(prompt, str, "question_prompt", where)
    _check(raw.get("judge"), bool, "the verdict (judge)", where)
    url = raw.get("url") or ""
    title = raw.get("title") or (unquote(url.rsplit("/", 1)[-1]) if url else None)
    return {
        "id": raw.get("id") or hashlib.sha1((question + "\x1f".join(choices)).encode()).hexdigest()[:16],
        "question": question,
        "choices": choices,
        "answer_index": _answer_index(raw, choices, where),
        "type": raw.get("type") or "",
        "region": _region(raw),
        "language": raw.get("language") or url_language(url),
        "title": title,
        "response": response,
        "judge": raw.get("judge"),
        "labels": option_labels(prompt, choices) if prompt else None,
    }


def read_questions(path) -> list[dict]:
    """Questions from ``mcq.parquet``, the released YokaiEval rows (JSON or Parquet), a
    released responses file (``question`` nested, with ``response``, ``judge`` and the
    ``question_prompt`` the model saw), the released human answers (``user_answer``), or rows
    with a ``response``. Each row's ``language`` is its own, else that of the Wikipedia its
    ``url`` is on (:func:`url_language`: the released rows' Japanese), else None. A row that
    cannot be scored is a one-line error naming the file and row."""
    raws = read_rows(path)
    if not raws:
        raise WikioriginError(f"{path}: no rows")
    return [_row(r, f"{path}: row {i}") for i, r in enumerate(raws)]


def _stem(question: str) -> str:
    """A question without its closing instruction (``以下の4つから回答を1つ選び…``): the text
    up to the last clause break before the instruction, as a match key."""
    key = unicodedata.normalize("NFKC", question)
    for mark in ("以下の", "次の", "Choose", "Select", "Pick"):
        at = key.rfind(mark)
        if at > 0:
            key = key[:at]
            break
    return "".join(c for c in key if c.isalnum())


def attach_responses(
    rows: list[dict], recorded: list[dict], *, source: str = "the recorded responses", target: str = "the questions"
) -> tuple[list[dict], dict]:
    """Recorded responses (a released responses file or human answers, read by
    :func:`read_questions`) joined to the question rows, so they carry type and region.

    A response belongs to the question with the same choices (in any order) and the same stem
    (the question without its instruction line, which released files word differently);
    among questions with the same choices, the one whose stem shares the longest start.
    Questions with no response are kept with ``response`` None (they count as unanswered,
    as in the paper's scores over all rows). Returns the rows and a record of the join:
    ``matched``, ``missing`` (questions without a response), ``unmatched`` (responses that
    match no question, with the first few questions; ``duplicates``, responses to a question
    already answered, which are not used). ``source`` and ``target`` name the two files in
    errors."""
    by_choices: dict[tuple, list[int]] = {}
    for n, row in enumerate(rows):
        by_choices.setdefault(tuple(sorted(row["choices"])), []).append(n)
    stems = [_stem(row["question"]) for row in rows]
    taken: dict[int, dict] = {}
    unmatched, duplicates = [], 0
    for rec in recorded:
        candidates = by_choices.get(tuple(sorted(rec["choices"])), [])
        stem = _stem(rec["question"])
        shared = {n: len(os.path.commonprefix([stem, stems[n]])) for n in candidates}
        best = max(shared.values(), default=0)
        top = [n for n, v in shared.items() if v == best and 2 * v >= min(len(stem), len(stems[n]))]
        if len(top) != 1:
            unmatched.append(rec["question"])
        elif top[0] in taken:
            duplicates += 1
        else:
            taken[top[0]] = rec
    if not taken:
        raise WikioriginError(
            f"{source}: none of its {len(recorded)} responses matches one of the {len(rows)} "
            f"questions of {target} (by choices and question stem)"
        )
    out = []
    for n, row in enumerate(rows):
        rec = taken.get(n)
        if rec is None:
            out.append({**row, "response": None, "judge": None})
            continue
        answer = row["choices"][row["answer_index"]]
        out.append(
            {
                **row,
                "choices": rec["choices"],
                "answer_index": rec["choices"].index(answer),
                "response": rec["response"],
                "judge": rec["judge"],
                "labels": rec.get("labels"),
            }
        )
    return out, {
        "matched": len(taken),
        "missing": len(rows) - len(taken),
        "unmatched": len(unmatched),
        "unmatched_questions": unmatched[:5],
        "duplicates": duplicates,
    }
