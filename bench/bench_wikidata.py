"""The Wikidata pass of `corpus origin`: its whole run with `--wikidata` (the items, their labels
and sitelinks, and their regions up a three-level P131 chain) against one plain decompression of
the same dump, in one run (goal, issue 22: at most 2.5x; a pass per level before it); then its
parts apart: the one pass, `wikidata extract` for one wiki's items and for eight wikis' (nine
languages), `corpus origin --entities` (no dump read); and the filtered read of 1% of the items
against `json.loads` on every line (anchor: >= 5x); and the pass's line screen, compiled against
its Python twin (anchor: >= 1.5x).

The synthetic dump (gzip -6, as Wikimedia's) has the real shape: big items copied from the
bundled sample (Q1, Q8: lines of 21-41 kB, no place), some of them with a "country" (P17)
qualifier that the screen cannot tell from a statement, and places of 6-7 kB (labels in 40
languages, coordinates, references), 15% of the bytes (a generous share: places are a minority
of Wikidata's items, and smaller than most): Japan, 47 prefectures, 470 districts, 4,700
municipalities, and villages, temples and the like in them. It compresses about 5x (the real
dump about 10x: decompression per byte is a little faster there). The items are 20 short jawiki
pages, each about a village in a municipality (three levels of parents: municipality, district,
prefecture), in a multistream dump of their own: the articles cost little beside the pass.

Size: WIKIORIGIN_BENCH_WIKIDATA_MB (default 300). Runs: WIKIORIGIN_BENCH_RUNS (default 3, the
best kept; decompression and each run alternating). On two cores that other work shares, the
decompressor's thread and the parsing run one after the other and the figures rise: run it on
a quiet machine.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common import QUICK, cached, size
from wikiorigin.dumps.compression import open_dump
from wikiorigin.dumps.wikidata import read_entities
from wikiorigin.testing.wikidata import entity_json

SIZE = size(300_000_000, 10_000_000, "WIKIORIGIN_BENCH_WIKIDATA_MB", 1_000_000)
RUNS = 1 if QUICK else int(os.environ.get("WIKIORIGIN_BENCH_RUNS", "3"))
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "dumps" / "wikidata-20151109-five-entities.json"
JAWIKI = ROOT / "tests" / "data" / "dumps" / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
JAPAN = "Q17"
PREFECTURES, DISTRICTS, MUNICIPALITIES = 47, 470, 4_700
ITEMS = 20
PLACES = 0.15  # of the bytes
QUALIFIED = 0.05  # of the other items: a P17 qualifier the screen cannot tell from a statement


def _sample_items() -> list[dict]:
    lines = [line.strip().rstrip(",") for line in SAMPLE.read_text().splitlines() if line.strip() not in ("[", "]")]
    return [json.loads(line) for line in lines if json.loads(line)["type"] == "item"]


def _place_template(big: dict) -> dict:
    """A place as Wikidata has them: labels and descriptions in 40 languages, P31, P17, P131,
    coordinates (P625) and an image, with references (P131 and P17 filled in per line)."""
    place = json.loads(entity_json("Q0", {}, claims={"P31": ["Q532"], "P17": [JAPAN], "P131": ["Q0"]}))
    langs = list(big["labels"])[:40]
    place["labels"] = {lang: {"language": lang, "value": f"Place {lang}"} for lang in langs}
    place["descriptions"] = {lang: {"language": lang, "value": f"village in Japan ({lang})"} for lang in langs}
    reference = [
        {
            "hash": "0" * 40,
            "snaks": {
                "P143": [
                    {
                        "snaktype": "value",
                        "property": "P143",
                        "datavalue": {
                            "value": {"entity-type": "item", "numeric-id": 48183, "id": "Q48183"},
                            "type": "wikibase-entityid",
                        },
                        "datatype": "wikibase-item",
                    }
                ]
            },
            "snaks-order": ["P143"],
        }
    ]
    for statements in place["claims"].values():
        for statement in statements:
            statement["references"] = reference
    place["claims"]["P625"] = [
        {
            "mainsnak": {
                "snaktype": "value",
                "property": "P625",
                "datatype": "globe-coordinate",
                "datavalue": {
                    "value": {
                        "latitude": 35.6,
                        "longitude": 139.7,
                        "precision": 0.0001,
                        "globe": "http://www.wikidata.org/entity/Q2",
                    },
                    "type": "globecoordinate",
                },
            },
            "type": "statement",
            "rank": "normal",
            "references": reference,
        }
    ]
    place["claims"]["P18"] = big["claims"].get("P18", [])[:1]
    return place


def _place_line(template: dict, qid: str, parent: str, country: str = JAPAN) -> str:
    data = dict(template, id=qid)
    claims = dict(template["claims"])
    claims["P131"] = [
        dict(
            claims["P131"][0],
            mainsnak={
                **claims["P131"][0]["mainsnak"],
                "datavalue": {
                    "value": {"entity-type": "item", "numeric-id": int(parent[1:]), "id": parent},
                    "type": "wikibase-entityid",
                },
            },
        )
    ]
    claims["P17"] = [
        dict(
            claims["P17"][0],
            mainsnak={
                **claims["P17"][0]["mainsnak"],
                "datavalue": {
                    "value": {"entity-type": "item", "numeric-id": int(country[1:]), "id": country},
                    "type": "wikibase-entityid",
                },
            },
        )
    ]
    data["claims"] = claims
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _with_country_qualifier(item: dict) -> dict:
    """An item that is no place but names a country in a qualifier (an award "in" a country)."""
    item = json.loads(json.dumps(item))
    claim = next(iter(item["claims"].values()))[0]
    claim["qualifiers"] = {
        "P17": [
            {
                "snaktype": "value",
                "property": "P17",
                "datavalue": {
                    "value": {"entity-type": "item", "numeric-id": 17, "id": JAPAN},
                    "type": "wikibase-entityid",
                },
                "datatype": "wikibase-item",
            }
        ]
    }
    return item


def bench_items(pages: list[tuple[int, str]]) -> dict[str, tuple[int, str, str]]:
    """The bench's items: qid -> (page id, title, municipality), one per page."""
    return {
        f"Q{120_000_000 + i}": (page_id, title, f"Q{1_000 + PREFECTURES + DISTRICTS + i * 7 % MUNICIPALITIES}")
        for i, (page_id, title) in enumerate(pages)
    }


