"""Multiple-choice evaluation (YokaiEval): reading answers, generation and log-likelihood modes.

Questions come from ``mcq.parquet``, the released YokaiEval rows or a released responses file
(:func:`read_questions`, messy regions cleaned by :func:`clean_region`).
:func:`evaluate_generate` asks a model (or takes recorded responses) and reads each answer;
:func:`evaluate_loglikelihood` scores every option as a continuation; :func:`summarize` gives
accuracy overall, by type and by region; :func:`write_mcq_results` writes the run.

:func:`~wikiorigin.evaluators.answers.parse_choice` (re-exported here) reads which option a
response names, following the judging rules of the YokaiEval paper; a bare number is a position
only when the prompt numbered the options. :func:`attach_responses` joins a released responses
file to the benchmark rows by the question's choices and stem (robust to a changed instruction).
"""

from __future__ import annotations

import hashlib
import os.path
import re
import unicodedata
from urllib.parse import unquote

from ..errors import WikioriginError
from ..files import read_rows
from ..schemas import MCQ_REGIONS, MCQ_TYPES
from .report import markdown_table
from .answers import PARSER_VERSION, match_key, option_labels, parse_choice, read_choice
from .freeform import levenshtein

__all__ = ["parse_choice", "read_choice", "PARSER_VERSION", "clean_region", "REGION_LETTERS", "read_questions",
           "question_prompt",
           "evaluate_generate", "evaluate_loglikelihood", "summarize", "INSTRUCTIONS", "ANSWER_CUES", "DELIMITERS",
           "attach_responses", "write_mcq_results"]

# -- questions ---------------------------------------------------------------------------

_PREFECTURES = {
    "北海道": "北海道", "東北": "青森 岩手 宮城 秋田 山形 福島",
    "関東": "茨城 栃木 群馬 埼玉 千葉 東京 神奈川",
    "中部": "新潟 富山 石川 福井 山梨 長野 岐阜 静岡 愛知",
    "近畿": "三重 滋賀 京都 大阪 兵庫 奈良 和歌山",
    "中国・四国": "鳥取 島根 岡山 広島 山口 徳島 香川 愛媛 高知",
    "九州": "福岡 佐賀 長崎 熊本 大分 宮崎 鹿児島", "沖縄": "沖縄",
}
_REGION_OF = {pref: region for region, names in _PREFECTURES.items() for pref in names.split()}
# Other names of the regions: the 地方 forms, the two halves of 中国・四国, old and sub-regional names.
_REGION_OF.update({"中国": "中国・四国", "四国": "中国・四国", "山陰": "中国・四国", "山陽": "中国・四国",
                   "関西": "近畿", "北陸": "中部", "東海": "中部", "甲信越": "中部", "信越": "中部",
                   "甲信": "中部", "琉球": "沖縄", "奄美": "九州", "蝦夷": "北海道", "全国": "日本全国",
                   "日本各地": "日本全国", "各地": "日本全国"})
# The letters the YokaiEval authors labelled regions with (PUBLISHED.md); G and H, 中国 and 四国,
# are one class here as in the paper's Table 6.
REGION_LETTERS = dict(zip("ABCDEFGHIJK", ["日本全国", "北海道", "東北", "関東", "中部", "近畿", "中国・四国",
                                           "中国・四国", "九州", "沖縄", "不明"]))


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
        close = [r for r in MCQ_REGIONS if levenshtein(part, r) == 1 and len(r) == len(part)]
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
    found = {_region_of(part) for part in (p.strip("[]「」()（） ") for p in re.split(r"[,、/・\s]+|と|及び|および", text)) if part}
    regions = found - {None, "不明"}
    if len(regions) > 1 or "複数の地域" in regions:
        return "複数の地域"
    return regions.pop() if regions else "不明"


