"""The free-form builder's prompts (WikiOriginQA's steps), written for wikiorigin.

The two steps that write the question, ``generate`` and ``refine``, are instructed in the
item's language, as the paper did: an :class:`Instructions` set per language, from the files in
``wikiorigin/data/instructions/`` (``en.json`` is the source every other file was translated
from; each file names its language and who wrote it), or from English translated once by the
generator model (:func:`translation_request`, :func:`translated_instructions`). The other steps
(``translate`` into English, ``score`` on the paper's criteria, the ``giveaway`` check) and the
translation of the instructions are in English: :data:`FREEFORM_PROMPTS`.

Every prompt's first line names its task (``task: freeform-generate``, ...), so logs and test
servers can tell them apart. :func:`freeform_sha1` changes when any text of a build changes
(each row and the request cache key carry it)."""

from __future__ import annotations

import hashlib
import json
import re
import string
from dataclasses import dataclass
from importlib import resources

from ..errors import WikioriginError
from ..languages import language_name
from ..schemas import FREEFORM_CRITERIA as CRITERIA

__all__ = [
    "FREEFORM_PROMPTS",
    "PLACEHOLDERS",
    "ANSWER_FORMAT",
    "Instructions",
    "placeholders",
    "parse_instructions",
    "bundled_languages",
    "bundled_instructions",
    "translation_request",
    "translation_schema",
    "translated_instructions",
    "freeform_sha1",
]

PLACEHOLDERS = {"generate": ("title", "cutoff"), "refine": ("title", "cutoff", "question")}
"""The placeholders each instruction text must hold, in every language: the item's ``title``
(the answer), the knowledge ``cutoff`` and, to refine, the current ``question``. The builder
fills them; a file with other braces is refused."""

ANSWER_FORMAT = '{"question": "..."}'
"""The line the builder puts after an instruction text: the JSON it asks for (kept out of the
instruction files, so that a translation has no braces to get wrong)."""

_CUES = "\n".join(
    f"{c}: {text};"
    for c, text in zip(
        CRITERIA,
        [
            "it is not a question answered by yes or no",
            "it can be answered by a name or a few words, not only by a sentence",
            "the answer is just what was asked: it holds nothing superfluous and repeats no part of the "
            "question's wording",
            "the answer could be known from sources up to {cutoff}",
            "the answer will not change over time",
            "it is not trivially easy",
            "it needs no context beyond itself",
        ],
    )
)

FREEFORM_PROMPTS = {
    "translate": (
        "task: freeform-translate\n"
        "Translate the quiz question into English, and give the English name of its answer "
        "({title}) as an English speaker would write it.\n"
        'Answer with JSON only: {{"question_en": ..., "answer_en": ...}}'
    ),
    "score": (
        "task: freeform-score\n"
        "Rate the question (with its answer) from 1 (fails) to 5 (fully meets) on each criterion:\n" + _CUES + "\n"
        "Answer with JSON only, an integer for each: {{" + ", ".join(f'"{c}": ...' for c in CRITERIA) + "}}"
    ),
    "giveaway": (
        "task: freeform-giveaway\n"
        "Does this quiz question give its answer away? It does when someone who does not know the "
        "answer could still find it from the question alone: the question holds the answer's name, "
        "a part of it, a translation or transliteration of it or an obvious variant of it, or "
        "describes the name itself (its letters, its spelling, its sound) so closely that no "
        "knowledge of the subject is needed.\n"
        'Answer with JSON only: {{"gives_away": true or false, "reason": "one short sentence"}}'
    ),
    "instructions": (
        "task: freeform-instructions\n"
        'Translate the two instruction texts given as JSON ("generate" and "refine") from English '
        "into {language}, as a native speaker would write them, speaking to the reader directly. "
        "Keep every placeholder in braces ({{title}}, {{cutoff}}, {{question}}) exactly as it is, "
        "untranslated, and add no other braces.\n"
        'Answer with JSON only: {{"generate": ..., "refine": ...}}'
    ),
}
"""The free-form builder's English prompts by step: ``translate`` (the question into English),
``score`` (the paper's seven criteria, 1-5; names as the free-form schema's
``schemas.FREEFORM_CRITERIA``), ``giveaway`` (does the question give its answer away) and
``instructions`` (the English instructions into another language). ``generate`` and ``refine``
are :class:`Instructions`, in the item's language."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """The texts that instruct the ``generate`` and ``refine`` steps for one ``language`` (a
    Wikipedia language code), with their ``source``: ``"bundled"`` (a file of the package),
    ``"translated by MODEL"`` or ``"en"`` (English, by choice), and the file's ``name`` of the
    language and ``note`` (who wrote it)."""

    language: str
    source: str
    generate: str
    refine: str
    name: str = ""
    note: str = ""

    @property
    def sha1(self) -> str:
        """The hash of the two texts (what the questions depend on)."""
        return hashlib.sha1(f"generate={self.generate}\x00refine={self.refine}".encode()).hexdigest()

    def prompt(self, step: str, **values) -> str:
        """The system prompt of ``step`` (``generate`` or ``refine``): the task line, the text
        with its placeholders filled from ``values``, and :data:`ANSWER_FORMAT`."""
        text = self.generate if step == "generate" else self.refine
        return f"task: freeform-{step}\n{text.format(**values)}\n{ANSWER_FORMAT}"

    def as_file(self) -> dict:
        """The set as an instruction file holds it (``language``, ``name``, ``note``, the texts)."""
        return {
            "language": self.language,
            "name": self.name,
            "note": self.note,
            "generate": self.generate,
            "refine": self.refine,
        }

    def provenance(self) -> dict:
        """What a build records of the set: language, source and hash."""
        return {"language": self.language, "source": self.source, "sha1": self.sha1}


def placeholders(text: str) -> set[str]:
    """The names in braces of ``text`` (``{{`` and ``}}`` are literal braces); ``ValueError``
    for a lone brace."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def parse_instructions(data, where: str, source: str = "bundled") -> Instructions:
    """An :class:`Instructions` from an instruction file's JSON ``data``, checked: the keys of
    ``en.json`` and, in each text, exactly the placeholders of :data:`PLACEHOLDERS`. ``where``
    names the file in the error (:class:`~wikiorigin.errors.WikioriginError`)."""
    if not isinstance(data, dict):
        raise WikioriginError(
            f"{where}: not an instruction file (a JSON object with language, name, note, generate, refine)"
        )
    missing = [k for k in ("language", "name", "note", *PLACEHOLDERS) if not isinstance(data.get(k), str)]
    if missing:
        raise WikioriginError(f"{where}: no text for {', '.join(missing)}")
    for step, names in PLACEHOLDERS.items():
        try:
            found = placeholders(data[step])
        except ValueError as exc:
            raise WikioriginError(f"{where}: {step}: {exc} (a literal brace is written twice)") from None
        if found != set(names):
            raise WikioriginError(f"{where}: {step} has the placeholders {sorted(found)}, not {sorted(names)}")
    return Instructions(data["language"], source, data["generate"], data["refine"], data["name"], data["note"])


