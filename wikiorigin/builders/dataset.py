"""A built dataset as files others can load: Parquet plus a dataset card.

:func:`write_card` writes ``README.md`` beside a dataset's Parquet files: YAML front matter that
the Hugging Face hub reads (license, languages, task categories, size, name, configs; made by
huggingface_hub's ``DatasetCardData`` and ``DatasetCard``, offline) and a body with
its sources (dump dates, articles), the generator and checker models, the prompt hash and the
build's usage — all taken from the files' provenance —, and for a reviewed dataset
(``wikiorigin review export``) the human review's counts. Text derived from Wikipedia is
CC BY-SA 4.0. The files load with ``datasets.load_dataset("parquet", data_files=...)`` or
``datasets.load_dataset(directory)``.

A card says where a set is incomplete (its build's requests failed and it was accepted as it
is: ``complete: false``), and names its inputs by file name and checksum, never by a path of
the machine that built it. The card carries :data:`CARD_MARKER`: a ``README.md`` without it (one
written by hand) is replaced only when asked (``force``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from ..errors import ParameterError, WikioriginError
from ..files import schema_provenance, write_text
from .croissant import croissant

__all__ = ["write_card", "push", "hub_url", "check_hub_token", "split_name", "TASKS", "CARD_MARKER", "CROISSANT"]

CROISSANT = "croissant.json"
"""The file :func:`write_card` writes beside the card: the dataset's Croissant metadata."""

CARD_MARKER = "<!-- wikiorigin build card: this file is rewritten by `wikiorigin build card` -->"
"""The line every card :func:`write_card` writes carries: how it knows a ``README.md`` of its
own (rewritten freely) from one written by hand (kept unless ``force``)."""

TASKS = {
    "mcq": ("multiple-choice", "multiple-choice-qa"),
    "freeform": ("question-answering", "open-domain-qa"),
    "preferences": ("text-generation", "preference"),
}
"""The Hugging Face ``task_categories`` and ``task_ids`` of each dataset kind (``mcq``,
``freeform``, ``preferences``), written into the dataset card."""
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def _size_category(rows: int) -> str:
    return next((label for limit, label in _SIZES if rows < limit), "n>1M")


def _open(path: Path) -> pq.ParquetFile:
    """One of the dataset's files, its footer read once (rows, schema, provenance); a file that
    is not Parquet is a one-line error naming it."""
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise WikioriginError(f"{path}: not a Parquet file ({str(exc).splitlines()[0]})") from None


def _row_languages(parquets: list[pq.ParquetFile], kind: str) -> set[str]:
    """The languages the rows themselves say (their ``language`` column); a free-form set also
    asks each question in English (``question``) beside the item's language."""
    found = set()
    for parquet in parquets:
        if "language" in parquet.schema_arrow.names:
            column = parquet.read(columns=["language"]).column(0)
            found |= {v for v in column.unique().to_pylist() if v}
    return found | ({"en"} if kind == "freeform" and found else set())


def _review_lines(files: list[Path], metas: list[dict]) -> list[str]:
    """The card's "Human review" section: for each file made by ``wikiorigin review export``,
    the policy, the annotators and the counts of items by outcome."""
    lines = []
    for path, meta in zip(files, metas):
        review = meta.get("review")
        if not isinstance(review, dict):
            continue
        who = ", ".join(review.get("annotators") or []) or "nobody"
        lines.append(
            f"- `{path.name}`: {review.get('exported')} of {review.get('items')} items accepted by "
            f"human review (policy {review.get('policy')}; annotators: {who}); "
            f"{review.get('edited', 0)} edited, {review.get('rejected', 0)} rejected, "
            f"{review.get('undecided', 0)} undecided, {review.get('stale', 0)} with a stale decision, "
            f"{review.get('conflicts', 0)} left out as annotators accepted different edits"
        )
    return ["", "## Human review", "", *lines] if lines else []


