"""The review page in a real browser (Debian's chromium, headless, driven by Selenium through
/usr/bin/chromedriver; Selenium Manager never asked to download anything): review five items
by keyboard (one edited, one rejected with a reason, one hostile), reload, SIGKILL the server
and restart it, undo, review as a second annotator, filter, export, and check the rows.

Under ``CI=true`` a missing chromium fails the test; elsewhere it skips, saying how to install it.
A screenshot is left in ``build/test-artifacts/review.png``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.review.server import Server, chromium

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"

if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    message = (
        "the browser tests need Debian's chromium: apt-get install chromium chromium-driver "
        "fonts-ipafont-gothic (the font: the page's Japanese)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true: they must run)", pytrace=False)
    pytest.skip(message, allow_module_level=True)
if os.environ.get("CI") != "true":
    pytest.importorskip("selenium", reason="pip install -e .[test]")
    pytest.importorskip("uvicorn", reason="pip install -e .[review]")

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from tests.builders.test_mcq import articles  # noqa: E402, F401 (fixture)


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    yield driver
    driver.quit()


class Page:
    """The review page in the browser: keys sent to it, waiting until it has shown the result."""

    def __init__(self, driver, url):
        self.driver = driver
        driver.get(url)
        self.wait_rendered(0)

    def renders(self) -> int:
        return int(self.driver.find_element(By.TAG_NAME, "body").get_attribute("data-renders") or 0)

    def wait_rendered(self, before: int) -> None:
        WebDriverWait(self.driver, 20).until(lambda d: self.renders() > before)

    def press(self, *keys, wait=True, ctrl=False) -> None:
        before = self.renders()
        chain = ActionChains(self.driver)
        if ctrl:
            chain = chain.key_down(Keys.CONTROL)
        chain = chain.send_keys(*keys)
        (chain.key_up(Keys.CONTROL) if ctrl else chain).perform()
        if wait:
            self.wait_rendered(before)

    def text(self, element_id: str) -> str:
        return self.driver.find_element(By.ID, element_id).text

    def progress(self) -> str:
        return self.text("progress").split(" by ")[0]


def _edit_question_and_answer(page):
    page.press("e", wait=False)
    question = page.driver.find_element(By.ID, "edit-question")
    WebDriverWait(page.driver, 10).until(lambda d: question.is_displayed())
    question.send_keys(Keys.CONTROL, "a")
    question.send_keys("垢嘗を描いたのは誰の画集か。")
    page.driver.find_element(By.ID, "edit-answer_index").send_keys("2")
    page.press(Keys.ENTER, ctrl=True)


def _reject_with_reason(page, number: str, note: str):
    page.press("r", wait=False)
    WebDriverWait(page.driver, 10).until(lambda d: d.find_element(By.ID, "reject-dialog").is_displayed())
    ActionChains(page.driver).send_keys(number).perform()
    page.driver.find_element(By.ID, "reject-note").send_keys(note)
    page.press(Keys.ENTER)


def _check_hostile_item(page):
    """Item 5's question and an option hold markup: shown as text, nothing runs."""
    assert page.text("question").startswith('<img src=x onerror="document.body.dataset.pwned=1"><script>')
    assert page.driver.find_elements(By.CSS_SELECTOR, "#question *") == []
    assert "<b>油</b>" in page.text("choices")
    assert page.driver.find_element(By.TAG_NAME, "body").get_attribute("data-pwned") is None
    assert page.driver.find_elements(By.CSS_SELECTOR, "#item img, #item script, #references img") == []


def _review_five(page):
    assert page.text("question") == "垢嘗が嘗めるとされるものは何か。"
    assert page.driver.find_element(By.CSS_SELECTOR, "#article-text mark.cited").text == "[1]"
    assert page.driver.find_element(By.CSS_SELECTOR, "#choices li.answer").text == "風呂場の垢"
    page.press("a")  # q1 accept
    _edit_question_and_answer(page)  # q2 edit
    _reject_with_reason(page, "3", "子供ではなく老人")  # q3 reject: answer wrong
    page.press("a")  # q4 accept
    _check_hostile_item(page)
    page.press("a")  # q5 accept
    assert page.progress() == "5/6 reviewed"


