"""Write notebooks/01_origins.ipynb (kept as code so that its cells are reviewed as code)."""

from pathlib import Path

import nbformat as nbf

CELLS = [
    ("md", """# Exploring an origins file

`wikiorigin origins` writes one row per Wikidata item: the edition whose article was created
first (`origin_wiki`), when, the runner-up, the lead in days, whether it was a tie, and every
edition in order. This notebook reads such a file with DuckDB and pyarrow.

Set `WIKIORIGIN_ORIGINS` to your own `origins.parquet`; without it the notebook builds one from
the bundled fixture tree (`tests/data/tree`, 7 Wikipedias with known answers)."""),
    ("code", """import os
import tempfile
from pathlib import Path

import duckdb
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from wikiorigin.origin import build_origins

ORIGINS = os.environ.get("WIKIORIGIN_ORIGINS")
if ORIGINS is None:
    root = Path.cwd()
    while not (root / "tests" / "data" / "tree").is_dir() and root != root.parent:
        root = root.parent
    ORIGINS = str(Path(tempfile.mkdtemp()) / "origins.parquet")
    report = build_origins(root / "tests" / "data" / "tree", ORIGINS)
    print(f"built {report.origins.items} items from {len(report.shards)} wikis; skipped: {report.skipped}")
con = duckdb.connect()
con.sql(f"CREATE VIEW origins AS SELECT * FROM read_parquet('{ORIGINS}')")
con.sql("SELECT count(*) AS items, sum(tied::INT) AS tied, avg(n_wikis) AS mean_editions FROM origins")"""),
    ("md", "## Origin-language counts\nHow many items each edition wrote about first."),
    ("code", """counts = con.sql('''
    SELECT origin_wiki, count(*) AS items, round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct
    FROM origins GROUP BY origin_wiki ORDER BY items DESC''')
counts"""),
    ("md", "## Lead time\nDays between the origin edition's article and the runner-up's (items in 2+ editions)."),
    ("code", """lead = [r[0] for r in con.sql("SELECT lead_days FROM origins WHERE lead_days IS NOT NULL").fetchall()]
fig, ax = plt.subplots(figsize=(6, 3))
ax.hist(lead, bins=30)
ax.set_xlabel("lead of the origin edition (days)")
ax.set_ylabel("items")
fig.tight_layout()
print(f"{len(lead)} items with a runner-up; median lead {sorted(lead)[len(lead) // 2]:.0f} days")"""),
    ("md", "## Items per edition\nHow many items each edition has an article about, and how many it originated."),
    ("code", """con.sql('''
    WITH e AS (SELECT unnest(editions, recursive := true) FROM origins)
    SELECT e.wiki, count(*) AS items,
           (SELECT count(*) FROM origins o WHERE o.origin_wiki = e.wiki) AS originated
    FROM e GROUP BY e.wiki ORDER BY items DESC''')"""),
    ("md", "## Items of one language\nThe base of a new language subset (as `wikiorigin subset`)."),
    ("code", """con.sql('''
    SELECT qid, origin_title, n_wikis, has_enwiki, round(lead_days) AS lead_days
    FROM origins WHERE origin_wiki = 'jawiki' ORDER BY n_wikis DESC, qid LIMIT 10''')"""),
]