_LICENCE_TEXT = {
    "cc-by-sa-4.0": "The questions are derived from Wikipedia articles (text under CC BY-SA 4.0, "
    "https://creativecommons.org/licenses/by-sa/4.0/); this dataset is shared under the "
    "same license. Each row names its source article (`url`, `source_revision_id`).",
    "cc-by-nc-sa-4.0": "Some rows come from a dataset released under CC BY-NC-SA 4.0 (the YokaiEval "
    "rows, https://creativecommons.org/licenses/by-nc-sa/4.0/), itself derived from "
    "Wikipedia (CC BY-SA 4.0); this dataset is shared under CC BY-NC-SA 4.0: no "
    "commercial use.",
}


def _licence(metas: list[dict]) -> str:
    """CC BY-SA 4.0 (Wikipedia's), unless a file's provenance names a source under the
    non-commercial CC BY-NC-SA 4.0 (a review of the released YokaiEval rows): then that."""
    return "cc-by-nc-sa-4.0" if any(m.get("license") == "cc-by-nc-sa-4.0" for m in metas) else "cc-by-sa-4.0"


# The builder a file's provenance names (``build``) -> the dataset kind it makes.
_BUILT = {"mcq": "mcq", "freeform": "freeform", "preference": "preferences"}


def _check_built(path: Path, meta: dict, kind: str) -> None:
    """A file the card describes is a set of ``kind`` that ``wikiorigin build`` made (its
    provenance names the builder) or ``wikiorigin review export`` (the kind reviewed); else a
    one-line error naming it."""
    made = _BUILT.get(str(meta.get("builder"))) if meta.get("stage") != "review export" else meta.get("kind")
    if made is None:
        stage = f" (made by `wikiorigin {meta['stage']}`)" if meta.get("stage") else ""
        raise WikioriginError(
            f"{path}: not a dataset built by wikiorigin{stage}: a card describes the outputs of "
            "`wikiorigin build mcq|freeform|preference` or `wikiorigin review export`"
        )
    if made != kind:
        raise ParameterError(
            "kind", f"{path}: a {made} set, not {kind}: give {{kind}}, or a directory of {kind} sets", made
        )


def _card_data(
    kind: str, title: str, licence: str, languages: list[str], rows: int, files: list[Path]
) -> DatasetCardData:
    """The card's metadata, as the Hugging Face hub reads it: ``licence``, ``languages`` (``mul``
    when none is known), the task category and id of ``kind`` (:data:`TASKS`), the size
    category of ``rows``, ``title`` as the pretty name, and the splits of ``files`` (:func:`_splits`)."""
    category, task_id = TASKS[kind]
    return DatasetCardData(
        license=licence,
        language=languages or ["mul"],
        task_categories=[category],
        task_ids=[task_id],
        size_categories=[_size_category(rows)],
        pretty_name=title,
        configs=[{"config_name": "default", "data_files": _splits(files)}],
    )


_SHARD = re.compile(r"-\d{5}-of-\d{5}$")


def split_name(path: Path) -> str:
    """The hub's split of a data file: its stem, a shard's (``train-00000-of-00002``) without
    the shard's numbers, in the characters the hub's split names allow (word characters and
    inner dots; any other run is ``_``: ``yokai-mini`` -> ``yokai_mini``)."""
    stem = _SHARD.sub("", path.stem)
    name = re.sub(r"[^\w.]+", "_", stem)
    name = re.sub(r"\.{2,}", ".", name).strip("._")
    return name or "data"


def _splits(files: list[Path]) -> list[dict]:
    """The card's ``data_files``: each split (:func:`split_name`) with its files; two sets the
    hub would read as one split (``yokai-mini`` and ``yokai_mini``, a file beside its own
    shards) are a one-line error."""
    by_split: dict[str, list[str]] = {}
    for path in files:
        names = by_split.setdefault(split_name(path), [])
        first = Path(names[0]) if names else None
        if first and not (_SHARD.search(first.stem) and _SHARD.search(path.stem) and _same_set(first, path)):
            raise WikioriginError(
                f"{path.parent}: {first.name} and {path.name} would be one split on the hub, "
                f"{split_name(path)!r}: rename one"
            )
        names.append(path.name)
    return [{"split": split, "path": names[0] if len(names) == 1 else names} for split, names in by_split.items()]


def _same_set(a: Path, b: Path) -> bool:
    """Whether two shards are of one set (``train-00000-of-00002``, ``train-00001-of-00002``)."""
    return _SHARD.sub("", a.stem) == _SHARD.sub("", b.stem)