def _choose(page, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    before = page.renders()
    Select(page.driver.find_element(By.ID, select_id)).select_by_value(value)
    page.wait_rendered(before)


def _filters(page):
    """Bob's page: his pending items, alice's rejects, one type; then all again."""
    page.press("p")
    assert page.text("position") == "item 2 of 3"  # q3 (skipped), q5 (shown), q6
    _choose(page, "filter-who", "alice")
    _choose(page, "filter-status", "rejected")
    assert page.text("position") == "item 1 of 1" and page.text("question") == "垢嘗はどんな姿で現れるといわれるか。"
    assert "alice: reject (answer wrong) — 子供ではなく老人" in page.text("decisions")
    _choose(page, "filter-status", "all")
    _choose(page, "filter-group", "妖怪の行う行動")
    assert page.text("position").endswith("of 3")
    _choose(page, "filter-group", "")
    _choose(page, "filter-who", "bob")


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "wikiorigin.cli", *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_review_by_keyboard_survives_a_kill_and_exports(browser, mcq_file, articles_file, tmp_path):
    db = tmp_path / "review.sqlite"
    with Server(mcq_file, db, "--articles", str(articles_file), annotator="alice") as server:
        page = Page(browser, server.url)
        _review_five(page)
        page = Page(browser, server.url)  # reload: the state is the server's
        assert page.progress() == "5/6 reviewed" and page.text("question") == "垢嘗が現れる場所はどこか。"
        server.kill()  # SIGKILL: nothing flushed
    with Server(mcq_file, db, "--articles", str(articles_file), annotator="alice") as server:
        page = Page(browser, server.url)
        assert page.progress() == "5/6 reviewed" and page.text("question") == "垢嘗が現れる場所はどこか。"
        page.press("u")  # undo q5's accept
        assert page.text("message").startswith("undone: accept #5") and page.progress() == "4/6 reviewed"
        page.press("a")
        assert page.progress() == "5/6 reviewed"
        with Server(mcq_file, db, "--articles", str(articles_file), annotator="bob") as second:
            page = Page(browser, second.url)  # the second annotator, at the same time
            assert page.progress() == "0/6 reviewed" and page.text("question") == "垢嘗が嘗めるとされるものは何か。"
            page.press("a")
            page.press("a")
            page.press("s")
            _reject_with_reason(page, "4", "")
            assert page.progress() == "3/6 reviewed"
            assert "alice: accept" in page.text("decisions")  # q5: alice's decision shown
            _filters(page)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            alice = Page(browser, server.url)  # alice's page, back from q6 to her edited q2
            for _ in range(4):
                alice.press("k")
            assert alice.text("question") == "垢嘗を描いたのは誰の画集か。"
            browser.save_screenshot(str(ARTIFACTS / "review.png"))
    out = tmp_path / "reviewed.parquet"
    result = _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out))
    assert result.returncode == 0, result.stderr
    rows = {r["id"]: r for r in pq.read_table(out).to_pylist()}
    assert sorted(rows) == ["q1", "q5"]  # q3 rejected by alice, q4 by bob, q6 undecided
    assert "1 with conflicting edits (q2)" in result.stdout  # alice accepted her edits of q2, bob the original
    assert rows["q1"]["review_annotators"] == ["alice", "bob"] and rows["q5"]["review_annotators"] == ["alice"]
    stats = _run("review", "stats", "--db", str(db))
    assert "answer wrong" in stats.stdout and "not of this culture" in stats.stdout
    assert "alice & bob: 3 items" in stats.stdout, stats.stdout


@pytest.mark.slow
def test_freeform_and_preference_pages(browser, freeform_file, preferences_file, articles_file, tmp_path):
    with Server(freeform_file, tmp_path / "f.sqlite", "--articles", str(articles_file)) as server:
        page = Page(browser, server.url)
        assert page.text("answers").split("\n")[-2:] == ["Akaname", "垢嘗"] and page.text("article-title") == "垢嘗"
        page.press("e", wait=False)
        answers = page.driver.find_element(By.ID, "edit-answers")
        WebDriverWait(page.driver, 10).until(lambda d: answers.is_displayed())
        answers.send_keys(Keys.END, Keys.ENTER, "あかなめ")
        page.press(Keys.ENTER, ctrl=True)
        server.kill()
    out = tmp_path / "f.parquet"
    assert (
        _run("review", "export", str(freeform_file), "--db", str(tmp_path / "f.sqlite"), "--out", str(out)).returncode
        == 0
    )
    assert pq.read_table(out).to_pylist()[0]["answers"] == ["Akaname", "垢嘗", "あかなめ"]
    with Server(preferences_file, tmp_path / "p.sqlite") as server:
        page = Page(browser, server.url)
        assert page.text("question") == "お盆とは？" and "chosen (score 9)" in page.text("preference")
        assert "先祖の霊を迎える行事。" in page.text("preference") and "rejected (score 3)" in page.text("preference")
        page.press("s")
        assert page.text("question") == "七五三とは？"


