"""The items under review: a dataset file read into rows, each with a key, a content hash and
the view the review page shows (the article with the cited footnotes marked).

A dataset is ``mcq.parquet`` (or the released YokaiEval rows, JSON, optionally ``.xz``),
``freeform.parquet`` or ``preferences.parquet``; its kind is told by its columns. An item's
key is its ``id`` when the rows have unique ids, else ``#`` and the start of its content hash
(``~2``, ``~3``... after the second, third... of identical rows), so that inserting or removing
rows keeps every decision on its item. The content hash is the SHA-1 of the row as canonical
JSON, so a decision made on other content shows as stale (a row without an id that changes is
another item: its old decisions no longer apply).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..errors import WikioriginError
from ..files import read_input, read_rows

__all__ = [
    "KINDS",
    "EDITABLE",
    "Dataset",
    "Item",
    "load_dataset",
    "load_articles",
    "content_sha1",
    "content_keys",
    "cited_numbers",
    "footnote_numbers",
    "find_article",
    "segments",
    "wikipedia_url",
    "plain",
    "view",
]

KINDS = {
    "mcq": ("question", "choices"),
    "freeform": ("question", "answers"),
    "preferences": ("prompt", "chosen", "rejected"),
}
"""Each dataset kind and the columns that tell it (the first kind whose columns are all there)."""

EDITABLE = {
    "mcq": ("question", "choices", "answer_index", "type", "region", "ref"),
    "freeform": ("question", "question_source", "answers"),
    "preferences": ("prompt", "chosen", "rejected"),
}
"""The fields a reviewer may edit, per dataset kind; an mcq item's ``ref`` (the footnotes that
back its answer) is edited as a list of footnote numbers, whatever form the file keeps it in."""

_MADE_BY = "wikiorigin build mcq|freeform|preference"
_FOOTNOTE = re.compile(r"\[(?:([^\[\]\d][^\[\]]*?) )?(\d{1,4})\]")


def content_sha1(row: dict) -> str:
    """The SHA-1 of a row as canonical JSON (sorted keys, UTF-8): what a decision was made on."""
    text = json.dumps(row, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Item:
    """One row under review: its position, key, content hash and the row as read."""

    index: int
    key: str
    sha1: str
    row: dict


@dataclass(slots=True)
class Dataset:
    """A dataset file's rows as items, its kind, and the Arrow schema when it is Parquet."""

    path: Path
    kind: str
    items: list[Item]
    schema: object = None  # pyarrow.Schema of a Parquet input, else None
    by_key: dict = field(default_factory=dict)
    keyed_by: str = "id"  # "id", or "content" when the rows have no unique ids
    classes: dict = field(default_factory=dict)  # mcq: the types and regions offered (review.classes)

    def __post_init__(self):
        self.by_key = {item.key: item for item in self.items}


def _read_rows(path: Path):
    """The rows of a dataset file and, for Parquet, its schema."""
    if path.suffix == ".parquet":
        table = read_input(path, (), _MADE_BY)
        return table.to_pylist(), table.schema
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory, not a dataset file")
    if not path.exists():
        raise WikioriginError(f"{path}: no such file (make one with `{_MADE_BY}`)")
    return read_rows(path), None


def _kind(path: Path, names) -> str:
    for kind, needs in KINDS.items():
        if all(n in names for n in needs):
            return kind
    raise WikioriginError(
        f"{path}: not a dataset to review: it has no columns "
        "question+choices (mcq), question+answers (freeform) or "
        "prompt+chosen+rejected (preferences); made by `" + _MADE_BY + "`"
    )