def _portable(value):
    """A provenance value as a card shows it: an absolute path of the machine that built the
    set is named by its file name only."""
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_portable(v) for v in value]
    if isinstance(value, str) and os.path.isabs(value) and "\n" not in value:
        return Path(value).name
    return value


def _incomplete_lines(files: list[Path], metas: list[dict]) -> list[str]:
    """The card's "Incomplete" section: each file whose build's requests failed (``complete:
    false``) and was kept as it is."""
    lines = [
        f"- `{path.name}`: {meta.get('failed_requests', '?')} of {meta.get('requests', '?')} LLM requests "
        "failed after their retries and the set was accepted as it is (`complete: false`): rows are missing"
        for path, meta in zip(files, metas)
        if meta.get("complete") is False
    ]
    return ["", "## Incomplete", "", *lines] if lines else []


def _card_files(directory: Path) -> list[Path]:
    """The sets in ``directory`` that a card describes (its Parquet files, the failed rows'
    left out), checked: ``directory`` is one, and no set is there twice (one file under two
    names, or a copy: its rows would be counted, and published, twice)."""
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise WikioriginError(f"{directory}: {what}; give the directory of the set's Parquet files")
    files = sorted(p for p in directory.glob("*.parquet") if not p.name.endswith(".failed.parquet"))
    for i, path in enumerate(files):
        for other in files[:i]:
            if os.path.samefile(other, path) or _same_bytes(other, path):
                raise WikioriginError(
                    f"{directory}: {other.name} and {path.name} are one set twice (its rows would be counted "
                    "and published twice): remove one"
                )
    return files


