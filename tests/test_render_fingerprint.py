"""The renderer's fingerprint reads its libraries' versions as importlib.metadata does,
without importing it (deploybot.render.fingerprint.library_versions)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from deploybot.render import fingerprint


def test_the_versions_are_importlib_metadata_s() -> None:
    expected = {}
    for name in fingerprint.OUTPUT_LIBRARIES:
        try:
            expected[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected[name] = "absent"
    assert fingerprint.library_versions() == expected
    assert list(expected) == list(fingerprint.OUTPUT_LIBRARIES)


def test_the_first_dist_info_on_the_path_wins_and_a_version_change_changes_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = fingerprint.renderer_digest()
    (tmp_path / "Python_Liquid-99.1.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert fingerprint.library_versions()["python-liquid"] == "99.1"
    assert fingerprint.renderer_digest() != before
