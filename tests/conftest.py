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
