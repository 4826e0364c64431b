"""Multiple-choice evaluation (YokaiEval): reading answers, generation and log-likelihood modes.

Questions come from ``mcq.parquet``, the released YokaiEval rows or a released responses file
(:func:`read_questions`, in :mod:`~wikiorigin.evaluators.questions`, re-exported here; a
released row's messy region read by its culture's adapter, :mod:`wikiorigin.presets`).
:func:`evaluate_generate` asks a model (or takes recorded responses) and reads each answer;
:func:`evaluate_loglikelihood` scores every option as a continuation; :func:`summarize` gives
accuracy overall, by type and by region; :func:`write_mcq_results` writes the run.

:func:`~wikiorigin.evaluators.answers.parse_choice` (re-exported here) reads which option a
response names, following the judging rules of the YokaiEval paper; a bare number is a position
only when the prompt numbered the options. :func:`attach_responses` joins a released responses
file to the benchmark rows by the question's choices and stem (robust to a changed instruction).
"""

from __future__ import annotations

from collections import Counter

from ..errors import ParameterError, WikioriginError
from ..labels import split_regions
from ..languages import language_parameter
from . import cues
from .answers import PARSER_VERSION, Reading, parse_choice, read_choice
from .cues import ANSWER_CUES, DELIMITERS, INSTRUCTIONS, answer_cue, delimiter, instruction
from .mcq_report import write_mcq_results
from .questions import attach_responses, read_questions
from .stats import SMALL, proportion_fields
from .unread import judge_unread

__all__ = [
    "parse_choice",
    "read_choice",
    "PARSER_VERSION",
    "read_questions",
    "question_prompt",
    "evaluate_generate",
    "evaluate_loglikelihood",
    "summarize",
    "INSTRUCTIONS",
    "ANSWER_CUES",
    "DELIMITERS",
    "instruction",
    "answer_cue",
    "delimiter",
    "rows_language",
    "prompt_language",
    "attach_responses",
    "write_mcq_results",
]


def question_prompt(row: dict, instruction: str = "") -> str:
    """The question and its options as ``- option`` lines (the layout of YokaiEval's released
    prompts), with an optional instruction line after them."""
    prompt = row["question"] + "".join(f"\n- {c}" for c in row["choices"])
    return f"{prompt}\n\n{instruction}" if instruction else prompt


# -- evaluation --------------------------------------------------------------------------


def rows_language(rows: list[dict], source: str | None = None) -> str | None:
    """The language the rows say they are in: their ``language`` when all carry the same
    (:func:`read_questions` gives the released YokaiEval rows the language of their article's
    wiki), None when none carries one. Rows of several languages (or some with one and some
    without) are a :class:`~wikiorigin.errors.ParameterError` naming ``source`` and asking for
    ``language=``, never a silent pick. The library assumes no language: a caller that must
    write a prompt and gets None asks for one (:func:`prompt_language`)."""
    found = {r.get("language") for r in rows}
    if found <= {None}:
        return None
    if len(found) == 1:
        return found.pop()
    counts = Counter(r.get("language") or "none" for r in rows)
    listed = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()))
    raise ParameterError(
        "language",
        f"{source or 'the questions'}: rows in several languages ({listed}): give "
        "{language} for the instruction and answer cue to use",
    )


def prompt_language(rows: list[dict], language: str | None = None, source: str | None = None) -> str:
    """The language a prompt for ``rows`` is written in: ``language`` when given (any open
    Wikipedia's code, checked), else the rows' own (:func:`rows_language`); rows that say none
    are a :class:`~wikiorigin.errors.ParameterError` asking for ``language=``."""
    if language is not None:
        return language_parameter(language)
    found = rows_language(rows, source)
    if found is None:
        raise ParameterError(
            "language",
            f"{source or 'the questions'}: the rows say no language (no `language` "
            "column), so the instruction and answer cue cannot be chosen: give "
            "{language} (an open Wikipedia's code: en, el, ja, ...)",
        )
    return found