def _check(value, kinds, what: str, where: str):
    if value is not None and not isinstance(value, kinds):
        raise WikioriginError(f"{where}: {what} is {type(value).__name__} {value!r}, expected "
                              + " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,))))
    return value


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
            raise WikioriginError(f"{where}: options {keys.index(key) + 1} and {i + 1} ({choices[i]!r}) "
                                  "are the same once normalized")
    return choices


def _answer_index(raw: dict, choices: list[str], where: str) -> int:
    index = raw.get("answer_index")
    if index is None:
        if raw.get("answer") not in choices:
            raise WikioriginError(f"{where}: the answer {raw.get('answer')!r} is not one of the choices")
        return choices.index(raw["answer"])
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(choices):
        raise WikioriginError(f"{where}: answer_index {index!r} is not one of the {len(choices)} options")
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
    return {"id": raw.get("id") or hashlib.sha1((question + "\x1f".join(choices)).encode()).hexdigest()[:16],
            "question": question, "choices": choices, "answer_index": _answer_index(raw, choices, where),
            "type": raw.get("type") or "", "region": clean_region(raw.get("region")),
            "title": title, "response": response, "judge": raw.get("judge"),
            "labels": option_labels(prompt, choices) if prompt else None}


def read_questions(path) -> list[dict]:
    """Questions from ``mcq.parquet``, the released YokaiEval rows (JSON or Parquet), a
    released responses file (``question`` nested, with ``response``, ``judge`` and the
    ``question_prompt`` the model saw), the released human answers (``user_answer``), or rows
    with a ``response``. A row that cannot be scored is a one-line error naming the file and
    row."""
    raws = read_rows(path)
    if not raws:
        raise WikioriginError(f"{path}: no rows")
    return [_row(r, f"{path}: row {i}") for i, r in enumerate(raws)]


INSTRUCTIONS = {
    "ja": "上の選択肢から正しいものを一つ選び、その選択肢の言葉だけで答えてください。",
    "en": "Pick the one correct option above and reply with that option's text only.",
}
ANSWER_CUES = {"ja": "\n回答：", "en": "\nAnswer:"}
# What goes between the answer cue and an option in log-likelihood mode (lm-evaluation-harness's
# target_delimiter): a space where words are spaced, none in Japanese.
DELIMITERS = {"ja": "", "en": " "}


def question_prompt(row: dict, instruction: str = "") -> str:
    """The question and its options as ``- option`` lines (the layout of YokaiEval's released
    prompts), with an optional instruction line after them."""
    prompt = row["question"] + "".join(f"\n- {c}" for c in row["choices"])
    return f"{prompt}\n\n{instruction}" if instruction else prompt


# -- evaluation --------------------------------------------------------------------------

JUDGE_PROMPT = (
    "task: read-answer\n"
    "A model answered a multiple-choice question. Decide which option its response picks. "
    "Reply with JSON only: {\"verdict\": true} when it picks exactly the correct option, "
    "{\"verdict\": false} when it picks exactly one other option, {\"verdict\": null} when it "
    "picks none or several."
)
_VERDICT = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"type": ["boolean", "null"]}}}


def _judge_unread(rows: list[dict], items: list[dict], judge) -> None:
    from ..llm import ChatRequest

    todo = [i for i, item in enumerate(items) if item["pred"] is None and item["response"]]
    requests = [ChatRequest([
        {"role": "system", "content": JUDGE_PROMPT},
        {"role": "user", "content": f"Question: {rows[i]['question']}\nOptions: "
                                    + " / ".join(rows[i]["choices"])
                                    + f"\nCorrect option: {rows[i]['choices'][rows[i]['answer_index']]}"
                                    + f"\nResponse: {items[i]['response']}"}],
        {"temperature": 0}, "mcq-read-answer", _VERDICT) for i in todo]
    for i, result in zip(todo, judge.run(requests) if requests else []):
        if result.error is None:
            items[i]["judge_verdict"] = result.data["verdict"]
            items[i]["correct"] = result.data["verdict"] is True


