"""What a multiple-choice prompt says in each language: the instruction line after the options
(generation mode), the answer cue before each option (log-likelihood mode) and the delimiter
between them (lm-evaluation-harness's ``target_delimiter``).

One small table by language (:data:`INSTRUCTIONS`, :data:`ANSWER_CUES`); a language it lacks
gets the English line and cue (:func:`instruction`, :func:`answer_cue`); the command line lets
anyone pass their own (``--instruction``, ``--answer-cue``). The delimiter is a space, except
for the languages written without spaces between words (:data:`UNSPACED`: Japanese, Chinese,
Cantonese, Thai, Lao, Burmese, Khmer, ...), which have their own cue and take none, as
lm-evaluation-harness's Japanese tasks do; one without a cue of its own (Tibetan, Dzongkha)
takes the English cue and the English space. :data:`DENIALS` says what denies an option in
each language, for the answer reader.
"""

from __future__ import annotations

__all__ = [
    "INSTRUCTIONS",
    "ANSWER_CUES",
    "DELIMITERS",
    "DENIALS",
    "UNSPACED",
    "NAME_ONLY",
    "instruction",
    "answer_cue",
    "delimiter",
    "name_only",
]

INSTRUCTIONS = {
    "ja": "上の選択肢から正しいものを一つ選び、その選択肢の言葉だけで答えてください。",
    "en": "Pick the one correct option above and reply with that option's text only.",
    "el": "Διαλέξτε τη μία σωστή επιλογή από τις παραπάνω και απαντήστε μόνο με το κείμενο αυτής της επιλογής.",
    "ko": "위의 선택지 중에서 정답 하나를 골라 그 선택지의 내용만으로 답하세요.",
    "ga": "Roghnaigh an t-aon rogha cheart thuas agus freagair le téacs na rogha sin amháin.",
    "ca": "Tria l'única opció correcta de les anteriors i respon només amb el text d'aquesta opció.",
    "et": "Vali ülaltoodud variantidest üks õige ja vasta ainult selle variandi tekstiga.",
    "zh": "请从上面的选项中选出唯一正确的一项，只回答该选项的内容。",
    "ar": "اختر الخيار الصحيح الوحيد مما سبق وأجب بنص ذلك الخيار فقط.",
    "hi": "ऊपर दिए गए विकल्पों में से एक सही विकल्प चुनें और केवल उस विकल्प के शब्दों में उत्तर दें।",
    "ru": "Выберите один правильный вариант из приведённых выше и ответьте только текстом этого варианта.",
    "fr": "Choisissez la seule option correcte ci-dessus et répondez uniquement par le texte de cette option.",
    "de": "Wählen Sie die eine richtige Option oben und antworten Sie nur mit dem Text dieser Option.",
    "es": "Elige la única opción correcta de las anteriores y responde solo con el texto de esa opción.",
}
"""The instruction after a question's options in generation mode, by language code."""

ANSWER_CUES = {
    "ja": "\n回答：",
    "en": "\nAnswer:",
    "el": "\nΑπάντηση:",
    "ko": "\n답:",
    "ga": "\nFreagra:",
    "ca": "\nResposta:",
    "et": "\nVastus:",
    "zh": "\n答案：",
    "ar": "\nالإجابة:",
    "hi": "\nउत्तर:",
    "ru": "\nОтвет:",
    "fr": "\nRéponse :",
    "de": "\nAntwort:",
    "es": "\nRespuesta:",
    # the other languages written without spaces: Chinese ones take Chinese's cue
    "yue": "\n答案：",
    "wuu": "\n答案：",
    "gan": "\n答案：",
    "lzh": "\n答案：",
    "th": "\nคำตอบ:",
    "lo": "\nຄຳຕອບ:",
    "my": "\nအဖြေ:",
    "km": "\nចម្លើយ:",
}
"""What follows a question in log-likelihood mode, before each option, by language code."""

NAME_ONLY = {
    "ja": "名前だけを答えてください。",
    "el": "Απαντήστε μόνο με το όνομα.",
    "ko": "이름만 답하세요.",
    "ga": "Freagair leis an ainm amháin.",
    "ca": "Respon només amb el nom.",
    "et": "Vasta ainult nimega.",
    "zh": "只回答名称。",
    "ar": "أجب بالاسم فقط.",
    "hi": "केवल नाम से उत्तर दें।",
    "ru": "Ответьте только названием.",
    "fr": "Répondez uniquement par le nom.",
    "de": "Antworten Sie nur mit dem Namen.",
    "es": "Responde solo con el nombre.",
}
"""A free-form question asked in its item's language ends with this line, then the English one
(:func:`name_only`), by language code."""