_VALUE = re.compile(r'("value":")([^"\\]{3,})(")|("id":"[QPqp][0-9]+\$)([^"]+)(")|("hash":")([0-9a-f]{40})(")')


class _Noise:
    """Per-line variety, so that the dump compresses as the real one does (about 10x with gzip),
    not as copies of one line: label and string values from a vocabulary, statement ids and
    hashes at random."""

    def __init__(self, rng: random.Random, vocabulary: list[str]):
        self.rng, self.vocabulary = rng, vocabulary

    def _one(self, m: re.Match) -> str:
        if m.group(1):
            if self.rng.random() < 0.6:  # a name as it is (most labels repeat across languages)
                return m.group(0)
            words, size = [], 0
            while size < len(m.group(2)):
                words.append(self.rng.choice(self.vocabulary))
                size += len(words[-1]) + 1
            return m.group(1) + " ".join(words)[: max(3, len(m.group(2)))] + m.group(3)
        if m.group(4):
            guid = "-".join(f"{self.rng.getrandbits(4 * n):0{n}x}" for n in (8, 4, 4, 4, 12))
            return m.group(4) + guid + m.group(6)
        return m.group(7) + f"{self.rng.getrandbits(160):040x}" + m.group(9)

    def __call__(self, line: str) -> str:
        return _VALUE.sub(self._one, line)


def make_dump(path, pages: list[tuple[int, str]]) -> None:
    """The synthetic dump: see the module's docstring."""
    rng = random.Random(22)
    big = _sample_items()
    vocabulary = sorted({w for b in big for v in b["labels"].values() for w in v["value"].split()})
    noise = _Noise(rng, vocabulary)
    template = _place_template(big[0])
    others = [json.dumps(b, ensure_ascii=False, separators=(",", ":")) for b in big]
    qualified = [json.dumps(_with_country_qualifier(b), ensure_ascii=False, separators=(",", ":")) for b in big]
    prefectures = [f"Q{1_000 + i}" for i in range(PREFECTURES)]
    districts = [f"Q{1_000 + PREFECTURES + i}" for i in range(DISTRICTS)]
    municipalities = [f"Q{1_000 + PREFECTURES + DISTRICTS + i}" for i in range(MUNICIPALITIES)]
    lines = [entity_json(JAPAN, {"ja": "日本", "en": "Japan"}, claims={"P17": [JAPAN]})]
    lines += [noise(_place_line(template, q, JAPAN)) for q in prefectures]
    lines += [noise(_place_line(template, q, prefectures[i % PREFECTURES])) for i, q in enumerate(districts)]
    lines += [noise(_place_line(template, q, districts[i % DISTRICTS])) for i, q in enumerate(municipalities)]
    for qid, (_, title, municipality) in bench_items(pages).items():
        lines.append(
            entity_json(
                qid,
                {"ja": title, "en": f"{title} (en)"},
                aliases={"ja": [f"{title}の別名"]},
                sitelinks={"jawiki": title, "enwiki": f"{title} (en)"},
                claims={"P131": [municipality], "P17": [JAPAN], "P31": ["Q5"]},
            )
        )
    rng.shuffle(lines)
    written, n, places = 0, 0, 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as f:
        f.write("[\n")
        for line in lines:
            f.write(line + ",\n")
            written += len(line.encode()) + 2
        places = written
        while written < SIZE:
            n += 1
            qid = f"Q{3_000_000 + n}"
            if places < PLACES * written:  # a village, a temple, ...
                line = _place_line(template, qid, municipalities[n % MUNICIPALITIES])
            else:
                line = (qualified if rng.random() < QUALIFIED else others)[n % len(others)]
                line = line.replace('"id":"Q1"', f'"id":"{qid}"', 1).replace('"id":"Q8"', f'"id":"{qid}"', 1)
            line = noise(line)
            f.write(line + ",\n")
            written += len(line.encode()) + 2
            places += (
                len(line.encode()) + 2
                if line.startswith('{"type":"item","id":"Q', 0) and '"P131":[{"mainsnak"' in line
                else 0
            )
        f.write("]\n")