def load_dataset(path) -> Dataset:
    """Read a dataset file for review; a missing file, an unknown shape or an empty file is a
    one-line :class:`~wikiorigin.errors.WikioriginError` naming the file (and the row)."""
    path = Path(path)
    rows, schema = _read_rows(path)
    if not rows:
        raise WikioriginError(f"{path}: no rows to review")
    kind = _kind(path, schema.names if schema is not None else rows[0].keys())
    for i, row in enumerate(rows):
        missing = [c for c in KINDS[kind] if row.get(c) in (None, "")]
        if missing:
            raise WikioriginError(f"{path}: row {i}: no {', '.join(missing)}")
    ids = [str(r["id"]) if r.get("id") not in (None, "") else None for r in rows]
    unique = None not in ids and len(set(ids)) == len(ids)
    hashes = [content_sha1(row) for row in rows]
    keys = ids if unique else content_keys(hashes)
    items = [Item(i, str(keys[i]), hashes[i], row) for i, row in enumerate(rows)]
    classes = {}
    if kind == "mcq":
        from ..files import read_provenance
        from .classes import mcq_classes

        classes = mcq_classes(path, rows, read_provenance(path) if schema is not None else {})
    return Dataset(path, kind, items, schema, keyed_by="id" if unique else "content", classes=classes)


def content_keys(hashes: list[str]) -> list[str]:
    """The keys of rows without unique ids: ``#`` and 16 hex digits of each content hash,
    ``~N`` added to the Nth of identical rows (counted in file order, so stable when other
    rows come or go)."""
    seen: dict[str, int] = {}
    keys = []
    for sha1 in hashes:
        seen[sha1] = seen.get(sha1, 0) + 1
        keys.append(f"#{sha1[:16]}" + (f"~{seen[sha1]}" if seen[sha1] > 1 else ""))
    return keys


def load_articles(path) -> dict:
    """An ``articles.parquet`` as look-ups: by ``("page", wiki, page_id)``, ``("qid", qid)``,
    ``("title", title, anchor)`` and ``("title", title, None)`` (the first article wins)."""
    rows = read_input(path, ["title", "text", "references"], "wikiorigin corpus yokai|origin").to_pylist()
    index: dict = {}
    for row in rows:
        keys: list[tuple] = [("title", row.get("title"), row.get("anchor")), ("title", row.get("title"), None)]
        if row.get("page_id") is not None:
            keys.append(("page", row.get("wiki"), row["page_id"]))
        if row.get("qid"):
            keys.append(("qid", row["qid"]))
        for key in keys:
            index.setdefault(key, row)
    return index


def _title_anchor(row: dict) -> tuple[str | None, str | None]:
    """An item's article title and section: its ``title`` column, else its URL's last part
    (``.../wiki/Kappa_(folklore)#Names`` -> Kappa (folklore), Names)."""
    parts = urlsplit(row.get("url") or "")
    from_url = unquote(parts.path.rsplit("/", 1)[-1]) if parts.path else ""
    title = (row.get("title") or from_url).replace("_", " ") or None
    return title, unquote(parts.fragment) or row.get("anchor") or None


def find_article(row: dict, articles: dict) -> dict | None:
    """The article an item was written from: by page id, item, title and section, title."""
    title, anchor = _title_anchor(row)
    keys: list[tuple] = [("title", title, anchor), ("title", title, None)] if title else []
    if row.get("page_id") is not None:
        keys.insert(0, ("page", row.get("wiki"), row["page_id"]))
    if row.get("qid"):
        keys.insert(0, ("qid", row["qid"]))
    for key in keys:
        if key in articles:
            return articles[key]
    return None


def cited_numbers(ref) -> list[int]:
    """The footnote numbers an item cites: a list of ints (mcq.parquet) or the released rows'
    text (``"[1][3]"``, ``"1, 3"``)."""
    if ref is None:
        return []
    if isinstance(ref, (list, tuple)):
        return [int(n) for n in ref if str(n).strip().lstrip("-").isdigit()]
    return [int(n) for n in re.findall(r"\d+", str(ref))]


def footnote_numbers(article: dict) -> set[int]:
    """The footnote numbers an item may cite from ``article``: its references' and the marks
    in its text, those of a group (``[note 1]``) left out, as :func:`cited_numbers` reads none."""
    numbers = {r["number"] for r in article.get("references") or [] if not r.get("group")}
    return numbers | {int(m.group(2)) for m in _FOOTNOTE.finditer(article.get("text") or "") if not m.group(1)}