def evaluate_generate(rows: list[dict], model=None, *, instruction: str = INSTRUCTIONS["ja"],
                      judge=None, recorded: str = "recorded", labels: str | None = None,
                      **sampling) -> list[dict]:
    """Items of generation mode: each question asked (``model.generate``; the paper's
    sampling is temperature 0.1 and 128 new tokens), the response read by
    :func:`~wikiorigin.evaluators.answers.read_choice` (``read_as`` says how), and, with a
    ``judge`` (an :class:`~wikiorigin.llm.LLMClient`), the responses it could not read given
    to the judge. Without a model, rows carry recorded ``response`` s (None: the recording
    has no response to that question, counted as unanswered). ``labels`` are the option labels
    the prompt showed (None: unlabelled bullets, as :func:`question_prompt` writes them; a
    recorded row's own prompt decides for it)."""
    if model is None:
        if all(r.get("response") is None for r in rows):
            raise WikioriginError(f"{recorded}: no model given and none of the {len(rows)} questions carries a "
                                  "recorded response (give --model, or --responses FILE)")
        responses, name = [r.get("response") for r in rows], recorded
    else:
        sampling = {"temperature": 0.1, "max_new_tokens": 128, **sampling}
        responses = model.generate([question_prompt(r, instruction) for r in rows], **sampling)
        name = model.name
    items = []
    for row, response in zip(rows, responses):
        reading = read_choice(response, row["choices"], question=row["question"],
                              labels=row.get("labels") if model is None else labels)
        how = ("missing" if model is None else "failed") if response is None else reading.how
        items.append({**_item(row, name, "generate"), "response": response, "pred": reading.index,
                      "read_as": how, "correct": reading.index == row["answer_index"],
                      "judge_verdict": None, "reference_judge": row.get("judge")})
    if judge is not None:
        _judge_unread(rows, items, judge)
    return items


def _item(row: dict, model: str, mode: str) -> dict:
    return {"id": row["id"], "model": model, "mode": mode, "title": row["title"], "type": row["type"],
            "region": row["region"], "question": row["question"], "answer_index": row["answer_index"]}


def evaluate_loglikelihood(rows: list[dict], model, *, language: str = "ja",
                           batch_size: int | None = None) -> list[dict]:
    """Items of log-likelihood mode, as lm-evaluation-harness scores a ``multiple_choice``
    task: every option is scored as the continuation of the question (with its options and
    the answer cue of ``language``) after a delimiter (a space in English, none in Japanese,
    lm-eval's ``target_delimiter``). ``pred`` is the option with the highest log-likelihood
    (lm-eval's ``acc``), ``pred_norm`` the highest per character of the option without the
    delimiter (lm-eval's ``acc_norm``: ``len(choice)``), ``pred_bytes`` the highest per UTF-8
    byte of the option (lm-eval's ``acc_bytes``); ties go to the first option, as
    ``numpy.argmax``. Each item has ``loglikelihoods``, the three predictions and
    ``correct``, ``correct_norm``, ``correct_bytes``."""
    sep = DELIMITERS[language]
    requests = [(question_prompt(r) + ANSWER_CUES[language], sep + c) for r in rows for c in r["choices"]]
    scores = model.loglikelihood(requests, batch_size=batch_size)
    items, k = [], 0
    for row in rows:
        n = len(row["choices"])
        ll = [s for s, _ in scores[k:k + n]]
        k += n
        chars = [x / max(1, len(c)) for x, c in zip(ll, row["choices"])]
        octets = [x / max(1, len(c.encode("utf-8"))) for x, c in zip(ll, row["choices"])]
        pick = [max(range(n), key=v.__getitem__) for v in (ll, chars, octets)]
        items.append({**_item(row, model.name, "loglikelihood"), "loglikelihoods": ll, "pred": pick[0],
                      "pred_norm": pick[1], "pred_bytes": pick[2], "correct": pick[0] == row["answer_index"],
                      "correct_norm": pick[1] == row["answer_index"],
                      "correct_bytes": pick[2] == row["answer_index"]})
    return items


def _rate(items: list[dict], key: str) -> float | None:
    return sum(bool(i[key]) for i in items) / len(items) if items else None


# Summary names of the log-likelihood verdicts: lm-evaluation-harness's acc and acc_norm (log-
# likelihood per character of the option), and ours per UTF-8 byte.
_LOGLIKELIHOOD_METRICS = {"correct": "acc", "correct_norm": "acc_norm", "correct_bytes": "acc_norm_bytes"}