def _pages() -> list[tuple[int, str]]:
    """The items' pages: ``ITEMS`` short articles, each with a reference."""
    return [(1_000 + i, f"記事{i}") for i in range(ITEMS)]


def make_multistream(directory) -> None:
    """A jawiki multistream dump (the bundled sample's siteinfo) of the items' short pages: the
    articles cost little beside the Wikidata pass that is measured."""
    import lzma

    from wikiorigin.testing import page_xml, write_multistream_pages

    with lzma.open(JAWIKI) as f:
        head = f.read(1 << 16)
    head = head[: head.index(b"</siteinfo>") + len(b"</siteinfo>\n")]
    text = "'''{0}'''は日本の村である。<ref>{{{{Cite book|title=村誌|year=2001}}}}</ref>\n== 脚注 ==\n<references />"
    pages = [page_xml(page_id, title, text.format(title)) for page_id, title in _pages()]
    directory.mkdir()
    write_multistream_pages(
        head, pages, directory / "jawiki-multistream.xml.bz2", directory / "jawiki-multistream-index.txt.bz2"
    )


def _items_file(path, items: dict[str, tuple[int, str, str]]) -> None:
    from wikiorigin.testing import write_items

    write_items(path, [(qid, "jawiki", page_id, title) for qid, (page_id, title, _) in items.items()])


def _decompress(path) -> tuple[float, int]:
    started = time.perf_counter()
    with open_dump(path) as stream:
        size = sum(len(c) for c in iter(lambda: stream.read(1 << 22), b""))
    return time.perf_counter() - started, size


def _best(fn, runs: int = RUNS) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def _all_lines(path) -> int:
    n = 0
    with open_dump(path) as stream:
        for line in stream.lines():
            line = line.strip().rstrip(b",")
            if line not in (b"[", b"]", b""):
                json.loads(line)
                n += 1
    return n


def _alternating(path, runs: dict) -> tuple[float, dict]:
    """The best of ``RUNS`` of one decompression and of each of ``runs`` (name -> function),
    one after the other in each round: (decompression, name -> (seconds, the last result))."""
    decompress, best = float("inf"), {}
    for _ in range(RUNS):
        decompress = min(decompress, _decompress(path)[0])
        for name, fn in runs.items():
            started = time.perf_counter()
            result = fn()
            seconds = time.perf_counter() - started
            best[name] = (min(seconds, best.get(name, (seconds,))[0]), result)
    return decompress, best


WIKIS = ["jawiki", "dewiki", "frwiki", "eswiki", "ruwiki", "itwiki", "plwiki", "nlwiki"]


def corpus_figures(path, pages, multistream) -> None:
    """`corpus origin --wikidata` (and, where the code has them, the pass alone, `wikidata
    extract` for one and for eight wikis, and `corpus origin --entities`) against one
    decompression of the same dump, alternating, the best of ``RUNS`` each."""
    from wikiorigin.corpora.origin import build_origin_corpus
    from wikiorigin.dumps.pages import Multistream

    items = bench_items(pages)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        tmp = Path(tmp)
        items_path = tmp / "items.parquet"
        _items_file(items_path, items)
        runs = {
            "corpus origin --wikidata": lambda: build_origin_corpus(
                items_path, Multistream(*multistream), tmp / "a.parquet", wikidata=path
            )
        }
        runs.update(_entity_runs(path, items_path, multistream, tmp))
        decompress, best = _alternating(path, runs)
        rows = pq.read_table(tmp / "a.parquet").to_pylist()
        with_region = sum(r["region_qid"] is not None for r in rows)
        report = best["corpus origin --wikidata"][1]
        assert len(rows) == ITEMS and with_region == ITEMS, (len(rows), with_region, report.notes[:3])
        if (tmp / "b.parquet").exists():
            assert pq.read_table(tmp / "b.parquet").to_pylist() == rows  # the same rows either way
        print(
            f"bench_wikidata: {path.stat().st_size / 1e6:,.0f} MB gzip ({_decompress(path)[1] / 1e6:,.0f} MB of "
            f"JSON); {ITEMS} items, each three levels below a prefecture; decompression {decompress:.2f} s"
        )
        for name, (seconds, _) in best.items():
            goal = " (goal <= 2.5)" if name == "corpus origin --wikidata" else ""
            print(f"{name + ' / decompression':<50} {seconds / decompress:6.2f}{goal} ({seconds:.2f} s)")
        print(f"  {report.region_fetches} levels of parents looked up")


