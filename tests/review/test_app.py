"""The review server over HTTP, as a real subprocess on loopback: what it shows of each kind
of dataset, stale decisions, and its defences (Host, token, CSRF header, Origin,
Sec-Fetch-Site, JSON only, security headers); bad input and a port in use are one line, exit 2."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest

from tests.builders.test_mcq import articles  # noqa: F401 (fixture)
from tests.conftest import ROOT
from tests.review.conftest import HOSTILE, mcq_rows, write
from tests.review.server import Server, request
from wikiorigin.errors import WikioriginError
from wikiorigin.schemas import MCQ

pytest.importorskip("uvicorn", reason="the review server needs its extra: pip install -e .[review]")


def _csrf(server) -> str:
    status, headers, page = request(server.url)
    assert status == 200
    return re.search(r'name="review-csrf" content="([^"]+)"', page)[1]


def _post(server, path, data, csrf, **headers):
    return request(server.base + path, data, {"Content-Type": "application/json", "X-Review-Csrf": csrf, **headers})


def test_mcq_item_with_its_article_footnotes_and_a_safe_link(mcq_file, articles_file, tmp_path):
    with Server(mcq_file, tmp_path / "r.sqlite", "--articles", str(articles_file)) as server:
        status, headers, _ = request(server.url)
        assert "script-src 'self'" in headers["Content-Security-Policy"] and headers["X-Frame-Options"] == "DENY"
        import json

        item = json.loads(request(server.base + "api/item/0")[2])
        assert item["row"]["question"] == "垢嘗が嘗めるとされるものは何か。" and item["cited"] == [1]
        marks = [s for s in item["article"]["segments"] if "ref" in s]
        assert [(s["text"], s["cited"]) for s in marks] == [
            ("[1]", True),
            ("[2]", False),
            ("[注 1]", False),
            ("[3]", False),
        ]
        refs = item["article"]["references"]
        assert [r["cited"] for r in refs] == [True, False, False, False]
        assert refs[2]["text"] == HOSTILE and refs[2]["url"] is None  # javascript: is never a link
        assert item["link"] == "https://ja.wikipedia.org/wiki/%E5%9E%A2%E5%98%97"
        assert item["origin"]["generator"] == "gpt-4o-2024-08-06" and item["origin"]["prompt_sha1"] == "abc123def456"
        state = json.loads(request(server.base + "api/state")[2])
        assert state["total"] == 6 and state["by_group"]["妖怪の行う行動"] == [0, 3] and state["start"] == 0
        assert request(server.base + "api/item/99")[0] == 404


def test_freeform_and_preference_items(freeform_file, preferences_file, articles_file, tmp_path):
    import json

    with Server(freeform_file, tmp_path / "f.sqlite", "--articles", str(articles_file)) as server:
        item = json.loads(request(server.base + "api/item/0")[2])
        assert item["kind"] == "freeform" and item["row"]["answers"] == ["Akaname", "垢嘗"]
        assert item["article"]["title"] == "垢嘗"  # joined by the item's QID
        assert json.loads(request(server.base + "api/state")[2])["editable"] == [
            "question",
            "question_source",
            "answers",
        ]
    with Server(preferences_file, tmp_path / "p.sqlite") as server:
        item = json.loads(request(server.base + "api/item/1")[2])
        assert item["kind"] == "preferences" and item["row"]["score_chosen"] == 8.5 and item["article"] is None
        assert json.loads(request(server.base + "api/state")[2])["by_group"] == {"Customs": [0, 2]}


def test_decisions_stale_after_the_file_changes(mcq_file, tmp_path):
    import json

    with Server(mcq_file, tmp_path / "r.sqlite") as server:
        csrf = _csrf(server)
        item = json.loads(request(server.base + "api/item/0")[2])
        assert _post(server, "api/decide", {"index": 0, "sha1": "0" * 40, "decision": "accept"}, csrf)[0] == 400
        status, _, body = _post(
            server,
            "api/decide",
            {"index": 0, "sha1": item["sha1"], "decision": "accept", "edits": {"region": "九州"}},
            csrf,
        )
        assert status == 200, body
        sha1 = json.loads(request(server.base + "api/item/1")[2])["sha1"]
        for edits, message in [
            ({"answer": "x"}, "answer cannot be edited"),
            ({"answer_index": 9}, "answer_index 9 is not one of the 4 choices"),
            ({"region": "火星"}, "region '火星' is not one of"),
        ]:
            status, _, body = _post(
                server, "api/decide", {"index": 1, "sha1": sha1, "decision": "accept", "edits": edits}, csrf
            )
            assert status == 400 and message in json.loads(body)["error"], body
        for decision, message in [
            ("delete", "decision 'delete': expected one of accept, reject, skip"),
            ("reject", "a reject needs a reason or a note"),
        ]:
            status, _, body = _post(server, "api/decide", {"index": 1, "sha1": sha1, "decision": decision}, csrf)
            assert status == 400 and json.loads(body)["error"] == message, body
        rows = mcq_rows()
        rows[0]["question"] = "垢嘗が嘗めるものは？"
        write(rows, mcq_file, MCQ, builder="mcq")  # changed under the running review
        item = json.loads(request(server.base + "api/item/0")[2])
        assert item["decisions"][0]["stale"] is True and item["decisions"][0]["edits"] == {"region": "九州"}
        assert json.loads(request(server.base + "api/state")[2])["items"][0]["status"] == "stale"


def test_state_changes_need_the_secret_same_origin_and_json(mcq_file, tmp_path):
    import json

    with Server(mcq_file, tmp_path / "r.sqlite") as server:
        csrf = _csrf(server)
        sha1 = json.loads(request(server.base + "api/item/0")[2])["sha1"]
        good = {"index": 0, "sha1": sha1, "decision": "accept"}
        origin = server.base.rstrip("/")
        refused = [
            request(server.base + "api/decide", good, {"Content-Type": "application/json"}),
            _post(server, "api/decide", good, "wrong"),
            _post(server, "api/decide", good, csrf, Origin="http://evil.example"),
            _post(server, "api/decide", good, csrf, **{"Sec-Fetch-Site": "cross-site"}),
            _post(server, "api/decide", good, csrf, **{"Content-Type": "text/plain"}),
            _post(server, "api/undo", {}, "", Origin=origin),
        ]
        assert [r[0] for r in refused] == [403] * 6
        assert request(server.base + "api/decide")[0] == 405  # GET changes nothing
        assert request(server.url, headers={"Host": "evil.example"})[0] == 400  # DNS rebinding
        ok = _post(server, "api/decide", good, csrf, Origin=origin, **{"Sec-Fetch-Site": "same-origin"})
        assert ok[0] == 200, ok[2]
        assert json.loads(_post(server, "api/undo", {}, csrf)[2])["index"] == 0


def test_bound_beyond_loopback_every_request_needs_the_token(mcq_file, tmp_path):
    with Server(mcq_file, tmp_path / "r.sqlite", host="0.0.0.0") as server:
        token = re.search(r"\?token=(\S+)", server.url)[1]
        assert "0.0.0.0" not in server.url  # a name others can open: this machine's
        base = re.sub(r"//[^/]+:", "//127.0.0.1:", server.base)
        for url in (base, base + "api/state", base + "static/review.js", base + "?token=wrong"):
            status, _, body = request(url)
            assert status == 403 and "token" in body, url
        status, headers, _ = request(f"{base}?token={token}")
        cookie = headers["Set-Cookie"]
        assert status == 200 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        port = base.rstrip("/").rsplit(":", 1)[1]
        assert cookie.startswith(f"wikiorigin_review_{port}={token};")  # cookies ignore ports: named after it
        assert request(base + "api/state", headers={"Cookie": cookie.split(";")[0]})[0] == 200
        with Server(mcq_file, tmp_path / "r.sqlite", host="0.0.0.0", annotator="bob") as other:
            other_token = re.search(r"\?token=(\S+)", other.url)[1]
            other_base = re.sub(r"//[^/]+:", "//127.0.0.1:", other.base)
            other_cookie = request(f"{other_base}?token={other_token}")[1]["Set-Cookie"].split(";")[0]
            both = {"Cookie": cookie.split(";")[0] + "; " + other_cookie}  # the browser sends both to each
            assert request(base + "api/state", headers=both)[0] == 200
            assert request(other_base + "api/state", headers=both)[0] == 200


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "wikiorigin.cli", *argv], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_a_port_in_use_and_bad_input_are_one_line(mcq_file, freeform_file, articles_file, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = _run("review", "serve", str(mcq_file), "--db", str(tmp_path / "r.sqlite"), "--port", str(port))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert f"127.0.0.1:{port}: cannot listen there" in out.stderr
    cases = [
        ((str(tmp_path / "gone.parquet"), "--db", str(tmp_path / "r.sqlite")), "gone.parquet: no such file"),
        ((str(articles_file), "--db", str(tmp_path / "r.sqlite")), "articles.parquet: not a dataset to review"),
        ((str(freeform_file), "--db", str(tmp_path / "r.sqlite")), "r.sqlite: reviews mcq.parquet (mcq)"),
        (
            (str(mcq_file), "--db", str(tmp_path / "s.sqlite"), "--articles", str(mcq_file)),
            "mcq.parquet: not the output of `wikiorigin corpus yokai|origin`: no column text",
        ),
    ]
    for args, message in cases:
        out = _run("review", "serve", *args, "--port", "0")
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_released_yokaieval_rows_join_articles_by_url(tmp_path):
    import json

    from tests.review.conftest import article_rows
    from wikiorigin.schemas import ARTICLES

    base = article_rows()[0]
    articles = [
        {**base, "page_id": 1, "title": "アイヌカイセイ", "text": "空家に現れる[1]。", "url": None},
        {**base, "page_id": 2, "title": "人魚", "anchor": "アイヌソッキ", "text": "人魚の肉[492]。", "url": None},
    ]
    write(articles, tmp_path / "a.parquet", ARTICLES)
    with Server(
        str(ROOT / "tests/data/yokaieval/YokaiEval-first40.json.xz"),
        tmp_path / "y.sqlite",
        "--articles",
        str(tmp_path / "a.parquet"),
    ) as server:
        first, second = (json.loads(request(server.base + f"api/item/{i}")[2]) for i in (0, 1))
        assert (
            first["key"] == "#" + first["sha1"][:16]
            and first["cited"] == [1]
            and first["article"]["title"] == "アイヌカイセイ"
        )
        assert first["article"]["segments"][1] == {"text": "[1]", "ref": 1, "cited": True}
        assert second["article"]["anchor"] == "アイヌソッキ" and second["cited"] == [492]
        assert second["link"].startswith("https://ja.wikipedia.org/wiki/%E4%BA%BA%E9%AD%9A#")
        assert json.loads(request(server.base + "api/state")[2])["total"] == 40


def test_a_port_out_of_range_and_an_empty_annotator_are_refused(mcq_file, tmp_path):
    db = str(tmp_path / "r.sqlite")
    for port in ("99999", "-1", "http"):
        out = _run("review", "serve", str(mcq_file), "--db", db, "--port", port)
        last = out.stderr.strip().splitlines()[-1]
        assert out.returncode == 2 and "argument --port" in last and "unexpected" not in out.stderr, out.stderr
    assert (
        "99999 is not a port (0 to 65535)"
        in _run("review", "serve", str(mcq_file), "--db", db, "--port", "99999").stderr
    )
    out = _run("review", "serve", str(mcq_file), "--db", db, "--port", "0", "--annotator", "")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--annotator '': give a name" in out.stderr


def test_a_half_written_dataset_is_a_json_error_until_it_is_whole(mcq_file, tmp_path):
    import json

    with Server(mcq_file, tmp_path / "r.sqlite") as server:
        assert request(server.base + "api/state")[0] == 200
        whole = mcq_file.read_bytes()
        mcq_file.write_bytes(whole[: len(whole) // 2])  # a rebuild caught half-way
        for path in ("api/state", "api/item/0"):
            status, headers, body = request(server.base + path)
            assert status == 503 and headers["Content-Type"] == "application/json", body
            error = json.loads(body)["error"]
            assert "mcq.parquet: not a Parquet file" in error and "\n" not in error
        status, headers, body = _post(
            server, "api/decide", {"index": 0, "sha1": "0" * 40, "decision": "accept"}, _csrf(server)
        )
        assert status == 503 and "mcq.parquet: not a Parquet file" in json.loads(body)["error"], body
        mcq_file.write_bytes(whole)
        assert request(server.base + "api/state")[0] == 200 and request(server.base + "api/item/0")[0] == 200


def _accept_as(mcq_file, db, annotator, index, edits):
    import json

    with Server(mcq_file, db, annotator=annotator) as server:
        sha1 = json.loads(request(server.base + f"api/item/{index}")[2])["sha1"]
        body = {"index": index, "sha1": sha1, "decision": "accept", **({"edits": edits} if edits else {})}
        status, _, text = _post(server, "api/decide", body, _csrf(server))
        assert status == 200, text


@pytest.mark.slow
@pytest.mark.parametrize(
    "policy, carol, exported",
    [
        ("all-accept", None, None),
        ("majority", None, None),
        ("any-accept", None, None),
        ("all-accept", "bob", None),
        ("majority", "bob", "Bob Q"),
        ("any-accept", "bob", "Bob Q"),
    ],
)
def test_accepts_that_differ_in_their_edits_are_a_conflict(mcq_file, tmp_path, policy, carol, exported):
    import json

    import pyarrow.parquet as pq

    db, out = tmp_path / "r.sqlite", tmp_path / "out.parquet"
    bob = {"question": "Bob Q", "choices": ["a", "b", "c"], "answer_index": 1}
    _accept_as(mcq_file, db, "alice", 0, {"question": "Alice Q"})
    _accept_as(mcq_file, db, "bob", 0, bob)
    if carol:
        _accept_as(mcq_file, db, "carol", 0, dict(reversed(bob.items())))  # the same edits, other key order
    result = _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out), "--policy", policy)
    assert result.returncode == (1 if exported is None else 0), result.stderr  # no item accepted: exit 1
    rows = {r["id"]: r for r in pq.read_table(out).to_pylist()}
    if exported is None:
        assert rows == {} and "1 with conflicting edits (q1)" in result.stdout, result.stdout
    else:
        assert rows["q1"]["question"] == exported and rows["q1"]["answer"] == "b"
        assert rows["q1"]["review_accepts"] == 2 and "0 with conflicting edits" in result.stdout
    from wikiorigin.files import read_provenance

    review = read_provenance(out)["review"]
    assert review["conflicts"] == (exported is None) and review["conflicting"] == ([] if exported else ["q1"])
    stats = _run("review", "stats", "--db", str(db))
    assert "conflicting edits (accepts that differ in their edits): 1 items (q1)" in stats.stdout, stats.stdout
    assert json.loads(_run("review", "stats", "--db", str(db), "--json").stdout)["conflicts"] == ["q1"]


@pytest.mark.slow
def test_rows_without_ids_keep_their_decisions_when_a_row_is_inserted(preferences_file, tmp_path):
    import json

    import pyarrow.parquet as pq

    from wikiorigin.schemas import PREFERENCES

    db = tmp_path / "p.sqlite"
    with Server(preferences_file, db) as server:
        csrf = _csrf(server)
        for index, extra in ((0, {"decision": "accept"}), (1, {"decision": "reject", "reason": "duplicate"})):
            sha1 = json.loads(request(server.base + f"api/item/{index}")[2])["sha1"]
            assert _post(server, "api/decide", {"index": index, "sha1": sha1, **extra}, csrf)[0] == 200
        server.kill()
    rows = pq.read_table(preferences_file).to_pylist()
    new = {**rows[0], "prompt": "節分とは？", "chosen": "豆をまいて鬼を払う行事。"}
    write([new] + rows, preferences_file, PREFERENCES, builder="preference")  # a row inserted at the top
    with Server(preferences_file, db) as server:
        state = json.loads(request(server.base + "api/state")[2])
        assert [r["status"] for r in state["items"]] == ["pending", "accepted", "rejected"]
        assert state["start"] == 0
    assert sqlite_meta(db)["keyed_by"] == "content"
    with_ids = tmp_path / "preferences.json"  # the same rows with ids: another dataset for this database
    with_ids.write_text(json.dumps([{**r, "id": f"p{i}"} for i, r in enumerate(rows)], ensure_ascii=False))
    out = _run("review", "serve", str(with_ids), "--db", str(db), "--port", "0")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "reviews preferences.parquet, whose items are keyed by content, not by id" in out.stderr


def sqlite_meta(db) -> dict:
    """The ``meta`` table of a review database."""
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT key, value FROM meta"))
    finally:
        con.close()


def _korean_rows() -> list[dict]:
    rows = mcq_rows()[:3]
    for row, (region, type_) in zip(rows, [("Gangwon", "behaviour"), ("Jeju", "appearance"), ("Jeju", "origin")]):
        row.update(region=region, type=type_, language="ko", question=f"{region} 도깨비?")
    return rows


@pytest.mark.parametrize(
    "labels, types, regions",
    [
        (None, ["appearance", "behaviour", "origin"], ["Gangwon", "Jeju"]),  # no labels named: the rows' values
        ("korean-folklore", ["behaviour", "appearance", "origin", "customs"], ["Gangwon", "Jeju", "Gyeonggi"]),
    ],
)
def test_a_korean_set_offers_and_accepts_its_own_classes(tmp_path, labels, types, regions):
    import json

    meta = {"builder": "mcq", "language": "ko"}
    if labels:  # a labels file beside the set, named in its provenance
        from wikiorigin.labels import load_labels

        spec = {
            "name": labels,
            "types": [{"class": c, "description": c} for c in types],
            "regions": [{"class": c, "description": c} for c in regions],
        }
        (tmp_path / f"{labels}.json").write_text(json.dumps(spec), encoding="utf-8")
        meta.update(labels=labels, labels_sha1=load_labels(tmp_path / f"{labels}.json").sha1)
    dataset = write(_korean_rows(), tmp_path / "mcq.parquet", MCQ, **meta)
    with Server(dataset, tmp_path / "r.sqlite") as server:
        state = json.loads(request(server.base + "api/state")[2])
        assert state["types"] == types and state["regions"] == regions
        item = json.loads(request(server.base + "api/item/0")[2])
        assert item["region_class"] is None  # YokaiEval's messy-label cleaning is for YokaiEval only
        csrf = _csrf(server)
        for edits, ok in [
            ({"region": "Jeju", "type": "origin"}, True),
            ({"region": "九州"}, False),
            ({"type": "妖怪の行う行動"}, False),
            ({"region": "Gyeonggi", "type": "customs"}, bool(labels)),
        ]:
            status, _, body = _post(
                server, "api/decide", {"index": 0, "sha1": item["sha1"], "decision": "accept", "edits": edits}, csrf
            )
            assert (status == 200) == ok, (edits, body)
            if not ok:
                assert "is not one of this set's" in json.loads(body)["error"]


def test_a_greek_set_of_the_origin_preset_and_yokaieval_sets(tmp_path, mcq_file):
    import json

    from wikiorigin.labels import load_labels
    from wikiorigin.review.classes import mcq_classes
    from wikiorigin.review.export import check_edits
    from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES

    origin = load_labels("origin")
    rows = mcq_rows()[:2]
    for row, region in zip(rows, ("Κρήτη", "Αττική")):
        row.update(region=region, type="customs and beliefs", language="el")
    dataset = write(rows, tmp_path / "el.parquet", MCQ, builder="mcq", labels="origin", labels_sha1=origin.sha1)
    with Server(dataset, tmp_path / "el.sqlite") as server:
        state = json.loads(request(server.base + "api/state")[2])
    assert state["types"] == origin.type_names and state["regions"] == ["Αττική", "Κρήτη"]  # regions: Wikidata's
    classes = mcq_classes(dataset, rows, {"labels": "origin", "labels_sha1": origin.sha1})
    assert check_edits("mcq", {"type": "people", "region": "Κρήτη"}, classes=classes)
    with pytest.raises(WikioriginError, match="region 'Gangwon' is not one of this set's"):
        check_edits("mcq", {"region": "Gangwon"}, classes=classes)
    yokai = mcq_classes(mcq_file, mcq_rows(), {})  # no labels named, YokaiEval's types in the rows
    assert yokai["culture"] == "yokaieval" and yokai["types"] == MCQ_TYPES and yokai["regions"] == MCQ_REGIONS
    assert not yokai["several_regions"]
    paper = load_labels("yokaieval")
    rows = [{**mcq_rows()[0], "region": "東北, 関東"}]  # several of its labels' regions, whoever wrote it
    several = mcq_classes(mcq_file, rows, {"labels": "yokaieval", "labels_sha1": paper.sha1})
    assert several["several_regions"] and several["regions"] == paper.region_names
    assert check_edits("mcq", {"region": "関東, 東北"}, classes=several) == {"region": "東北, 関東"}
    built = {"stage": "build", "labels": "yokaieval", "labels_sha1": paper.sha1, "label_steps": 2}
    reviewed = {"stage": "review export", "source": built}
    again = mcq_classes(mcq_file, mcq_rows()[:1], {"stage": "review export", "source": reviewed})  # reviewed twice
    assert again["several_regions"] and again["regions"] == paper.region_names and again["labels"] == "yokaieval"


@pytest.mark.slow
def test_footnotes_are_edited_against_the_article(mcq_file, articles_file, tmp_path):
    """An mcq item's footnote numbers (ref) are editable; with the article known a
    number it does not have is refused naming it, without one any whole number > 0 goes; the
    page then marks the edited footnotes, and the export carries them."""
    import json

    import pyarrow.parquet as pq

    db = tmp_path / "r.sqlite"
    with Server(mcq_file, db, "--articles", str(articles_file)) as server:
        csrf = _csrf(server)
        assert "ref" in json.loads(request(server.base + "api/state")[2])["editable"]
        sha1 = json.loads(request(server.base + "api/item/1")[2])["sha1"]
        for ref, message in [
            ([7], "ref: the article has no footnote 7 (its footnotes: 1, 2, 3)"),
            ([2, 9, 1], "no footnote 9"),
            ([0], "whole numbers > 0"),
            (["x"], "not 'x'"),
            ([], "one footnote number or more"),
        ]:
            status, headers, body = _post(
                server, "api/decide", {"index": 1, "sha1": sha1, "decision": "accept", "edits": {"ref": ref}}, csrf
            )
            assert status == 400 and headers["Content-Type"] == "application/json", body
            assert message in json.loads(body)["error"], body
        status, _, body = _post(
            server, "api/decide", {"index": 1, "sha1": sha1, "decision": "accept", "edits": {"ref": [2, 1]}}, csrf
        )
        assert status == 200 and json.loads(body)["saved"]["edits"] == {"ref": [1, 2]}, body
        item = json.loads(request(server.base + "api/item/1")[2])
        assert item["cited"] == [1, 2] and item["row"]["ref"] == [1, 2] and item["original"]["ref"] == [2]
        assert item["edited"] == ["ref", "refs_detail"] and item["row"]["refs_detail"] == [None, "ref 2"]
        marks = [(s["text"], s["cited"]) for s in item["article"]["segments"] if "ref" in s]
        assert marks == [("[1]", True), ("[2]", True), ("[注 1]", False), ("[3]", False)]
        assert [r["cited"] for r in item["article"]["references"]] == [True, True, False, False]
    with Server(mcq_file, tmp_path / "no-articles.sqlite") as server:  # no article: numbers only
        csrf, sha1 = _csrf(server), json.loads(request(server.base + "api/item/0")[2])["sha1"]
        for ref, code in [([7], 200), ([-1], 400), ([True], 400)]:
            status, _, body = _post(
                server, "api/decide", {"index": 0, "sha1": sha1, "decision": "accept", "edits": {"ref": ref}}, csrf
            )
            assert status == code, (ref, body)
    out = tmp_path / "reviewed.parquet"
    assert _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out)).returncode == 0
    (row,) = pq.read_table(out).to_pylist()
    assert row["id"] == "q2" and row["ref"] == [1, 2] and row["refs_detail"] == [None, "ref 2"]


def test_the_reasons_offered_include_the_papers_and_old_ones_still_show(mcq_file, tmp_path):
    """The page offers YokaiEval's four reasons (inappropriate among them); a decision stored
    with a reason no longer offered still shows on the item as it was written."""
    import json

    from wikiorigin.review.items import load_dataset
    from wikiorigin.review.store import REASONS, ReviewStore

    db = tmp_path / "r.sqlite"
    data = load_dataset(mcq_file)
    old = ReviewStore(db, data.path.name, data.kind, list(data.by_key), data.keyed_by)
    old.add("q2", data.items[1].sha1, "bob", "reject", reason="not backed by the article")  # an old page's
    old.close()
    with Server(mcq_file, db) as server:
        csrf = _csrf(server)
        state = json.loads(request(server.base + "api/state")[2])
        assert state["reasons"] == list(REASONS)
        for reason in (
            "not verifiable from the article",
            "not backed by an expert source",
            "inappropriate",
            "duplicate",
        ):
            assert reason in state["reasons"]
        item = json.loads(request(server.base + "api/item/0")[2])
        status, _, body = _post(
            server,
            "api/decide",
            {"index": 0, "sha1": item["sha1"], "decision": "reject", "reason": "inappropriate"},
            csrf,
        )
        assert status == 200, body
        status, _, body = _post(
            server,
            "api/decide",
            {"index": 0, "sha1": item["sha1"], "decision": "reject", "reason": "not backed by the article"},
            csrf,
        )
        assert status == 400 and "expected one of not verifiable from the article" in json.loads(body)["error"]
        shown = json.loads(request(server.base + "api/item/1")[2])["decisions"]
        assert [(d["annotator"], d["reason"]) for d in shown] == [("bob", "not backed by the article")]


def _fill(disk) -> None:
    """Fill ``disk`` to the last byte with a file ``filler``."""
    with open(disk / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def test_a_full_disk_is_a_json_error_that_says_so_and_loses_nothing(mcq_file, small_disk):
    """A decision the disk cannot take was a 500; it is a JSON error (507) saying
    the disk is full, the decisions before it are kept, and it can be made again."""
    import json
    import sqlite3

    db = small_disk / "r.sqlite"
    with Server(mcq_file, db) as server:
        csrf = _csrf(server)
        sha1s = [json.loads(request(server.base + f"api/item/{i}")[2])["sha1"] for i in range(3)]
        assert _post(server, "api/decide", {"index": 0, "sha1": sha1s[0], "decision": "accept"}, csrf)[0] == 200
        _fill(small_disk)
        note = "理由" * 999  # a decision of several pages
        for _ in range(3):  # whatever space was left in the journal's last page is soon gone
            status, headers, body = _post(
                server, "api/decide", {"index": 1, "sha1": sha1s[1], "decision": "reject", "note": note}, csrf
            )
            if status != 200:
                break
        assert status == 507 and headers["Content-Type"] == "application/json", body
        error = json.loads(body)["error"]
        assert error.startswith(f"{db}: the disk is full: this reject was not saved") and "\n" not in error
        assert _post(server, "api/undo", {}, csrf)[0] in (200, 507)  # an undo is a row too: never a 500
        (small_disk / "filler").unlink()
        status, _, body = _post(server, "api/decide", {"index": 2, "sha1": sha1s[2], "decision": "accept"}, csrf)
        assert status == 200, body
        state = json.loads(request(server.base + "api/state")[2])
        assert state["items"][0]["status"] == "accepted" and state["items"][2]["status"] == "accepted"
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _announce(server, size: int, csrf: str) -> tuple[int, str]:
    """A POST of a decision that says it is ``size`` bytes long and sends none of them."""
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("POST", "/api/decide")
    for name, value in (("Content-Type", "application/json"), ("X-Review-Csrf", csrf), ("Content-Length", str(size))):
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read().decode()
    conn.close()
    return response.status, body


def test_an_edit_larger_than_any_item_is_refused_not_stored(mcq_file, tmp_path):
    """Decisions are kept for ever, so an edit is capped as notes are: a 10 MB
    request is refused unread (413), edits over the cap are refused (400); nothing is stored."""
    import json
    import sqlite3

    from wikiorigin.review.app import EDITS_CHARS

    db = tmp_path / "r.sqlite"
    with Server(mcq_file, db) as server:
        csrf = _csrf(server)
        sha1 = json.loads(request(server.base + "api/item/0")[2])["sha1"]
        status, body = _announce(server, 10_000_000, csrf)  # refused on its headers: the body is never read
        assert status == 413 and "larger than any decision can be" in json.loads(body)["error"]
        huge = {"index": 0, "sha1": sha1, "decision": "accept"}
        over = {**huge, "edits": {"question": "妖" * EDITS_CHARS}}
        status, _, body = _post(server, "api/decide", over, csrf)
        assert status == 400 and f"more than the {EDITS_CHARS:,} an item's edits may" in json.loads(body)["error"]
        fits = {**huge, "edits": {"question": "妖" * 1000}}
        assert _post(server, "api/decide", fits, csrf)[0] == 200
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*), max(length(edits)) FROM decisions").fetchone() == (1, 1000 + 16)


def _chunked(server, csrf: str, chunks) -> tuple[int, int, bytes]:
    """A POST of a decision with ``Transfer-Encoding: chunked`` over a raw socket, the body
    ``chunks`` (bytes, each sent as it is: the chunk framing included) sent from a thread
    while the answer is read: (status, bytes of the body sent before the server stopped
    taking them, the answer)."""
    import threading
    from urllib.parse import urlsplit

    url = urlsplit(server.base)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    head = (
        f"POST /api/decide HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\nContent-Type: application/json\r\n"
        f"X-Review-Csrf: {csrf}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    sock.sendall(head.encode())
    sent = [0]

    def send():
        try:
            for chunk in chunks:
                sock.sendall(chunk)
                sent[0] += len(chunk)
        except OSError:  # the server answered and closed the connection
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer) < answer.index(b"\r\n\r\n") + 4 + _length(answer):
        data = sock.recv(65536)
        if not data:
            break
        answer += data
    sender.join(30)
    sock.close()
    return int(answer.split(b" ", 2)[1]), sent[0], answer.split(b"\r\n\r\n", 1)[-1]


def _length(answer: bytes) -> int:
    found = re.search(rb"(?im)^content-length: *(\d+)", answer)
    return int(found[1]) if found else 0


def test_a_chunked_body_past_the_limit_is_refused_unread(mcq_file, tmp_path):
    """A chunked decision of 50 MB (no Content-Length to refuse it by) is refused once the
    body passes the limit (413), the server closing the connection rather than reading the
    rest; malformed chunked encoding is 400; a chunked decision that fits is taken."""
    import itertools
    import json

    with Server(mcq_file, tmp_path / "r.sqlite") as server:
        csrf = _csrf(server)
        piece = b"x" * 65536
        fifty_mb = itertools.chain((b"%x\r\n%b\r\n" % (len(piece), piece) for _ in range(800)), [b"0\r\n\r\n"])
        status, sent, body = _chunked(server, csrf, fifty_mb)
        assert status == 413 and "larger than any decision can be" in json.loads(body)["error"]
        assert sent < 20_000_000, sent  # the rest was never taken
        assert _chunked(server, csrf, [b"zz\r\nabc\r\n0\r\n\r\n"])[0] == 400
        sha1 = json.loads(request(server.base + "api/item/0")[2])["sha1"]
        decision = json.dumps({"index": 0, "sha1": sha1, "decision": "accept"}).encode()
        status, _, body = _chunked(server, csrf, [b"%x\r\n%b\r\n0\r\n\r\n" % (len(decision), decision)])
        assert status == 200, body


def test_a_body_nested_past_the_stack_is_400_not_a_server_error(mcq_file, tmp_path):
    """JSON nested 50,000 deep (RecursionError in the parser) is a bad request like any other
    body that is not a decision; the server goes on answering."""
    import json

    with Server(mcq_file, tmp_path / "r.sqlite") as server:
        csrf = _csrf(server)
        deep = b"[" * 50_000 + b"]" * 50_000
        status, _, body = _chunked(server, csrf, [b"%x\r\n%b\r\n0\r\n\r\n" % (len(deep), deep)])
        assert status == 400 and json.loads(body)["error"] == "the body is not a JSON object"
        assert request(server.base + "api/item/0")[0] == 200


@pytest.mark.slow
def test_a_two_step_set_s_several_regions_are_kept_and_edited(articles, tmp_path):  # noqa: F811
    """``build mcq --preset yokaieval`` labels regions from the article, several where the
    article names several ("東北, 関東"): the review offers them as several, accepts an edit to
    other regions (in the labels' order, each once, each a class), and the export keeps it."""
    import json

    import pyarrow.parquet as pq

    from tests.builders import test_mcq
    from tests.commands import build_mcq
    from tests.openai_server import ChatServer
    from wikiorigin.cli import main

    built = tmp_path / "set" / "test.parquet"
    built.parent.mkdir()
    with ChatServer(answer=test_mcq.scripted) as llm:
        assert main(build_mcq(articles, built, llm.url, "--preset", "yokaieval")) == 0
    rows = pq.read_table(built).to_pylist()
    several = next(i for i, r in enumerate(rows) if r["region"] == "東北, 関東")
    other = next(i for i in range(len(rows)) if i != several)
    with Server(built, tmp_path / "r.sqlite") as server:
        state = json.loads(request(server.base + "api/state")[2])
        assert state["several_regions"] is True and "東北, 関東" not in state["regions"]
        csrf = _csrf(server)
        for index, edits, ok in [
            (several, {"region": "中部, 東北"}, True),  # kept in the labels' order
            (several, {"region": "東北, 東北"}, False),
            (several, {"region": "東北, 火星"}, False),
            (other, {"region": "関東, 東北, 九州"}, True),
        ]:
            sha1 = json.loads(request(server.base + f"api/item/{index}")[2])["sha1"]
            body = {"index": index, "sha1": sha1, "decision": "accept", "edits": edits}
            status, _, said = _post(server, "api/decide", body, csrf)
            assert (status == 200) == ok, (edits, said)
    out = tmp_path / "reviewed" / "test.parquet"
    assert main(["review", "export", str(built), "--db", str(tmp_path / "r.sqlite"), "--out", str(out)]) == 0
    regions = {r["id"]: r["region"] for r in pq.read_table(out).to_pylist()}
    assert regions[rows[several]["id"]] == "東北, 中部"
    assert regions[rows[other]["id"]] == "東北, 関東, 九州"