BUILD_CELLS = [
    ("md", """# Building datasets with an LLM

A small YokaiEval-style MCQ set and a small WikiOriginQA-style free-form set, built from the
bundled jawiki sample against an OpenAI-compatible endpoint. Set `WIKIORIGIN_BASE_URL` (and
`OPENAI_API_KEY` if the server wants one) and `WIKIORIGIN_MODEL`; the tests run this notebook
against a loopback test server with scripted answers. Every call is cached in
`llm-cache.sqlite`: running the notebook again costs nothing."""),
    ("code", """import os
import tempfile
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wikiorigin.builders.dataset import write_card
from wikiorigin.builders.freeform import FreeformConfig, build_freeform
from wikiorigin.builders.mcq import MCQConfig, build_mcq
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.corpora.yokai import build_list_corpus
from wikiorigin.dumps.pages import Multistream
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.testing import page_xml, write_multistream

root = Path.cwd()
while not (root / "tests" / "data").is_dir() and root != root.parent:
    root = root.parent
data = root / "tests" / "data"
work = Path(tempfile.mkdtemp())
BASE_URL = os.environ.get("WIKIORIGIN_BASE_URL")
MODEL = os.environ.get("WIKIORIGIN_MODEL", "gpt-4o-mini")
llm = LLMClient(OpenAIBackend(MODEL, base_url=BASE_URL), RequestCache(work / "llm-cache.sqlite"),
                concurrency=8)"""),
    ("md", "## Articles: the pages linked from a list page, with their footnotes"),
    ("code", """with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    write_multistream(data / "dumps" / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz",
                      work / "ja.xml.bz2", work / "ja-index.txt.bz2",
                      extra_pages=[page_xml(900001, "日本の妖怪一覧", (data / "yokai-list-page.wiki").read_text())])
dump = Multistream(work / "ja.xml.bz2", work / "ja-index.txt.bz2")
report = build_list_corpus(dump, work / "articles.parquet")
print(report.articles, "articles;", report.missing, "missing")"""),
    ("md", "## Multiple-choice questions"),
    ("code", """mcq_report = build_mcq(work / "articles.parquet", work / "mcq" / "test.parquet", llm,
                       config=MCQConfig(per_article=1), failed=work / "mcq.failed.parquet")
print(f"kept {mcq_report.kept} of {mcq_report.generated}; dropped {mcq_report.dropped}")
pq.read_table(work / "mcq" / "test.parquet").select(["title", "question", "answer", "ref"]).to_pylist()"""),
    ("md", "## Free-form questions whose answer is an item's name"),
    ("code", """from datetime import datetime, timezone
from wikiorigin.schemas import ORIGINS

when = datetime(2003, 1, 1, tzinfo=timezone.utc)
items = [("Q1", 56, "地理"), ("Q8", 272, "個人")]
pq.write_table(pa.Table.from_pylist([{
    "qid": q, "origin_wiki": "jawiki", "origin_created_at": when, "origin_title": t, "n_wikis": 2,
    "has_enwiki": True, "runner_up_wiki": "enwiki", "runner_up_created_at": when, "lead_days": 0.0,
    "tied": False, "editions": [{"wiki": "jawiki", "page_id": p, "title": t, "created_at": when}]}
    for q, p, t in items], schema=ORIGINS), work / "items.parquet")
build_origin_corpus(work / "items.parquet", dump, work / "origin-articles.parquet",
                    wikidata=data / "dumps" / "wikidata-20151109-five-entities.json")
counts = build_freeform(work / "origin-articles.parquet", work / "freeform" / "test.parquet", llm,
                        FreeformConfig(rounds=1))
print(counts)
pq.read_table(work / "freeform" / "test.parquet").select(["title", "question", "answers"]).to_pylist()"""),
    ("md", "## A dataset card, and the cost"),
    ("code", """write_card(work / "mcq", "mcq", "YokaiEval mini", "A few questions on Japanese yokai.")
print((work / "mcq" / "README.md").read_text()[:300])
print("usage:", llm.usage.summary())"""),
]