def _files():
    return resources.files("wikiorigin") / "data" / "instructions"


def bundled_languages() -> list[str]:
    """The language codes with an instruction file in the package (``en`` among them)."""
    return sorted(f.name.removesuffix(".json") for f in _files().iterdir() if f.name.endswith(".json"))


def bundled_instructions(language: str) -> Instructions | None:
    """The package's instructions in ``language`` (None when there is no file for it)."""
    resource = _files() / f"{language}.json"
    if not re.fullmatch(r"[a-z0-9-]+", language) or not resource.is_file():
        return None
    where = f"wikiorigin/data/instructions/{language}.json"
    try:
        data = json.loads(resource.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WikioriginError(f"{where}: not JSON ({exc})") from None
    found = parse_instructions(data, where)
    if found.language != language:
        raise WikioriginError(f"{where}: names the language {found.language!r}, not {language!r}")
    return found


def translation_schema() -> dict:
    """The JSON schema of a translation of the instructions: both texts, each with exactly its
    placeholders (so that the client's one repair asks again for a text that lost one)."""

    def text(names):
        only = "|".join(names)
        return {
            "type": "string",
            "minLength": 1,
            "allOf": [
                *({"pattern": re.escape("{" + n + "}")} for n in names),
                {"pattern": rf"^(?:[^{{}}]|\{{(?:{only})\}})*$"},
            ],
        }

    return {
        "type": "object",
        "required": list(PLACEHOLDERS),
        "properties": {step: text(names) for step, names in PLACEHOLDERS.items()},
    }


def translation_request(language: str) -> tuple[list[dict], str]:
    """The messages that ask for the English instructions in ``language`` and their prompt
    version (the hash of what is sent)."""
    english = bundled_instructions("en")
    system = FREEFORM_PROMPTS["instructions"].format(language=f"{language_name(language)} ({language})")
    user = json.dumps({step: getattr(english, step) for step in PLACEHOLDERS}, ensure_ascii=False, indent=2)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return messages, hashlib.sha1(f"{system}\x00{user}".encode()).hexdigest()


def translated_instructions(language: str, data: dict, model: str) -> Instructions:
    """The :class:`Instructions` of a translation answered by ``model`` (``data``: JSON that
    satisfies :func:`translation_schema`), with a note that says so."""
    note = (
        f"Translated from wikiorigin's en.json by the generator model {model} (one call, in the "
        "request cache); not reviewed."
    )
    return parse_instructions(
        {
            "language": language,
            "name": language_name(language),
            "note": note,
            "generate": data["generate"],
            "refine": data["refine"],
        },
        f"the {language} instructions from {model}",
        source=f"translated by {model}",
    )


def freeform_sha1(instructions: Instructions | None = None) -> str:
    """The hash of the prompts of a build in one language (stored in each row and the cache
    key): :data:`FREEFORM_PROMPTS` and ``instructions`` (default: the English set)."""
    instructions = instructions or bundled_instructions("en")
    if instructions is None:
        raise RuntimeError("the package's English instructions are missing: reinstall wikiorigin")
    blob = "\x00".join(f"{k}={v}" for k, v in sorted(FREEFORM_PROMPTS.items()))
    return hashlib.sha1(f"{blob}\x00instructions={instructions.sha1}".encode()).hexdigest()
