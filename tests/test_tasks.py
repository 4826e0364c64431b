"""Evaluation tasks as objects (``wo.MCQTask``, ``wo.FreeformTask``, ``wo.JudgeTask``,
``wo.LeakageTask``): the snippet researchers write runs as written on a Greek set and an English
one, with prompts in the set's language and a signature equal to the saved one; recorded
answers give the command line's summary; no language is assumed; the model and backend
protocols; the evaluator modules import no circle.

It sits at the top of tests/ because it crosses the evaluators, the package's front page and the
command line, and takes the Greek set from the multistream sample (tests/test_mcq_languages.py)."""

import ast
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import wikiorigin as wo
from tests.test_mcq_languages import el_articles, el_multistream, el_set  # noqa: F401  (fixtures)
from wikiorigin import cli
from wikiorigin.errors import ParameterError, WikioriginError
from wikiorigin.evaluators import cues, freeform
from wikiorigin.evaluators.signature import text_hash
from wikiorigin.schemas import FREEFORM
from wikiorigin.testing import mcq_row, write_mcq

ROOT = Path(__file__).resolve().parents[1]
YOKAIEVAL = ROOT / "tests" / "data" / "yokaieval"


class Spy:
    """A model under evaluation that answers every prompt with its first option line and keeps
    the prompts it was asked (an :class:`~wikiorigin.protocols.EvaluatedModel`)."""

    name = "spy"

    def __init__(self):
        self.prompts: list[str] = []

    def describe(self):
        return {"model": "spy"}

    def generate(self, prompts, *, max_new_tokens=128, temperature=0.1, top_p=1.0, seed=0):
        self.prompts += prompts
        return [next((line[2:] for line in p.splitlines() if line.startswith("- ")), "?") for p in prompts]

    def loglikelihood(self, requests, *, batch_size=None):
        self.prompts += [context for context, _ in requests]
        return [(-float(len(continuation)), False) for _, continuation in requests]

    def token_logprobs(self, texts, *, windows="overlap", stride=None):
        return [[-1.0 - 0.01 * i] * max(1, len(t) // 4) for i, t in enumerate(texts)]


def _en_set(path, rows=3, language="en"):
    """An English multiple-choice set in the ``mcq`` schema (``language`` None: rows that say none)."""
    table = []
    for i in range(rows):
        choices = [f"option {i}-{k}" for k in range(4)]
        table.append(
            mcq_row(
                i,
                f"Which creature is told of in story {i}?",
                choices,
                i % 4,
                id=f"en{i}",
                type="folklore",
                region="Wessex",
                refs_detail=["a book"],
                title=f"Story {i}",
                wiki="enwiki",
                language=language,
            )
        )
    write_mcq(path, table)
    return path


@pytest.fixture
def en_set(tmp_path):
    return _en_set(tmp_path / "en.parquet")


def _saved(directory) -> dict:
    return json.loads((Path(directory) / "summary.json").read_text(encoding="utf-8"))


# --- the snippet, as written --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("which,language", [("el", "el"), ("en", "en")])
@pytest.mark.parametrize("mode", ["generate", "loglikelihood"])
def test_the_snippet_runs_as_written(which, language, mode, el_set, en_set, tiny_model_dir, tmp_path):  # noqa: F811
    path = el_set if which == "el" else en_set
    task = wo.MCQTask.from_file(path, mode=mode)  # language from the rows
    result = task.run(wo.LocalModel(tiny_model_dir, device="cpu"))
    assert 0.0 <= result.summary.accuracy <= 1.0 and result.summary.accuracy == result.summary["accuracy"]
    assert result.settings["language"] == language and result.signature.startswith("wikiorigin-eval|task:mcq|")
    said = cues.instruction(language) if mode == "generate" else cues.answer_cue(language)
    assert result.settings["instruction"] == text_hash(said)  # the prompt in the set's own language
    saved = result.save(tmp_path / "runs" / "my-model")
    summary = _saved(saved)
    assert summary["signature"] == result.signature and summary["settings"] == result.settings
    assert {k: v for k, v in summary.items() if k not in ("settings", "signature")}.keys() == result.summary.keys()
    for name in ("items.parquet", "report.md", "accuracy_by_type.png", "accuracy_by_region.png"):
        assert (saved / name).stat().st_size > 0
    assert result.signature in (saved / "report.md").read_text(encoding="utf-8")
    assert not (tmp_path / "runs" / "my-model.lock").exists()  # locked while written, then let go


@pytest.mark.parametrize("which,language", [("el", "el"), ("en", "en")])
def test_prompts_are_in_the_sets_language(which, language, el_set, en_set):  # noqa: F811
    path = el_set if which == "el" else en_set
    spy = Spy()
    result = wo.MCQTask.from_file(path).run(spy)
    assert spy.prompts and all(p.endswith("\n\n" + cues.instruction(language)) for p in spy.prompts)
    assert result.summary.coverage == 1.0 and result.summary.read_as == {"exact": len(spy.prompts)}  # an option
    wo.MCQTask.from_file(path, mode="loglikelihood").run(spy := Spy())
    assert all(p.endswith(cues.answer_cue(language)) for p in spy.prompts)
    greek = Spy()
    wo.MCQTask.from_file(path, language="el").run(greek)  # the language given wins over the rows'
    assert greek.prompts[0].endswith(cues.INSTRUCTIONS["el"])


def test_settings_come_from_the_task_and_the_model(en_set, tiny_model_dir):
    model = wo.LocalModel(tiny_model_dir, device="cpu")
    result = wo.MCQTask.from_file(en_set, temperature=0.0, max_new_tokens=4, seed=7, instruction="").run(model)
    settings = result.settings
    assert (settings["temperature"], settings["max_new_tokens"], settings["seed"]) == (0.0, 4, 7)
    assert "instruction" not in settings or settings["instruction"] == text_hash("")  # what ran: no line
    assert settings["model"].startswith("tiny@") and settings["device"] == "cpu"  # the model's own description
    assert settings["template"] == f"chat@{text_hash(model.tokenizer.chat_template)}"


# --- no language assumed ------------------------------------------------------------------------


def test_a_missing_language_is_an_error_naming_the_parameter(tmp_path, capsys):
    bare = _en_set(tmp_path / "bare.parquet", language=None)
    task = wo.MCQTask.from_file(bare)
    with pytest.raises(ParameterError, match=r"bare\.parquet: the rows say no language .* give language= ") as caught:
        task.run(Spy())
    assert caught.value.parameter == "language" and "--language" not in str(caught.value)
    with pytest.raises(ParameterError, match="give language="):
        wo.MCQTask.from_file(bare, mode="loglikelihood").run(Spy())
    assert wo.MCQTask.from_file(bare, language="en").run(spy := Spy()).settings["language"] == "en"
    assert spy.prompts[0].endswith(cues.INSTRUCTIONS["en"])
    with pytest.raises(ParameterError, match=r"^language='xx-nowhere': "):
        wo.MCQTask.from_file(bare, language="xx-nowhere")
    with pytest.raises(ParameterError, match="language="):
        wo.evaluate_generate(wo.read_questions(bare), Spy())  # the functions beneath assume none either
    with pytest.raises(ParameterError, match="language="):
        wo.evaluate_loglikelihood(wo.read_questions(bare), Spy())
    # the command line says the same with its flag
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(bare),
                "--model",
                "m",
                "--endpoint",
                "http://127.0.0.1:9",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "the rows say no language" in err and "give --language (" in err and "language=" not in err


def test_released_rows_say_their_wiki_language():
    rows = wo.read_questions(YOKAIEVAL / "YokaiEval-first40.json.xz")
    assert {r["language"] for r in rows} == {"ja"}  # from their ja.wikipedia.org urls
    assert wo.MCQTask(rows).prompt_language() == "ja"


def test_settings_of_another_mode_are_refused():
    with pytest.raises(ParameterError, match=r"^mode='rank': "):
        wo.MCQTask([], mode="rank")
    with pytest.raises(ParameterError, match=r"^instruction= is for generation mode"):
        wo.MCQTask([], mode="loglikelihood", instruction="Pick one.")
    with pytest.raises(ParameterError, match=r"^cue= is for log-likelihood mode") as caught:
        wo.MCQTask([], cue="\nAnswer:")
    assert caught.value.said({"cue": "--answer-cue"}).startswith("--answer-cue is for")
    with pytest.raises(WikioriginError, match="log-likelihood mode needs a model to ask"):
        wo.MCQTask([], mode="loglikelihood").run(wo.Recorded())


# --- recorded answers: the command line's numbers ----------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("model", ["calm2-7b-chat", "gpt4o-mini"])
def test_recorded_gives_the_command_lines_summary(model, tmp_path):
    responses = YOKAIEVAL / f"responses-{model}.json.xz"
    first40 = YOKAIEVAL / "YokaiEval-first40.json.xz"
    # scored alone: the responses file's own rows
    alone = wo.MCQTask.from_file(responses).run(wo.Recorded(responses))
    assert cli.main(["eval", "mcq", "--responses", str(responses), "--out", str(tmp_path / "cli")]) == 0
    alone.save(tmp_path / "api")
    assert _saved(tmp_path / "api") == _saved(tmp_path / "cli")
    assert alone.summary.model == model and alone.signature == _saved(tmp_path / "cli")["signature"]
    assert wo.MCQTask.from_file(responses).run(wo.Recorded()).summary == alone.summary  # the rows' own
    # joined to the benchmark's rows (their types and regions)
    joined = wo.MCQTask.from_file(first40).run(wo.Recorded(responses))
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(first40),
                "--responses",
                str(responses),
                "--out",
                str(tmp_path / "cli-joined"),
            ]
        )
        == 0
    )
    joined.save(tmp_path / "api-joined")
    assert _saved(tmp_path / "api-joined") == _saved(tmp_path / "cli-joined")
    assert joined.join["matched"] == 40 and joined.summary.join == joined.join
    assert joined.summary.n == 40 and "responses" not in joined.settings  # every question answered


