import hashlib
import json
import shutil

import pytest

from tests.mirror import Mirror
from wikiorigin.cli import main
from wikiorigin.dumps import fetch
from wikiorigin.dumps.fetch import Client, FetchError, download, plan


def _status(run_dir, wiki, date, files, state="done", checksums=True, job="xmlstubsdump"):
    entries = {}
    for f in files:
        data = (run_dir / f).read_bytes()
        entry = {"size": len(data), "url": f"/{wiki}/{date}/{f}"}
        if checksums:
            entry.update(sha1=hashlib.sha1(data).hexdigest(), md5=hashlib.md5(data).hexdigest())
        entries[f] = entry
    jobs = {job: {"status": state, "updated": "2026-08-02 10:00:00", "files": entries}}
    (run_dir / "dumpstatus.json").write_text(json.dumps({"jobs": jobs, "version": "0.8"}))


@pytest.fixture()
def mirror_root(tmp_path, data_dir):
    """jawiki: 20260801 done, 20260901 in progress. kowiki: checksums only in sha1sums.txt.
    fiwiki: a wrong checksum."""
    root = tmp_path / "mirror"
    tree = data_dir.parent / "tree"
    for wiki in ("jawiki", "kowiki", "fiwiki"):
        src = tree / wiki / "20260801"
        run = root / wiki / "20260801"
        shutil.copytree(src, run)
        names = sorted(p.name for p in run.iterdir())
        _status(run, wiki, "20260801", names, checksums=(wiki != "kowiki"))
    sums = "".join(
        f"{hashlib.sha1(p.read_bytes()).hexdigest()}  {p.name}\n"
        for p in sorted((root / "kowiki" / "20260801").glob("kowiki-*"))
    )
    (root / "kowiki" / "20260801" / "kowiki-20260801-sha1sums.txt").write_text(sums)
    status = json.loads((root / "fiwiki" / "20260801" / "dumpstatus.json").read_text())
    for info in status["jobs"]["xmlstubsdump"]["files"].values():
        info["sha1"] = "0" * 40
    (root / "fiwiki" / "20260801" / "dumpstatus.json").write_text(json.dumps(status))
    newer = root / "jawiki" / "20260901"
    shutil.copytree(root / "jawiki" / "20260801", newer)
    for p in newer.glob("jawiki-20260801-*"):
        p.rename(newer / p.name.replace("20260801", "20260901"))
    _status(newer, "jawiki", "20260901", sorted(p.name for p in newer.glob("jawiki-*")), state="in-progress")
    return root


CLIENT = Client(contact="tests@example.org", retries=3, backoff=0.01, timeout=10)


def test_latest_skips_a_run_that_is_not_done(mirror_root, tmp_path):
    with Mirror(mirror_root) as m:
        files, notes = plan(CLIENT, m.url, ["jawiki"], "latest", ["stubs", "page_props"], tmp_path / "tree")
    assert [f.dest.name for f in files] == [
        "jawiki-20260801-page_props.sql.gz",
        "jawiki-20260801-stub-meta-history.xml.gz",
    ]
    assert notes == ["jawiki 20260901: jobs not done: xmlstubsdump"]
    assert all(f.size and f.sha1 for f in files)


def test_download_verifies_resumes_and_skips(mirror_root, tmp_path):
    out = tmp_path / "tree"
    with Mirror(mirror_root) as m:
        files, _ = plan(CLIENT, m.url, ["jawiki", "kowiki"], "20260801", ["stubs", "page_props"], out)
        m.faults["/jawiki/20260801/jawiki-20260801-stub-meta-history.xml.gz"] = "drop"
        m.faults["/kowiki/20260801/kowiki-20260801-page_props.sql.gz"] = "500-once"
        report = download(CLIENT, files, jobs=2)
        assert len(report.fetched) == 4 and not report.skipped
        for f in files:
            assert f.dest.read_bytes() == (mirror_root / f.dest.relative_to(out)).read_bytes()
            assert not f.dest.with_name(f.dest.name + ".part").exists()
        ranges = [r for path, _, r in m.log if path.endswith("stub-meta-history.xml.gz") and r]
        assert ranges and ranges[0].startswith("bytes=")  # resumed, not restarted
        assert all(ua.startswith("wikiorigin/") and "tests@example.org" in ua for _, ua, _ in m.log)
        again = download(CLIENT, files, jobs=2)
    assert not again.fetched and len(again.skipped) == 4


