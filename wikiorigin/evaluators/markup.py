"""Chat markup around a model's answer: special tokens of chat templates (``<|im_end|>``,
``<EOD|LLM-jp>``, ``</s>``, ``[/INST]``) and role markers (``ASSISTANT:``, a lone ``assistant``
line, ``### 応答:``), removed generically, not per model, by :func:`strip_markup`; the answer
is the first assistant turn. Part of the answer reader (:mod:`.answers`).

Reasoning traces come first: :func:`split_reasoning` cuts a response at the end of its trace
(``<think>…</think>`` and the other markers of :data:`TRACE_TOKENS`); the answer is what
follows it, and a trace that never closes leaves no answer at all.
"""

from __future__ import annotations

import re
import unicodedata

from .scripts import ascii_digits

__all__ = ["strip_markup", "split_reasoning", "opened_trace", "TRACE_TOKENS"]

_SPECIAL = re.compile(
    r"<\|[^<>|\n]{0,40}\|>"  # <|im_end|>, <|eot_id|>, <|endoftext|>
    r"|<[^<>|\s]{1,30}\|[^<>\n]{0,30}>"  # <EOD|LLM-jp>
    r"|</?[a-z_][a-z0-9_]{0,30}>"  # <s>, </s>, <eos>, <end_of_turn>, <start_of_turn>
    r"|<<\s*/?SYS\s*>>|\[/?INST\]",  # Llama-2 style
    re.I,
)
_ASSISTANT = (
    "assistant",
    "model",
    "bot",
    "ai",
    "gpt",
    "chatbot",
    "response",
    "output",
    "アシスタント",
    "応答",
    "回答",
    "出力",
)
_OTHER = ("user", "human", "system", "instruction", "input", "ユーザー", "ユーザ", "システム", "指示", "入力")
_ROLE_WORDS = "|".join(sorted(_ASSISTANT + _OTHER, key=len, reverse=True))
# A role marker: "ROLE:" at the start of a line, a line that is only a role word, or a
# "### ROLE" heading.
_ROLE = re.compile(rf"^[ \t]*(?:#{{2,4}}[ \t]*)?({_ROLE_WORDS})[ \t]*(?:[:：][ \t]*|$)", re.I | re.M)
_HEADING = re.compile(r"^[ \t]*#{2,4}[ \t]*(?:(" + _ROLE_WORDS + r")[ \t]*[:：]?)?[ \t]*$", re.I | re.M)


_EOT = "\ue000"  # where an end-of-turn token stood (a private-use character, not white space)
# Tokens that end a turn (not those that end a header or an instruction: <|end_header_id|>, [/INST])
_ENDS_TURN = re.compile(
    r"end_?of_?(?:turn|text|sentence)|endoftext|eot_id|im_end|^<\|end\|>$|^</?eos>$|^<eod|^</s>$", re.I
)


def _turns(text: str) -> list[tuple[str | None, str]]:
    """``text`` cut at its role markers: (role, text) pairs, role None before the first."""
    turns: list[tuple[str | None, str]] = []
    role: str | None = None
    start = 0
    for match in _ROLE.finditer(text):
        word = match.group(1).lower()
        # "回答:" and "応答:" open an answer inline too; they are role markers only as headings
        # or alone on their line
        if word in ("回答", "応答", "出力", "response", "output") and not _alone(text, match):
            continue
        turns.append((role, text[start : match.start()]))
        role, start = ("assistant" if word in _ASSISTANT else "other"), match.end()
    turns.append((role, text[start:]))
    return turns


def strip_markup(response: str) -> str:
    """The answer without chat-template tokens and role markers. Text before the first role
    marker is the answer when the model ended its turn after it (an end-of-turn token, or
    another role's turn next); otherwise, as when a response repeats the end of the prompt
    before ``ASSISTANT:``, the first assistant turn is. The answer ends at an end-of-turn token."""
    text = _SPECIAL.sub(
        lambda m: "\n" + (_EOT if _ENDS_TURN.search(m.group()) else "") + "\n",
        ascii_digits(unicodedata.normalize("NFKC", response or "")),
    )
    turns = _turns(text)
    before = turns[0][1]
    said = before.replace(_EOT, "").strip()
    ended = before.rstrip().endswith(_EOT) or (len(turns) > 1 and turns[1][0] == "other")
    spoken = [t for r, t in turns if r == "assistant" and t.replace(_EOT, "").strip()]
    answer = before if said and (ended or not spoken) else (spoken[0] if spoken else "")
    answer = answer.lstrip().split(_EOT, 1)[0] if answer.strip().strip(_EOT) else ""
    return _HEADING.sub("", answer).strip()


