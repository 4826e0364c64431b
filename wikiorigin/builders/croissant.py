"""A dataset's Croissant metadata (``croissant.json``), as NeurIPS's Datasets and Benchmarks
track and the Hugging Face hub read it.

:func:`croissant` describes a directory's Parquet files in Croissant 1.0 (JSON-LD, with the
Responsible-AI extension): one ``FileObject`` per file (its SHA-256), one ``RecordSet`` per file
whose fields are the file's columns with their types (lists ``repeated``, structs as
``subField``), the licence, the sources the set was built from (file names and checksums), the
method and the preset, the models used, and a human review's counts and agreement where the
files carry one. Everything comes from the files' schema and provenance; ``mlcroissant``
validates the result and loads the Parquet rows from it (tests/builders/test_croissant.py), but
writing it needs nothing beyond pyarrow.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from pathlib import Path

import pyarrow as pa

__all__ = ["croissant", "CONTEXT"]

CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""The JSON-LD ``@context`` of Croissant 1.0 (the specification's own), with ``rai``."""

LICENCES = {
    "cc-by-sa-4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
    "cc-by-nc-sa-4.0": "https://creativecommons.org/licenses/by-nc-sa/4.0/",
}
_METHODS = {
    "mcq": (
        "YokaiEval's",
        "multiple-choice questions written from an article's footnoted facts, checked by a second model",
    ),
    "freeform": (
        "WikiOriginQA's",
        "questions whose answer is the item's name, refined, translated, scored on seven criteria and checked "
        "for giving the answer away",
    ),
    "preference": ("CARE's", "chosen and rejected answers to culture-specific questions, by their ratings"),
}


def _data_type(kind: pa.DataType) -> str:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_boolean(kind):
        return "sc:Boolean"
    if pa.types.is_integer(kind):
        return "sc:Integer"
    if pa.types.is_floating(kind):
        return "sc:Float"
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return "sc:Date"
    return "sc:Text"


def _id(name: str) -> str:
    """``name`` as an ``@id``: mlcroissant takes none holding white space."""
    return re.sub(r"\s", "_", name)


def _field(record: str, file: str, column: str, field: pa.Field, path: str | None = None) -> dict:
    """The Croissant field of ``column`` (``path``: a struct member's JSON path within it)."""
    name = path.rsplit(".", 1)[-1] if path else column
    out: dict[str, object] = {
        "@type": "cr:Field",
        "@id": _id(f"{record}/{column}" + (f"/{path}" if path else "")),
        "name": name,
    }
    kind = field.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        out["repeated"] = True
        kind = kind.value_type
        while pa.types.is_list(kind) or pa.types.is_large_list(kind):  # a list of lists: its values' type
            kind = kind.value_type
    if pa.types.is_struct(kind):
        out["subField"] = [
            _field(record, file, column, kind.field(i), f"{path}.{kind.field(i).name}" if path else kind.field(i).name)
            for i in range(kind.num_fields)
        ]
        return out
    out["dataType"] = _data_type(kind)
    source: dict[str, object] = {"fileObject": {"@id": _id(file)}, "extract": {"column": column}}
    if path:
        source["transform"] = {"jsonPath": path}
    out["source"] = source
    return out


def _record_set(path: Path, schema: pa.Schema) -> dict:
    record = path.stem
    return {
        "@type": "cr:RecordSet",
        "@id": _id(record),
        "name": record,
        "description": f"The rows of {path.name}, one record each.",
        "field": [_field(record, path.name, f.name, f) for f in schema],
    }


def _file_object(path: Path) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {
        "@type": "cr:FileObject",
        "@id": _id(path.name),
        "name": path.name,
        "contentUrl": path.name,
        "contentSize": f"{path.stat().st_size} B",
        "encodingFormat": "application/x-parquet",
        "sha256": digest.hexdigest(),
    }


def _sources(meta: dict) -> list[dict]:
    """The inputs a build names by file and checksum (``{"file", "sha256"}`` values), those of
    the set a review exported (its ``source``), and that set itself (``input``)."""
    found = []
    for key, value in sorted(meta.items()):
        if isinstance(value, dict) and "sha256" in value and ("file" in value or "name" in value):
            name = value.get("file") or value.get("name")
            found.append(
                {"@type": "sc:CreativeWork", "name": f"{key}: {Path(str(name)).name}", "sha256": value["sha256"]}
            )
    if isinstance(meta.get("source"), dict):
        found += _sources(meta["source"])
    if isinstance(meta.get("input"), str):
        found.append({"@type": "sc:CreativeWork", "name": f"reviewed: {Path(meta['input']).name}"})
    if meta.get("released"):
        found.append({"@type": "sc:CreativeWork", "name": f"released: {meta['released']}"})
    return found


def _models(meta: dict) -> list[str]:
    """``role: model`` for every model the build's provenance names."""
    llm = meta.get("llm")
    llm = llm if isinstance(llm, dict) else {}
    named = {role: spec.get("model") for role, spec in llm.items() if isinstance(spec, dict)}
    for role in ("generator", "checker", "judge"):
        if isinstance(meta.get(role), str):
            named.setdefault(role, meta[role])
    return [f"{role}: {model}" for role, model in sorted(named.items()) if model]


