"""Write the notebooks in notebooks/ (kept here as code, so that their cells are reviewed as
code), run each and save it with its outputs.

``python scripts/make_notebook.py`` writes them again: each runs top to bottom in a python3
kernel from ``notebooks/`` (``pip install -e ".[notebooks]"``), notebook 02 against the tests'
loopback OpenAI-compatible server with their scripted answers, notebook 03 with the tiny
random model of the tests on CPU; tests/test_notebooks.py runs them the same way and checks
that the stored outputs are those of the cells as they are.
"""

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import nbformat as nbf

INSTALL = """Install what the notebooks need with `pip install -e ".[notebooks]"` (Jupyter, matplotlib)."""

CELLS = [
    (
        "md",
        """# Exploring an origins file

`wikiorigin origins` writes one row per Wikidata item: the edition whose article was created
first (`origin_wiki`), when, the runner-up, the lead in days, whether it was a tie, and every
edition in order. This notebook reads such a file with DuckDB and pyarrow.

Set `WIKIORIGIN_ORIGINS` to your own `origins.parquet`; without it the notebook builds one from
the bundled fixture tree (`tests/data/tree`, 7 Wikipedias with known answers). """
        + INSTALL,
    ),
    (
        "code",
        """import os
import tempfile
from pathlib import Path

import duckdb
import matplotlib.pyplot as plt

import wikiorigin as wo

ORIGINS = os.environ.get("WIKIORIGIN_ORIGINS")
if ORIGINS is None:
    root = Path.cwd()
    while not (root / "tests" / "data" / "tree").is_dir() and root != root.parent:
        root = root.parent
    ORIGINS = str(Path(tempfile.mkdtemp()) / "origins.parquet")
    report = wo.build_origins(root / "tests" / "data" / "tree", ORIGINS)
    print(f"built {report.origins.items} items from {len(report.shards)} wikis;",
          "skipped:", ", ".join(wiki for wiki, _ in report.skipped) or "none")
con = duckdb.connect()
con.sql(f"CREATE VIEW origins AS SELECT * FROM read_parquet('{ORIGINS}')")
con.sql("SELECT count(*) AS items, sum(tied::INT) AS tied, avg(n_wikis) AS mean_editions FROM origins")""",
    ),
    ("md", "## Origin-language counts\nHow many items each edition wrote about first."),
    (
        "code",
        """con.sql('''
    SELECT origin_wiki, count(*) AS items, round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct
    FROM origins GROUP BY origin_wiki ORDER BY items DESC, origin_wiki''')""",
    ),
    ("md", "## Lead time\nDays between the origin edition's article and the runner-up's (items in 2+ editions)."),
    (
        "code",
        """lead = [r[0] for r in con.sql("SELECT lead_days FROM origins WHERE lead_days IS NOT NULL").fetchall()]
print(f"{len(lead)} items with a runner-up; median lead {sorted(lead)[len(lead) // 2]:.0f} days")
fig, ax = plt.subplots(figsize=(6, 3))
ax.hist(lead, bins=30)
ax.set_xlabel("lead of the origin edition (days)")
ax.set_ylabel("items")
fig.tight_layout()
plt.show()""",
    ),
    ("md", "## Items per edition\nHow many items each edition has an article about, and how many it originated."),
    (
        "code",
        """con.sql('''
    WITH e AS (SELECT unnest(editions, recursive := true) FROM origins)
    SELECT e.wiki, count(*) AS items,
           (SELECT count(*) FROM origins o WHERE o.origin_wiki = e.wiki) AS originated
    FROM e GROUP BY e.wiki ORDER BY items DESC, e.wiki''')""",
    ),
    ("md", "## Items of one language\nThe base of a new language subset (as `wikiorigin subset`)."),
    (
        "code",
        """con.sql('''
    SELECT qid, origin_title, n_wikis, has_enwiki, round(lead_days) AS lead_days
    FROM origins WHERE origin_wiki = 'jawiki' ORDER BY n_wikis DESC, qid LIMIT 10''')""",
    ),
]


