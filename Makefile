# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv if it is
# missing and installs what it needs (pip skips what is already there), with the versions of
# constraints.txt (`make test CONSTRAINTS=` installs the newest allowed instead).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is pinned to the CPU build that lies on this kind of machine; on a GPU machine
# install the torch you need first, then `pip install -e .[eval]` (or `make test TORCH=`).
TORCH := torch==2.13.0
# constraints.txt: every package of the dependency tree at the version CI tests
# (scripts/constraints.py writes it from a working .venv); torch is left to TORCH above.
CONSTRAINTS ?= constraints.txt
PIP := $(BIN)/python -m pip install -q $(if $(CONSTRAINTS),-c $(CONSTRAINTS))
# what an install depends on: a change to any of them installs again
SETUP := pyproject.toml setup.py $(CONSTRAINTS)

.PHONY: demo test test-fast lint typecheck docs docs-serve recipe bench bench-quick bench-table clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: $(SETUP) | $(BIN)/python
	$(PIP) -e ".[review]"
	touch $@

$(VENV)/.test: $(SETUP) | $(BIN)/python
	$(PIP) -e ".[test,eval,dask,review]" $(TORCH)
	touch $@

$(VENV)/.lint: $(SETUP) | $(BIN)/python
	$(PIP) -e ".[lint]"
	touch $@

$(VENV)/.docs: $(SETUP) | $(BIN)/python
	$(PIP) -e ".[docs]"
	touch $@

demo: $(VENV)/.core
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(VENV)/.test
	$(BIN)/python -m pytest -q

# The tests a developer runs while working, in a few minutes: all but those marked slow
# (@pytest.mark.slow, pyproject's [tool.pytest.ini_options]). CI runs `make test`, every one.
test-fast: $(VENV)/.test
	$(BIN)/python -m pytest -q -m "not slow"

# ruff's rules and the formatter's are in pyproject.toml ([tool.ruff]); the code is as `ruff format` writes it.
lint: $(VENV)/.lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy wikiorigin

# mypy on the package, with the settings of pyproject.toml ([tool.mypy]).
typecheck: $(VENV)/.lint
	$(BIN)/mypy wikiorigin

# The documentation site (MkDocs, Material, mkdocstrings) in site/: the command and file-schema
# references are generated while it builds (scripts/gen_reference.py); any warning fails it.
# The two variables keep Material's and mkdocs-gen-files' notices about their future off the log.
MKDOCS := NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs
docs: $(VENV)/.docs
	$(MKDOCS) build --strict --site-dir site

docs-serve: $(VENV)/.docs
	$(MKDOCS) serve

# The new-language recipe (docs: "Tutorials") on the bundled data: the fixture tree served as a
# dump mirror on loopback, a scripted OpenAI-compatible server on loopback and a tiny local
# model; every command printed as typed. Output in demo-out/recipe (emptied first).
recipe: $(VENV)/.test
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python scripts/recipe.py --out demo-out/recipe

$(VENV)/.bench: $(SETUP) | $(BIN)/python
	$(PIP) -e ".[bench,eval,review]" $(TORCH)
	touch $@

bench: $(VENV)/.bench
	$(BIN)/python bench/bench_scan.py
	$(BIN)/python bench/bench_qids.py
	$(BIN)/python bench/bench_reduce.py
	$(BIN)/python bench/bench_pipeline.py
	$(BIN)/python bench/bench_pages.py
	$(BIN)/python bench/bench_decompress.py
	$(BIN)/python bench/bench_index.py
	$(BIN)/python bench/bench_wikitext.py
	$(BIN)/python bench/bench_wikidata.py
	$(BIN)/python bench/bench_llm.py
	$(BIN)/python bench/bench_eval.py
	$(BIN)/python bench/bench_chrf.py
	$(BIN)/python bench/bench_review.py
	$(BIN)/python bench/bench_startup.py
	$(BIN)/python bench/bench_render.py  # MediaWiki's rendering against the wikitext path (needs Debian's mediawiki)

# Every bench on small inputs, in a minute or two (CI runs it after the tests: a bench that
# breaks fails the build). Their figures go to bench/out/results/NAME.quick.json, never the docs.
QUICK_BENCHES := scan qids reduce pipeline pages decompress index wikitext wikidata llm startup eval chrf review corpus
bench-quick: $(VENV)/.test
	set -e; for name in $(QUICK_BENCHES); do echo "== bench_$$name --quick"; $(BIN)/python bench/bench_$$name.py --quick; done

# The performance page's table (docs/reference/performance.md, its marked block) from the figures
# the benches wrote (bench/out/results/*.json): run the benches first.
bench-table:
	$(BIN)/python scripts/bench_table.py

clean:
	rm -rf demo-out bench/out .pytest_cache site
