"""`wikiorigin export lm-eval` against the real harness: the released YokaiEval rows and an
English mcq.parquet give, in lm-evaluation-harness, the acc and acc_norm of `wikiorigin eval
mcq --mode loglikelihood` with the same tiny local model; lm-eval builds exactly our requests;
free-form questions load as a generate_until task scored by exact match against any answer;
bad input is a one-line error naming the file (exit 2)."""

import json
import lzma
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiorigin import cli
from wikiorigin.builders.freeform import FREEFORM
from wikiorigin.builders.mcq import MCQ
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import mcq
from wikiorigin.export_lmeval import export_lmeval, to_yaml
from wikiorigin.testing import mcq_row, write_mcq

lm_eval = pytest.importorskip("lm_eval", reason="needs lm-evaluation-harness (pip install 'lm_eval[hf]')")
yaml = pytest.importorskip("yaml", reason="PyYAML comes with lm-evaluation-harness")

ENGLISH = [  # question, options, index of the answer
    (
        "Where is a kappa usually said to live?",
        ["in rivers and ponds", "on mountain tops", "in old temples", "under the sea"],
        0,
    ),
    ("What does a kappa carry on the top of its head?", ["a horn", "a dish of water", "a lantern", "a straw hat"], 1),
    ("Which bird does a tengu most resemble?", ["a crane", "a sparrow", "a crow or a kite", "a heron"], 2),
    ("What is a kitsune?", ["a badger", "a cat", "a snake", "a fox"], 3),
    ("What is a tanuki said to do with a leaf on its head?", ["change its shape", "fly", "sleep", "sing"], 0),
    ("Where does a zashiki-warashi live?", ["a well", "a room of an old house", "a bamboo grove", "a bridge"], 1),
]
FREEFORM_ITEMS = [  # qid, question (English), question in Japanese, answers
    (
        "Q1",
        "Which river creature of Japanese folklore keeps water in a dish on its head?",
        "頭の皿に水をたたえる川の妖怪は何か。",
        ["河童", "Kappa", "カッパ"],
    ),
    (
        "Q2",
        "Which long-nosed mountain spirit of Japan is often shown with a feather fan?",
        "羽団扇を持つ鼻の高い山の妖怪は何か。",
        ["天狗", "Tengu"],
    ),
    (
        "Q3",
        "Which child spirit is said to bring good fortune to the house it lives in?",
        "住みついた家に富をもたらすという子供の姿の妖怪は何か。",
        ["座敷童子", "Zashiki-warashi", "座敷わらし"],
    ),
]


@pytest.fixture(scope="module", autouse=True)
def datasets_cache(tmp_path_factory):
    """The datasets the harness builds from our JSONL go to a temporary cache."""
    import datasets

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-datasets")))
        yield


@pytest.fixture(scope="module")
def released(data_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("yokaieval") / "YokaiEval-first40.json"
    path.write_bytes(lzma.open(data_dir.parent / "yokaieval" / "YokaiEval-first40.json.xz").read())
    return path


def _mcq_parquet(path, rows=ENGLISH, language="en"):
    table = [
        mcq_row(
            i,
            q,
            c,
            k,
            id=f"en{i}",
            type=mcq.MCQ_TYPES[0],
            region="日本全国",
            refs_detail=["a footnote"],
            wiki="enwiki",
            language=language,
        )
        for i, (q, c, k) in enumerate(rows)
    ]
    write_mcq(path, table)
    return path


def _freeform_parquet(path):
    rows = [
        {
            "id": q,
            "question": en,
            "question_source": ja,
            "answers": answers,
            "qid": q,
            "origin_wiki": "jawiki",
            "title": answers[0],
            "n_wikis": 5,
            "has_enwiki": True,
            "criteria": {n: 5 for n in FREEFORM.field("criteria").type.names},
            "language": "ja",
            "generator": "g",
            "prompt_sha1": "x",
            "source_revision_id": 1,
        }
        for q, en, ja, answers in FREEFORM_ITEMS
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=FREEFORM), path)
    return path