def test_checksum_mismatch(mirror_root, tmp_path):
    with Mirror(mirror_root) as m:
        files, _ = plan(CLIENT, m.url, ["fiwiki"], "20260801", ["stubs"], tmp_path / "tree")
        with pytest.raises(
            FetchError,
            match=r"fiwiki-20260801-stub-meta-history\.xml\.gz: "
            r"checksum mismatch \(sha1 [0-9a-f]{40}, expected 0{40}\)",
        ):
            download(CLIENT, files)
    assert not list((tmp_path / "tree").rglob("*.xml.gz"))


def test_missing_run_is_a_404(mirror_root, tmp_path):
    with Mirror(mirror_root) as m:
        with pytest.raises(FetchError, match=r"/jawiki/20250101/dumpstatus\.json: HTTP 404"):
            plan(CLIENT, m.url, ["jawiki"], "20250101", ["stubs"], tmp_path / "tree")


def test_mirror_serving_html_instead_of_a_file(mirror_root, tmp_path):
    with Mirror(mirror_root) as m:
        files, _ = plan(CLIENT, m.url, ["jawiki"], "20260801", ["page_props"], tmp_path / "tree")
        m.faults["/jawiki/20260801/jawiki-20260801-page_props.sql.gz"] = "html"
        with pytest.raises(FetchError, match="the mirror sent an HTML page, not the file"):
            download(CLIENT, files)


def test_no_contact_no_download():
    with pytest.raises(fetch.WikioriginError, match="need a contact for the User-Agent") as raised:
        Client(contact="")
    assert "give contact= (an email or URL)" in str(raised.value)  # the library's word, not a flag


def test_a_bad_date_names_the_parameter_in_the_library_and_the_flag_on_the_command_line(tmp_path, capsys):
    with pytest.raises(fetch.WikioriginError) as raised:
        plan(CLIENT, "http://127.0.0.1:9", ["jawiki"], "latest", ["stubs"], tmp_path, wikidata_date="2025-01")
    assert str(raised.value) == "wikidata_date='2025-01' must be YYYYMMDD or latest"
    args = ["download", "ja", "--mirror", "http://127.0.0.1:9", "--out", str(tmp_path / "t"), "--date", "May"]
    assert main([*args, "--contact", "t@example.org"]) == 2
    assert capsys.readouterr().err.strip() == "wikiorigin: error: --date May must be YYYYMMDD or latest"
    assert main(args) == 2
    assert "give --contact (an email or URL)" in capsys.readouterr().err


def test_cli_dry_run_and_fetch(mirror_root, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")  # a progress line at every chunk
    out = tmp_path / "tree"
    with Mirror(mirror_root) as m:
        args = ["download", "ja", "--mirror", m.url, "--out", str(out), "--contact", "t@example.org"]
        assert main(args + ["--dry-run"]) == 0
        listed = capsys.readouterr().out
        assert "jawiki-20260801-stub-meta-history.xml.gz" in listed and "2 files" in listed
        assert not out.exists()
        assert main(args) == 0
        said = capsys.readouterr()
        assert "2 files fetched and verified" in said.out and "download: " in said.err and " bytes (" in said.err
    from wikiorigin.origin import build_origins

    report = build_origins(out, tmp_path / "origins.parquet")
    assert report.origins.items > 0 and [r.wiki for r in report.shards] == ["jawiki"]


@pytest.mark.slow
def test_a_mirror_asking_to_wait_is_heard(mirror_root, tmp_path):
    """429 with Retry-After: a wait within max_wait is taken as the mirror asks (not the 0.01 s
    backoff); a longer one ends that file's download at once, with a line saying so."""
    import time

    with Mirror(mirror_root) as m:
        files, _ = plan(CLIENT, m.url, ["kowiki"], "20260801", ["page_props"], tmp_path / "tree")
        m.faults[files[0].url.removeprefix(m.url)] = "429:1"
        began = time.monotonic()
        assert len(download(CLIENT, files).fetched) == 1
        assert time.monotonic() - began >= 1.0  # the mirror's word, not the backoff
        files, _ = plan(CLIENT, m.url, ["kowiki"], "20260801", ["page_props"], tmp_path / "tree2")
        m.faults[files[0].url.removeprefix(m.url)] = "429:86400"
        began = time.monotonic()
        with pytest.raises(FetchError, match=r"HTTP 429 .*asks to wait 86,400 s, more than 300 s; try again later"):
            download(CLIENT, files)
        assert time.monotonic() - began < 5  # no day-long sleep