def evaluate_generate(
    rows: list[dict],
    model=None,
    *,
    instruction: str | None = None,
    language: str | None = None,
    judge=None,
    recorded: str = "recorded",
    labels: str | None = None,
    **sampling,
) -> list[dict]:
    """Items of generation mode: each question asked (``model.generate``; the paper's
    sampling is temperature 0.1 and 128 new tokens) after the ``instruction`` line (default:
    that of ``language``, else of the rows' own language, :func:`prompt_language`; ``""`` for
    none), the response read by :func:`~wikiorigin.evaluators.answers.read_choice`
    (``read_as`` says how), and, with a ``judge`` (an :class:`~wikiorigin.llm.LLMClient`), the
    responses it could not read given to the judge. Without a model, rows carry recorded
    ``response`` s (None: the recording has no response to that question, counted as
    unanswered), named ``recorded``. ``labels`` are the option labels the prompt showed (None:
    unlabelled bullets, as :func:`question_prompt` writes them; a recorded row's own prompt
    decides for it). :class:`~wikiorigin.evaluators.tasks.MCQTask` does this and records the
    settings that ran.

    A response stopped by the token limit (a model's
    :class:`~wikiorigin.evaluators.generation.Response` that is ``truncated``: finish reason
    ``length``) and one whose reasoning trace never closed are no answer, read as
    ``truncated``, whatever option their text names: counted apart in the summary, wrong in
    ``accuracy``, outside ``coverage``. A request that failed after its retries is read as
    ``failed``, its ``correct`` None (no answer: :func:`summarize` leaves it out of the
    figures). Items carry the ``finish_reason`` (None for recorded responses)."""
    if model is None:
        if all(r.get("response") is None for r in rows):
            raise WikioriginError(
                f"{recorded}: no model given and none of the {len(rows)} questions carries a "
                "recorded response (give a model, or recorded responses)"
            )
        responses, name = [r.get("response") for r in rows], recorded
    else:
        if instruction is None:
            instruction = cues.instruction(prompt_language(rows, language))
        sampling = {"temperature": 0.1, "max_new_tokens": 128, **sampling}
        responses = model.generate([question_prompt(r, instruction) for r in rows], **sampling)
        name = model.name
    items = [_read(row, response, name, model is None, labels) for row, response in zip(rows, responses)]
    if judge is not None:
        judge_unread(rows, items, judge)
    return items


def _read(row: dict, response, name: str, recorded: bool, labels: str | None) -> dict:
    """The item of one generated (or ``recorded``) ``response``: the option it names, how it
    was read, whether it is right."""
    if getattr(response, "truncated", False):  # cut by the token limit: never read
        reading = Reading(None, "truncated")
    else:
        shown = row.get("labels") if recorded else labels
        reading = read_choice(response, row["choices"], question=row["question"], labels=shown)
    how = ("missing" if recorded else "failed") if response is None else reading.how
    return {
        **_item(row, name, "generate"),
        "response": response,
        "pred": reading.index,
        "finish_reason": getattr(response, "finish_reason", None),
        "read_as": how,
        "correct": None if how == "failed" else reading.index == row["answer_index"],  # no answer
        "judge_verdict": None,
        "reference_judge": row.get("judge"),
    }


def _item(row: dict, model: str, mode: str) -> dict:
    return {
        "id": row["id"],
        "model": model,
        "mode": mode,
        "title": row["title"],
        "type": row["type"],
        "region": row["region"],
        "question": row["question"],
        "answer_index": row["answer_index"],
    }