def _same_bytes(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            block = fa.read(1 << 20)
            if block != fb.read(1 << 20):
                return False
            if not block:
                return True


def _check_own(path: Path, force: bool) -> None:
    """``path`` may be (re)written: absent, a card of ours (:data:`CARD_MARKER`), or ``force``;
    never a directory."""
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory, where the card writes a file; move it")
    if force or not path.exists():
        return
    try:
        ours = CARD_MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise WikioriginError(f"{path}: cannot be read ({exc.strerror})") from None
    if not ours:
        raise ParameterError(
            "force",
            f"{path}: a README.md not written by wikiorigin (no card marker); it is kept: move it, or give "
            "{force} to replace it",
        )


def _check_own_croissant(path: Path, force: bool) -> None:
    """``croissant.json`` may be (re)written: absent, ours (its data collection says it was
    built with wikiorigin, as :func:`~wikiorigin.builders.croissant.croissant` writes), or
    ``force``; metadata written by hand is kept; never a directory."""
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory, where the card writes a file; move it")
    if force or not path.exists():
        return
    try:
        said = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        said = None
    if not (isinstance(said, dict) and str(said.get("rai:dataCollection", "")).startswith("Built with wikiorigin")):
        raise ParameterError(
            "force",
            f"{path}: Croissant metadata not written by wikiorigin; it is kept: move it, or give {{force}} to replace it",
        )


def write_card(
    directory, kind: str, title: str, description: str, *, force: bool = False, url: str | None = None
) -> Path:
    """Write ``directory/README.md`` for the Parquet files in ``directory`` (one dataset): each
    a set of ``kind`` built by wikiorigin (``build`` or ``review export``), else a one-line
    error and no card. A ``README.md`` there that no card of ours wrote is replaced only with
    ``force`` (else a :class:`~wikiorigin.errors.ParameterError` before anything is read).
    Beside it, ``croissant.json`` (:data:`CROISSANT`): the files' Croissant metadata
    (:func:`~wikiorigin.builders.croissant.croissant`); ``url``: where the set is published."""
    directory = Path(directory)
    files = _card_files(directory)
    _check_own(directory / "README.md", force)
    _check_own_croissant(directory / CROISSANT, force)
    if not files:
        raise WikioriginError(f"{directory}: no Parquet files to describe")
    parquets = [_open(p) for p in files]
    rows = sum(p.metadata.num_rows for p in parquets)
    metas = [schema_provenance(p.schema_arrow) for p in parquets]
    for path, meta in zip(files, metas):
        _check_built(path, meta, kind)
    languages = sorted({str(m["language"]) for m in metas if m.get("language")} | _row_languages(parquets, kind))
    licence = _licence(metas)
    body = [
        f"# {title}",
        "",
        description,
        "",
        f"{rows:,} rows in {len(files)} file(s), built with wikiorigin.",
        "",
        "## Sources and build",
        "",
    ]
    for path, meta in zip(files, metas):
        # every setting the build recorded (sampling, limits, effort, rounds, checker, ...), as it ran
        keep = _portable({k: v for k, v in meta.items() if k not in ("stage", "signature")})
        body += [f"- `{path.name}`: `" + json.dumps(keep, ensure_ascii=False, sort_keys=True) + "`"]
    body += _incomplete_lines(files, metas)
    body += _review_lines(files, metas)
    body += ["", "## License", "", _LICENCE_TEXT[licence], ""]
    front = _card_data(kind, title, licence, languages, rows, files).to_yaml()
    card = DatasetCard(f"---\n{front}\n---\n\n" + "\n".join(body) + CARD_MARKER + "\n")
    described = croissant(
        files,
        [p.schema_arrow for p in parquets],
        metas,
        kind=kind,
        title=title,
        description=description,
        licence=licence,
        languages=languages or ["mul"],
        url=url,
    )
    write_text(directory / CROISSANT, json.dumps(described, ensure_ascii=False, indent=1) + "\n")
    path = directory / "README.md"
    write_text(path, str(card))
    return path


def hub_url(repo: str) -> str:
    """The page of the dataset repository ``repo`` on the hub (``HF_ENDPOINT``, else huggingface.co)."""
    return f"{_endpoint().rstrip('/')}/datasets/{repo}"


def _endpoint() -> str:
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT") or constants.ENDPOINT


def check_hub_token(repo: str) -> None:
    """``repo`` is a hub repository name (``owner/name``) and the environment has a token for
    the hub (``HF_TOKEN`` or a saved login); else a one-line
    :class:`~wikiorigin.errors.WikioriginError` naming ``repo``."""
    from huggingface_hub import get_token
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo)
    except HFValidationError as exc:
        raise WikioriginError(f"{repo!r}: not a repository name of the hub ({str(exc).splitlines()[0]})") from None
    if "/" not in repo:
        raise WikioriginError(f"{repo!r}: give the repository as owner/name")
    if not get_token():
        raise WikioriginError(f"{repo!r}: no Hugging Face token: set HF_TOKEN, or log in with `hf auth login`")


def push(directory, repo: str, *, private: bool = False) -> list[str]:
    """Hand the dataset in ``directory`` (its card written: :func:`write_card`) to the hub as
    the dataset repository ``repo`` (``owner/name``; created if missing, ``private`` then):
    its Parquet files (not ``*.failed.parquet``), ``README.md`` and ``croissant.json``, in one
    commit, with the token of the environment (``HF_TOKEN`` or a saved login) to the endpoint
    of ``HF_ENDPOINT`` (default huggingface.co). Returns the files sent. No token, a token the
    hub refuses or a hub that cannot be reached is one line
    (:class:`~wikiorigin.errors.WikioriginError`)."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    directory = Path(directory)
    sent = sorted(p.name for p in directory.glob("*.parquet") if not p.name.endswith(".failed.parquet"))
    sent += [n for n in ("README.md", CROISSANT) if (directory / n).is_file()]
    if "README.md" not in sent or not sent[0].endswith(".parquet"):
        raise WikioriginError(f"{directory}: no dataset card and Parquet files to push: write the card first")
    check_hub_token(repo)
    api = HfApi(endpoint=_endpoint())
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            folder_path=directory,
            repo_id=repo,
            repo_type="dataset",
            allow_patterns=sent,
            commit_message="wikiorigin build card: the dataset, its card and croissant.json",
        )
    except HfHubHTTPError as exc:
        raise WikioriginError(f"{hub_url(repo)}: the hub refused the upload ({str(exc).splitlines()[0]})") from None
    except OSError as exc:
        raise WikioriginError(f"{hub_url(repo)}: the hub cannot be reached ({exc})") from None
    return sent