def summarize(items: list[dict]) -> dict:
    """Accuracy overall, by ``type`` and by ``region``. Generation mode: ``accuracy`` and how
    many responses the parser read (``coverage``), the accuracy over those, how they were read,
    and, when the rows carried reference verdicts (the paper's GPT-4o judge), the accuracy by
    those verdicts and where ours differ (:func:`reference_disagreements`). Log-likelihood
    mode: ``acc``, ``acc_norm``, ``acc_norm_bytes`` (and ``accuracy`` = ``acc``)."""
    if not items:
        raise WikioriginError("no items to summarize")
    mode = items[0]["mode"]
    if mode == "loglikelihood":
        names = {k: v for k, v in _LOGLIKELIHOOD_METRICS.items() if k in items[0]}
    else:
        names = {"correct": "accuracy"}

    def block(part):
        return {"n": len(part), **{name: _rate(part, key) for key, name in names.items()}}

    summary = {"model": items[0]["model"], "mode": mode, **block(items)}
    if mode == "loglikelihood":
        summary["accuracy"] = summary["acc"]
    else:
        read = [i for i in items if i["pred"] is not None]
        ways: dict[str, int] = {}
        for item in items:
            ways[item["read_as"]] = ways.get(item["read_as"], 0) + 1
        summary.update(coverage=len(read) / len(items), unread=len(items) - len(read),
                       failed=ways.get("failed", 0), missing=ways.get("missing", 0),
                       accuracy_read=_rate(read, "correct"), read_as=dict(sorted(ways.items())),
                       judged=sum(i["judge_verdict"] is not None for i in items),
                       parser_version=PARSER_VERSION)
        judged = [i for i in items if i.get("reference_judge") is not None]
        if judged:  # where the reference judge (the paper's GPT-4o) gave a verdict
            summary["accuracy_by_reference"] = sum(i["reference_judge"] is True for i in items) / len(items)
            summary["agreement_with_reference_judge"] = _rate(
                [{"ok": bool(i["correct"]) == i["reference_judge"]} for i in judged], "ok")
            summary["reference_disagreements"] = reference_disagreements(items)
    for field, label in (("type", "by_type"), ("region", "by_region")):
        groups: dict[str, list] = {}
        for item in items:
            groups.setdefault(item[field] or "(none)", []).append(item)
        summary[label] = {k: block(v) for k, v in sorted(groups.items())}
    return summary


def _disagreement_kind(item: dict) -> str | None:
    """Why our verdict and the reference verdict differ on an item (None if they agree on
    correct / not correct)."""
    ours, theirs = bool(item["correct"]), item["reference_judge"]
    if ours == (theirs is True):
        return None
    verdict = {True: "correct", False: "wrong", None: "no answer"}[theirs]
    if ours and item["read_as"] in ("exact", "line"):
        return f"the response is the correct option; the reference says {verdict}"
    if ours:
        return f"we read the correct option ({item['read_as']}); the reference says {verdict}"
    if item["read_as"] in ("empty", "missing"):
        return f"the response is {item['read_as']}; the reference says correct"
    if item["pred"] is None:
        return f"we read no answer ({item['read_as']}); the reference says correct"
    return f"we read a wrong option ({item['read_as']}); the reference says correct"


def reference_disagreements(items: list[dict], examples: int = 3) -> list[dict]:
    """Items where our correct / not-correct verdict differs from the reference verdict,
    grouped by kind (most frequent first): ``kind``, ``n``, and a few ``examples``."""
    groups: dict[str, list] = {}
    for item in items:
        kind = _disagreement_kind(item)
        if kind is not None:
            groups.setdefault(kind, []).append(item)
    return [{"kind": kind, "n": len(group),
             "examples": [{"id": i["id"], "response": (i["response"] or "")[:160], "pred": i["pred"],
                           "answer_index": i["answer_index"], "reference": i["reference_judge"]}
                          for i in group[:examples]]}
            for kind, group in sorted(groups.items(), key=lambda kv: -len(kv[1]))]


def _generation_lines(summary: dict) -> list[str]:
    n = summary["n"]
    lines = ["", f"The parser read {n - summary['unread']} of {n} responses (coverage {summary['coverage']:.3f}"
                 + (f"; {summary['failed']} requests failed after retries" if summary["failed"] else "")
                 + (f"; {summary['missing']} questions have no recorded response" if summary["missing"] else "")
                 + "); unread responses count as wrong"
                 + (f", {summary['judged']} of them were given to the judge" if summary["judged"] else "")
                 + (f". Accuracy over the responses read: {summary['accuracy_read']:.3f}."
                    if summary["accuracy_read"] is not None else "."),
             "", "How the responses were read: "
                 + ", ".join(f"{k} {v}" for k, v in summary["read_as"].items()) + "."]
    if "agreement_with_reference_judge" in summary:
        lines += ["", f"Accuracy by the file's own verdicts (the reference judge): "
                      f"{summary['accuracy_by_reference']:.3f}; ours: {summary['accuracy']:.3f}. Agreement "
                      f"where the reference gave a verdict: {summary['agreement_with_reference_judge']:.3f}."]
        groups = summary["reference_disagreements"]
        if groups:
            lines += ["", "## Where we differ from the reference verdicts", "",
                      markdown_table(["kind", "rows", "example response"],
                                     [[g["kind"], g["n"], _one_line(g["examples"][0]["response"])] for g in groups])]
    return lines