def test_save_is_locked(en_set, tmp_path):
    from wikiorigin.llm.lock import RunLock

    result = wo.MCQTask.from_file(en_set).run(Spy())
    with RunLock(tmp_path / "run"):
        with pytest.raises(WikioriginError, match="run is being written by another run"):
            result.save(tmp_path / "run")
    with RunLock(tmp_path / "run") as lock:  # a lock the caller holds (the command line's) is used
        assert result.save(tmp_path / "run", lock=lock) == tmp_path / "run"
        with pytest.raises(WikioriginError, match="the lock given is not held on this directory"):
            result.save(tmp_path / "other", lock=lock)
    assert _saved(tmp_path / "run")["signature"] == result.signature


def test_summary_reads_as_attributes(en_set):
    summary = wo.MCQTask.from_file(en_set).run(Spy()).summary
    assert isinstance(summary, dict) and summary.n == summary["n"] == 3
    assert summary.by_type.folklore.n == 3 and summary["by_type"]["folklore"]["n"] == 3
    with pytest.raises(
        AttributeError, match="this summary has no 'nope'; it has complete, failed, failed_requests, model, mode, n"
    ):
        assert summary.nope is None
    assert json.loads(json.dumps(summary)) == summary


# --- the twins: free-form, judge, leakage -------------------------------------------------------