def _tasks(export):
    """The harness's task index of the export's directory (its own ~14,000 tasks and groups left out:
    indexing them takes seconds; `lm_eval --include_path` lets ours take precedence)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(export.yaml.parent), include_defaults=False)


def _task(export):
    return _tasks(export).load([export.task])["tasks"][export.task]


def _harness(export, model, samples=False, **options):
    result = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model}",
        tasks=[export.task],
        task_manager=_tasks(export),
        batch_size=8,
        device="cpu",
        **options,
    )
    metrics = result["results"][export.task]
    return (metrics, result["samples"][export.task]) if samples else metrics


def _ours(questions, model, out, language):
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--mode",
                "loglikelihood",
                "--questions",
                str(questions),
                "--model",
                str(model),
                "--device",
                "cpu",
                "--language",
                language,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return json.loads((out / "summary.json").read_text())


class _Recorder:
    """A model that records the log-likelihood requests it is given."""

    name = "recorder"

    def __init__(self):
        self.requests = []

    def loglikelihood(self, requests, batch_size=None):
        self.requests += requests
        return [(0.0, False)] * len(requests)


@pytest.mark.parametrize("which", ["released", "en", "zh", "et"])  # zh: no space before the option; et: no cue of ours
def test_harness_builds_our_requests(which, released, tmp_path):
    questions = released if which == "released" else _mcq_parquet(tmp_path / "mcq.parquet", language=which)
    export = export_lmeval(questions, tmp_path / "tasks")
    assert export.language == ("ja" if which == "released" else which)  # the rows' language column
    recorder = _Recorder()
    mcq.evaluate_loglikelihood(mcq.read_questions(questions), recorder, language=export.language)
    task = _task(export)
    task.build_all_requests(limit=None, rank=0, world_size=1)
    built = sorted((i.doc["id"], i.idx, *i.arguments) for i in task.instances)
    rows = mcq.read_questions(questions)
    ours = [
        (r["id"], k, *recorder.requests[sum(len(x["choices"]) for x in rows[:n]) + k])
        for n, r in enumerate(rows)
        for k in range(len(r["choices"]))
    ]
    assert built == sorted(ours) and len(built) == sum(len(r["choices"]) for r in rows)
    assert yaml.safe_load(export.yaml.read_text())["target_delimiter"] == (
        "" if export.language in ("ja", "zh") else " "
    )


@pytest.fixture(scope="module")
def tiny_llama_dir(released, tmp_path_factory):
    """A random Llama whose tokenizer adds <s> and marks spaces with ▁; its merges learnt from
    the contexts and the options apart, so that no token spans a context and an option."""
    from tests.tiny_model import make_tiny_llama

    rows = mcq.read_questions(released) + [{"question": q, "choices": c} for q, c, _ in ENGLISH]
    texts = [mcq.question_prompt(r) + cue for r in rows for cue in mcq.ANSWER_CUES.values()]
    texts += [c for r in rows for c in r["choices"]]
    return make_tiny_llama(tmp_path_factory.mktemp("llama") / "tiny-llama", texts * 3)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["released", "english"])
@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_harness_gives_our_acc_and_acc_norm(which, model, released, request, tmp_path):
    model = request.getfixturevalue("tiny_model_dir" if model == "gpt2" else "tiny_llama_dir")
    questions = released if which == "released" else _mcq_parquet(tmp_path / "mcq.parquet")
    export = export_lmeval(questions, tmp_path / "tasks", task=f"yokai_{which}")
    theirs, samples = _harness(export, model, samples=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = _ours(questions, model, tmp_path / "results", export.language)
    # the one case where we differ on purpose (see LocalModel._split_many) does not arise here
    assert not [w for w in caught if "inside a token" in str(w.message)]
    assert ours["n"] == theirs["sample_len"] == export.rows
    assert ours["acc"] == pytest.approx(theirs["acc,none"], abs=1e-9)
    assert ours["acc_norm"] == pytest.approx(theirs["acc_norm,none"], abs=1e-9)
    # and question by question: the same log-likelihoods and verdicts
    items = {i["id"]: i for i in pq.read_table(tmp_path / "results" / "items.parquet").to_pylist()}
    for sample in samples:
        item = items[sample["doc"]["id"]]
        assert item["loglikelihoods"] == pytest.approx([ll for ll, _ in sample["filtered_resps"]], abs=1e-4)
        assert (item["correct"], item["correct_norm"]) == (sample["acc"] == 1.0, sample["acc_norm"] == 1.0)


def test_files_and_provenance(released, tmp_path, capsys):
    assert cli.main(["export", "lm-eval", str(released), "--out", str(tmp_path / "t"), "--task", "yokai40"]) == 0
    assert "lm-eval task yokai40: 40 questions (multiple_choice, ja)" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["yokai40.README.md", "yokai40.jsonl", "yokai40.yaml"]
    from lm_eval.tasks._yaml_loader import load_yaml  # what TaskManager reads a task file with

    config = load_yaml(tmp_path / "t" / "yokai40.yaml")
    assert config == yaml.safe_load((tmp_path / "t" / "yokai40.yaml").read_text(encoding="utf-8"))
    assert list(config)[:2] == ["task", "dataset_path"] and config["metadata"]["answer_cue"] == "\n回答："
    assert config["metadata"]["rows"] == 40 and config["metadata"]["source"] == released.name
    assert config["dataset_kwargs"]["data_files"]["test"] == str(tmp_path / "t" / "yokai40.jsonl")
    docs = [json.loads(line) for line in (tmp_path / "t" / "yokai40.jsonl").read_text().splitlines()]
    first = docs[0]
    assert first["prompt"].startswith("アイヌカイセイが現れるとされる場所はどこか") and first["prompt"].endswith(
        "\n- 神社\n回答："
    )
    assert first["choices"][first["answer_index"]] == "空家"
    assert "wikiorigin eval mcq --mode loglikelihood" in (tmp_path / "t" / "yokai40.README.md").read_text()


def test_an_export_replaces_only_its_own_files_and_never_its_input(released, tmp_path, capsys):
    """The input kept as TASK.jsonl in --out, or a hand-written TASK.yaml or TASK.README.md,
    is never replaced: exit 2 naming it, nothing written; an export's own files are replaced."""
    out = tmp_path / "t"
    out.mkdir()
    kept = out / "y.jsonl"
    kept.write_bytes(released.read_bytes())
    assert "the output would overwrite the input" in _error(
        ["export", "lm-eval", str(kept), "--out", str(out), "--task", "y"], capsys
    )
    assert kept.read_bytes() == released.read_bytes() and sorted(p.name for p in out.iterdir()) == ["y.jsonl"]
    for name in ("z.yaml", "z.README.md", "z.jsonl"):
        (out / name).write_text("mine\n")
        err = _error(["export", "lm-eval", str(released), "--out", str(out), "--task", "z"], capsys)
        assert f"{out / name}: not written by an export of wikiorigin" in err
        assert (out / name).read_text() == "mine\n"
        (out / name).unlink()
    assert cli.main(["export", "lm-eval", str(released), "--out", str(out), "--task", "z"]) == 0
    assert cli.main(["export", "lm-eval", str(released), "--out", str(out), "--task", "z"]) == 0  # ours: replaced
    readme = (out / "z.README.md").read_text()
    assert str(released.parent) not in readme.replace(str(out), "")  # the input by name and checksum


