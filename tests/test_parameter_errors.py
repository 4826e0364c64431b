"""Library errors name the library's parameters (``give another cache=``); the command line
says the same errors with its own flags (``give another --cache``), in every command that has
them, and a flag's value as a shell takes it."""

import asyncio
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.test_failures import closed_port
from wikiorigin.cli import main, parser
from wikiorigin.cli.options import FLAGS, flags, in_flags
from wikiorigin.errors import ParameterError
from wikiorigin.llm import EndpointError, OpenAIBackend, RequestCache, RunLock
from wikiorigin.llm.cache import CacheError

ROOT = Path(__file__).resolve().parents[1]


def _eval_args(*extra):
    return parser().parse_args(["eval", "mcq", "--questions", "q.parquet", "--model", "m", "--out", "r", *extra])


def _build_args(*extra):
    return parser().parse_args(
        ["build", "mcq", "--articles", "a.parquet", "--out", "m.parquet", "--model", "m", *extra]
    )


def test_a_cache_error_is_a_parameter_error_of_cache(tmp_path):
    (tmp_path / "c.sqlite").mkdir()
    with pytest.raises(CacheError) as caught:
        RequestCache(tmp_path / "c.sqlite")
    error = caught.value
    assert isinstance(error, ParameterError) and error.parameter == "cache"
    assert str(error) == f"{tmp_path / 'c.sqlite'}: a directory, not a request cache; give a file name for cache="
    assert error.said(FLAGS).endswith("give a file name for --cache")
    again = pickle.loads(pickle.dumps(error))  # across processes: its type and parts
    assert type(again) is CacheError and str(again) == str(error) and again.said(FLAGS) == error.said(FLAGS)
    (tmp_path / "g.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match=r"move it away or give another cache=$"):
        RequestCache(tmp_path / "g.sqlite")


def test_the_command_line_says_the_cache_error_with_its_flag(tmp_path, capsys):
    (tmp_path / "c.sqlite").mkdir()
    assert (
        main(
            [
                "build",
                "mcq",
                "--articles",
                str(tmp_path / "a.parquet"),
                "--out",
                str(tmp_path / "m.parquet"),
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--cache",
                str(tmp_path / "c.sqlite"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err == (
        f"wikiorigin: error: {tmp_path / 'c.sqlite'}: a directory, not a request cache; give a file name for --cache\n"
    )


def test_a_held_output_names_the_parameter_that_gave_it(tmp_path):
    with RunLock(tmp_path / "m.parquet"):
        with pytest.raises(ParameterError, match=r"wait for it to end, or give another out=$") as caught:
            RunLock(tmp_path / "m.parquet").acquire()
        assert caught.value.said(FLAGS).endswith("give another --out")
    with RunLock(tmp_path / "run"):
        with pytest.raises(ParameterError, match=r"give another directory=$"):
            RunLock(tmp_path / "run", parameter="directory").acquire()


def test_a_range_of_editions_and_a_sample_name_their_parameters(tmp_path):
    from wikiorigin.origin import subset

    with pytest.raises(ParameterError, match=r"^min_editions=5 is more than max_editions=2: no item") as caught:
        subset(tmp_path / "origins.parquet", "jawiki", tmp_path / "s.parquet", min_editions=5, max_editions=2)
    assert caught.value.said(
        flags(parser().parse_args(["subset", "o.parquet", "--wiki", "ja", "--out", "s"]))
    ).startswith("--min-editions 5 is more than --max-editions 2: no item")


def test_a_corpus_without_a_source_of_names_names_the_three(tmp_path):
    from wikiorigin.corpora.origin import build_origin_corpus

    with pytest.raises(ParameterError) as caught:
        build_origin_corpus(tmp_path / "items.parquet", None, tmp_path / "articles.parquet")
    assert str(caught.value) == (
        "give one of an entities file (entities_file=), the Wikidata JSON dump "
        "(wikidata=) or a SPARQL endpoint (sparql=)"
    )
    corpus = parser().parse_args(
        ["corpus", "origin", "--items", "i", "--dump", "d", "--index", "x", "--out", "o", "--sparql", "s"]
    )
    assert caught.value.said(flags(corpus)) == (
        "give one of an entities file (--entities), the Wikidata JSON dump (--wikidata) or a SPARQL endpoint (--sparql)"
    )


def test_a_device_and_a_dtype_name_their_parameters():
    pytest.importorskip("torch", reason="the eval extra is not installed")
    from wikiorigin.llm.hf import pick_device, pick_dtype

    with pytest.raises(ParameterError, match=r"^device='tpu': not a device") as caught:
        pick_device("tpu")
    assert caught.value.said(flags(_eval_args())).startswith("--device tpu: not a device")
    with pytest.raises(ParameterError, match=r"^dtype='float7': not a torch dtype") as caught:
        pick_dtype("float7", "cpu")
    assert caught.value.said(flags(_eval_args())).startswith("--dtype float7: not a torch dtype")


def test_an_unreachable_endpoint_names_the_address_given():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(EndpointError) as caught:
        asyncio.run(OpenAIBackend("m", base_url=url, timeout=5).check())
    error = caught.value
    assert str(error) == f"cannot reach {url}: Connection refused (is the server running? check base_url=)"
    assert error.parameter == "base_url" and error.url == url
    # the model under evaluation's server is --endpoint; the LLM clients' (a judge's) --base-url
    assert error.said(flags(_eval_args("--endpoint", url), error)).endswith("check --endpoint)")
    assert error.said(flags(_eval_args("--base-url", url), error)).endswith("check --base-url)")
    assert error.said(flags(_build_args("--base-url", url), error)).endswith("check --base-url)")
    assert pickle.loads(pickle.dumps(error)).url == url


def test_a_failed_request_reason_is_said_with_the_commands_flags():
    reason = (
        "cut off by the output limit of 200 tokens (150 of them reasoning): raise max_tokens= or lower "
        "reasoning_effort="
    )
    assert in_flags(reason, flags(_build_args())).endswith("raise --max-tokens or lower --reasoning-effort")
    # eval has no --max-tokens (a judge's limit is fixed): said as the library takes it
    assert in_flags(reason, flags(_eval_args())).endswith("raise max_tokens= or lower --reasoning-effort")
    assert in_flags("max_tokens=5 and top_p=", FLAGS) == "max_tokens=5 and --top-p"


def test_a_value_is_said_as_typed_and_in_place_of_a_metavar():
    error = ParameterError("paraphrases", "{paraphrases}: no such file", "my file.json")
    assert str(error) == "paraphrases='my file.json': no such file"
    assert error.said(FLAGS) == "--paraphrases 'my file.json': no such file"
    assert ParameterError("paraphrases", "give {paraphrases}").said(FLAGS) == "give --paraphrases FILE"


def _options() -> set[str]:
    """Every option string of every command."""
    import argparse

    found, todo = set(), [parser()]
    while todo:
        p = todo.pop()
        for action in p._actions:
            found.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return found


def test_every_flag_is_an_option_and_every_parameter_has_a_flag():
    options = _options()
    assert {flag.split()[0] for flag in FLAGS.values()} <= options
    named = set()
    for path in (ROOT / "wikiorigin").rglob("*.py"):
        if "cli" not in path.relative_to(ROOT / "wikiorigin").parts:
            named |= set(re.findall(r"(?:ParameterError|EndpointError)\(\s*\"(\w+)\"", path.read_text()))
    assert named and named <= set(FLAGS), named - set(FLAGS)


def test_the_library_speaks_no_flag_in_its_errors():
    """A message the library raises names parameters, not the command line's flags."""
    raised = re.compile(r"raise \w*Error\((?:[^()]|\([^()]*\))*?[\"'][^\"']*?(?<![\w`])--[a-z][\w-]*", re.S)
    found = []
    for path in (ROOT / "wikiorigin").rglob("*.py"):
        rel = path.relative_to(ROOT / "wikiorigin")
        if rel.parts[0] in ("cli", "dumps"):
            continue  # the command line's own; the dump commands' (download, scan) few
        found += [f"{rel}: {m.group(0)[-60:]}" for m in raised.finditer(path.read_text())]
    assert not found, found


def test_a_parameter_error_escaping_a_command_is_said_with_its_flags(tmp_path, capsys):
    """Commands without the decorator too (here subset): one line, exit 2, the flags."""
    assert (
        main(
            [
                "subset",
                str(tmp_path / "o.parquet"),
                "--wiki",
                "ja",
                "--out",
                str(tmp_path / "s.parquet"),
                "--min-editions",
                "3",
                "--max-editions",
                "1",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.startswith("wikiorigin: error: --min-editions 3 is more than --max-editions 1:")


def test_review_and_export_errors_name_parameters(tmp_path):
    """From Python, the review's and the lm-eval export's errors name the library's parameters
    (their command lines' wording, --annotator and --kind, is tested with those commands)."""
    from wikiorigin.errors import ParameterError
    from wikiorigin.review.app import Review
    from wikiorigin.review.export import export_reviewed

    with pytest.raises(ParameterError) as raised:
        export_reviewed(tmp_path / "set.parquet", tmp_path / "r.sqlite", tmp_path / "out.parquet", policy="most")
    assert str(raised.value).startswith("policy='most': expected one of ")
    with pytest.raises(ParameterError) as raised:
        Review(tmp_path / "set.parquet", tmp_path / "r.sqlite", "")
    assert str(raised.value) == "annotator='': give a name of 1 to 64 printable characters"
    assert (
        raised.value.said({"annotator": "--annotator"}) == "--annotator '': give a name of 1 to 64 printable characters"
    )


_TBLIB_FIRST = """
import asyncio, pickle, sys
import tblib.pickling_support
from wikiorigin.llm.openai_backend import EndpointError, OpenAIBackend
tblib.pickling_support.install()  # as distributed does when imported, before openai is
try:
    asyncio.run(OpenAIBackend("m", base_url=sys.argv[1], timeout=5).check())
except EndpointError as exc:
    print(pickle.loads(pickle.dumps(exc)).url)
"""


def test_an_unreachable_endpoint_pickles_also_with_dask_tblib_installed():
    pytest.importorskip("tblib.pickling_support", reason="tblib comes with the dask extra")
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = subprocess.run([sys.executable, "-c", _TBLIB_FIRST, url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == url, done.stderr[-500:]