def _freeform(path, language, question, answer):
    rows = [
        {
            "id": f"{language}{i}",
            "question": f"Which being is meant? ({i})",
            "question_source": f"{question} ({i})",
            "answers": [answer, "Name"],
            "qid": f"Q{i}",
            "origin_wiki": f"{language}wiki",
            "title": answer,
            "n_wikis": 2,
            "has_enwiki": bool(i % 2),
            "criteria": {n: 5 for n in FREEFORM.field("criteria").type.names},
            "language": language,
            "generator": "g",
            "prompt_sha1": "x",
            "source_revision_id": 1,
        }
        for i in range(3)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=FREEFORM), path)
    return path


@pytest.mark.parametrize(
    "language,question,answer",
    [("el", "Ποιο πλάσμα εννοείται;", "Λάμια"), ("en", "Which creature is meant?", "Boggart")],
)
def test_the_freeform_twin(language, question, answer, tmp_path, tiny_model_dir):
    path = _freeform(tmp_path / "ff.parquet", language, question, answer)
    spy = Spy()
    result = wo.FreeformTask.from_file(path, source_language=True).run(spy)
    assert all(p.startswith(question) and p.endswith(cues.name_only(language)) for p in spy.prompts)
    assert result.settings["instruction"] == text_hash(freeform.source_prompt(language))
    english = wo.FreeformTask.from_file(path).run(wo.LocalModel(tiny_model_dir, device="cpu"))
    assert english.settings["language"] == "en" and english.summary.n == 3
    saved = english.save(tmp_path / "run")
    assert _saved(saved)["signature"] == english.signature and (saved / "chrf_by_language.png").exists()


def test_the_judge_twin(tmp_path, data_dir):
    care_file = data_dir.parent / "care-Japanese-test.json"

    def rate(messages):
        return "Rating: [[7]]" if "task: rate" in messages[0]["content"] else "?"

    judge = wo.LLMClient(wo.FunctionBackend(rate, model="judge"), None)
    task = wo.JudgeTask.from_file(care_file, judge=judge)
    result = task.run(Spy())
    assert result.summary.rated == 150 and result.summary.mean == 7.0
    assert result.settings["judge"] == "judge@function" and result.settings["model"] == "spy"
    assert _saved(result.save(tmp_path / "run"))["signature"] == result.signature
    with pytest.raises(WikioriginError, match="the rows carry no `response`"):
        task.run(wo.Recorded())
    with pytest.raises(ParameterError, match="needs its judge="):
        wo.JudgeTask([])


