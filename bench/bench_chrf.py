"""chrF: ours (wikiorigin.evaluators.freeform.chrf) against sacrebleu's sentence chrF on the same
4,000 name pairs (labels and aliases of the bundled Wikidata sample, in ~200 languages, bare or
phrased as a model answers), in the same run: the time ratio (anchor: ours at most 1.2x
sacrebleu's, the reason we keep ours without sacrebleu's dependencies) and the largest
difference of the scores (anchor: under 1e-9). Best of 5 runs each, interleaved.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import QUICK  # noqa: E402
from wikiorigin.evaluators.freeform import chrf, normalize  # noqa: E402

FORMS = ["{}", "The answer is {}.", "{}です", "答えは「{}」", "Ответ: {}", "**{}**"]


def pairs(n: int = 4000) -> list[tuple[str, str]]:
    path = ROOT / "tests" / "data" / "dumps" / "wikidata-20151109-five-entities.json"
    items = [json.loads(line.rstrip(",\n")) for line in path.open(encoding="utf-8") if line.startswith("{")]
    groups = [
        [v["value"] for v in i.get("labels", {}).values()]
        + [a["value"] for al in i.get("aliases", {}).values() for a in al]
        for i in items
    ]
    rng = random.Random(0)
    out = []
    for _ in range(n):
        group = rng.choice(groups)
        out.append((normalize(rng.choice(FORMS).format(rng.choice(group))), normalize(rng.choice(group))))
    return out


def main() -> int:
    try:
        from sacrebleu.metrics import CHRF
    except ImportError:
        print("bench_chrf: needs sacrebleu (pip install -e .[test])")
        return 2
    data = pairs(400 if QUICK else 4000)
    metric = CHRF()

    def ours():
        started = time.perf_counter()
        scores = [chrf(h, r) for h, r in data]
        return time.perf_counter() - started, scores

    def theirs():
        started = time.perf_counter()
        scores = [metric.sentence_score(h, [r]).score for h, r in data]
        return time.perf_counter() - started, scores

    times_ours, times_theirs = [], []
    for _ in range(1 if QUICK else 5):
        (t_ours, a), (t_theirs, b) = ours(), theirs()
        times_ours.append(t_ours)
        times_theirs.append(t_theirs)
    ratio = min(times_ours) / min(times_theirs)
    worst = max(abs(x - y) for x, y in zip(a, b))
    print(
        f"chrF on {len(data):,} name pairs: ours {min(times_ours) * 1e3:.0f} ms, sacrebleu "
        f"{min(times_theirs) * 1e3:.0f} ms -> ratio {ratio:.2f} (anchor <= 1.2); largest difference "
        f"{worst:.1e} (anchor < 1e-9)"
    )
    label = f"chrF on {len(data):,} name pairs, ours / sacrebleu time"
    print(f"{label:<44}  {ratio:.2f} (anchor <= 1.2; largest difference {worst:.1e})")
    return 0 if (ratio <= 1.2 or QUICK) and worst < 1e-9 else 1  # quick: only the numbers must agree


if __name__ == "__main__":
    sys.exit(main())