@pytest.mark.slow
def test_a_malformed_link_and_a_half_written_file(browser, tmp_path):
    from tests.review.conftest import mcq_rows, write
    from wikiorigin.schemas import MCQ

    rows = mcq_rows()[:2]
    rows[0]["url"] = "https://ja.wikipedia.org/wiki/%E3%8"  # a % escape cut short: decodeURI throws
    rows[1]["url"] = "https://ja.wikipedia.org/wiki/%E5%9E%A2%E5%98%97"
    dataset = write(rows, tmp_path / "mcq.parquet", MCQ, builder="mcq")
    with Server(dataset, tmp_path / "r.sqlite") as server:
        page = Page(browser, server.url)
        assert page.text("question") == "垢嘗が嘗めるとされるものは何か。"
        assert page.text("wikipedia") == "Wikipedia page: https://ja.wikipedia.org/wiki/%E3%8"
        page.press("j")
        assert page.text("wikipedia") == "Wikipedia page: https://ja.wikipedia.org/wiki/垢嘗"
        whole = dataset.read_bytes()
        dataset.write_bytes(whole[: len(whole) // 2])  # a rebuild caught half-way
        page.press("k")
        assert page.text("message").startswith("could not load the item: ")
        assert "mcq.parquet: not a Parquet file" in page.text("message") and page.text("question") == ""
        dataset.write_bytes(whole)
        page.press("k")  # from the first item round to the last
        assert page.text("question") == "垢嘗を描いた画集はどれか。" and page.text("message") == ""


@pytest.mark.slow
def test_accepting_an_edited_item_keeps_the_edits_and_o_reverts_them(browser, mcq_file, tmp_path):
    db = tmp_path / "r.sqlite"
    with Server(mcq_file, db) as server:
        page = Page(browser, server.url)
        page.press("j")
        assert not page.driver.find_element(By.ID, "btn-revert").is_displayed()
        _edit_question_and_answer(page)  # q2 edited and accepted; the page moves to q3
        page.press("k")
        assert page.text("question") == "垢嘗を描いたのは誰の画集か。"
        assert page.driver.find_element(By.ID, "btn-revert").is_displayed()
        page.press("a")  # accept again: the edits stay
        page.press("k")
        assert page.text("question") == "垢嘗を描いたのは誰の画集か。" and "edited: answer" in page.text("meta")
        assert page.text("decisions").startswith("alice: accept") and "[edited: answer_index, question]" in page.text(
            "decisions"
        )
        out = tmp_path / "kept.parquet"
        assert _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out)).returncode == 0
        assert pq.read_table(out).to_pylist()[0]["question"] == "垢嘗を描いたのは誰の画集か。"
        page.press("o")  # accept the original: the edits are reverted
        page.press("k")
        assert page.text("question") == "垢嘗を描いた画集はどれか。" and "edited" not in page.text("meta")
        assert not page.driver.find_element(By.ID, "btn-revert").is_displayed()
        page.press("o", wait=False)
        WebDriverWait(browser, 10).until(lambda d: "no edits of yours" in page.text("message"))
    assert _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out)).returncode == 0
    assert pq.read_table(out).to_pylist()[0]["question"] == "垢嘗を描いた画集はどれか。"


@pytest.mark.slow
def test_the_reason_keys_match_the_reasons_and_a_footnote_edit(browser, mcq_file, articles_file, tmp_path):
    """The reject dialog names one key per reason (the eighth: inappropriate); the
    footnotes (ref) are edited in the edit dialog, a number the article lacks is refused."""
    from wikiorigin.review.store import REASONS

    db = tmp_path / "r.sqlite"
    with Server(mcq_file, db, "--articles", str(articles_file)) as server:
        page = Page(browser, server.url)
        page.press("r", wait=False)
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "reject-dialog").is_displayed())
        assert page.text("reject-hint") == (
            f"1–{len(REASONS)} choose a reason, then type a note · Enter reject · Esc cancel"
        )
        ActionChains(browser).send_keys(str(REASONS.index("inappropriate") + 1)).perform()
        assert (
            browser.find_element(By.CSS_SELECTOR, 'input[name="reason"]:checked').get_attribute("value")
            == "inappropriate"
        )
        page.press(Keys.ENTER)  # q1 rejected: the page moves to q2 (ref [2])
        assert page.text("question") == "垢嘗を描いた画集はどれか。" and "footnotes: 2" in page.text("meta")

        def edit_ref(text):
            page.press("e", wait=False)
            ref = browser.find_element(By.ID, "edit-ref")
            WebDriverWait(browser, 10).until(lambda d: ref.is_displayed())
            assert ref.get_attribute("value") == "2"
            ref.send_keys(Keys.CONTROL, "a")
            ref.send_keys(text)

        edit_ref("1, 7")
        page.press(Keys.ENTER, ctrl=True, wait=False)
        WebDriverWait(browser, 10).until(lambda d: "no footnote 7" in page.text("message"))
        assert page.text("question") == "垢嘗を描いた画集はどれか。"  # refused: still on q2
        edit_ref("2, 1")
        page.press(Keys.ENTER, ctrl=True)
        page.press("k")
        assert "footnotes: 1, 2" in page.text("meta") and "edited: ref, refs_detail" in page.text("meta")
        marks = browser.find_elements(By.CSS_SELECTOR, "#article-text mark.cited")
        assert [m.text for m in marks] == ["[1]", "[2]"]
    out = tmp_path / "reviewed.parquet"
    assert _run("review", "export", str(mcq_file), "--db", str(db), "--out", str(out)).returncode == 0
    assert [(r["id"], r["ref"]) for r in pq.read_table(out).to_pylist()] == [("q2", [1, 2])]