EVAL_CELLS = [
    ("md", """# Evaluating a local model

Multiple choice (log-likelihood and generation modes) on the released YokaiEval rows, the
released answers of a real model re-scored with our parser, and the leakage check. Set
`WIKIORIGIN_EVAL_MODEL` to a local checkpoint directory (on a GPU it runs in bf16); without it
the notebook builds a tiny random model (so its accuracy is chance level) and runs on CPU."""),
    ("code", """import json
import lzma
import os
import sys
import tempfile
from pathlib import Path

from wikiorigin.evaluators import leakage, mcq
from wikiorigin.evaluators.models import LocalModel
from wikiorigin.evaluators.report import compare_runs

root = Path.cwd()
while not (root / "tests" / "data").is_dir() and root != root.parent:
    root = root.parent
work = Path(tempfile.mkdtemp())
for name in ("YokaiEval-first40.json", "responses-calm2-7b-chat.json"):
    (work / name).write_bytes(lzma.open(root / "tests" / "data" / "yokaieval" / (name + ".xz")).read())
MODEL = os.environ.get("WIKIORIGIN_EVAL_MODEL")
if MODEL is None:
    sys.path.insert(0, str(root))
    from tests.tiny_model import make_tiny_model
    MODEL = make_tiny_model(work / "tiny-model")
model = LocalModel(MODEL, max_batch_size=16)
print(model.name, "on", model.device)"""),
    ("md", "## Log-likelihood mode: every option scored as the continuation (lm-evaluation-harness's `acc`, `acc_norm`)"),
    ("code", """rows = mcq.read_questions(work / "YokaiEval-first40.json")
items = mcq.evaluate_loglikelihood(rows, model)
summary = mcq.summarize(items)
mcq.write_mcq_results(work / "run-loglikelihood", items, summary)
print({k: round(summary[k], 3) for k in ("acc", "acc_norm", "acc_norm_bytes")})
{k: v["n"] for k, v in summary["by_type"].items()}"""),
    ("md", "## Generation mode: the paper's sampling (temperature 0.1), answers read by `read_choice`"),
    ("code", """items = mcq.evaluate_generate(rows[:10], model, max_new_tokens=16)
summary = mcq.summarize(items)
print(f"accuracy {summary['accuracy']:.2f}, parser read {summary['coverage']:.0%}")
[(i["response"][:30], i["pred"]) for i in items[:3]]"""),
    ("md", "## A real model's released answers, re-scored (with the paper's GPT-4o verdicts beside)"),
    ("code", """recorded, join = mcq.attach_responses(rows, mcq.read_questions(work / "responses-calm2-7b-chat.json"))
print(join["matched"], "responses joined;", join["unmatched"], "belong to questions beyond the first 40")
items = mcq.evaluate_generate(recorded, recorded="calm2-7b-chat")
summary = mcq.summarize(items)
mcq.write_mcq_results(work / "run-calm2", items, summary)
print(f"accuracy {summary['accuracy']:.3f} (by the file's GPT-4o verdicts {summary['accuracy_by_reference']:.3f}), "
      f"read {summary['coverage']:.0%}, agreement with GPT-4o {summary['agreement_with_reference_judge']:.3f}")
print(summary["read_as"])
print((work / "run-calm2" / "report.md").read_text()[:400])"""),
    ("md", "## Comparing runs"),
    ("code", """compare_runs([work / "run-loglikelihood", work / "run-calm2"], work / "compare")
print((work / "compare" / "comparison.md").read_text())"""),
    ("md", """## Leakage check

The released responses file carries the article text each question was written from. A real
check uses paraphrases written by an LLM (`leakage.paraphrase`) or supplied in a file; here the
sentences in reverse order stand in so that the notebook runs offline."""),
    ("code", """raw = json.loads((work / "responses-calm2-7b-chat.json").read_text())
articles = {}
for r in raw:
    articles.setdefault(r["question"]["yokai"]["name"], r["question"]["yokai"]["detail"])
articles = dict(list(articles.items())[:20])
paraphrases = {t: "。".join(reversed(text[:400].split("。"))) for t, text in articles.items()}
items, summary = leakage.leakage_check(articles, paraphrases, model, max_chars=400)
leakage.write_leakage_results(work / "run-leakage", items, summary)
print(f"{summary['n']} articles: p = {summary['p_value']:.3g}, rank-biserial r = {summary['rank_biserial']:.2f}")"""),
]


def write(cells, name: str) -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbf.write(nb, Path(__file__).resolve().parent.parent / "notebooks" / name)


def main() -> None:
    write(CELLS, "01_origins.ipynb")
    write(BUILD_CELLS, "02_build_datasets.ipynb")
    write(EVAL_CELLS, "03_evaluate.ipynb")


if __name__ == "__main__":
    main()
