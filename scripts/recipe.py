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
    python scripts/recipe.py --page docs/tutorials/yokaieval.md [--out DIR]

``--page`` runs the commands of a how-to guide or a walkthrough instead, as written, each as a
process, against the same stand-ins (and a jawiki run of yokai articles on the mirror).

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
sys.path.insert(0, str(ROOT / "scripts"))  # page_commands, beside this script however it is loaded

from page_commands import LLM_URL, LOCAL_MODEL, MIRROR_URL, NOT_RUN, console_commands, page_argv, shown_in  # noqa: E402

__all__ = ["LLM_URL", "LOCAL_MODEL", "MIRROR_URL", "NOT_RUN", "console_commands", "page_argv", "shown_in"]
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


# --- the pages' commands: docs/how-to and docs/tutorials (scripts/page_commands.py) ------------

YOKAI_DATE = "20260901"  # the jawiki run of the yokai sample (list page and articles)


def mirror_tree(dest: Path) -> Path:
    """A copy of the bundled tree plus a jawiki run :data:`YOKAI_DATE` whose multistream dump
    holds a list page written like 「日本の妖怪一覧」 and the yokai articles of
    tests/data/yokai-articles.json; returns ``dest``."""
    import lzma

    from wikiorigin.testing import page_xml, write_multistream_pages
    from wikiorigin.testing.trees import write_dumpstatus

    data = ROOT / "tests" / "data"
    shutil.copytree(TREE, dest)  # a copy: the mirror serves nothing outside its root
    run = dest / "jawiki" / YOKAI_DATE
    run.mkdir()
    with lzma.open(data / "dumps" / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz") as f:
        head = f.read(1 << 16)
    head = head[: head.index(b"</siteinfo>") + len(b"</siteinfo>\n")]
    sample = json.loads((data / "yokai-articles.json").read_text(encoding="utf-8"))
    pages = [page_xml(1, "日本の妖怪一覧", (data / "yokai-list-page-real.wiki").read_text(encoding="utf-8"))]
    pages += [page_xml(10 + i, title, text) for i, (title, text) in enumerate(sample["articles"].items())]
    pages += [page_xml(90 + i, a, f"#転送 [[{b}]]", redirect=b) for i, (a, b) in enumerate(sample["redirects"].items())]
    name = f"jawiki-{YOKAI_DATE}-pages-articles-multistream"
    write_multistream_pages(head, pages, run / f"{name}.xml.bz2", run / f"{name}-index.txt.bz2", pages_per_stream=3)
    write_dumpstatus(run, "jawiki", YOKAI_DATE)
    return dest


def _options(text: str, after: str) -> list[str]:
    """The classes a label prompt lists after ``after`` (``A、B、C。`` or ``- A: ...`` lines)."""
    rest = text.split(after, 1)[1]
    listed = re.findall(r"^- ([^:\n]+)", rest, re.M)
    return listed or [c.strip() for c in re.split(r"[、,]", rest.split("。", 1)[0]) if c.strip()]


def scripted_mcq(system: str, user: str, task: str) -> str:
    """``build mcq``'s steps: one question of the article's own words (its answer the word the
    article has, the other options words it lacks), checked right, backed by footnote 1, and
    labelled with the first classes offered."""
    if task == "generate":
        title = user.splitlines()[0]
        common = {title, "妖怪", "日本", "伝承", "脚注", "和書"}
        words = [w for w in dict.fromkeys(re.findall(r"[\u4e00-\u9fff]{2,}", user)) if w not in common]
        before, answer = (words[1], words[2]) if len(words) > 2 else ("記事", "伝承")
        others = ["北極星", "硝子細工", "蒸気機関"]
        question = {
            "question": f"{title}の記事で「{before}」の次に出てくる語はどれか。",
            "choices": [others[0], answer, *others[1:]],
            "answer": answer,
        }
        return json.dumps({"questions": [question]}, ensure_ascii=False)
    if task == "check":
        options = re.findall(r"^(\d)[.:)] (.+)$", user, re.M)
        article = re.sub(r"^\d[.:)] .+$", "", user, flags=re.M)
        index = next((int(i) for i, o in options if o.strip() in article), 0)
        return json.dumps({"answer_index": index})
    if task == "attribute":
        return json.dumps({"refs": [1]})
    if task.startswith("label"):
        said = {}
        for after in ("type は次のいずれか: ", "type is one of these classes:"):
            if after in system and "type" not in said:
                said["type"] = _options(system, after)[0]
        for after in (
            "region は問題の妖怪の伝承地域で、次のいずれか: ",
            "次から選んでください: ",
            "one or more of:",
            "comes from, one of:",
        ):
            if after in system and "region" not in said:
                said["region"] = _options(system, after)[0]
                said["regions"] = [said["region"]]
        return json.dumps(said, ensure_ascii=False)
    raise ValueError(f"the scripted model knows no task {task!r}")


def _rated() -> dict[tuple[str, str], float]:
    """People's rating of each (question, response) of the bundled sample."""
    rows = json.loads((ROOT / "tests" / "data" / "care-rated-sample.json").read_text(encoding="utf-8"))
    return {(r["question"], r["response"]): r["rating"] for r in rows}


def scripted_any(messages: list[dict]) -> str:
    """Every builder's and judge's task: the free-form builder's (:func:`scripted_model`), the
    multiple-choice builder's (:func:`scripted_mcq`), the leakage check's paraphrase and CARE's
    judge (a response people rated gets their rating, a point less from 8 up: a judge a little
    harsher on the best; any other response 5)."""
    system, user = messages[0]["content"], messages[-1]["content"]
    task = system.splitlines()[0].removeprefix("task: ")
    if task.startswith("freeform-"):
        return scripted_model(messages)
    if task == "paraphrase":  # the same sentences, in the other order
        return "。".join(reversed([s for s in user.split("。") if s.strip()])) + "。"
    if task == "rate":
        question = user.split("\n", 1)[0].removeprefix("Question: ")
        rating = _rated().get((question, user.rsplit("Answer to grade: ", 1)[-1]), 5)
        rating -= rating >= 8
        return f"The answer against the reference.\nRating: [[{max(1, min(10, round(rating)))}]]"
    return scripted_mcq(system, user, task)


# --- running it --------------------------------------------------------------------------------


def _wikiorigin() -> str:
    beside = Path(sys.executable).with_name("wikiorigin")
    return str(beside) if beside.exists() else (shutil.which("wikiorigin") or "wikiorigin")


# The review databases of the pages, and the set each reviews.
REVIEWED = {"work/review.sqlite": "work/yokaieval/test.parquet", "work/mcq-review.sqlite": "work/mcq/test.parquet"}


def decide(work: Path, dataset: str, db: str) -> None:
    """Two annotators' decisions, as the review page records them: alice rejects the last item,
    bob the last two; both accept the others."""
    from wikiorigin.review.items import load_dataset
    from wikiorigin.review.store import ReviewStore

    data = load_dataset(work / dataset)
    store = ReviewStore(work / db, data.path.name, data.kind, list(data.by_key), data.keyed_by)
    last = len(data.items) - 1
    for n, item in enumerate(data.items):
        for who, rejects in (("alice", n == last), ("bob", n >= last - 1)):
            if rejects:
                store.add(item.key, item.sha1, who, "reject", reason="not backed by the article")
            else:
                store.add(item.key, item.sha1, who, "accept")
    store.close()


def people(work: Path, argv: list[str]) -> None:
    """What a person does on a page before the command ``argv`` (the review in the browser,
    before `review stats`): the decisions of :func:`decide` on the set its database reviews."""
    if argv[:2] == ["review", "stats"]:
        db = argv[argv.index("--db") + 1]
        decide(work, REVIEWED[db], db)


def _run_page(page: Path, work: Path, model_dir: Path) -> int:
    """A docs page's commands, each as its own ``wikiorigin`` process in ``work``, against the
    stand-ins (the mirror with the yokai run, the scripted server answering every task, a
    stand-in hub for `build card --push`), the people's part done between them (:func:`people`)."""
    import os

    from tests.hub_server import FakeHub
    from tests.mirror import Mirror
    from tests.openai_server import ChatServer

    text = page.read_text(encoding="utf-8")
    (work / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    tree = mirror_tree(work / ".mirror")
    with Mirror(tree) as mirror, ChatServer(answer=scripted_any) as llm, FakeHub(token="hf_recipe") as hub:
        env = {**os.environ, "OPENAI_API_KEY": "recipe", "OPENAI_BASE_URL": llm.url, "WIKIORIGIN_CONTACT": CONTACT}
        env.update(HF_ENDPOINT=hub.url, HF_TOKEN="hf_recipe")
        for line, command, _ in console_commands(text):
            print(f"\n# {page.name}:{line}\n$ {command}", flush=True)
            argv = page_argv(command, mirror.url, llm.url, model_dir)
            people(work, argv)
            code = subprocess.call([_wikiorigin(), *argv], cwd=work, env=env)
            if code != 0:
                print(f"recipe: stopped: {page.name}:{line} exited {code}", file=sys.stderr)
                return code
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="demo-out/recipe", help="scratch directory (emptied first)")
    parser.add_argument("--wiki", default="jawiki", help="the language's edition")
    parser.add_argument(
        "--page", type=Path, help="run this docs page's `console` commands instead (docs/tutorials/yokaieval.md)"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.mirror import Mirror
    from tests.openai_server import ChatServer
    from tests.tiny_model import make_tiny_model

    work = Path(args.out).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    model_dir = make_tiny_model(work / "tiny-model", positions=1024)
    if args.page:
        code = _run_page(args.page.resolve(), work, model_dir)
        print(f"\nrecipe: {'done' if code == 0 else 'stopped'}; everything is in {work}")
        return code
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
