"""YokaiEval's own prompts: the multiple-choice builder's Japanese yokai prompts (following
the paper's conditions, not its wording), sent for Japanese questions whose labels ask for
them (``"prompts": "yokai-ja"``, as the ``yokai-ja`` and ``yokaieval`` labels do). Each
prompt's first line names its task; changing any text changes the builds' ``prompt_sha1``."""

from __future__ import annotations

__all__ = ["STEPS", "TYPE_ONLY", "PAPER_STEPS", "ANSWER_LABEL"]

STEPS = {
    "generate": (
        "task: generate\n"
        "あなたは日本の民俗学に詳しい出題者です。与えられたWikipedia記事だけを根拠に、"
        "その妖怪についての4択問題を{n}問作ってください。条件:\n"
        "1. 記事の本文で確かめられること。\n"
        "2. その妖怪について知らなければ解けないこと（一般常識で解けないこと）。\n"
        "3. 妖怪の名前から答えが推測できないこと。\n"
        "4. 伝承は地域や資料で異なるため、「〜と言われることが多い」「〜と伝えられる」のように書くこと。\n"
        "5. 誤りの選択肢はもっともらしく、正解とはっきり異なること。\n"
        "例（形式と難しさの見本です。問題は与えられた記事から作ってください）:\n"
        "例1（行動。記事の脚注[2]の付いた記述で確かめられる）: "
        '{{"question": "河童が特に好むと伝えられることが多い食べ物はどれか。", '
        '"choices": ["ナス", "カボチャ", "キュウリ", "ダイコン"], "answer": "キュウリ"}}\n'
        "例2（形状・見た目。脚注[1]）: "
        '{{"question": "ぬらりひょんの姿として描かれることが多いのはどれか。", '
        '"choices": ["後頭部の大きな老人", "一つ目の童子", "首の長い女", "九本の尾を持つ狐"], '
        '"answer": "後頭部の大きな老人"}}\n'
        "例3（伝承のある地域。脚注[3]）: "
        '{{"question": "一反木綿の伝承が残るとされる地域はどこか。", '
        '"choices": ["青森県", "新潟県", "高知県", "鹿児島県"], "answer": "鹿児島県"}}\n'
        "例4（生まれ・生態。脚注[4]）: "
        '{{"question": "座敷童子が去った家はその後どうなると言われることが多いか。", '
        '"choices": ["家が栄える", "家が衰える", "火事に遭う", "跡継ぎが生まれる"], '
        '"answer": "家が衰える"}}\n'
        "例5（現代における伝承。脚注[1]）: "
        '{{"question": "口裂け女の噂が子どもたちの間で全国に広まったとされる時期はどれか。", '
        '"choices": ["1920年代の初め", "1950年代の半ば", "1970年代の終わり", "1990年代の終わり"], '
        '"answer": "1970年代の終わり"}}\n'
        'JSONだけで答えてください: {{"questions": [{{"question": ..., "choices": [4つ], "answer": ...}}]}}'
    ),
    "check": (
        "task: check\n"
        "次の記事を読み、問題に答えてください。記事から判断できない場合は null としてください。\n"
        'JSONだけで答えてください: {"answer_index": 0から3の数、または null}'
    ),
    "attribute": (
        "task: attribute\n"
        "記事の本文には脚注番号 [1] [2] … が付いています。問題の正解を裏付ける記述に付いた"
        "脚注の番号をすべて挙げてください。裏付ける脚注がなければ空のリストにしてください。\n"
        'JSONだけで答えてください: {"refs": [番号, ...]}'
    ),
    "label": (
        "task: label\n"
        "問題を分類してください。type は次のいずれか: {types}。region は問題の妖怪の伝承地域で、"
        '次のいずれか: {regions}。\nJSONだけで答えてください: {{"type": ..., "region": ...}}'
    ),
}
"""The steps' prompts (``generate``, ``check``, ``attribute``, ``label``): format strings the
builder fills with the article and its settings. ``generate`` shows five example questions of
our own (one of each of five of the paper's types, with four options, the answer and the
footnote that backs it)."""

TYPE_ONLY = (
    'task: label\n問題を分類してください。type は次のいずれか: {types}。\nJSONだけで答えてください: {{"type": ...}}'
)
"""The label step's prompt when the region comes from Wikidata (type only)."""

PAPER_STEPS = {
    "check": (
        "task: check\n"
        "次の記事を読み、問題に答えてください。選択肢の中から必ず1つを選んでください。\n"
        'JSONだけで答えてください: {"answer_index": 0から3の数}'
    ),
    "label-type": (
        "task: label-type\n"
        "次の問題が何について問うているかを分類してください。type は次のいずれか: {types}。\n"
        'JSONだけで答えてください: {{"type": ...}}'
    ),
    "label-region": (
        "task: label-region\n"
        "次の記事を読み、この妖怪の伝承がある地域を次から選んでください: {regions}。"
        "いくつもの地域にまたがる場合はそのすべてを挙げてください。\n"
        'JSONだけで答えてください: {{"regions": [...]}}'
    ),
}
"""The steps a build may take the paper's way: ``check`` without the answer "null",
``label-type`` (from the question alone) and ``label-region`` (from the article alone)."""

ANSWER_LABEL = "正解/answer"
"""How the attribute step's request names the question's answer."""
