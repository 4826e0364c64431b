"""scripts/released_articles.py: the articles of the released YokaiEval rows, rebuilt from the
release itself, found by the review page for every row with the footnotes each row cites."""

import subprocess
import sys
from pathlib import Path

from wikiorigin.review.items import cited_numbers, find_article, load_articles, load_dataset

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "yokaieval"


def test_every_released_row_finds_its_article_and_cited_footnotes(tmp_path):
    out = tmp_path / "articles.parquet"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "released_articles.py"),
            str(DATA / "YokaiEval-first40.json.xz"),
            str(DATA / "responses-calm2-7b-chat.json.xz"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("40 articles with ")
    articles = load_articles(out)
    questions = tmp_path / "YokaiEval-first40.json"
    import lzma

    questions.write_bytes(lzma.open(DATA / "YokaiEval-first40.json.xz").read())
    dataset = load_dataset(questions)
    rows = [item.row for item in dataset.items]
    found = [find_article(row, articles) for row in rows]
    assert all(found)
    mermaid = next(a for a, row in zip(found, rows) if "%E4%BA%BA%E9%AD%9A" in row["url"])
    assert (mermaid["title"], mermaid.get("anchor")) == ("人魚", "アイヌソッキ")
    first = found[0]
    assert first["title"] == "アイヌカイセイ" and "[1]" in first["text"]
    assert [r["number"] for r in first["references"]] == [1]
    assert first["references"][0]["text"].startswith("村上健司")  # the backlinks "^ a b" left out
    # where a row lists as many footnote texts as it cites numbers, each cited footnote is there
    paired = [(a, row) for a, row in zip(found, rows) if len(cited_numbers(row["ref"])) == len(row["refs_detail"])]
    assert len(paired) >= 35
    for article, row in paired:
        assert set(cited_numbers(row["ref"])) <= {r["number"] for r in article["references"]}


def test_files_of_the_wrong_kind_are_one_line_naming_the_file_and_row(tmp_path):
    """The two files swapped, and a file that is no JSON: one line, exit 2, nothing written."""
    script = str(ROOT / "scripts" / "released_articles.py")
    questions, responses = DATA / "YokaiEval-first40.json.xz", DATA / "responses-calm2-7b-chat.json.xz"
    out = tmp_path / "articles.parquet"
    swapped = subprocess.run(
        [sys.executable, script, str(responses), str(questions), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert swapped.returncode == 2 and swapped.stderr.count("\n") == 1
    assert f"{questions}: row 1: no question.yokai.detail" in swapped.stderr
    (tmp_path / "bad.json").write_text("[{")
    bad = subprocess.run(
        [sys.executable, script, str(tmp_path / "bad.json"), str(responses), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and f"{tmp_path / 'bad.json'}: not JSON" in bad.stderr
    assert not out.exists()