def _shown(value):
    return float("nan") if value is None else value


def _one_line(text: str) -> str:
    return (text.replace("\n", " ⏎ ").replace("|", "\\|"))[:80] or "(empty)"


def write_mcq_results(out, items: list[dict], summary: dict, meta: dict | None = None,
                      settings: dict | None = None):
    """The run's directory: items, summary, ``report.md`` with the tables by type and region
    (and, for recorded answers with reference verdicts, where ours differ), and bar plots of
    accuracy by type and by region."""
    from .report import bar_plot, write_results

    metrics = [k for k in ("accuracy", "acc", "acc_norm", "acc_norm_bytes") if k in summary]
    if summary["mode"] == "loglikelihood":
        metrics.remove("accuracy")
    lines = [f"# Multiple choice: {summary['model']} ({summary['mode']})", "",
             markdown_table(["questions", *metrics], [[summary["n"], *[_shown(summary[m]) for m in metrics]]])]
    if summary["mode"] == "generate":
        lines += _generation_lines(summary)
    plots = []
    for label, title in (("by_type", "type"), ("by_region", "region")):
        groups = summary[label]
        lines += ["", f"## By {title}", "", markdown_table(
            [title, "n", *metrics], [[k, v["n"], *[_shown(v[m]) for m in metrics]] for k, v in groups.items()])]
        plots.append((f"accuracy_{label}.png", lambda path, g=groups, t=title, m=metrics[0]: bar_plot(
            path, [PLOT_LABELS.get(k, k) for k in g], [_shown(v[m]) for v in g.values()],
            f"{summary['model']}: {m} by {t}", counts=[v["n"] for v in g.values()])))
    lines += ["", "Plots: `accuracy_by_type.png`, `accuracy_by_region.png`."]
    extra = {"settings": settings} if settings is not None else {}
    return write_results(out, items, summary, "\n".join(lines), plots=plots, meta=meta, **extra)


PLOT_LABELS = dict(zip(MCQ_TYPES, ["actions", "appearance", "region of the lore", "origin and habits",
                                   "lore today", "sources"]))
PLOT_LABELS.update(zip(MCQ_REGIONS, ["Hokkaido", "Tohoku", "Kanto", "Chubu", "Kinki", "Chugoku-Shikoku",
                                     "Kyushu", "Okinawa", "nationwide", "several regions", "unknown"]))


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


def attach_responses(rows: list[dict], recorded: list[dict], *, source: str = "the recorded responses",
                     target: str = "the questions") -> tuple[list[dict], dict]:
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
    taken: dict[int, dict] = {}
    unmatched, duplicates = [], 0
    for rec in recorded:
        candidates = by_choices.get(tuple(sorted(rec["choices"])), [])
        stem = _stem(rec["question"])
        shared = {n: len(os.path.commonprefix([stem, _stem(rows[n]["question"])])) for n in candidates}
        best = max(shared.values(), default=0)
        top = [n for n, v in shared.items() if v == best and 2 * v >= min(len(stem), len(_stem(rows[n]["question"])))]
        if len(top) != 1:
            unmatched.append(rec["question"])
        elif top[0] in taken:
            duplicates += 1
        else:
            taken[top[0]] = rec
    if not taken:
        raise WikioriginError(f"{source}: none of its {len(recorded)} responses matches one of the {len(rows)} "
                              f"questions of {target} (by choices and question stem)")
    out = []
    for n, row in enumerate(rows):
        rec = taken.get(n)
        if rec is None:
            out.append({**row, "response": None, "judge": None})
            continue
        answer = row["choices"][row["answer_index"]]
        out.append({**row, "choices": rec["choices"], "answer_index": rec["choices"].index(answer),
                    "response": rec["response"], "judge": rec["judge"], "labels": rec.get("labels")})
    return out, {"matched": len(taken), "missing": len(rows) - len(taken), "unmatched": len(unmatched),
                 "unmatched_questions": unmatched[:5], "duplicates": duplicates}