def evaluate_loglikelihood(
    rows: list[dict], model, *, language: str | None = None, cue: str | None = None, batch_size: int | None = None
) -> list[dict]:
    """Items of log-likelihood mode, as lm-evaluation-harness scores a ``multiple_choice``
    task: every option is scored as the continuation of the question (with its options and
    the answer cue of ``language``, or ``cue``; ``language`` defaults to the rows' own,
    :func:`prompt_language`) after a delimiter (none in Japanese and other
    languages written without spaces, else a space: lm-eval's ``target_delimiter``). ``pred`` is the option with the highest log-likelihood
    (lm-eval's ``acc``), ``pred_norm`` the highest per character of the option without the
    delimiter (lm-eval's ``acc_norm``: ``len(choice)``), ``pred_bytes`` the highest per UTF-8
    byte of the option (lm-eval's ``acc_bytes``); ties go to the first option, as
    ``numpy.argmax``. Each item has ``loglikelihoods``, the three predictions and
    ``correct``, ``correct_norm``, ``correct_bytes``. A question of which an option got no
    score (its request failed after its retries: the model gives None) is unanswered:
    ``read_as`` ``failed``, the predictions and verdicts None, out of the figures (as
    :func:`summarize` counts it); the others' ``read_as`` is None."""
    language = prompt_language(rows, language)
    sep, cue = delimiter(language), answer_cue(language) if cue is None else cue
    contexts = [question_prompt(r) + cue for r in rows]  # one per question, shared by its options
    requests = [(context, sep + c) for r, context in zip(rows, contexts) for c in r["choices"]]
    scores = model.loglikelihood(requests, batch_size=batch_size)
    items, k = [], 0
    for row in rows:
        n = len(row["choices"])
        got = scores[k : k + n]
        k += n
        if any(s is None for s in got):
            items.append(_unscored(row, model.name, [None if s is None else s[0] for s in got]))
            continue
        ll = [s for s, _ in got]
        chars = [x / max(1, len(c)) for x, c in zip(ll, row["choices"])]
        octets = [x / max(1, len(c.encode("utf-8"))) for x, c in zip(ll, row["choices"])]
        pick = [max(range(n), key=v.__getitem__) for v in (ll, chars, octets)]
        items.append(
            {
                **_item(row, model.name, "loglikelihood"),
                "loglikelihoods": ll,
                "pred": pick[0],
                "pred_norm": pick[1],
                "pred_bytes": pick[2],
                "correct": pick[0] == row["answer_index"],
                "correct_norm": pick[1] == row["answer_index"],
                "correct_bytes": pick[2] == row["answer_index"],
                "read_as": None,
            }
        )
    return items


def _unscored(row: dict, model: str, ll: list) -> dict:
    """The item of a question whose options were not all scored (a request that failed)."""
    verdicts = dict.fromkeys(("pred", "pred_norm", "pred_bytes", "correct", "correct_norm", "correct_bytes"))
    return {**_item(row, model, "loglikelihood"), "loglikelihoods": ll, **verdicts, "read_as": "failed"}


# Summary names of the log-likelihood verdicts: lm-evaluation-harness's acc and acc_norm (log-
# likelihood per character of the option), and ours per UTF-8 byte.
_LOGLIKELIHOOD_METRICS = {"correct": "acc", "correct_norm": "acc_norm", "correct_bytes": "acc_norm_bytes"}