@pytest.mark.slow
def test_freeform_is_a_generate_until_task(tiny_model_dir, tmp_path):
    export = export_lmeval(_freeform_parquet(tmp_path / "freeform.parquet"), tmp_path / "tasks")
    assert export.kind == "freeform" and export.task == "wikiorigin_freeform"
    config = yaml.safe_load(export.yaml.read_text())
    assert config["output_type"] == "generate_until" and config["generation_kwargs"]["until"] == ["\n"]
    task = _task(export)
    doc = task.dataset["test"][1]
    assert doc["prompt"].endswith("Question: " + FREEFORM_ITEMS[1][1]) and doc["answers"] == ["天狗", "Tengu"]
    # any of the answers counts, case and surrounding spaces aside; another name does not
    assert task.process_results(doc, [" tengu "])["exact_match"] == 1.0
    assert task.process_results(doc, ["天狗"])["exact_match"] == 1.0
    assert task.process_results(doc, ["河童"])["exact_match"] == 0.0
    result = _harness(export, tiny_model_dir, limit=2, gen_kwargs="max_gen_toks=3")
    assert result["sample_len"] == 2 and 0.0 <= result["exact_match,none"] <= 1.0


def test_freeform_in_the_items_language(tmp_path):
    export = export_lmeval(_freeform_parquet(tmp_path / "freeform.parquet"), tmp_path / "tasks", source_language=True)
    doc = json.loads(export.data.read_text().splitlines()[0])
    assert doc["prompt"].startswith(FREEFORM_ITEMS[0][2])


def test_yaml_round_trip(tmp_path):
    """What lm-eval's own task loader reads back is the config, every character kept; text stays
    readable (CJK as it is, a new line escaped on one line, no long line folded)."""
    from lm_eval.tasks._yaml_loader import load_yaml  # what TaskManager reads a task file with

    config = {
        "path": '/データ/タスク "a"\\b: #c\u2028\x85\x9f\x7f😀',
        "delimiter": "",
        "until": ["\n"],
        "cue": "回答：",
        "space": " ",
        "breaks": ["a\x85b", "\u2029", "\r\n"],
        "word": "yes",
        "number": "1.0",
        "long": "x " * 100,
        "tag": "!function utils.f",
        "metric_list": [{"metric": "acc", "higher_is_better": True, "weight": 1.0, "none": None}],
        "empty": {},
        "nested": {"list": [], "regexes": [r"^\s+", r"\s+$"]},
    }
    text = to_yaml(config)
    assert yaml.safe_load(text) == config
    (tmp_path / "task.yaml").write_text(text, encoding="utf-8")
    assert load_yaml(tmp_path / "task.yaml") == config
    assert list(yaml.safe_load(text)) == list(config)  # the config's own order
    assert "cue: 回答：\n" in text and 'until:\n- "\\n"\n' in text and len(text.splitlines()) == 25


