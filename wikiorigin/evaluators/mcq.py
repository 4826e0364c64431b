"""Multiple-choice evaluation (YokaiEval): reading answers, generation and log-likelihood modes.

Questions come from ``mcq.parquet``, the released YokaiEval rows or a released responses file
(:func:`read_questions`, messy regions cleaned by :func:`clean_region`).
:func:`evaluate_generate` asks a model (or takes recorded responses) and reads each answer;
:func:`evaluate_loglikelihood` scores every option as a continuation; :func:`summarize` gives
accuracy overall, by type and by region; :func:`write_mcq_results` writes the run.

:func:`parse_choice` returns the index of the option a response answers, or ``None`` when it
answers none or several. It copes with what local models write: chat-role prefixes and end
tokens, an echoed question and option list, ``回答：``/``答え:``/``Answer:`` prefixes, bullets,
numbers and letters (``2``, ``B)``, ``(b)``), brackets and quotes (「」『』""), full-width and
half-width forms (NFKC), and hedged answers that still pick one option.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import unquote

from ..errors import WikioriginError
from ..files import read_rows
from ..schemas import MCQ_REGIONS, MCQ_TYPES
from .freeform import levenshtein

__all__ = ["parse_choice", "normalize", "clean_region", "read_questions", "question_prompt",
           "evaluate_generate", "evaluate_loglikelihood", "summarize", "INSTRUCTIONS",
           "attach_responses", "write_mcq_results"]

_SPECIAL = re.compile(r"<\|[^|>]*\|>|<[A-Za-z]+\|[^>]*>|</?s>|\[/?INST\]|<unk>|<pad>")
_ROLE = re.compile(r"^\s*(?:ASSISTANT|assistant|Assistant|システム|アシスタント|AI|### ?(?:応答|Response|回答))\s*[:：]?\s*", re.M)
_PREFIX = re.compile(r"^\s*(?:正解|回答|答え|解答|answer|the answer|correct answer|選択肢)\s*(?:は|:|：|is)?\s*[:：]?\s*", re.I)
_BULLET = re.compile(r"^\s*(?:[-・*•●]|\(?[0-9a-dA-D１-４]\s*[).．:：、]|[0-9１-４]\s*\.)\s*")
_QUOTES = "「」『』\"'“”‘’【】()（）[]《》〈〉"
_TRAIL = re.compile(r"[\s。．.、,!！?？]+$")
_LETTERS = {c: i for i, c in enumerate("abcd")}


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def _clean(line: str) -> str:
    line = _BULLET.sub("", line)
    line = _PREFIX.sub("", line)
    line = line.strip().strip(_QUOTES).strip()
    return _TRAIL.sub("", line).strip(_QUOTES).strip()


def _mentioned(text: str, choices: list[str]) -> list[int]:
    """Options that occur in ``text``, not counting one that only occurs inside a longer one."""
    found = [i for i, c in enumerate(choices) if c and c in text]
    return [i for i in found
            if not any(j != i and choices[i] in choices[j] and choices[j] in text for j in found)]


def parse_choice(response: str, choices: list[str]) -> int | None:
    """The index of the option ``response`` answers; None for no answer or several."""
    if not response or not choices:
        return None
    options = [normalize(c) for c in choices]
    text = _ROLE.sub("", _SPECIAL.sub("", normalize(response))).strip()
    lines = [l for l in (x.strip() for x in text.splitlines()) if l]
    # an echoed option list (bulleted lines that are the options): drop it
    echo = [l for l in lines if _BULLET.match(l) and _clean(l) in options]
    if len(echo) >= 3:
        lines = [l for l in lines if l not in echo] or lines
    cleaned = [_clean(l) for l in lines]
    for raw, line in zip(lines, cleaned):  # a line that is an option, or a letter or number
        if line in options:
            return options.index(line)
        key = re.sub(r"[\s()（）.．:：、\[\]]", "", _PREFIX.sub("", raw)).lower()
        if key in _LETTERS:
            return _LETTERS[key]
        if key in ("1", "2", "3", "4"):
            return int(key) - 1
    for line in cleaned:  # a shortened option: the line lies inside exactly one option
        inside = [i for i, o in enumerate(options) if len(line) >= 2 and line in o]
        if len(inside) == 1:
            return inside[0]
    body = "\n".join(lines)
    for pattern in (r"(?:正解|答え|回答|解答)(?:は|:|：)\s*[「『\"]?(.+?)[」』\"]?(?:です|だ|。|$)",
                    r"(?:answer is|answer:)\s*\"?(.+?)\"?(?:\.|$)"):
        for match in re.finditer(pattern, body, re.I | re.M):
            hit = _mentioned(_clean(match.group(1)), options)
            if len(hit) == 1:
                return hit[0]
    hits = _mentioned(body, options)
    if len(hits) == 1:
        return hits[0]
    first = _mentioned(lines[0], options) if lines else []
    return first[0] if len(first) == 1 else None


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


def clean_region(value) -> str:
    """One of :data:`~wikiorigin.schemas.MCQ_REGIONS` for a released row's ``region``, which
    can be messy: ``[[不明]]``, letters (``[[C, D]]``, A-K in the order of MCQ_REGIONS),
    prefectures (``[[新潟県、京都府、愛媛県]]``) or a typo one edit away (``中ぶ``). Several
    regions give 複数の地域; what cannot be read gives 不明."""
    text = unicodedata.normalize("NFKC", str(value or "")).strip().strip("[]").strip()
    if text in MCQ_REGIONS:
        return text
    found = []
    for part in re.split(r"[,、/\s]+", text):
        part = part.strip("[]「」 ")
        if part in MCQ_REGIONS:
            found.append(part)
        elif len(part) == 1 and "A" <= part.upper() <= chr(ord("A") + len(MCQ_REGIONS) - 1):
            found.append(MCQ_REGIONS[ord(part.upper()) - ord("A")])
        elif part in _REGION_OF or (part[-1:] in "都道府県" and part[:-1] in _REGION_OF):
            found.append(_REGION_OF.get(part) or _REGION_OF[part[:-1]])
        elif len(part) >= 2:
            close = [r for r in MCQ_REGIONS if levenshtein(part, r) == 1 and len(r) == len(part)]
            found += close[:1] if len(close) == 1 else []
    regions = set(found) - {"不明"}
    if len(regions) > 1 or "複数の地域" in regions:
        return "複数の地域"
    return regions.pop() if regions else "不明"


def _row(raw: dict, where: str) -> dict:
    response = None
    if isinstance(raw.get("question"), dict):  # a released responses file: the question is nested
        response = raw.get("response")
        raw = {**raw["question"], "judge": raw.get("judge")}
    choices = [str(c) for c in (raw.get("choices") or [])]
    question = raw.get("question")
    if not question or len(choices) < 2:
        raise WikioriginError(f"{where}: no question or fewer than two choices")
    index = raw.get("answer_index")
    if index is None:
        if raw.get("answer") not in choices:
            raise WikioriginError(f"{where}: the answer {raw.get('answer')!r} is not one of the choices")
        index = choices.index(raw["answer"])
    url = raw.get("url") or ""
    title = raw.get("title") or (unquote(url.rsplit("/", 1)[-1]) if url else None)
    return {"id": raw.get("id") or hashlib.sha1((question + "\x1f".join(choices)).encode()).hexdigest()[:16],
            "question": question, "choices": choices, "answer_index": int(index),
            "type": raw.get("type") or "", "region": clean_region(raw.get("region")),
            "title": title, "response": response, "judge": raw.get("judge")}


def read_questions(path) -> list[dict]:
    """Questions from ``mcq.parquet``, the released YokaiEval rows (JSON or Parquet) or a
    released responses file (``question`` nested, with ``response`` and ``judge``)."""
    raws = read_rows(path)
    return [_row(r, f"{path}: row {i}") for i, r in enumerate(raws)]


INSTRUCTIONS = {
    "ja": "上の選択肢から正しいものを一つ選び、その選択肢の言葉だけで答えてください。",
    "en": "Pick the one correct option above and reply with that option's text only.",
}
ANSWER_CUES = {"ja": "\n回答：", "en": "\nAnswer:"}


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
                      judge=None, recorded: str = "recorded", **sampling) -> list[dict]:
    """Items of generation mode: each question asked (``model.generate``; the paper's
    sampling is temperature 0.1 and 128 new tokens), the response read by :func:`parse_choice`,
    and, with a ``judge`` (an :class:`~wikiorigin.llm.LLMClient`), the responses it could not
    read given to the judge. Without a model, rows must carry recorded ``response`` s."""
    if model is None:
        if any(r["response"] is None for r in rows):
            raise WikioriginError("no model given and the questions carry no recorded responses")
        responses, name = [r["response"] for r in rows], recorded
    else:
        sampling = {"temperature": 0.1, "max_new_tokens": 128, **sampling}
        responses = model.generate([question_prompt(r, instruction) for r in rows], **sampling)
        name = model.name
    items = []
    for row, response in zip(rows, responses):
        pred = parse_choice(response or "", row["choices"])
        items.append({**_item(row, name, "generate"), "response": response, "pred": pred,
                      "correct": pred == row["answer_index"], "judge_verdict": None,
                      "reference_judge": row.get("judge")})
    if judge is not None:
        _judge_unread(rows, items, judge)
    return items


def _item(row: dict, model: str, mode: str) -> dict:
    return {"id": row["id"], "model": model, "mode": mode, "title": row["title"], "type": row["type"],
            "region": row["region"], "question": row["question"], "answer_index": row["answer_index"]}


def evaluate_loglikelihood(rows: list[dict], model, *, language: str = "ja",
                           batch_size: int | None = None) -> list[dict]:
    """Items of log-likelihood mode: every option scored as the continuation of the question
    (with its options and an answer cue); ``pred`` is the most likely option, ``pred_chars``
    and ``pred_bytes`` the most likely per character and per UTF-8 byte (lm-evaluation-harness's
    ``acc`` and ``acc_norm``)."""
    sep = " " if language == "en" else ""
    requests = [(question_prompt(r) + ANSWER_CUES[language], sep + c) for r in rows for c in r["choices"]]
    scores = model.loglikelihood(requests, batch_size=batch_size)
    items, k = [], 0
    for row in rows:
        n = len(row["choices"])
        ll = [s for s, _ in scores[k:k + n]]
        k += n
        chars = [x / max(1, len(sep + c)) for x, c in zip(ll, row["choices"])]
        octets = [x / max(1, len((sep + c).encode())) for x, c in zip(ll, row["choices"])]
        pick = [max(range(n), key=v.__getitem__) for v in (ll, chars, octets)]
        items.append({**_item(row, model.name, "loglikelihood"), "loglikelihoods": ll, "pred": pick[0],
                      "pred_chars": pick[1], "pred_bytes": pick[2], "correct": pick[0] == row["answer_index"],
                      "correct_chars": pick[1] == row["answer_index"],
                      "correct_bytes": pick[2] == row["answer_index"]})
    return items


def _rate(items: list[dict], key: str) -> float:
    return sum(bool(i[key]) for i in items) / len(items) if items else float("nan")


def summarize(items: list[dict]) -> dict:
    """Accuracy overall, by ``type`` and by ``region``; for generation mode also how many
    responses the parser read (``coverage``), the accuracy over those, and, when the rows
    carried reference verdicts (the paper's GPT-4o judge), the agreement with them."""
    if not items:
        raise WikioriginError("no items to summarize")
    mode = items[0]["mode"]
    keys = ["correct"] + (["correct_chars", "correct_bytes"] if mode == "loglikelihood" else [])
    names = {"correct": "accuracy", "correct_chars": "acc_norm_chars", "correct_bytes": "acc_norm_bytes"}

    def block(part):
        return {"n": len(part), **{names[k]: _rate(part, k) for k in keys}}

    summary = {"model": items[0]["model"], "mode": mode, **block(items)}
    if mode == "generate":
        read = [i for i in items if i["pred"] is not None]
        summary.update(coverage=len(read) / len(items), unread=len(items) - len(read),
                       failed=sum(i["response"] is None for i in items),
                       accuracy_read=_rate(read, "correct"),
                       judged=sum(i["judge_verdict"] is not None for i in items))
        judged = [i for i in items if i.get("reference_judge") is not None]
        if judged:  # where the reference judge (the paper's GPT-4o) gave a verdict
            summary["agreement_with_reference_judge"] = _rate(
                [{"ok": bool(i["correct"]) == i["reference_judge"]} for i in judged], "ok")
    for field, label in (("type", "by_type"), ("region", "by_region")):
        groups: dict[str, list] = {}
        for item in items:
            groups.setdefault(item[field] or "(none)", []).append(item)
        summary[label] = {k: block(v) for k, v in sorted(groups.items())}
    return summary


def write_mcq_results(out, items: list[dict], summary: dict, meta: dict | None = None):
    """The run's directory: items, summary, ``report.md`` with the tables by type and region,
    and bar plots of accuracy by type and by region."""
    from .report import bar_plot, markdown_table, write_results

    metrics = [k for k in ("accuracy", "acc_norm_chars", "acc_norm_bytes") if k in summary]
    lines = [f"# Multiple choice: {summary['model']} ({summary['mode']})", "",
             markdown_table(["questions", *metrics], [[summary["n"], *[summary[m] for m in metrics]]])]
    if summary["mode"] == "generate":
        lines += ["", f"The parser read {summary['n'] - summary['unread']} of {summary['n']} responses "
                      f"(coverage {summary['coverage']:.3f}"
                      + (f"; {summary['failed']} requests failed after retries" if summary["failed"] else "")
                      + "); unread responses count as wrong"
                      + (f", {summary['judged']} of them were given to the judge" if summary["judged"] else "")
                      + f". Accuracy over the responses read: {summary['accuracy_read']:.3f}."]
        if "agreement_with_reference_judge" in summary:
            lines += ["", "Agreement with the reference verdicts where they gave one: "
                          f"{summary['agreement_with_reference_judge']:.3f}."]
    plots = []
    for label, title in (("by_type", "type"), ("by_region", "region")):
        groups = summary[label]
        lines += ["", f"## By {title}", "", markdown_table(
            [title, "n", *metrics], [[k, v["n"], *[v[m] for m in metrics]] for k, v in groups.items()])]
        plots.append((f"accuracy_{label}.png", lambda path, g=groups, t=title: bar_plot(
            path, [PLOT_LABELS.get(k, k) for k in g], [v["accuracy"] for v in g.values()], f"{summary['model']}: accuracy by {t}",
            counts=[v["n"] for v in g.values()])))
    lines += ["", "Plots: `accuracy_by_type.png`, `accuracy_by_region.png`."]
    return write_results(out, items, summary, "\n".join(lines), plots=plots, meta=meta)


PLOT_LABELS = dict(zip(MCQ_TYPES, ["actions", "appearance", "region of the lore", "origin and habits",
                                   "lore today", "sources"]))
PLOT_LABELS.update(zip(MCQ_REGIONS, ["Hokkaido", "Tohoku", "Kanto", "Chubu", "Kinki", "Chugoku-Shikoku",
                                     "Kyushu", "Okinawa", "nationwide", "several regions", "unknown"]))


def attach_responses(rows: list[dict], recorded: list[dict]) -> list[dict]:
    """Recorded responses (a released responses file, read by :func:`read_questions`) joined
    to the question rows by question and choices, so they carry type and region."""
    by_key = {(r["question"], tuple(r["choices"])): r for r in recorded}
    out, missing = [], 0
    for row in rows:
        hit = by_key.get((row["question"], tuple(row["choices"])))
        missing += hit is None
        if hit is not None:
            out.append({**row, "response": hit["response"], "judge": hit["judge"]})
    if not out:
        raise WikioriginError("none of the recorded responses matches a question")
    return out
