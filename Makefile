# Quanta: `make run` starts everything, `make test` tests everything.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
# Python keeps the bytecode it compiles unless this is set (as on our CI machines): the tests
# start some 150 Python processes, and each compiled Quanta's sources again (2.6 s of CPU per
# `quanta run`), as each pytest worker redid its assertion rewriting (4.5 s).
unexport PYTHONDONTWRITEBYTECODE
NPM_STAMP := frontend/node_modules/.installed
UI_STAMP := frontend/dist/index.html
UI_SOURCES := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
	frontend/index.html frontend/vite.config.ts frontend/package-lock.json

.PHONY: install run test test-python test-pure-python test-frontend lint lint-python lint-frontend bench clean

install: $(PY_STAMP) $(UI_STAMP)

$(PY_STAMP): pyproject.toml setup.py $(wildcard backend/quanta/*/*.c)
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[server,dev]'
	touch $@

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	@node -e 'if (+process.versions.node.split(".")[0] < 20) { console.error("Node 20+ is required"); process.exit(1) }'
	cd frontend && npm ci --no-audit --no-fund
	touch $@

$(UI_STAMP): $(NPM_STAMP) $(UI_SOURCES)
	cd frontend && npm run build

run: install
	$(BIN)/quanta run

lint: lint-python lint-frontend

lint-python: $(PY_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

lint-frontend: $(NPM_STAMP)
	cd frontend && npm run lint && npm run check:api

test-frontend: $(NPM_STAMP)
	cd frontend && npm test

# pytest-xdist: one worker more than there are cores, since many tests wait on the servers
# and processes they start (on 2 cores, pytest alone took 400 s with 2 workers, 357 s with
# 3); a fourth gained little, the cores being busy, and failed a timing-sensitive test.
# PYTEST_WORKERS=0 runs in one process. Each worker is its own session: it starts its own
# throw-away servers on free ports in its own temp dirs. The tests marked long are collected
# first (tests/conftest.py) and handed out one at a time to whichever worker is free:
# longest first, so no worker is left with one at the end.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
XDIST := -n $(PYTEST_WORKERS) --dist load --maxschedchunk 1
test-python: install
	$(BIN)/pytest $(XDIST)

# The Python fallbacks of the C extensions (QUANTA_NATIVE=0, see analysis/native.py), as
# on a host that built without a compiler: the tests of the code they stand in for (slow-log
# reader, fingerprint cache key, histograms), the aggregation and metric store that use it,
# and one import end to end. Under a minute; everything else runs once, in test-python.
PURE_PYTHON_TESTS := tests/analysis/test_native.py tests/analysis/test_slowlog.py \
	tests/analysis/test_fingerprinter.py tests/analysis/test_histogram.py \
	tests/analysis/test_digest.py tests/analysis/test_minute_folder.py \
	tests/backend/test_aggregate.py tests/backend/test_metric_store.py \
	tests/integration/test_pipeline.py::test_embedded_defaults_sqlite_and_sqlite_broker

# Two workers: some 600 short tests and one import end to end; each more worker would
# import and collect them again.
test-pure-python: install
	QUANTA_NATIVE=0 $(BIN)/pytest -q -n 2 --dist load --maxschedchunk 1 $(PURE_PYTHON_TESTS)

# Lint, the UI's unit tests and the native-off pass first, side by side: each keeps about a
# core busy. Then pytest, which fills the cores by itself; alongside it they made its
# timing-sensitive tests (a closed-loop throughput comparison) fail under the load.
# --output-sync prints each one's output in one piece.
test: install
	$(MAKE) --no-print-directory -j3 --output-sync=target lint test-frontend test-pure-python
	$(MAKE) --no-print-directory test-python

# Every bench/*.py is a benchmark, except helper modules named _*.py (shared generators).
bench: $(PY_STAMP)
	@shopt -s nullglob; scripts=(); \
	for script in bench/*.py; do [[ $$(basename "$$script") == _* ]] || scripts+=("$$script"); done; \
	if [ $${#scripts[@]} -eq 0 ]; then echo "no benchmarks yet"; fi; \
	for script in "$${scripts[@]}"; do echo "== $$script"; $(BIN)/python "$$script" || exit 1; done

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist .quanta