BUILD_CELLS = [
    (
        "md",
        """# Building datasets with an LLM

A small YokaiEval-style multiple-choice set and a small WikiOriginQA-style free-form set, built
from the bundled jawiki sample against an OpenAI-compatible endpoint. Set `WIKIORIGIN_BASE_URL`
(and `OPENAI_API_KEY` if the server wants one) and `WIKIORIGIN_MODEL`; the outputs below are
those of a loopback test server with scripted answers. Every call is cached in
`llm-cache.sqlite` in the working directory: running a cell again costs nothing. """
        + INSTALL
        + """

Each builder is a config, `run(inputs, llm)`, and a result (`rows`, `report`, `failed`) that
saves itself: `result.save(out)` writes the set and `OUT.failed.parquet` together, with the
build's provenance, while `OUT.lock` is held.""",
    ),
    (
        "code",
        """import os
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import wikiorigin as wo
from wikiorigin.dumps.pages import Multistream
from wikiorigin.llm import RequestCache
from wikiorigin.schemas import ORIGINS
from wikiorigin.testing import page_xml, write_multistream

root = Path.cwd()
while not (root / "tests" / "data").is_dir() and root != root.parent:
    root = root.parent
data = root / "tests" / "data"
os.chdir(tempfile.mkdtemp())  # every file below is written in a fresh temporary directory
BASE_URL = os.environ.get("WIKIORIGIN_BASE_URL")
MODEL = os.environ.get("WIKIORIGIN_MODEL", "gpt-4o-mini")
llm = wo.LLMClient(wo.OpenAIBackend(MODEL, base_url=BASE_URL), RequestCache("llm-cache.sqlite"), concurrency=8)
print("generator:", llm.backend.model)""",
    ),
    ("md", "## Articles: the pages linked from a list page, with their footnotes"),
    (
        "code",
        """with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    write_multistream(data / "dumps" / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz",
                      "ja.xml.bz2", "ja-index.txt.bz2",
                      extra_pages=[page_xml(900001, "日本の妖怪一覧", (data / "yokai-list-page.wiki").read_text())])
dump = Multistream("ja.xml.bz2", "ja-index.txt.bz2")
report = wo.build_list_corpus(dump, "articles.parquet", list_page="日本の妖怪一覧")
print(report.articles, "articles;", report.missing, "missing")""",
    ),
    (
        "md",
        "## Multiple-choice questions\nWritten, answered by a checker with the article, backed by "
        "a footnote, labelled, deduplicated; what a step dropped is kept with its reason.",
    ),
    (
        "code",
        """mcq = wo.MCQBuilder(wo.MCQConfig(per_article=1)).run("articles.parquet", llm)
mcq.save("mcq/test.parquet")
r = mcq.report
print(f"{r.articles} articles: kept {r.kept} of {r.generated} questions; dropped: {r.dropped_said()}")
print([(f["step"], f["source"], f["reason"][:60]) for f in mcq.failed.rows])
[{k: row[k] for k in ("title", "question", "answer", "ref")} for row in mcq.rows]""",
    ),
    ("md", "## Free-form questions whose answer is an item's name"),
    (
        "code",
        """when = datetime(2003, 1, 1, tzinfo=timezone.utc)
items = [("Q1", 56, "地理"), ("Q8", 272, "個人"), ("Q11212", 5, "アンパサンド")]
pq.write_table(pa.Table.from_pylist([{
    "qid": q, "origin_wiki": "jawiki", "origin_created_at": when, "origin_title": t, "n_wikis": 2,
    "has_enwiki": True, "runner_up_wiki": "enwiki", "runner_up_created_at": when, "lead_days": 0.0,
    "tied": False, "editions": [{"wiki": "jawiki", "page_id": p, "title": t, "created_at": when}]}
    for q, p, t in items], schema=ORIGINS), "items.parquet")
wo.build_origin_corpus("items.parquet", dump, "origin-articles.parquet",
                       wikidata=data / "dumps" / "wikidata-20151109-five-entities.json")
freeform = wo.FreeformBuilder(wo.FreeformConfig(rounds=1)).run("origin-articles.parquet", llm)
freeform.save("freeform/test.parquet")
r = freeform.report
print(f"{r.articles} articles: kept {r.kept} of {r.generated} questions; dropped: {r.dropped_said()}")
[{k: row[k] for k in ("title", "question", "answers")} for row in freeform.rows]""",
    ),
    ("md", "## A dataset card, and the cost"),
    (
        "code",
        """card = wo.builders.write_card("mcq", "mcq", "YokaiEval mini", "A few questions on Japanese yokai.")
print(card.read_text().partition("## Sources and build")[0])  # then every setting of the build
print("usage:", llm.usage.summary())""",
    ),
]