def test_the_leakage_twin(tmp_path, tiny_model_dir):
    articles = {f"T{i}": f"河童は川に住むと言われる。その{i}番目の話。" * 3 for i in range(4)}
    paraphrases = {t: "川には河童がいるという。" + text[::-1] for t, text in articles.items()}
    task = wo.LeakageTask(articles, paraphrases=paraphrases, sample=None, max_chars=40)
    result = task.run(wo.LocalModel(tiny_model_dir, device="cpu"))
    assert result.summary.n == 4 and result.settings["max_chars"] == 40 and result.settings["sample"] == "all"
    assert _saved(result.save(tmp_path / "run"))["signature"] == result.signature
    with pytest.raises(ParameterError, match=r"give paraphrases= or paraphraser="):
        wo.LeakageTask(articles)
    with pytest.raises(ParameterError, match=r"^stride= is for overlapping windows"):
        wo.LeakageTask(articles, paraphrases=paraphrases, windows="disjoint", stride=8)
    with pytest.raises(WikioriginError, match=r"a leakage task needs a model with token_logprobs\(\)"):
        task.run(type("Chat", (), {"name": "chat", "generate": Spy.generate})())


# --- extension points ---------------------------------------------------------------------------


class Echo:
    """A model that only generates (no tokenizer, no scoring, no name of its own) and says what
    it is."""

    def __init__(self):
        self.asked = 0

    def describe(self):
        return {"model": "echo-1", "engine": "rules", "rule": "first option"}

    def generate(self, prompts, *, max_new_tokens=128, temperature=0.1, top_p=1.0, seed=0):
        self.asked += len(prompts)
        return [next((line[2:] for line in p.splitlines() if line.startswith("- ")), "?") for p in prompts]


def test_a_model_that_only_generates_is_signed_by_its_own_description(en_set, tmp_path):
    echo = Echo()
    assert isinstance(echo, wo.protocols.GeneratingModel) and isinstance(echo, wo.EvaluatedModel)
    assert not isinstance(echo, wo.protocols.LoglikelihoodModel)
    result = wo.MCQTask.from_file(en_set).run(echo)
    settings = result.settings
    assert (settings["model"], settings["engine"], settings["rule"]) == ("echo-1", "rules", "first option")
    assert not {"bos", "template", "dtype", "device", "max_length", "tokenizer"} & set(settings)  # nothing invented
    assert "|model:echo-1|" in result.signature and "bos:" not in result.signature
    assert {i["model"] for i in result.items} == {"echo-1"} and result.summary.model == "echo-1"  # named by it
    assert result.summary.n == 3 and _saved(result.save(tmp_path / "run"))["signature"] == result.signature
    rows = [{"id": "q1", "question": "Who?", "answers": ["Kappa"], "language": "en"}]
    free = wo.FreeformTask(rows).run(echo)
    assert free.settings["model"] == "echo-1" and "bos" not in free.settings


def test_a_missing_capability_is_refused_before_any_work(en_set):
    from wikiorigin.protocols import MissingCapability

    echo = Echo()
    with pytest.raises(MissingCapability, match=r"^log-likelihood mode needs a model with loglikelihood\(\)"):
        wo.MCQTask.from_file(en_set, mode="loglikelihood").run(echo)
    articles = {"T": "河童は川に住む。"}
    with pytest.raises(
        MissingCapability, match=r"^a leakage task needs a model with token_logprobs\(\).*; Echo has none"
    ):
        wo.LeakageTask(articles, paraphrases=articles, sample=None).run(echo)

    class Silent:  # generates, but does not say what it is
        generate = Echo.generate

    silent = Silent()
    silent.asked = 0
    with pytest.raises(TypeError, match=r"^generation mode: Silent does not describe itself: give it describe\(\)"):
        wo.MCQTask.from_file(en_set).run(silent)
    with pytest.raises(MissingCapability, match=r"^a free-form task: Silent does not describe itself"):
        wo.FreeformTask([]).run(silent)
    assert echo.asked == 0 and silent.asked == 0  # nothing was asked
    judge = wo.LLMClient(wo.FunctionBackend(lambda messages: "Rating: [[5]]", model="judge"), None)
    with pytest.raises(MissingCapability, match=r"^a judged task needs a model with generate\(\)"):
        wo.JudgeTask([], judge=judge).run(type("Scorer", (), {"name": "s", "describe": dict})())
    with pytest.raises(ParameterError, match=r"^judge= is a str: a judge runs chat requests"):
        wo.JudgeTask([], judge="gpt-4o")


