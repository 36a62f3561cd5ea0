"""Shared fixtures: where ../shared is, and small real git repositories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import SKIP_REASON as BROWSER_SKIP
from tests.browser import Browser, find_programs
from tests.redisproc import RedisServer

REPO_ROOT = Path(__file__).resolve().parents[1]
SLOW_LIST = Path(__file__).with_name("slow.txt")
SHARED = REPO_ROOT.parent / "shared"
TVM = SHARED / "corpus" / "tvm-site"


def _slow_tests() -> set[str]:
    """The node ids ``tests/slow.txt`` lists (:mod:`tests.slowlist`)."""
    if not SLOW_LIST.is_file():
        return set()
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines()
    return {line.split("#", 1)[0].strip() for line in lines} - {""}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` the tests ``tests/slow.txt`` lists (0.5 s or more, measured), so
    ``make test-fast`` (``-m "not slow"``) leaves them out; ``make test`` runs every test."""
    slow = _slow_tests()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def tvm_site() -> Path:
    """The real tvm-site corpus folder; skips the test when ../shared is missing."""
    if not (TVM / "source" / "_config.yml").is_file():
        pytest.skip(f"the tvm-site corpus is missing at {TVM}")
    return TVM


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of its own on 127.0.0.1 for the test (skips when none is installed)."""
    with RedisServer(tmp_path / "redis") as server:
        yield server


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only() -> Iterator[None]:
    """The secrets a test registers for redaction (:mod:`deploybot.support.redact`, a set
    for the whole process) are forgotten after it: one test's secret ``bbbbbbbbbb`` masked
    ordinary text in the next test of the same xdist worker."""
    from deploybot.support import redact

    saved = set(redact._secrets)
    yield
    redact._secrets.clear()
    redact._secrets.update(saved)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    """A headless Chromium of its own (:mod:`tests.browser`); skips when none is installed."""
    if find_programs() is None:
        pytest.skip(BROWSER_SKIP)
    window = Browser(tmp_path / "chromium-profile")
    try:
        yield window
    finally:
        window.quit()


# Hypothesis profiles: ``make test`` checks 100 examples per property (Hypothesis's own
# default; the four incremental-equals-full properties are a fifth of the suite's time, and
# each example is up to 12 commits, each built both ways); ``make test-deep`` (the profile
# ``long``) checks 2,000.
from hypothesis import HealthCheck, settings  # noqa: E402

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "deploybot", max_examples=100, deadline=None, suppress_health_check=_SLOW_OK
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_OK)
settings.load_profile("deploybot")
