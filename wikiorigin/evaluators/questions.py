"""Multiple-choice questions as files hold them: ``mcq.parquet``, the released YokaiEval rows,
a released responses file (the question nested, with ``response``, ``judge`` and the prompt the
model saw), the released human answers (``user_answer``) or rows with a ``response``.

:func:`read_questions` reads any of them into plain rows (a row that cannot be scored is a
one-line error naming the file and row, and so is one whose ``answer`` and ``answer_index``
name different options: scoring against either would be a guess);  a released row's
messy region label is read by its culture's adapter (:func:`wikiorigin.presets.released`:
YokaiEval's ``clean_region`` for its Japanese rows; built rows, which carry their
``language``, keep the region their labels file named); :func:`attach_responses`
joins recorded responses to the benchmark's rows by their choices and the question's stem
(robust to a changed instruction).
"""

from __future__ import annotations

import hashlib
import os.path
import unicodedata
from urllib.parse import unquote, urlparse

from ..errors import UnknownWikiError, WikioriginError
from ..files import read_rows
from ..languages import lookup
from ..presets import by_types, cultures, released
from .answers import match_key, option_labels

__all__ = ["read_questions", "attach_responses", "url_language"]


def __getattr__(name: str):
    """``clean_region`` and ``REGION_LETTERS``, YokaiEval's released-row adapters, kept
    importable from here: they live in :mod:`wikiorigin.presets.yokaieval.released`."""
    if name in ("clean_region", "REGION_LETTERS"):
        from ..presets.yokaieval import released

        return getattr(released, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _region(raw: dict, language: str | None) -> str:
    """A row's region: a built row's (``mcq.parquet``, any language, which carries its
    ``language``) as its labels file named it; a released row's (no ``language``) read by the
    adapter of the culture whose released rows are in ``language`` (the language of its url:
    :func:`wikiorigin.presets.released`, YokaiEval's for Japanese) or whose type it has, else
    as it is."""
    culture = (released(language) or by_types([raw.get("type")])) if raw.get("language") is None else None
    if culture is not None and culture.clean_region is not None:
        return culture.clean_region(raw.get("region"))
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
    language = raw.get("language") or url_language(url)
    return {
        "id": raw.get("id") or hashlib.sha1((question + "\x1f".join(choices)).encode()).hexdigest()[:16],
        "question": question,
        "choices": choices,
        "answer_index": _answer_index(raw, choices, where),
        "type": raw.get("type") or "",
        "region": _region(raw, language),
        "language": language,
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


def _stem(question: str, marks: tuple[str, ...]) -> str:
    """A question without its closing instruction (``Choose one of ...``, or the words a
    culture's released prompts open it with: ``marks``): the text up to the last clause break
    before the instruction, as a match key."""
    key = unicodedata.normalize("NFKC", question)
    for mark in marks:
        at = key.rfind(mark)
        if at > 0:
            key = key[:at]
            break
    return "".join(c for c in key if c.isalnum())


def _marks() -> tuple[str, ...]:
    """The words that open a question's instruction line: the cultures' released prompts', then English."""
    return (*(m for c in cultures() for m in c.instruction_marks), "Choose", "Select", "Pick")


def _joined(row: dict, rec: dict | None) -> dict:
    """A question row with its recorded response ``rec`` (its options in the response's order),
    or with none."""
    if rec is None:
        return {**row, "response": None, "judge": None}
    answer = row["choices"][row["answer_index"]]
    return {
        **row,
        "choices": rec["choices"],
        "answer_index": rec["choices"].index(answer),
        "response": rec["response"],
        "judge": rec["judge"],
        "labels": rec.get("labels"),
    }


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
    marks = _marks()
    stems = [_stem(row["question"], marks) for row in rows]
    taken: dict[int, dict] = {}
    unmatched, duplicates = [], 0
    for rec in recorded:
        candidates = by_choices.get(tuple(sorted(rec["choices"])), [])
        stem = _stem(rec["question"], marks)
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
    out = [_joined(row, taken.get(n)) for n, row in enumerate(rows)]
    return out, {
        "matched": len(taken),
        "missing": len(rows) - len(taken),
        "unmatched": len(unmatched),
        "unmatched_questions": unmatched[:5],
        "duplicates": duplicates,
    }