_W = r"(?<!\w)"  # a denial word of a spaced script begins a word
DENIALS = {
    "ja": ((), ("ではな", "じゃな", "でな", "ではあり", "ではござ", "以外", "とは限らな")),
    "en": ((rf"{_W}(?:not|nor|neither|no) ",), (r" (?:is|was) (?:not|wrong|incorrect)\b", r" isn t\b")),
    "ru": ((rf"{_W}(?:не|ни|нет) ",), (r" (?:не|неверн|неправильн)",)),
    "de": ((rf"{_W}(?:nicht|kein|keine|keinesfalls|weder) ",), (r" (?:ist )?(?:nicht|falsch)\b",)),
    "fr": ((rf"{_W}(?:pas|non|ni|non pas) ",), (r" (?:n est pas|est faux|est incorrect)",)),
    "es": ((rf"{_W}(?:no|ni|nunca) ",), (r" (?:no es|es incorrect)",)),
    "it": ((rf"{_W}(?:non|né|mai) ",), (r" (?:non è|è sbagliat|è errat)",)),
    "pt": ((rf"{_W}(?:não|nem|nunca) ",), (r" (?:não é|está errad|é errad|é incorret)",)),
    "el": ((rf"{_W}(?:όχι|ούτε|δεν είναι|μην) ",), (r" (?:δεν|είναι λάθος)",)),
    "ko": ((), (r"(?:이|가|은|는)? ?(?:아니(?!면)|아닌|아닙|아님|아냐|말고|틀리|틀립|틀렸|틀린)",)),
    "zh": (
        ("不是", "并非", "並非", "而非", "不选", "不選"),
        ("不是正确", "不是正確", "不是答案", "不对", "不對", "不正确", "不正確", "是错", "是錯", "错误", "錯誤"),
    ),
}
"""What denies an option rather than names it, by language: regular expressions on match keys
(lower case, no punctuation, one space between words) that end just before the option
(``not ``, ``не ``, ``nicht ``, ``pas ``, ``不是``; one short word may come between: ``not the``,
``no es``, ``όχι η``) or begin just after it (``ではない``, ``이 아니라``, ``不对``). The
answer reader applies every language's at once: ``Не Москва, а Казань`` names Казань."""

UNSPACED = frozenset(
    {"ja", "zh", "yue", "wuu", "gan", "lzh", "zh-classical", "zh-yue", "th", "lo", "my", "km", "bo", "dz"}
)
"""Languages written without spaces between words: no delimiter before an option."""


def _base(language: str) -> str:
    """``zh-yue`` -> ``zh-yue`` when the table has it, else ``zh``; ``pt-br`` -> ``pt``."""
    return language if language in ANSWER_CUES else language.split("-", 1)[0]


def instruction(language: str) -> str:
    """The instruction line of ``language``; English where the table has none."""
    return INSTRUCTIONS.get(_base(language), INSTRUCTIONS["en"])


def answer_cue(language: str) -> str:
    """The answer cue of ``language``; English where the table has none."""
    return ANSWER_CUES.get(_base(language), ANSWER_CUES["en"])


def name_only(language: str) -> str:
    """What ends a free-form question asked in ``language``: the line of :data:`NAME_ONLY` and
    the English one after it (the English one alone for English, and for a language the table
    lacks); no space between them after a language written without spaces."""
    english = "Answer with the name only."
    local = NAME_ONLY.get(_base(language)) if _base(language) != "en" else None
    if local is None:
        return english
    return local + ("" if language in UNSPACED or _base(language) in UNSPACED else " ") + english


def delimiter(language: str) -> str:
    """The delimiter before an option: none for :data:`UNSPACED` languages with a cue of their
    own (as lm-evaluation-harness's Japanese tasks), else a space; a language that falls back
    on the English cue (``bo``, ``dz``) falls back on its delimiter too, so that a prompt
    always follows one language's convention (lm-eval's default ``target_delimiter``)."""
    cued = _base(language) in ANSWER_CUES
    return "" if cued and (language in UNSPACED or _base(language) in UNSPACED) else " "


DELIMITERS = {code: delimiter(code) for code in ANSWER_CUES}
"""What goes between the answer cue and an option in log-likelihood mode, by language code
(lm-evaluation-harness's ``target_delimiter``; :func:`delimiter` for any language)."""
