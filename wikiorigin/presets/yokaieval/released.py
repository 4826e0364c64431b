"""Adapters of YokaiEval's released rows: their messy region labels read into the eleven
region classes, and the words that open the instruction line of the released prompts."""

from __future__ import annotations

import re
import unicodedata

from .classes import REGIONS

__all__ = ["clean_region", "REGION_LETTERS", "INSTRUCTION_MARKS"]

INSTRUCTION_MARKS = ("以下の", "次の")
"""The words that open the closing instruction of the released prompts
(``以下の4つから回答を1つ選び…``): a question's stem ends before them."""

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
    if part in REGIONS:
        return part
    if len(part) == 1 and part.upper() in REGION_LETTERS:
        return REGION_LETTERS[part.upper()]
    for name in (part, part.removesuffix("地方"), part[:-1] if part[-1:] in "都道府県" else part):
        if name in REGIONS:
            return name
        if name in _REGION_OF:
            return _REGION_OF[name]
    if len(part) >= 2:  # a typo one edit away (中ぶ)
        from rapidfuzz.distance import Levenshtein

        close = [r for r in REGIONS if Levenshtein.distance(part, r) == 1 and len(r) == len(part)]
        return close[0] if len(close) == 1 else None
    return None


def clean_region(value) -> str:
    """One of :data:`~wikiorigin.presets.yokaieval.REGIONS` for a released row's ``region``, which
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
    regions = {r for r in found if r is not None and r != "不明"}
    if len(regions) > 1 or "複数の地域" in regions:
        return "複数の地域"
    return regions.pop() if regions else "不明"
