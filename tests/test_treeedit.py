"""Tests for deploybot.git.tree_edit: editing a tree gives the very tree a full rewrite would.

The oracle is :func:`deploybot.git.repository.write_tree` (dulwich's ``commit_tree``, itself checked
against ``git ls-tree`` in test_gitutil) of the expected file list, and ``git fsck``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deploybot.git import repository
from deploybot.git.repository import MODE_FILE
from deploybot.git.tree_edit import edit_tree

BEFORE = {"index.html": b"home", "a/b/c.html": b"c", "a/d.html": b"d", "x": b"a file"}


def build(tmp_path: Path) -> tuple[Path, str, dict[str, tuple[int, str]]]:
    """A bare repo holding the tree of :data:`BEFORE`; return (path, tree id, its entries)."""
    repo_path = tmp_path / "r.git"
    with repository.bare_repo(repo_path) as repo:
        entries = {
            p: (MODE_FILE, sha) for p, sha in repository.blob_ids(repo, BEFORE.items()).items()
        }
        return repo_path, repository.write_tree(repo, entries), entries


def test_edit_equals_a_full_rewrite(tmp_path: Path) -> None:
    repo_path, tree, entries = build(tmp_path)
    with repository.bare_repo(repo_path) as repo:
        new_blob = repository.add_blob(repo, b"new")
        changes: dict[str, tuple[int, str] | None] = {
            "index.html": (MODE_FILE, new_blob),  # replace
            "n/e/w.html": (MODE_FILE, new_blob),  # add under new folders
            "a/b/c.html": None,  # delete: the folder a/b becomes empty and goes
            "absent.html": None,  # deleting what is not there is ignored
            "x/y": None,  # so is deleting under a file
        }
        edited = edit_tree(repo, tree, changes)
        expected = {p: e for p, e in entries.items() if p != "a/b/c.html"}
        expected |= {"index.html": (MODE_FILE, new_blob), "n/e/w.html": (MODE_FILE, new_blob)}
        assert edited == repository.write_tree(repo, expected)
        assert repository.tree_entries(repo, edited) == expected
        assert edit_tree(repo, tree, {}) == tree
        assert edit_tree(repo, None, {"x": (MODE_FILE, new_blob)}) == repository.write_tree(
            repo, {"x": (MODE_FILE, new_blob)}
        )
        everything: dict[str, tuple[int, str] | None] = {p: None for p in entries}
        assert edit_tree(repo, tree, everything) == repository.write_tree(repo, {})
    subprocess.run(["git", "-C", str(repo_path), "fsck", "--strict"], check=True)


@pytest.mark.parametrize(
    "path",
    ["x/y", "a", "a/b"],
    ids=["folder-under-a-file", "file-over-a-folder", "file-over-a-subfolder"],
)
def test_file_and_folder_clash_is_refused(tmp_path: Path, path: str) -> None:
    repo_path, tree, _ = build(tmp_path)
    with repository.bare_repo(repo_path) as repo:
        blob = repository.add_blob(repo, b"clash")
        with pytest.raises(ValueError, match="both a file and a folder"):
            edit_tree(repo, tree, {path: (MODE_FILE, blob)})


def test_clash_within_the_changes_is_refused(tmp_path: Path) -> None:
    repo_path, _, _ = build(tmp_path)
    with repository.bare_repo(repo_path) as repo:
        blob = repository.add_blob(repo, b"clash")
        for changes in (
            {"p": (MODE_FILE, blob), "p/q": (MODE_FILE, blob)},
            {"p/q": (MODE_FILE, blob), "p": (MODE_FILE, blob)},
        ):
            with pytest.raises(ValueError, match="both a file and a folder"):
                edit_tree(repo, None, changes)
