"""What a multiple-choice prompt says in each language: the instruction line after the options
(generation mode), the answer cue before each option (log-likelihood mode) and the delimiter
between them (lm-evaluation-harness's ``target_delimiter``).

One small table by language (:data:`INSTRUCTIONS`, :data:`ANSWER_CUES`); a language it lacks
gets the English line and cue (:func:`instruction`, :func:`answer_cue`); the command line lets
anyone pass their own (``--instruction``, ``--answer-cue``). The delimiter is a space, except
for the languages written without spaces between words (:data:`UNSPACED`: Japanese, Chinese,
Thai, ...), which take none, as lm-evaluation-harness's Japanese tasks do.
"""

from __future__ import annotations

__all__ = ["INSTRUCTIONS", "ANSWER_CUES", "DELIMITERS", "UNSPACED", "instruction", "answer_cue", "delimiter"]

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
    "ja": "\n回答：", "en": "\nAnswer:", "el": "\nΑπάντηση:", "ko": "\n답:", "ga": "\nFreagra:",
    "ca": "\nResposta:", "et": "\nVastus:", "zh": "\n答案：", "ar": "\nالإجابة:", "hi": "\nउत्तर:",
    "ru": "\nОтвет:", "fr": "\nRéponse :", "de": "\nAntwort:", "es": "\nRespuesta:",
}
"""What follows a question in log-likelihood mode, before each option, by language code."""

UNSPACED = frozenset({"ja", "zh", "yue", "wuu", "gan", "lzh", "zh-classical", "zh-yue", "th", "lo", "my", "km",
                      "bo", "dz"})
"""Languages written without spaces between words: no delimiter before an option."""

DELIMITERS = {code: "" if code in UNSPACED else " " for code in ANSWER_CUES}
"""What goes between the answer cue and an option in log-likelihood mode, by language code
(lm-evaluation-harness's ``target_delimiter``; :func:`delimiter` for any language)."""


def _base(language: str) -> str:
    """``zh-yue`` -> ``zh-yue`` when the table has it, else ``zh``; ``pt-br`` -> ``pt``."""
    return language if language in ANSWER_CUES else language.split("-", 1)[0]


def instruction(language: str) -> str:
    """The instruction line of ``language``; English where the table has none."""
    return INSTRUCTIONS.get(_base(language), INSTRUCTIONS["en"])


def answer_cue(language: str) -> str:
    """The answer cue of ``language``; English where the table has none."""
    return ANSWER_CUES.get(_base(language), ANSWER_CUES["en"])


def delimiter(language: str) -> str:
    """The delimiter before an option: none for :data:`UNSPACED` languages, else a space."""
    return "" if language in UNSPACED or _base(language) in UNSPACED else " "