EVAL_CELLS = [
    (
        "md",
        """# Evaluating a local model

Multiple choice (log-likelihood and generation modes) on the released YokaiEval rows, the
released answers of a real model re-scored with our parser, a comparison, and the leakage
check. Set `WIKIORIGIN_EVAL_MODEL` to a local checkpoint directory (on a GPU it runs in bf16);
without it the notebook builds a tiny random model (so its accuracy is chance level) and runs
on CPU, as in the outputs below. """
        + INSTALL
        + """

Each evaluation is a task (the questions and how to ask them) whose `run(model)` returns a
result: `result.summary` (its keys read as attributes), `result.signature` (the settings that
ran, in one line) and `result.save(dir)` (items, `summary.json`, `report.md`, plots), as
`wikiorigin eval` writes them.""",
    ),
    (
        "code",
        """import json
import lzma
import os
import sys
import tempfile
from pathlib import Path

from IPython.display import Image

import wikiorigin as wo

root = Path.cwd()
while not (root / "tests" / "data").is_dir() and root != root.parent:
    root = root.parent
work = Path(tempfile.mkdtemp())
MODEL = os.environ.get("WIKIORIGIN_EVAL_MODEL")
if MODEL is None:  # a tiny random model (nothing downloaded)
    import torch

    sys.path.insert(0, str(root))
    from tests.tiny_model import make_tiny_model
    torch.manual_seed(0)
    MODEL = make_tiny_model(work / "tiny-model")
model = wo.LocalModel(MODEL, max_batch_size=16)
os.chdir(work)  # every file below is written in a fresh temporary directory
for name in ("YokaiEval-first40.json", "responses-calm2-7b-chat.json", "responses-gpt4o-mini.json"):
    Path(name).write_bytes(lzma.open(root / "tests" / "data" / "yokaieval" / (name + ".xz")).read())
print(model.name, "on", model.device)""",
    ),
    (
        "md",
        "## Log-likelihood mode: every option scored as the continuation (lm-evaluation-harness's `acc`, `acc_norm`)",
    ),
    (
        "code",
        """task = wo.MCQTask.from_file("YokaiEval-first40.json", mode="loglikelihood")  # the language from the rows
result = task.run(model)
result.save("run-loglikelihood")
print({k: round(result.summary[k], 3) for k in ("acc", "acc_norm", "acc_norm_bytes")})
print(result.signature)
{k: v["n"] for k, v in result.summary.by_type.items()}""",
    ),
    ("md", "## Generation mode: the paper's sampling (temperature 0.1), answers read by `read_choice`"),
    (
        "code",
        """result = wo.MCQTask(task.rows[:10], mode="generate", max_new_tokens=16).run(model)
print(f"accuracy {result.summary.accuracy:.2f}, parser read {result.summary.coverage:.0%}")
[(i["response"][:30], i["pred"]) for i in result.items[:3]]""",
    ),
    ("md", "## A real model's released answers, re-scored (with the paper's GPT-4o verdicts beside)"),
    (
        "code",
        """calm2 = wo.MCQTask.from_file("YokaiEval-first40.json").run(wo.Recorded("responses-calm2-7b-chat.json"))
calm2.save("run-calm2")
s = calm2.summary
print(calm2.join["matched"], "responses joined;", calm2.join["unmatched"], "belong to questions beyond the first 40")
print(f"accuracy {s.accuracy:.3f} (by the file's GPT-4o verdicts {s.accuracy_by_reference:.3f}), "
      f"read {s.coverage:.0%}, agreement with GPT-4o {s.agreement_with_reference_judge:.3f}")
print(s.read_as)
print(calm2.signature)
Image("run-calm2/accuracy_by_type.png")""",
    ),
    (
        "md",
        """## Comparing runs

Two released models' answers on the same questions, side by side: a paired test on the
questions both answered, and a warning where the runs' settings differ in more than the model
(the signatures say what ran).""",
    ),
    (
        "code",
        """wo.MCQTask.from_file("YokaiEval-first40.json").run(wo.Recorded("responses-gpt4o-mini.json")).save("run-gpt4o-mini")
wo.evaluators.compare_runs(["run-calm2", "run-gpt4o-mini"], "compare")
print(Path("compare/comparison.md").read_text())
Image("compare/models.png")""",
    ),
    (
        "md",
        """## Leakage check

Is the model's likelihood of an article's own wording clearly higher than of a paraphrase? The
released responses file carries the article text each question was written from. A real check
uses paraphrases written by an LLM (`paraphraser=`) or supplied in a file; here the sentences in
reverse order stand in so that the notebook runs offline. 20 articles are drawn at random, as
in the paper.""",
    ),
    (
        "code",
        """raw = json.loads(Path("responses-calm2-7b-chat.json").read_text())
articles = {}
for r in raw:
    articles.setdefault(r["question"]["yokai"]["name"], r["question"]["yokai"]["detail"])
paraphrases = {t: "。".join(reversed(text[:400].split("。"))) for t, text in articles.items()}
leak = wo.LeakageTask(articles, paraphrases=paraphrases, max_chars=400).run(model)
leak.save("run-leakage")
s = leak.summary
print(f"{s.n} articles: p = {s.p_value:.3g}, rank-biserial r = {s.rank_biserial:.2f}")
Image("run-leakage/leakage.png")""",
    ),
]


