# Every target creates .venv when it is missing, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

BENCH_STAMP := $(VENV)/.bench-installed
PELICAN_VENV := .venv-pelican
# Pelican is optional (issue 21 names Jekyll and Hugo): BENCH_PEERS=jekyll,hugo leaves it out,
# and with it its install and about 20 minutes of the hour.
BENCH_PEERS ?= jekyll,hugo,pelican
# At 10,000 posts only Hugo is run: no target compares with the others there, and Jekyll's
# and Pelican's builds take about 265 s each (BENCH_AT= runs every peer at every size).
BENCH_AT ?= --peers-at 10000=hugo
BENCH_ARGS ?= --sizes 1000,10000 --repeat 3 --peers $(BENCH_PEERS) $(BENCH_AT) --update-doc
# The quick form: 1,000 posts only, Jekyll and Hugo; its JSON and plot go under build/, its
# report to stdout, and docs/ is left as it is (BENCH_QUICK_ARGS overrides).
BENCH_QUICK_ARGS ?= --sizes 1000 --repeat 3 --peers jekyll,hugo \
	--json build/bench-quick.json --plot build/bench-quick.png

.PHONY: test test-deep test-fast lint demo bench bench-quick bench-tools clean redis-server jekyll-theme-minima chromium config-reference

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The bytecode of deploybot and the test helpers, written before the tests: many tests run
# `python -m deploybot` as a process, and where PYTHONDONTWRITEBYTECODE is set (it is on
# these machines) each such process compiled every module it imports from source again:
# about 0.25 s of CPU per process, and a run starts some 600 of them (a sixth of the suite's
# CPU time). compileall writes the .pyc files whatever that variable says; the interpreter
# still reads them, and recompiles a module whose source is newer.
BYTECODE = $(BIN)/python -m compileall -q -j 0 deploybot tests

# pytest-xdist workers: one more than the cores. The suite waits as much as it computes
# (daemons, fleets, timeouts, child processes): with one worker per core a 2-core machine was
# 67 % busy (465 s); with 3 workers the same suite took 359 s (`/usr/bin/time make test
# PYTEST_ARGS="-n 3"`: 490 s of CPU, 135 %).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

# Every test, on every core (pytest-xdist). CI runs this.
test: $(STAMP) redis-server jekyll-theme-minima chromium
	$(BYTECODE)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Every test, each property at 2,000 examples instead of 100 (tests/conftest.py): hours, not
# minutes; for a change to the incremental engine or its generators.
test-deep: $(STAMP) redis-server jekyll-theme-minima chromium
	$(BYTECODE)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --hypothesis-profile=long $(PYTEST_ARGS)

# The edit loop: every test but the slow ones (0.5 s or more, listed in tests/slow.txt, which
# `python -m tests.slowlist` writes from a `--durations=0` run); pytest says how many it left out.
test-fast: $(STAMP)
	$(BYTECODE)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not slow" $(PYTEST_ARGS)

# The fleet tests start their own redis-server (Debian's package): installed here when
# missing, as root or with sudo; without either the fleet tests skip, saying why.
redis-server:
	@command -v redis-server >/dev/null || .ci/apt-install "the fleet tests skip" redis-server

# The minima test (tests/test_render_themes.py) builds a `jekyll new` site with Debian's
# jekyll-theme-minima and compares it with Jekyll's own build: installed here when missing.
jekyll-theme-minima:
	@test -d /usr/share/rubygems-integration/all/gems/minima-2.5.1 || \
		.ci/apt-install "the minima test skips" jekyll-theme-minima

# The browser tests (tests/browser.py: the daemon's status page, the live preview) drive
# Debian's headless Chromium through its ChromeDriver: installed here when missing.
chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		.ci/apt-install "the browser tests skip" chromium chromium-driver

lint: $(STAMP)
	$(BIN)/ruff check deploybot tests
	$(BIN)/ruff format --check deploybot tests
	$(BIN)/mypy

# config/deploybot.example.toml and docs/config-reference.md, written from the config schema
# (deploybot/config/schema.py); tests/test_config_reference.py fails while they differ.
config-reference: $(STAMP)
	$(BIN)/python -m deploybot.config.reference

demo: $(STAMP)
	$(BIN)/python -m deploybot.cli.demo

# The bench extra (matplotlib) in .venv; Pelican in a venv of its own, since it pins
# Pygments below the version deploybot is tested with. A failed install skips a peer.
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

$(PELICAN_VENV)/.installed:
	test -x $(PELICAN_VENV)/bin/python || $(PYTHON) -m venv $(PELICAN_VENV)
	$(PELICAN_VENV)/bin/python -m pip install --quiet 'pelican[markdown]>=4.9' \
		&& touch $(PELICAN_VENV)/.installed \
		|| echo "bench: Pelican could not be installed from PyPI: its rows will be skipped"

# Hugo (and GNU time, for each run's peak RSS) from Debian when missing, as root or with sudo.
bench-tools:
	@missing=""; command -v hugo >/dev/null || missing="hugo"; \
	test -x /usr/bin/time || missing="$$missing time"; \
	.ci/apt-install "Hugo is skipped if missing" $$missing

# Not part of `make test`: about 20 minutes at 1,000 and 10,000 posts (15 without Pelican).
# BENCH_ARGS overrides; --sizes 1000,100000 adds the 100,000-post size (about an hour).
# deploybot's bytecode is compiled first, so no measured run pays for compiling it: an
# editable install has none, and with PYTHONDONTWRITEBYTECODE set every run would compile
# every module (compileall writes the .pyc files regardless; the interpreter still reads them).
bench: $(BENCH_STAMP) $(if $(findstring pelican,$(BENCH_PEERS)),$(PELICAN_VENV)/.installed) \
		bench-tools redis-server
	$(BYTECODE)
	nice $(BIN)/python -m tests.bench $(BENCH_ARGS)
	nice $(BIN)/python -m tests.bench.render_limits
	nice $(BIN)/python -m tests.bench_fleet

# Every target of issue 21 that 1,000 posts can show, in about 7 minutes; the others say
# "not measured".
bench-quick: $(BENCH_STAMP) bench-tools
	$(BYTECODE)
	nice $(BIN)/python -m tests.bench $(BENCH_QUICK_ARGS)

clean:
	rm -rf $(VENV) $(PELICAN_VENV) .demo .pytest_cache .mypy_cache .ruff_cache