def _alone(text: str, match) -> bool:
    """Whether a role word is a heading (``### 応答``) or alone on its line (not ``回答：X``)."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    rest = text[match.end() : line_end if line_end >= 0 else len(text)].strip()
    return "#" in text[line_start : match.start()] or rest == ""


# -- reasoning traces ----------------------------------------------------------------------

_TAGS = r"(?:think|thinking|thought|reasoning|seed:think)"
_OPENS = (
    rf"<{_TAGS}>",  # DeepSeek-R1, Qwen3, QwQ; <thinking>, <reasoning>; Seed-OSS
    r"◁think▷",  # Kimi
    r"\[THINK\]",  # Magistral
    r"<\|START_THINKING\|>",  # Command A Reasoning
    r"<\|begin_of_thought\|>",  # Sky-T1, OpenThoughts
    r"<\|channel\|>\s*(?:analysis|commentary)\b[^<\n]*(?:<\|message\|>)?",
)  # gpt-oss (harmony)
_CLOSES = (
    rf"</{_TAGS}>",
    r"◁/think▷",
    r"\[/THINK\]",
    r"<\|END_THINKING\|>",
    r"<\|end_of_thought\|>",
    r"<\|channel\|>\s*final\b[^<\n]*<\|message\|>",  # harmony's final channel
    r"\[BEGIN FINAL RESPONSE\]",
)  # Apriel
_TRACE = re.compile("(" + "|".join(_CLOSES) + ")|" + "|".join(_OPENS), re.I)
_OPENED = re.compile("(?:" + "|".join(_OPENS) + r")\s*\Z", re.I)
# gpt-oss decoded without its special tokens: "analysis…assistantfinal…"
_BARE_FINAL = re.compile(r"assistantfinal", re.I)
_BARE_START = re.compile(r"\s*analysis(?=\S)", re.I)

TRACE_TOKENS = frozenset(
    {
        "<think>",
        "</think>",
        "<thinking>",
        "</thinking>",
        "<reasoning>",
        "</reasoning>",
        "<seed:think>",
        "</seed:think>",
        "◁think▷",
        "◁/think▷",
        "[THINK]",
        "[/THINK]",
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "<|begin_of_thought|>",
        "<|end_of_thought|>",
        "<|channel|>",
        "<|message|>",
    }
)
"""The trace markers (or their parts: gpt-oss's ``<|channel|>``, ``<|message|>``) that
tokenizers hold as tokens, often special ones: a local model's output is decoded with them
kept, every other special token dropped, so that :func:`split_reasoning` sees where a trace
ends."""


def split_reasoning(response: str) -> tuple[str, str | None]:
    """``(trace, answer)`` of a response. The answer is what follows the last marker that
    closes a trace: ``</think>`` (also ``</thinking>``, ``</reasoning>``, ``</seed:think>``),
    ``◁/think▷``, ``[/THINK]``, ``<|END_THINKING|>``, ``<|end_of_thought|>``, gpt-oss's
    ``<|channel|>final<|message|>`` (``assistantfinal`` in a response that begins
    ``analysis``: the same decoded without special tokens), ``[BEGIN FINAL RESPONSE]``. A
    closing marker without an opening one closes the trace the chat template opened (QwQ,
    DeepSeek-R1). A trace opened after the last close, or never closed, leaves no answer
    (``None``): whatever option it names is reasoning, not an answer. A response without
    markers is all answer (the trace ``""``)."""
    last = None
    for last in _TRACE.finditer(response):  # noqa: B007 (the last match is wanted)
        pass
    if last is None:
        if _BARE_START.match(response):
            bare = None
            for bare in _BARE_FINAL.finditer(response):  # noqa: B007 (the last match)
                pass
            if bare is not None:
                return response[: bare.start()], response[bare.end() :]
        return "", response
    if last.group(1) is None:  # an opening marker: the trace runs to the end
        return response, None
    return response[: last.start()], response[last.end() :].split("[END FINAL RESPONSE]", 1)[0]


def opened_trace(prompt: str) -> str:
    """The opening marker a prompt ends with (``<think>\\n``: a chat template that starts the
    model's trace for it, as QwQ's and DeepSeek-R1's do), else ``""``; put back before the
    model's output, it makes the response the whole turn."""
    match = _OPENED.search(prompt[-200:])
    return match.group() if match else ""
