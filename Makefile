# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv if it is
# missing and installs what it needs (pip skips what is already there).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is pinned to the CPU build that lies on this kind of machine; on a GPU machine
# install the torch you need first, then `pip install -e .[eval]`.
TORCH := torch==2.13.0

.PHONY: demo test recipe bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: setup.py | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[review]"
	touch $@

$(VENV)/.test: setup.py | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,eval,dask,review]" $(TORCH)
	touch $@

demo: $(VENV)/.core
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.test
	$(BIN)/python -m pytest -q

# The new-language recipe (README: "Worked recipe") on the bundled data: the fixture tree served
# as a dump mirror on loopback, a scripted OpenAI-compatible server on loopback and a tiny local
# model; every command printed as typed. Output in demo-out/recipe (emptied first).
recipe: $(VENV)/.test
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python scripts/recipe.py --out demo-out/recipe

# The API reference (pdoc) of the public modules, from their docstrings: docs/api/index.html.
# tests/test_api_docs.py builds the same pages, so a missing docstring fails `make test`.
docs: $(VENV)/.test
	rm -rf docs/api
	$(BIN)/python scripts/api_docs.py docs/api

$(VENV)/.bench: setup.py | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[bench,eval,review]" $(TORCH)
	touch $@

bench: $(VENV)/.bench
	$(BIN)/python bench/bench_scan.py
	$(BIN)/python bench/bench_qids.py
	$(BIN)/python bench/bench_reduce.py
	$(BIN)/python bench/bench_pipeline.py
	$(BIN)/python bench/bench_pages.py
	$(BIN)/python bench/bench_index.py
	$(BIN)/python bench/bench_wikitext.py
	$(BIN)/python bench/bench_wikidata.py
	$(BIN)/python bench/bench_llm.py
	$(BIN)/python bench/bench_eval.py
	$(BIN)/python bench/bench_review.py

clean:
	rm -rf demo-out bench/out .pytest_cache docs/api
