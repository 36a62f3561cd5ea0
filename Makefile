# Every target creates .venv when it is missing, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint demo bench clean redis-server

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP) redis-server
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The fleet tests start their own redis-server (Debian's package): installed here when
# missing, as root or with sudo; without either the fleet tests skip, saying why.
redis-server:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	  else sudo=none; fi; \
	  if [ "$$sudo" = none ]; then \
	    echo "make: redis-server is missing and cannot be installed (not root, no sudo): the fleet tests skip"; \
	  else \
	    $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 redis-server >/dev/null 2>&1 \
	    || { $$sudo apt-get update -q >/dev/null 2>&1 \
	         && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 redis-server >/dev/null 2>&1; } \
	    || echo "make: apt-get install redis-server failed: the fleet tests skip"; \
	  fi; }

lint: $(STAMP)
	$(BIN)/ruff check deploybot tests
	$(BIN)/ruff format --check deploybot tests
	$(BIN)/mypy

demo: $(STAMP)
	$(BIN)/python -m deploybot.demo

bench: $(STAMP) redis-server
	$(BIN)/python -m tests.bench
	$(BIN)/python -m tests.bench_render_limits
	$(BIN)/python -m tests.bench_fleet

clean:
	rm -rf $(VENV) .demo .pytest_cache .mypy_cache .ruff_cache
