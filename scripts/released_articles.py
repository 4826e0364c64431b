"""Write an articles.parquet for released YokaiEval rows, from what the release itself holds.

A released responses file keeps, for each question, the article text its generator was shown
(``question.yokai.detail``, footnote marks such as ``[1]`` kept); the released rows keep the
article's URL, the footnote numbers a question cites (``ref``) and those footnotes' texts
(``refs_detail``). Together they give each question's article with its footnotes, in the
``articles.parquet`` schema, so ``wikiorigin review serve --articles`` can show the article and
mark the footnotes a question cites without a jawiki dump. A footnote's text is kept only where
the row lists as many texts as it cites numbers (the release does not say which text is which
otherwise).

    python scripts/released_articles.py QUESTIONS.json RESPONSES.json --out articles.parquet
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa

from wikiorigin.errors import WikioriginError
from wikiorigin.files import provenance, read_rows, write_table
from wikiorigin.review.items import cited_numbers
from wikiorigin.schemas import ARTICLES

# the backlinks a rendered footnote starts with: "^", or "^ a b c" when it is cited several times
_BACKLINKS = re.compile(r"^\s*\^(\s+[a-z](?=\s))*\s*")


def _key(question: str, choices) -> tuple:
    return question.strip(), tuple(sorted(choices))


def _row_error(path, n: int, missing: str) -> WikioriginError:
    return WikioriginError(f"{path}: row {n}: no {missing}: not a released YokaiEval file of that kind")


def released_articles(
    questions: list[dict], responses: list[dict], *, sources=("questions", "responses")
) -> list[dict]:
    """One article per URL of ``questions`` (released rows) whose text a response row holds;
    a row without the fields it needs is a one-line error naming ``sources`` and the row."""
    details = {}
    for n, r in enumerate(responses, 1):
        try:
            asked = r["question"]
            details[_key(asked["question"], asked["choices"])] = asked["yokai"]["detail"]
        except (KeyError, TypeError):
            raise _row_error(sources[1], n, "question.yokai.detail, question.question or question.choices") from None
    articles: dict[str, dict] = {}
    for n, row in enumerate(questions, 1):
        if not all(isinstance(row.get(k), t) for k, t in (("question", str), ("choices", list), ("url", str))):
            raise _row_error(sources[0], n, "question, choices or url")
        text = details.get(_key(row["question"], row["choices"]))
        if text is None:
            continue
        parts = urlsplit(row["url"])
        article = articles.setdefault(
            row["url"],
            {
                "wiki": "jawiki",
                "title": unquote(parts.path.rsplit("/", 1)[-1]).replace("_", " "),
                "anchor": unquote(parts.fragment) or None,
                "url": row["url"],
                "text": text,
                "references": {},
            },
        )
        numbers, texts = cited_numbers(row.get("ref")), row.get("refs_detail") or []
        if len(numbers) == len(texts):
            for number, note in zip(numbers, texts):
                article["references"].setdefault(number, {"number": number, "text": _BACKLINKS.sub("", note)})
    return [{**a, "references": [a["references"][n] for n in sorted(a["references"])]} for a in articles.values()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path, help="released YokaiEval rows (.json or .json.xz)")
    parser.add_argument("responses", type=Path, help="a released responses file (.json or .json.xz)")
    parser.add_argument("--out", type=Path, required=True, help="articles.parquet")
    args = parser.parse_args(argv)
    try:
        rows = released_articles(
            read_rows(args.questions), read_rows(args.responses), sources=(args.questions, args.responses)
        )
    except WikioriginError as exc:
        print(f"released_articles: error: {exc}", file=sys.stderr)
        return 2
    table = pa.Table.from_pylist(rows, schema=ARTICLES)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = provenance(stage="released articles", questions=str(args.questions), responses=str(args.responses))
    write_table(table, args.out, ARTICLES, meta)
    cited = sum(len(r["references"]) for r in rows)
    print(f"{len(rows)} articles with {cited} footnote texts -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
