"""Shared fixtures: where ../shared is, and small real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
TVM = SHARED / "corpus" / "tvm-site"


@pytest.fixture
def tvm_site() -> Path:
    """The real tvm-site corpus folder; skips the test when ../shared is missing."""
    if not (TVM / "source" / "_config.yml").is_file():
        pytest.skip(f"the tvm-site corpus is missing at {TVM}")
    return TVM


# Hypothesis profiles (appended for the incremental-build tests): the default run checks 200
# examples per property; ``pytest --hypothesis-profile=long`` checks 2,000.
from hypothesis import HealthCheck, settings  # noqa: E402

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "deploybot", max_examples=200, deadline=None, suppress_health_check=_SLOW_OK
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_OK)
settings.load_profile("deploybot")
