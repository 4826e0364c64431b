"""Download dump files from a Wikimedia mirror into a local tree of the same layout.

:func:`plan` finds, for each wiki, the run to fetch (a date, or ``latest``: the newest run whose
needed jobs are ``done`` in its ``dumpstatus.json``) and the files of the wanted kinds with their
sizes and checksums. :func:`download` fetches them with bounded parallelism, resuming partial
files with HTTP ``Range``, verifying each against the published checksum (``dumpstatus.json``,
else ``*-sha1sums.txt`` / ``*-md5sums.txt``) before it is renamed to its final name; files
already verified are skipped. Every request carries a descriptive User-Agent with a contact:
Wikimedia blocks generic ones.

The MediaWiki history dumps (``other/mediawiki_history``) publish no checksums: their files are
checked against the size the server announces, and the plan says so.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParameterError, WikioriginError
from ..progress import Progress
from ..retry import Backoff
from ._http import Client, FetchError, RemoteFile
from .layout import KINDS

__all__ = ["DEFAULT_MIRROR", "FETCH_KINDS", "Client", "RemoteFile", "FetchError", "plan", "download"]

DEFAULT_MIRROR = "https://dumps.wikimedia.org"
"""Where dumps are fetched from unless a mirror is given."""
FETCH_KINDS = ("stubs", "export", "page_props", "multistream", "history", "wikidata")
"""The kinds of file :func:`plan` can fetch: a dump run's ``stubs``, ``export``,
``page_props`` and ``multistream``, the MediaWiki ``history`` TSV and the ``wikidata`` JSON."""
_RUN_KINDS = ("stubs", "export", "page_props", "multistream")
_DATE_LINK = re.compile(r'href="(\d{8})/?"')
_MONTH_LINK = re.compile(r'href="(\d{4}-\d{2})/?"')
_FILE_LINK = re.compile(r'href="([^"/?#]+)"')
_CHUNK = 1 << 20


# --- planning -------------------------------------------------------------------------------


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


def _listing(client: Client, url: str, pattern: re.Pattern) -> list[str]:
    return sorted(set(pattern.findall(client.text(url + "/"))), reverse=True)


def _status(client: Client, base: str, wiki: str, date: str) -> dict:
    url = _join(base, wiki, date, "dumpstatus.json")
    try:
        return json.loads(client.text(url))
    except json.JSONDecodeError as exc:
        raise FetchError(f"{url}: not JSON ({exc})") from None


def _run_files(status: dict, wiki: str, date: str, kinds: list[str]):
    """(file name, info, job name, job status) of the wanted kinds in a run's status."""
    patterns = []
    for kind in kinds:
        patterns.append(KINDS[kind])
        if kind == "multistream":
            patterns.append(KINDS["multistream_index"])
    wanted = re.compile(re.escape(f"{wiki}-{date}-") + "(" + "|".join(patterns) + r")\Z")
    for job, info in status.get("jobs", {}).items():
        for name, meta in (info.get("files") or {}).items():
            if wanted.match(name):
                yield name, meta, job, info.get("status")


def _checksums(client: Client, base: str, wiki: str, date: str) -> dict[str, dict]:
    """``*-sha1sums.txt`` or ``*-md5sums.txt`` of a run, when dumpstatus.json has none."""
    for algo in ("sha1", "md5"):
        url = _join(base, wiki, date, f"{wiki}-{date}-{algo}sums.txt")
        try:
            text = client.text(url)
        except FetchError:
            continue
        return {name: {algo: digest} for digest, name in (l.split() for l in text.splitlines() if l.strip())}
    return {}


def _plan_run(client, base, wiki, date, kinds, out, notes) -> list[RemoteFile] | None:
    status = _status(client, base, wiki, date)
    found = list(_run_files(status, wiki, date, kinds))
    not_done = sorted({job for _, _, job, state in found if state != "done"})
    if not found or not_done:
        notes.append(
            f"{wiki} {date}: "
            + (f"jobs not done: {', '.join(not_done)}" if not_done else f"no files of {', '.join(kinds)}")
        )
        return None
    sums = None
    files = []
    for name, meta, _, _ in sorted(found):
        if not (meta.get("sha1") or meta.get("md5")):
            sums = _checksums(client, base, wiki, date) if sums is None else sums
            meta = {**meta, **sums.get(name, {})}
        if not (meta.get("sha1") or meta.get("md5")):
            raise FetchError(f"{wiki} {date}: no checksum published for {name}")
        url = _join(base, meta["url"].lstrip("/")) if meta.get("url") else _join(base, wiki, date, name)
        files.append(
            RemoteFile(url, Path(out) / wiki / date / name, meta.get("size"), meta.get("sha1"), meta.get("md5"))
        )
    return files


