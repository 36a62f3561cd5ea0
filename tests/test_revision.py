"""Revision syntax against git rev-parse itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.git.rev_parse import resolve_commit
from tests.gitcli import run_git


def git(repo: Path, *args: str) -> str:
    return run_git(repo, *args, name="A", email="a@x").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    for i in range(3):
        (tmp_path / "f").write_text(f"{i}\n")
        git(tmp_path, "add", "f")
        git(tmp_path, "commit", "-qm", f"c{i}")
    git(tmp_path, "checkout", "-q", "-b", "side", "main~2")
    (tmp_path / "g").write_text("side\n")
    git(tmp_path, "add", "g")
    git(tmp_path, "commit", "-qm", "side")
    git(tmp_path, "checkout", "-q", "main")
    git(tmp_path, "merge", "-q", "--no-ff", "-m", "merge", "side")
    return tmp_path


@pytest.mark.parametrize(
    "rev", ["HEAD", "main", "HEAD~1", "HEAD^", "HEAD^2", "main~2", "HEAD~", "HEAD^1~1", "side^0"]
)
def test_same_as_git(repo: Path, rev: str) -> None:
    with Repo(str(repo)) as r:
        assert resolve_commit(r, rev).id.decode() == git(repo, "rev-parse", rev)


@pytest.mark.parametrize("rev", ["nope", "HEAD~9", "HEAD^3", "main~1^2"])
def test_unknown(repo: Path, rev: str) -> None:
    with Repo(str(repo)) as r, pytest.raises(KeyError, match="unknown revision"):
        resolve_commit(r, rev)