def _entity_runs(path, items_path, multistream, tmp) -> dict:
    """The runs of the one pass's parts, where the code has them (not before issue 22)."""
    try:
        from wikiorigin.corpora.entities import extract_entities
        from wikiorigin.dumps.wikidata import read_items_and_places
    except ImportError:
        return {}
    from wikiorigin.corpora.origin import build_origin_corpus
    from wikiorigin.dumps.pages import Multistream

    qids = pq.read_table(items_path, columns=["qid"]).column(0).to_pylist()
    others = []
    for n, wiki in enumerate(WIKIS[1:], 1):  # seven more wikis' items, 20 each (not in this dump)
        others.append(tmp / f"{wiki}-items.parquet")
        _items_file(others[-1], {f"Q{130_000_000 + 100 * n + i}": (i + 1, f"Page {i}", "") for i in range(ITEMS)})
        pq.write_table(pq.read_table(others[-1]).set_column(1, "origin_wiki", pa.array([wiki] * ITEMS)), others[-1])
    return {
        "one pass (read_items_and_places)": lambda: sum(1 for _ in read_items_and_places(path, qids, ["en", "ja"])),
        "wikidata extract, 1 wiki": lambda: extract_entities(path, [items_path], tmp / "entities.parquet"),
        "corpus origin --entities": lambda: build_origin_corpus(
            items_path, Multistream(*multistream), tmp / "b.parquet", entities_file=tmp / "entities.parquet"
        ),
        "wikidata extract, 8 wikis (9 languages)": lambda: extract_entities(
            path, [items_path, *others], tmp / "entities-8.parquet"
        ),
    }


def filtered_figure(path) -> None:
    """The filtered read of 1% of the entities against json.loads on every line."""
    size = _decompress(path)[1]
    loads_s, lines = _best(lambda: _all_lines(path), 1)
    wanted = [f"Q{3_000_000 + i}" for i in range(1, lines, 100)]
    filter_s, found = _best(lambda: sum(1 for _ in read_entities(path, wanted)), 1)
    print(
        f"  json.loads on every line {size / loads_s / 1e6:,.0f} MB/s; filtered read "
        f"{size / filter_s / 1e6:,.0f} MB/s ({found:,} of {lines:,} entities)"
    )
    print(f"{'filtered read (1%) / json.loads every line':<44} {loads_s / filter_s:7.1f} (anchor >= 5)")


def screen_figure(path) -> None:
    """The line screen of the one pass, compiled (``_screen.c``) against its Python twin, on the
    decompressed blocks of the same dump (in memory: the screens alone), best of three each."""
    from wikiorigin.dumps import wikidata

    try:
        from wikiorigin.dumps._screen import screen
    except ImportError:
        print("  the compiled screen is not built: no figure")
        return
    blocks = list(wikidata._blocks(path))
    size = sum(end - start for _, start, end in blocks)
    wanted = {b"Q1"}

    def run(fn):
        number = 0
        for buf, start, end in blocks:
            _, _, number = fn(buf, start, end, wanted, number)

    py_s, _ = _best(lambda: run(wikidata._py_screen), 3)
    c_s, _ = _best(lambda: run(screen), 3)
    print(
        f"  the screen on {size / 1e6:,.0f} MB: Python {size / py_s / 1e9:.1f} GB/s, compiled {size / c_s / 1e9:.1f} GB/s"
    )
    print(f"{'line screen, compiled / Python throughput':<44} {py_s / c_s:7.1f} (anchor >= 1.5)")


def main() -> None:
    pages = _pages()
    multi = cached("jawiki-items-multistream", make_multistream)
    multistream = (multi / "jawiki-multistream.xml.bz2", multi / "jawiki-multistream-index.txt.bz2")
    path = cached(f"wikidata-chain-v3-{SIZE}.json.gz", lambda p: make_dump(p, pages))
    corpus_figures(path, pages, multistream)
    filtered_figure(path)
    screen_figure(path)


if __name__ == "__main__":
    sys.exit(main())