def _plan_history(client, base, wiki, out, notes) -> list[RemoteFile]:
    root = _join(base, "other", "mediawiki_history")
    for month in _listing(client, root, _MONTH_LINK):
        url = _join(root, month, wiki)
        try:
            names = [n for n in _listing(client, url, _FILE_LINK) if n.endswith(".tsv.bz2")]
        except FetchError:
            continue
        if names:
            notes.append(f"{wiki} history {month}: no checksums are published; sizes are checked")
            return [
                RemoteFile(_join(url, n), Path(out) / "other" / "mediawiki_history" / month / wiki / n)
                for n in sorted(names)
            ]
    raise FetchError(f"{root}: no MediaWiki history files for {wiki}")


def _plan_wikidata(client, base, date, out, notes) -> list[RemoteFile]:
    root = _join(base, "wikidatawiki", "entities")
    dates = [date] if date != "latest" else _listing(client, root, _DATE_LINK)
    for day in dates:
        try:
            text = client.text(_join(root, day, f"wikidata-{day}-md5sums.txt"))
        except FetchError:
            continue
        sums = dict((name, digest) for digest, name in (l.split() for l in text.splitlines() if l.strip()))
        name = f"wikidata-{day}-all.json.gz"
        if name in sums:
            return [
                RemoteFile(_join(root, day, name), Path(out) / "wikidatawiki" / "entities" / day / name, md5=sums[name])
            ]
    raise FetchError(f"{root}: no complete Wikidata JSON dump for {date}")


def plan(
    client: Client,
    base: str,
    wikis: list[str],
    date: str,
    kinds: list[str],
    out,
    *,
    skip_missing: bool = False,
    wikidata_date: str = "latest",
) -> tuple[list[RemoteFile], list[str]]:
    """The files to fetch, and notes on what was passed over (runs not done, and so on).
    ``skip_missing`` (for ``all``): a wiki the mirror lacks, or with no run done, is a note, not
    an error. Wikidata's dumps have dates of their own: ``wikidata_date``, not ``date``."""
    unknown = sorted(set(kinds) - set(FETCH_KINDS))
    if unknown:
        raise WikioriginError(f"unknown kinds {unknown}; known: {', '.join(FETCH_KINDS)}")
    for name, value in (("date", date), ("wikidata_date", wikidata_date)):
        if value != "latest" and not re.fullmatch(r"\d{8}", value):
            raise ParameterError(name, "{" + name + "} must be YYYYMMDD or latest", value)
    files: list[RemoteFile] = []
    notes: list[str] = []
    run_kinds = [k for k in kinds if k in _RUN_KINDS]
    for wiki in wikis:
        try:
            if run_kinds:
                files += _plan_wiki_run(client, base, wiki, date, run_kinds, out, notes)
            if "history" in kinds:
                files += _plan_history(client, base, wiki, out, notes)
        except FetchError as exc:
            if not skip_missing:
                raise
            notes.append(f"{wiki}: skipped ({exc})")
    if "wikidata" in kinds:
        files += _plan_wikidata(client, base, wikidata_date, out, notes)
    return files, notes


def _plan_wiki_run(
    client: Client, base: str, wiki: str, date: str, run_kinds: list[str], out, notes: list[str]
) -> list[RemoteFile]:
    """The files of the newest run of ``wiki`` (or the run of ``date``) with every kind done."""
    dates = [date] if date != "latest" else _listing(client, _join(base, wiki), _DATE_LINK)
    for day in dates:
        found = _plan_run(client, base, wiki, day, run_kinds, out, notes)
        if found is not None:
            return found
    raise FetchError(
        f"{wiki}: no run {'' if date == 'latest' else date + ' '}with "
        f"{', '.join(run_kinds)} done ({'; '.join(notes[-3:])})"
    )


# --- fetching -------------------------------------------------------------------------------


@dataclass(slots=True)
class FetchReport:
    """What a download did: the files ``fetched`` and ``skipped`` (already there and
    verified), the ``bytes`` transferred and the ``seconds`` it took."""

    fetched: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0


