# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# `make demo` installs only what the demo runs (the package and its `demo` extra: matplotlib for
# the charts, DuckDB for the query); `make test` everything the tests need (`dev`, `plot`), in
# the same .venv. Each has its own stamp; the full install stamps the demo's too, so either
# order installs once per change of pyproject.toml.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
PEER_PYTHON ?= /root/.pyenv/versions/3.12.1/bin/python

# Bytecode is cached (in __pycache__/, which git ignores) even where the environment turns that
# off (PYTHONDONTWRITEBYTECODE): without it each pytest worker rewrites and compiles all the test
# modules again (collection measured 15 s instead of 7 s), and every `python -m frayproof_audit`
# a test starts compiles the package again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test lint typecheck warm unit bench docs peer clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `--no-compile`: pip would byte-compile every module of every package it installs (ray, dask,
# langchain, mypy...), 37 of the 64 s the full install took on a fresh clone; most are never
# imported here. Python compiles a module the first time it is imported and keeps the result
# in __pycache__/ (see below), so only what runs pays, once: `warm` does most of it.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,plot]'
	touch $(STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python examples/demo.py

# lint, then typecheck, then the unit tests. Running mypy beside the tests (make -j3) put a
# third busy process beside the Dask and Ray worker-loss tests, whose waits for workers flaked
# under that load: the tests start after it. Mypy uses one core; on the other, `warm` collects
# the suite once, which compiles what the tests import and writes pytest's rewritten test
# modules to __pycache__/, so each test worker then collects in half the time (~7 s, not 15).
test: $(STAMP) lint
	@$(MAKE) --no-print-directory -j2 typecheck warm
	@$(MAKE) --no-print-directory unit

lint: $(STAMP)
	$(BIN)/ruff check frayproof_audit tests benchmarks examples sessiongen scripts

typecheck: $(STAMP)
	$(BIN)/mypy --strict frayproof_audit benchmarks sessiongen

warm: $(STAMP)
	@out=$$($(BIN)/pytest --collect-only -p no:cacheprovider 2>&1) || { echo "$$out"; exit 1; }; \
		echo "$$out" | tail -1

# Whole files to each worker, the longest first (tests/conftest.py: SLOWEST_FIRST), so a module's
# cluster or object store starts once and no worker is left alone at the end on a long file.
# The run ends with its CPU time and the floor it sets on these cores (tests/cpu_account.py).
unit: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=20

# Every benchmark, then each headline figure against the committed results (benchmarks.regress):
# REGRESSION and exit 1 when one is more than 15% worse beyond the run's noise. The README table
# is regenerated either way.
bench: $(STAMP)
	$(BIN)/python -m benchmarks; status=$$?; $(BIN)/python -m benchmarks.table; exit $$status

# Rewrite the generated --help regions of docs/cli.md after changing a command or option, and
# the check names of docs/contract.md after registering a check (tests/test_cli_docs.py and
# tests/test_check_names.py fail until this has been run).
docs: $(STAMP)
	$(BIN)/python scripts/gen_cli_docs.py
	$(BIN)/python scripts/gen_check_table.py

# Optional: the reference peer (frayproof 0.1.0 needs Python 3.12) for differential tests and
# benchmark baselines, which skip cleanly without it. Only what runs there is installed:
# frayproof, and orjson for bench_check's parse-rate baseline inside the peer.
peer:
	test -x .peer/bin/python || $(PEER_PYTHON) -m venv .peer
	.peer/bin/python -m pip install --quiet frayproof==0.1.0 orjson

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