def test_protocols_and_the_function_backend():
    assert isinstance(Spy(), wo.EvaluatedModel)
    assert isinstance(wo.FunctionBackend(lambda messages: "x"), wo.ChatBackend)
    assert isinstance(wo.llm.OpenAIBackend("m", base_url="http://127.0.0.1:9"), wo.ChatBackend)
    calls = []

    def answer(messages, params):
        calls.append(params)
        return messages[-1]["content"].upper()

    client = wo.LLMClient(wo.FunctionBackend(answer), None)
    result = client.run([wo.llm.ChatRequest([{"role": "user", "content": "kappa"}], {"temperature": 0})])[0]
    assert result.text == "KAPPA" and calls == [{"temperature": 0}] and client.backend.key == "function:answer"

    async def json_answer(messages):
        return {"text": '{"answer_index": 1}', "input_tokens": 3, "output_tokens": 5}

    client = wo.LLMClient(wo.FunctionBackend(json_answer, model="scripted"), None)
    result = client.run(
        [
            wo.llm.ChatRequest(
                [{"role": "user", "content": "q"}],
                schema={
                    "type": "object",
                    "required": ["answer_index"],
                    "properties": {"answer_index": {"type": "integer"}},
                },
            )
        ]
    )[0]
    assert result.data == {"answer_index": 1} and client.usage.output_tokens == 5
    with pytest.raises(TypeError, match="expected a function"):
        wo.FunctionBackend("not a function")


def test_the_lock_imports_without_fcntl():
    code = (
        "import sys; sys.modules['fcntl'] = None; import wikiorigin.llm.lock, wikiorigin.builders.mcq, "
        "wikiorigin.evaluators.results; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr


def _imports(path: Path, package: str) -> set[str]:
    """The sibling modules ``path`` imports anywhere (functions included): ``from .x import``,
    ``from . import x``."""
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {  # `if TYPE_CHECKING:` imports never run
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and getattr(block.test, "id", None) == "TYPE_CHECKING"
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and id(node) not in typing_only:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found |= {alias.name for alias in node.names}
    return found


@pytest.mark.parametrize(
    "package", ["evaluators", "builders", "cli", "llm", "corpora", "dumps", "review", "render", "presets"]
)
def test_no_import_circle(package):
    """The modules of a sub-package import one another without a circle, counting the imports
    inside functions too (a circle hidden in a function is still a circle)."""
    where = ROOT / "wikiorigin" / package
    graph = {
        p.stem: _imports(p, package) & {q.stem for q in where.glob("*.py")}
        for p in where.glob("*.py")
        if p.stem != "__init__"
    }
    done, path = set(), []

    def visit(node):
        if node in path:
            raise AssertionError(f"{package}: import circle {' -> '.join(path[path.index(node) :] + [node])}")
        if node in done:
            return
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt)
        path.pop()
        done.add(node)

    for node in sorted(graph):
        visit(node)


def test_the_library_prints_nothing():
    """No ``print`` in the library (the command line prints; progress bars write their own
    stream): the evaluators and builders log."""
    for package in ("evaluators", "builders", "llm"):
        for path in (ROOT / "wikiorigin" / package).glob("*.py"):
            calls = [
                n
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"
            ]
            assert not calls, f"{path.relative_to(ROOT)}: print at line {calls[0].lineno}"


@pytest.mark.slow
def test_compare_prints_on_the_command_line(tmp_path, capsys):
    runs = []
    for model in ("calm2-7b-chat", "gpt4o-mini"):
        path = tmp_path / f"responses-{model}.json"
        path.write_bytes(lzma.open(YOKAIEVAL / f"responses-{model}.json.xz").read())
        assert cli.main(["eval", "mcq", "--responses", str(path), "--out", str(tmp_path / model)]) == 0
        runs.append(str(tmp_path / model))
    capsys.readouterr()  # gpt4o-mini's questions are worded otherwise: not the same items
    assert cli.main(["eval", "compare", *runs, "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"error: {runs[0]} and {runs[1]} ran on different items (810 and 810 items, 0 of them the same)" in err
    asked = str(tmp_path / "responses-calm2-7b-chat.json")
    joined = ["eval", "mcq", "--questions", asked, "--responses", str(path), "--out", str(tmp_path / "joined")]
    assert cli.main(joined) == 0  # gpt4o-mini's responses joined to calm2's questions: the same items
    assert cli.main(["eval", "compare", runs[0], str(tmp_path / "joined"), "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "| rank | model |" in out and "runs compared" in out