def summarize(items: list[dict]) -> dict:
    """Accuracy overall, by ``type`` and by ``region``. Generation mode: ``accuracy`` and how
    many responses the parser read (``coverage``), the accuracy over those, how they were read,
    and, when the rows carried reference verdicts (the paper's GPT-4o judge), the accuracy by
    those verdicts and where ours differ (:func:`reference_disagreements`). Log-likelihood
    mode: ``acc``, ``acc_norm``, ``acc_norm_bytes`` (and ``accuracy`` = ``acc``). Every
    accuracy, overall and in each group, has ``<name>_ci95`` (Wilson) and ``<name>_stderr``
    (lm-eval's ``acc_stderr``); a block of fewer than 30 questions is ``small``
    (:mod:`~wikiorigin.evaluators.stats`).

    A question whose request failed after its retries (``read_as`` ``failed``) has no answer:
    it is neither right nor wrong, and every figure, interval and group is over the
    ``answered`` questions (``n`` counts them all, ``failed`` those left out); a run with such
    questions is incomplete (:class:`~wikiorigin.evaluators.results.RunResult`)."""
    if not items:
        raise WikioriginError("no items to summarize")
    mode = items[0]["mode"]
    answered = [i for i in items if i.get("read_as") != "failed"]
    if mode == "loglikelihood":
        names = {k: v for k, v in _LOGLIKELIHOOD_METRICS.items() if k in items[0]}
    else:
        names = {"correct": "accuracy"}

    def block(part):
        fields = {}
        for key, name in names.items():
            fields.update(proportion_fields(name, [i[key] for i in part]))
        return {"n": len(part), **fields, "small": len(part) < SMALL}

    summary = {"model": items[0]["model"], "mode": mode, **block(answered), "n": len(items), "answered": len(answered)}
    if mode == "loglikelihood":
        summary.update(
            accuracy=summary["acc"], accuracy_ci95=summary["acc_ci95"], accuracy_stderr=summary["acc_stderr"]
        )
    else:
        summary.update(_generation_summary(items, answered))
    for field, label in (("type", "by_type"), ("region", "by_region")):
        groups: dict[str, list] = {}
        for item in answered:
            groups.setdefault(_group(item[field], several=field == "region"), []).append(item)
        summary[label] = {k: block(v) for k, v in sorted(groups.items())}
    return summary


def _group(value: str | None, several: bool) -> str:
    """The group a row counts in: its class; ``(none)``; ``(several)`` for a row naming several
    regions (two-step labels: ``"Tohoku, Kanto"``), so that each one-region group holds only rows of
    that region alone, as YokaiEval's Table 6 counts them."""
    if not value:
        return "(none)"
    return "(several)" if several and len(split_regions(value)) > 1 else value


def _generation_summary(items: list[dict], answered: list[dict]) -> dict:
    """What generation mode adds to a summary: coverage, how the responses were read, and the
    reference judge's verdicts where the rows carried them."""
    read = [i for i in answered if i["pred"] is not None]
    ways = Counter(item["read_as"] for item in items)
    summary = dict(
        coverage=len(read) / len(answered) if answered else None,
        unread=len(answered) - len(read),
        failed=ways.get("failed", 0),
        missing=ways.get("missing", 0),
        truncated=ways.get("truncated", 0),
        **proportion_fields("accuracy_read", [i["correct"] for i in read]),
        read_as=dict(sorted(ways.items())),
        judged=sum(i["judge_verdict"] is not None for i in items),
        parser_version=PARSER_VERSION,
    )
    judged = [i for i in items if i.get("reference_judge") is not None]
    if judged:  # where the reference judge (the paper's GPT-4o) gave a verdict
        summary.update(proportion_fields("accuracy_by_reference", [i["reference_judge"] is True for i in items]))
        summary["agreement_with_reference_judge"] = sum(
            bool(i["correct"]) == i["reference_judge"] for i in judged
        ) / len(judged)
        summary["reference_disagreements"] = reference_disagreements(items)
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
    return [
        {
            "kind": kind,
            "n": len(group),
            "examples": [
                {
                    "id": i["id"],
                    "response": (i["response"] or "")[:160],
                    "pred": i["pred"],
                    "answer_index": i["answer_index"],
                    "reference": i["reference_judge"],
                }
                for i in group[:examples]
            ],
        }
        for kind, group in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    ]


def __getattr__(name: str):
    """YokaiEval's classes and released-row adapters (``MCQ_TYPES``, ``MCQ_REGIONS``,
    ``clean_region``, ``REGION_LETTERS``: in :mod:`wikiorigin.presets.yokaieval`) and
    ``PLOT_LABELS``, kept importable here."""
    if name in ("clean_region", "REGION_LETTERS", "MCQ_TYPES", "MCQ_REGIONS"):
        from ..presets import yokaieval

        return getattr(yokaieval, name)
    if name == "PLOT_LABELS":
        from .mcq_report import plot_labels

        return plot_labels()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