def _error(argv, capsys) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_bad_input_is_one_line_naming_the_file(released, tmp_path, capsys):
    rows = json.loads(released.read_text())
    del rows[3]["answer"]
    missing = tmp_path / "missing-answer.json"
    missing.write_text(json.dumps(rows, ensure_ascii=False))
    err = _error(["export", "lm-eval", str(missing), "--out", str(tmp_path / "t")], capsys)
    assert err.startswith(f"wikiorigin: error: {missing}: row 3: the answer None is not one of the choices")
    torn = tmp_path / "torn.json"
    torn.write_text(released.read_text()[:500])
    assert f"{torn}: not JSON" in _error(["export", "lm-eval", str(torn), "--out", str(tmp_path / "t")], capsys)
    assert not (tmp_path / "t").exists()  # nothing written


def test_inconsistent_rows_and_options(tmp_path):
    table = pq.read_table(_mcq_parquet(tmp_path / "en.parquet")).to_pylist()
    table[2]["language"] = "ja"
    mixed = tmp_path / "mixed.parquet"
    pq.write_table(pa.Table.from_pylist(table, schema=MCQ), mixed)
    with pytest.raises(
        WikioriginError, match=r"mixed.parquet: rows in several languages \(en 5, ja 1\): give language="
    ):
        export_lmeval(mixed, tmp_path / "t")
    assert export_lmeval(mixed, tmp_path / "t", language="en").language == "en"  # the option decides
    table[2].update(language="en", answer_index=7)
    out_of_range = tmp_path / "range.parquet"
    pq.write_table(pa.Table.from_pylist(table, schema=MCQ), out_of_range)
    with pytest.raises(WikioriginError, match=r"range.parquet: row 2: answer_index 7 is not one of the 4 options"):
        export_lmeval(out_of_range, tmp_path / "t")
    neither = tmp_path / "neither.json"
    neither.write_text(json.dumps([{"question": "q", "answer": "a"}]))
    with pytest.raises(WikioriginError, match=r"neither.json: row 0 has neither `choices`"):
        export_lmeval(neither, tmp_path / "t")
    with pytest.raises(WikioriginError, match="language= is for multiple-choice"):
        export_lmeval(_freeform_parquet(tmp_path / "ff.parquet"), tmp_path / "t", language="en")
    with pytest.raises(WikioriginError, match="task name 'a b'"):
        export_lmeval(mixed, tmp_path / "t", task="a b", language="en")


def test_a_question_twice_or_an_id_of_two_questions_is_refused(tmp_path, capsys):
    """A repeated row would count twice in the task's accuracy, exit 0; nothing is written."""
    table = pq.read_table(_mcq_parquet(tmp_path / "en.parquet")).to_pylist()
    twice, shared = tmp_path / "twice.parquet", tmp_path / "shared.parquet"
    pq.write_table(pa.Table.from_pylist([*table, table[1]], schema=MCQ), twice)
    err = _error(["export", "lm-eval", str(twice), "--out", str(tmp_path / "t")], capsys)
    assert err == (
        f"wikiorigin: error: {twice}: row {len(table)} repeats row 1 (the same id and question): "
        "give each question once\n"
    )
    table[2]["id"] = table[0]["id"]
    pq.write_table(pa.Table.from_pylist(table, schema=MCQ), shared)
    err = _error(["export", "lm-eval", str(shared), "--out", str(tmp_path / "t")], capsys)
    assert err == f"wikiorigin: error: {shared}: row 2: id {table[0]['id']!r} again (first: row 0)\n"
    assert not (tmp_path / "t").exists()


def test_a_set_accepted_incomplete_says_so_in_its_task(tmp_path, capsys):
    """A set built with requests that failed and accepted as it is (`--allow-failures`) is
    exported with `complete: false` in the task's metadata and a word in its README."""
    from tests.commands import incomplete_mcq_set

    built = incomplete_mcq_set(tmp_path)
    assert cli.main(["export", "lm-eval", str(built), "--out", str(tmp_path / "task")]) == 0
    config = yaml.safe_load((tmp_path / "task" / "wikiorigin_mcq.yaml").read_text(encoding="utf-8"))
    assert (config["metadata"]["complete"], config["metadata"]["failed_requests"]) == (False, 1)
    readme = (tmp_path / "task" / "wikiorigin_mcq.README.md").read_text(encoding="utf-8")
    assert "**Incomplete**: 1 LLM requests of the build failed" in readme
