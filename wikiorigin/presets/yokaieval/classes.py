"""YokaiEval's classes: the paper's six question types and our eleven regions (the regions of
Japan of the paper's Table 6, 中国 and 四国 as one class as that table reports them,
nationwide, several, unknown), with their English names for plots. The labels presets
``yokai-ja`` and ``yokaieval`` (``wikiorigin/data/labels/``) hold the same classes."""

from __future__ import annotations

__all__ = ["TYPES", "REGIONS", "ENGLISH"]

TYPES = [
    "妖怪の行う行動",
    "妖怪の形状・見た目",
    "妖怪の伝承のある地域",
    "妖怪の生まれ・生態",
    "現代における伝承",
    "妖怪の典拠",
]
"""The YokaiEval paper's six question types (the ``type`` of its rows)."""

REGIONS = ["北海道", "東北", "関東", "中部", "近畿", "中国・四国", "九州", "沖縄", "日本全国", "複数の地域", "不明"]
"""Our eleven region classes: the regions of Japan, nationwide, several, unknown."""

ENGLISH = dict(
    zip(
        TYPES + REGIONS,
        [
            "actions",
            "appearance",
            "region of the lore",
            "origin and habits",
            "lore today",
            "sources",
            "Hokkaido",
            "Tohoku",
            "Kanto",
            "Chubu",
            "Kinki",
            "Chugoku-Shikoku",
            "Kyushu",
            "Okinawa",
            "nationwide",
            "several regions",
            "unknown",
        ],
    )
)
"""The classes' English names, as plots draw them."""