@pytest.mark.slow
def test_a_note_typed_after_the_reason_key_is_kept_and_a_space_changes_no_reason(browser, mcq_file, tmp_path):
    """After a reason's key, what is typed is the note (a space too: it never picks
    another reason's button); a note typed with no reason key is kept as the note alone."""
    import sqlite3

    from wikiorigin.review.store import REASONS

    db = tmp_path / "r.sqlite"
    with Server(mcq_file, db) as server:
        page = Page(browser, server.url)
        page.press("r", wait=False)
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "reject-dialog").is_displayed())
        ActionChains(browser).send_keys("3", " ", "子供ではなく 老人 2").perform()  # typed on: no click
        page.press(Keys.ENTER)
        page.press("r", wait=False)
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "reject-dialog").is_displayed())
        ActionChains(browser).send_keys(" 出典が古い").perform()  # no reason key: the note only
        page.press(Keys.ENTER)
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT item, reason, note FROM decisions ORDER BY seq").fetchall()
    assert rows == [("q1", REASONS[2], "子供ではなく 老人 2"), ("q2", None, "出典が古い")]


@pytest.mark.slow
def test_editing_one_field_of_a_released_row_edits_that_field_only(browser, tmp_path):
    """The edit dialog shows a released row's messy region ([[不明]]) as its class;
    left as shown, it is no edit: editing the question records the question alone."""
    import json
    import sqlite3

    from tests.conftest import ROOT

    db = tmp_path / "r.sqlite"
    with Server(ROOT / "tests/data/yokaieval/YokaiEval-first40.json.xz", db) as server:
        page = Page(browser, server.url)
        for _ in range(4):
            page.press("j")
        assert "region: [[不明]] → 不明" in page.text("meta")
        page.press("e", wait=False)
        question = browser.find_element(By.ID, "edit-question")
        WebDriverWait(browser, 10).until(lambda d: question.is_displayed())
        question.send_keys(Keys.END, "（改）")
        page.press(Keys.ENTER, ctrl=True)
    with sqlite3.connect(db) as con:
        (edits,) = con.execute("SELECT edits FROM decisions").fetchone()
    assert list(json.loads(edits)) == ["question"] and json.loads(edits)["question"].endswith("（改）")


@pytest.mark.slow
def test_a_row_of_several_regions_is_edited_as_several(browser, articles, tmp_path):  # noqa: F811
    """A set labelled in two steps (``--preset yokaieval``) names several regions in a row: the
    edit dialog shows them chosen in a list that takes several; left so, editing the question
    records the question alone; one more chosen is recorded in the labels' order."""
    import json
    import sqlite3

    from tests.builders import test_mcq
    from tests.commands import build_mcq
    from tests.openai_server import ChatServer
    from wikiorigin.cli import main

    built, db = tmp_path / "set" / "test.parquet", tmp_path / "r.sqlite"
    built.parent.mkdir()
    with ChatServer(answer=test_mcq.scripted) as llm:
        assert main(build_mcq(articles, built, llm.url, "--preset", "yokaieval")) == 0
    with Server(built, db) as server:
        page = Page(browser, server.url)
        for step in ("question", "region"):
            for _ in range(pq.read_metadata(built).num_rows):  # to the item of several regions
                if "region: 東北, 関東" in page.text("meta"):
                    break
                page.press("j")
            page.press("e", wait=False)
            region = browser.find_element(By.ID, "edit-region")
            WebDriverWait(browser, 10).until(lambda d, shown=region: shown.is_displayed())
            chosen = [o.text for o in Select(region).all_selected_options]
            assert region.get_attribute("multiple") and chosen == ["東北", "関東"]
            if step == "question":
                browser.find_element(By.ID, "edit-question").send_keys(Keys.END, "（改）")
            else:
                Select(region).select_by_value("日本全国")
            page.press(Keys.ENTER, ctrl=True)
    with sqlite3.connect(db) as con:
        first, second = [json.loads(e) for (e,) in con.execute("SELECT edits FROM decisions ORDER BY seq")]
    assert list(first) == ["question"]
    assert second["region"] == "日本全国, 東北, 関東" and second["question"].endswith("（改）")