def _method(meta: dict) -> str:
    """How the file was made: the builder, the paper whose method it follows, and the preset."""
    builder = meta.get("builder") or (meta.get("source") or {}).get("builder")
    preset = meta.get("preset") or (meta.get("source") or {}).get("preset")
    if builder not in _METHODS:
        return "rows of a released dataset"
    paper, what = _METHODS[builder]
    said = f"`wikiorigin build {builder}`, {paper} method ({what})"
    return said + (f", with the paper's settings (preset {preset})" if preset else ", with wikiorigin's defaults")


def _review(metas: list[dict]) -> tuple[str | None, str | None]:
    """The annotation protocol and analysis of the files a human review exported."""
    protocols, analyses = [], []
    for meta in metas:
        review = meta.get("review")
        if not isinstance(review, dict):
            continue
        who = ", ".join(review.get("annotators") or []) or "nobody"
        protocols.append(
            f"Each item was accepted, edited or rejected by hand in wikiorigin's review app, beside its "
            f"article (annotators: {who}; policy {review.get('policy')}): {review.get('exported')} of "
            f"{review.get('items')} items kept, {review.get('rejected', 0)} rejected, {review.get('edited', 0)} edited."
        )
        agreement = review.get("agreement")
        if isinstance(agreement, dict) and agreement.get("pairs"):
            pairs = "; ".join(
                f"{' and '.join(p.get('annotators', []))}: Cohen's kappa {p.get('cohen_kappa')} over {p.get('items')} items"
                for p in agreement["pairs"]
            )
            analyses.append(f"Agreement on the {agreement.get('items')} items decided by two or more: {pairs}.")
    return (" ".join(protocols) or None, " ".join(analyses) or None)


def _rai(kind: str, metas: list[dict]) -> dict:
    methods = sorted({_method(m) for m in metas})
    models = sorted({m for meta in metas for m in _models(meta)})
    protocol, analysis = _review(metas)
    out = {
        "rai:dataCollection": "Built with wikiorigin from Wikipedia and Wikidata dumps: " + "; ".join(methods) + ".",
        "rai:dataCollectionRawData": "Wikipedia articles (CC BY-SA 4.0) and Wikidata (CC0), named in each row "
        "(url, source revision) and, by file and checksum, in isBasedOn.",
        "rai:machineAnnotationTools": models,
        "rai:dataAnnotationProtocol": protocol
        or "Written, checked and filtered by the language models named in machineAnnotationTools; no human review.",
        "rai:dataUseCases": f"Evaluating language models' knowledge of culture-specific items ({kind}).",
        "rai:dataLimitations": "Questions written by language models can be wrong or ambiguous; each row names "
        "the article it was written from, to check it against.",
        "rai:dataBiases": "The items are those Wikipedia's editors wrote about; what a culture's edition covers, "
        "and how, follows them.",
        "rai:personalSensitiveInformation": "None beyond what Wikipedia publishes about its subjects.",
    }
    incomplete = [m for m in metas if m.get("complete") is False]
    if incomplete:
        out["rai:dataCollectionMissingData"] = (
            f"{len(incomplete)} file(s) were accepted with LLM requests that failed after their retries "
            "(complete: false): rows are missing."
        )
    if analysis:
        out["rai:dataAnnotationAnalysis"] = analysis
    return out


def croissant(
    files: list[Path],
    schemas: list[pa.Schema],
    metas: list[dict],
    *,
    kind: str,
    title: str,
    description: str,
    licence: str,
    languages: list[str],
    url: str | None = None,
    version: str = "1.0.0",
) -> dict:
    """The Croissant 1.0 metadata (a JSON-LD dict) of a dataset made of ``files`` (Parquet,
    each with its Arrow ``schemas`` and provenance ``metas``), of ``kind``, under ``licence``
    (a hub licence id: ``cc-by-sa-4.0``, ``cc-by-nc-sa-4.0``); ``url``: where it is published."""
    sources = [s for meta in metas for s in _sources(meta)]
    today = datetime.date.today()
    out = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": title,
        "description": description,
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "license": LICENCES.get(licence, licence),
        "version": version,
        "datePublished": today.isoformat(),
        "citeAs": _cite(title, url, today),
        "inLanguage": languages,
        "keywords": ["question answering", "culture", "Wikipedia", "Wikidata", kind],
        "isBasedOn": sources,
        "distribution": [_file_object(p) for p in files],
        "recordSet": [_record_set(p, s) for p, s in zip(files, schemas)],
        **_rai(kind, metas),
    }
    if url:
        out["url"] = url
    return out


def _cite(title: str, url: str | None, today: datetime.date) -> str:
    """A BibTeX entry for the set (its key made from the title and the year)."""
    key = re.sub(r"\W+", "_", title.casefold(), flags=re.ASCII).strip("_") or "dataset"
    lines = [f"@misc{{{key}_{today.year},", f"  title = {{{title}}},", f"  year = {{{today.year}}},"]
    lines += [f"  url = {{{url}}},"] if url else []
    return "\n".join([*lines, "  note = {Built with wikiorigin}", "}"])
