"""The new-language recipe, end to end, on the bundled data (``make recipe``).

A researcher's first job is a QA set for one language's own items:

    mirror -> download -> origins over all wikis -> subset -> multistream and Wikidata
    -> corpus origin -> build freeform -> eval freeform -> build card

This script runs those commands, exactly as the new-language tutorial (docs/tutorials/new-language.md) types them, against
stand-ins that need no network: ``tests/data/tree`` (8 Wikipedias and a Wikidata JSON dump,
made by ``scripts/make_fixtures.py``) served as a dump mirror on loopback (``tests/mirror.py``),
an OpenAI-compatible server on loopback whose scripted model answers the free-form builder's
tasks (``tests/openai_server.py``, :func:`scripted_model`), and a tiny random local model
(``tests/tiny_model.py``) in place of the model under evaluation. Each command runs as its own
``wikiorigin`` process; the script stops at the first that fails.

    python scripts/recipe.py [--out demo-out/recipe] [--wiki jawiki]

``tests/test_recipe.py`` runs the same steps (:func:`steps`) in-process and checks each
step's rows against ``tests/data/tree/EXPECTED.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "tests" / "data" / "tree"
DATE = "20260801"  # the wikis' dump run in the tree
WIKIDATA_DATE = "20260803"  # Wikidata's JSON dumps have dates of their own
CONTACT = "recipe@example.org"
MODEL = "loopback-gen"  # the generator's name on the loopback server


def tree_wikis(tree: Path = TREE) -> list[str]:
    """The wikis the bundled mirror serves (``all`` would ask it for all 348)."""
    return sorted(d.name for d in tree.iterdir() if (d / DATE).is_dir())


def steps(
    work: Path, mirror: str, llm: str, model_dir: Path, wiki: str = "jawiki", wikis: list[str] | None = None
) -> list[tuple[str, list[str]]]:
    """``(what, argv)`` for each command of the recipe; ``work`` receives everything."""
    dumps, run = work / "dumps", work / "dumps" / wiki / DATE
    from wikiorigin.languages import lookup

    lang = lookup(wiki).language
    multistream = run / f"{wiki}-{DATE}-pages-articles-multistream.xml.bz2"
    index = run / f"{wiki}-{DATE}-pages-articles-multistream-index.txt.bz2"
    wikidata = dumps / "wikidatawiki" / "entities" / WIKIDATA_DATE / f"wikidata-{WIKIDATA_DATE}-all.json.gz"
    fetch = ["--mirror", mirror, "--contact", CONTACT, "--out", str(dumps)]
    llm_options = ["--model", MODEL, "--base-url", llm, "--cache", str(work / "llm-cache.sqlite")]
    return [
        (
            "download the stubs and page_props of every wiki (the newest run done)",
            ["download", *(wikis or tree_wikis()), "--kinds", "stubs,page_props", *fetch],
        ),
        ("origins over all wikis", ["origins", str(dumps), "--out", str(work / "origins.parquet"), "--jobs", "2"]),
        (
            f"the items that originate in {wiki}",
            ["subset", str(work / "origins.parquet"), "--wiki", lang, "--out", str(work / f"{lang}-items.parquet")],
        ),
        (
            f"{wiki}'s multistream dump of the same run",
            ["download", lang, "--kinds", "multistream", "--date", DATE, *fetch],
        ),
        ("the Wikidata JSON dump (its own newest date)", ["download", lang, "--kinds", "wikidata", *fetch]),
        (
            "the items' articles, names and aliases",
            [
                "corpus",
                "origin",
                "--items",
                str(work / f"{lang}-items.parquet"),
                "--dump",
                str(multistream),
                "--index",
                str(index),
                "--wikidata",
                str(wikidata),
                "--out",
                str(work / f"{lang}-articles.parquet"),
            ],
        ),
        (
            "free-form questions",
            [
                "build",
                "freeform",
                "--articles",
                str(work / f"{lang}-articles.parquet"),
                "--out",
                str(work / "qa" / "freeform.parquet"),
                *llm_options,
            ],
        ),
        (
            "evaluate a local model",
            [
                "eval",
                "freeform",
                "--questions",
                str(work / "qa" / "freeform.parquet"),
                "--model",
                str(model_dir),
                "--device",
                "cpu",
                "--out",
                str(work / "results" / "tiny"),
            ],
        ),
        (
            "the dataset card",
            [
                "build",
                "card",
                str(work / "qa"),
                "--kind",
                "freeform",
                "--title",
                f"WikiOriginQA ({lang}, bundled sample)",
                "--description",
                f"Free-form questions on items whose first Wikipedia article is in {wiki}.",
            ],
        ),
    ]


# --- the scripted generator --------------------------------------------------------------------


def _between(text: str, before: str, after: str) -> str:
    return text.split(before, 1)[1].split(after, 1)[0]


def scripted_model(messages: list[dict]) -> str:
    """What the loopback generator answers to each task of ``build freeform``: a question that
    does not name its answer; every question scores 5 on every criterion but that of 同時,
    which is not trivial enough (it is dropped with its reason)."""
    system, user = messages[0]["content"], messages[-1]["content"]
    task = system.splitlines()[0].removeprefix("task: ")
    if task in ("freeform-generate", "freeform-refine"):  # instructed in the item's language
        title = next(t for t in re.search(r'「(.+?)」|„(.+?)“|«(.+?)»|"(.+?)"', system).groups() if t)
        said = (
            "の名を持つ、この記事の主題は何か。" if task == "freeform-generate" else "で書かれる、この項目の名は何か。"
        )
        return json.dumps({"question": f"{len(title)}文字{said}"}, ensure_ascii=False)
    if task == "freeform-translate":
        title = _between(system, "English name of its answer (", ") as an English")
        english = {"河童": "Kappa", "同時": "Simultaneity"}.get(title, title)
        return json.dumps(
            {"question_en": f"What is the name, {len(title)} characters long, of this subject?", "answer_en": english}
        )
    if task == "freeform-score":
        answer = user.rsplit("Answer: ", 1)[1]
        return json.dumps(
            {
                c: 3 if (answer == "同時" and c == "not_trivial") else 5
                for c in (
                    "not_yes_no",
                    "not_sentence_answer",
                    "answer_not_in_question",
                    "knowable_by_cutoff",
                    "stable_over_time",
                    "not_trivial",
                    "self_contained",
                )
            }
        )
    if task == "freeform-giveaway":
        return json.dumps({"gives_away": False, "reason": "it asks what the article says of the subject"})
    raise ValueError(f"the scripted model knows no task {task!r}")


# --- running it --------------------------------------------------------------------------------


def _wikiorigin() -> str:
    beside = Path(sys.executable).with_name("wikiorigin")
    return str(beside) if beside.exists() else (shutil.which("wikiorigin") or "wikiorigin")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="demo-out/recipe", help="scratch directory (emptied first)")
    parser.add_argument("--wiki", default="jawiki", help="the language's edition")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.mirror import Mirror
    from tests.openai_server import ChatServer
    from tests.tiny_model import make_tiny_model

    work = Path(args.out).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    model_dir = make_tiny_model(work / "tiny-model", positions=1024)
    with Mirror(TREE) as mirror, ChatServer(answer=scripted_model, models=[MODEL]) as llm:
        print(
            f"# loopback dump mirror: {mirror.url}\n# loopback OpenAI-compatible server: {llm.url}\n"
            f"# tiny local model: {model_dir}"
        )
        for what, command in steps(work, mirror.url, llm.url, model_dir, args.wiki):
            print(f"\n# {what}\n$ wikiorigin {shlex.join(command)}", flush=True)
            code = subprocess.call([_wikiorigin(), *command])
            if code != 0:
                print(f"recipe: stopped: `wikiorigin {command[0]}` exited {code}", file=sys.stderr)
                return code
    print(f"\nrecipe: done; everything is in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
