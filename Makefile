# Every target creates .venv when it is missing, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint demo bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check deploybot tests
	$(BIN)/ruff format --check deploybot tests
	$(BIN)/mypy

demo: $(STAMP)
	$(BIN)/python -m deploybot.demo

bench: $(STAMP)
	$(BIN)/python -m tests.bench
	$(BIN)/python -m tests.bench_render_limits

clean:
	rm -rf $(VENV) .demo .pytest_cache .mypy_cache .ruff_cache