NOTEBOOKS = {"01_origins.ipynb": CELLS, "02_build_datasets.ipynb": BUILD_CELLS, "03_evaluate.ipynb": EVAL_CELLS}
"""Each notebook and its cells."""

ROOT = Path(__file__).resolve().parent.parent
METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}
"""The notebooks' metadata: the kernel, nothing of the machine that ran them."""


def notebook(name: str) -> nbf.NotebookNode:
    """The notebook ``name`` as the cells above write it, without outputs: cell ids from the
    notebook's name and the cell's place (stable from one writing to the next), and the
    kernel as the only metadata."""
    nb = nbf.v4.new_notebook()
    stem = name.split("_")[0]
    nb.cells = [
        nbf.v4.new_markdown_cell(src, id=f"nb{stem}-{i:02d}")
        if kind == "md"
        else nbf.v4.new_code_cell(src, id=f"nb{stem}-{i:02d}")
        for i, (kind, src) in enumerate(NOTEBOOKS[name])
    ]
    nb.metadata = dict(METADATA)
    return nb


@contextmanager
def scripted_endpoint():
    """The loopback OpenAI-compatible server of the tests with their scripted answers (the
    builders' tests' generator), and the environment that points notebook 02 at it."""
    sys.path.insert(0, str(ROOT))
    from tests.builders.test_freeform import scripted as freeform_answers
    from tests.builders.test_mcq import scripted as mcq_answers
    from tests.openai_server import ChatServer

    def answer(messages):
        task = messages[0]["content"].splitlines()[0]
        return freeform_answers(messages) if task.startswith("task: freeform") else mcq_answers(messages)

    with ChatServer(answer=answer) as server:
        yield server, {"WIKIORIGIN_BASE_URL": server.url, "WIKIORIGIN_MODEL": "scripted"}


def kernel_env(extra: dict | None = None) -> dict:
    """The kernel's environment: this one without the settings that change what a notebook
    shows (its ``WIKIORIGIN_`` variables, a matplotlib backend that draws nowhere, GPUs: the
    bundled data and the tiny model on CPU), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WIKIORIGIN_") and k != "MPLBACKEND"}
    return {**env, "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", **(extra or {})}


def execute(nb: nbf.NotebookNode, name: str, timeout: int = 600) -> nbf.NotebookNode:
    """Run ``nb`` (the notebook ``name``; its outputs are replaced) top to bottom in a python3
    kernel whose working directory is ``notebooks/``, notebook 02 against
    :func:`scripted_endpoint`; returns it. A cell that raises stops the run."""
    import nbclient

    def run(extra=None):
        client = nbclient.NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(ROOT / "notebooks")}},
        )
        client.execute(env=kernel_env(extra))

    if name.startswith("02"):
        with scripted_endpoint() as (server, extra):
            run(extra)
            if not server.calls:
                raise RuntimeError(f"{name} sent no request to the scripted endpoint")
    else:
        run()
    return nb


def tidy(nb: nbf.NotebookNode) -> nbf.NotebookNode:
    """The outputs as they are stored: stderr and blank lines left out (progress bars and
    library warnings, which vary from machine to machine), consecutive stdout joined, no cell metadata; an
    absolute path of this machine, or the test server's address, in an output is an error (the
    notebooks print paths relative to their working directory)."""
    nb.metadata = dict(METADATA)
    leaks = [str(ROOT), tempfile.gettempdir() + os.sep, "http://127.0.0.1:"]  # the test server's port varies
    for cell in nb.cells:
        cell.metadata = {}
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.outputs:
            if out.output_type == "stream" and (out.name == "stderr" or not out.text.strip()):
                continue
            if out.output_type == "stream" and outputs and outputs[-1].output_type == "stream":
                outputs[-1].text += out.text
            else:
                outputs.append(out)
        cell.outputs = outputs
        text = json.dumps(outputs, ensure_ascii=False)
        for leak in leaks:
            if leak in text:
                raise RuntimeError(f"an output of cell {cell.id} names {leak}: print it relative to the work dir")
    return nb


def main() -> None:
    """Write the three notebooks, run each, and save them with their outputs."""
    for name in NOTEBOOKS:
        nb = tidy(execute(notebook(name), name))
        nbf.validate(nb)
        nbf.write(nb, ROOT / "notebooks" / name)
        print(f"notebooks/{name}: {(ROOT / 'notebooks' / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