def segments(text: str, cited: list[int]) -> list[dict]:
    """An article's text cut at its footnote marks: ``{"text"}`` pieces and ``{"text", "ref"}``
    marks (``ref`` the number, ``cited`` whether the item cites it). Plain data: the page puts
    each piece in as text."""
    out: list[dict[str, object]] = []
    at = 0
    for m in _FOOTNOTE.finditer(text or ""):
        if m.start() > at:
            out.append({"text": text[at : m.start()]})
        number = int(m.group(2))
        out.append({"text": m.group(0), "ref": number, "cited": number in cited and not m.group(1)})
        at = m.end()
    if at < len(text or ""):
        out.append({"text": text[at:]})
    return out


def _safe_url(url) -> str | None:
    """A link the page may show: http(s) only (never ``javascript:`` or ``data:``)."""
    return url if isinstance(url, str) and re.match(r"https?://[^\s]+$", url) else None


def wikipedia_url(row: dict, article: dict | None) -> str | None:
    """The item's Wikipedia page: its ``url``, the article's, or one made from wiki and title."""
    for candidate in (row.get("url"), (article or {}).get("url")):
        if _safe_url(candidate):
            return candidate
    title = row.get("title") or (article or {}).get("title")
    wiki = row.get("wiki") or row.get("origin_wiki") or (article or {}).get("wiki")
    if title and wiki and wiki.endswith("wiki"):
        lang = wiki[:-4].replace("_", "-")
        return f"https://{lang}.wikipedia.org/wiki/{quote(title.replace(' ', '_'))}"
    return None


def plain(row: dict) -> dict:
    """A row as JSON-safe values (what the page is sent)."""
    return json.loads(json.dumps(row, ensure_ascii=False, default=str))


def _region_adapter(dataset: Dataset):
    """The adapter of the released rows' region labels of the set's culture, or None."""
    name = dataset.classes.get("culture") if dataset.classes else None
    if not name:
        return None
    from ..presets import culture

    return culture(name).clean_region


def view(dataset: Dataset, item: Item, articles: dict | None, row: dict | None = None) -> dict:
    """What the page shows of an item: its fields (JSON-safe), its region's class (a released
    YokaiEval row's label cleaned), the article cut into text and footnote marks, the cited references,
    where it came from and a safe link to Wikipedia. ``row``: the item as edited, shown (its
    cited footnotes marked) instead of the file's row."""
    row = plain(item.row if row is None else row)
    cited = cited_numbers(row.get("ref"))
    article = find_article(row, articles) if articles else None
    refs = []
    if article:
        refs = [
            {
                "number": r["number"],
                "group": r.get("group"),
                "text": r.get("text") or "",
                "url": _safe_url(r.get("url")),
                "cited": r["number"] in cited and not r.get("group"),
            }
            for r in article.get("references") or []
        ]
    origin = {
        k: row.get(k)
        for k in (
            "generator",
            "checker",
            "prompt_sha1",
            "source_revision_id",
            "chosen_model",
            "rejected_model",
            "language",
            "qid",
        )
        if row.get(k)
    }
    region = None
    adapt = _region_adapter(dataset)
    if dataset.kind == "mcq" and row.get("region") and adapt is not None:
        region = adapt(row["region"])  # the released rows' messy labels -> a class
    return {
        "index": item.index,
        "key": item.key,
        "sha1": item.sha1,
        "kind": dataset.kind,
        "row": row,
        "region_class": region,
        "cited": cited,
        "refs_detail": row.get("refs_detail") or [],
        "article": None
        if article is None
        else {
            "title": article.get("title"),
            "anchor": article.get("anchor"),
            "segments": segments(article.get("text") or "", cited),
            "references": refs,
        },
        "origin": origin,
        "link": wikipedia_url(row, article),
    }