def _digest(path: Path, algo: str) -> str:
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _verify(path: Path, remote: RemoteFile) -> str | None:
    """None when ``path`` matches ``remote``, else what is wrong."""
    size = path.stat().st_size
    if remote.size is not None and size != remote.size:
        return f"{size} bytes, expected {remote.size}"
    for algo in ("sha1", "md5"):
        expected = getattr(remote, algo)
        if expected:
            got = _digest(path, algo)
            return None if got == expected else f"{algo} {got}, expected {expected}"
    return None


def _marker(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.verified")


def _already_verified(dest: Path, remote: RemoteFile) -> bool:
    marker = _marker(dest)
    if not (dest.exists() and marker.exists()):
        return False
    stat = dest.stat()
    return json.loads(marker.read_text()) == [stat.st_size, stat.st_mtime_ns, remote.sha1, remote.md5]


def _copy(response, part: Path, append: bool, url: str, progress=None) -> int:
    n = 0
    first = True
    with open(part, "ab" if append else "wb") as f:
        while chunk := response.read(_CHUNK):
            if first and not append and chunk.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
                raise FetchError(f"{url}: the mirror sent an HTML page, not the file")
            first = False
            f.write(chunk)
            n += len(chunk)
            if progress is not None:
                progress.update(len(chunk))
    return n


def fetch_one(client: Client, remote: RemoteFile, progress=None) -> int:
    """Fetch one file (resuming ``.part``), verify it, rename it; returns bytes transferred
    (counted on ``progress`` too, a :class:`~wikiorigin.progress.Progress`, as they come)."""
    remote.dest.parent.mkdir(parents=True, exist_ok=True)
    part = remote.dest.with_name(remote.dest.name + ".part")
    moved = 0
    backoff = Backoff(client.retries, client.backoff, client.max_wait)
    for attempt in backoff.tries:
        start = part.stat().st_size if part.exists() else 0
        try:
            with client.open(remote.url, start) as response:
                resumed = start > 0 and response.status == 206
                length = response.headers.get("Content-Length")
                if remote.size is None and length is not None and not resumed:
                    remote.size = int(length)
                copied = _copy(response, part, resumed, remote.url, progress)
                moved += copied
            if length is not None and copied < int(length):  # the server hung up early
                raise ConnectionError(f"connection closed after {copied} of {length} bytes")
            break
        except (http.client.HTTPException, OSError, FetchError) as exc:
            wait = exc.retry_after if isinstance(exc, FetchError) else None
            if backoff.exhausted(attempt) or (isinstance(exc, FetchError) and not exc.retry):
                raise FetchError(f"{remote.url}: {exc}" if not isinstance(exc, FetchError) else str(exc)) from None
            if backoff.refuses(wait):
                raise FetchError(
                    f"{exc}: the mirror asks to wait {wait:,.0f} s, more than {client.max_wait:,.0f} s; "
                    "try again later (finished files are kept, this one resumes)"
                ) from None
            time.sleep(backoff.delay(attempt, wait))
    problem = _verify(part, remote)
    if problem:
        part.unlink()
        raise FetchError(f"{remote.url}: checksum mismatch ({problem}); the partial file was removed")
    os.replace(part, remote.dest)
    stat = remote.dest.stat()
    _marker(remote.dest).write_text(json.dumps([stat.st_size, stat.st_mtime_ns, remote.sha1, remote.md5]))
    return moved


def download(client: Client, files: list[RemoteFile], jobs: int = 4) -> FetchReport:
    """Fetch ``files`` on ``jobs`` threads; already verified files are skipped."""
    report = FetchReport()
    started = time.perf_counter()
    skipped: list[RemoteFile] = []
    todo: list[RemoteFile] = []
    for remote in files:
        (skipped if _already_verified(remote.dest, remote) else todo).append(remote)
    report.skipped = [r.dest for r in skipped]
    errors: list[str] = []
    sizes = [r.size for r in todo if r.size is not None]
    total = sum(sizes) if len(sizes) == len(todo) else None  # known only when every size is
    with (
        Progress("download", total=total, unit="byte") as progress,
        ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
    ):
        futures = [(r, pool.submit(fetch_one, client, r, progress)) for r in todo]
        for remote, future in futures:
            try:
                report.bytes += future.result()
                report.fetched.append(remote.dest)
            except FetchError as exc:
                errors.append(str(exc))
    report.seconds = time.perf_counter() - started
    if errors:
        raise FetchError(
            f"{len(errors)} of {len(todo)} downloads failed (the others are kept): " + "; ".join(errors[:5])
        )
    return report
