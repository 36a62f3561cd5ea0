"""Tests for deploybot.git.tree: lazy tree lookups, the folder-by-folder tree diff and the
objects a fast-forward push sends (git itself is the oracle: ``diff-tree``, ``fsck``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.git import repository
from deploybot.git.repository import MODE_FILE, GitTree
from deploybot.git.tree import new_objects
from deploybot.git.tree_edit import edit_tree
from deploybot.support.errors import PublishError
from tests.gitrepo import SNAPSHOT_AUTHOR as AUTHOR
from tests.gitrepo import SNAPSHOT_WHEN as WHEN
from tests.gitrepo import commit_snapshot
from tests.test_gitutil import git


def test_lazy_lookups_match_the_full_index(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    files = {"a/b/c.md": b"1", "a/d.md": b"2", "e.md": b"3"}
    commit = commit_snapshot(repo_path, files)
    tree_id = git(repo_path, "rev-parse", f"{commit}^{{tree}}").strip()
    with GitTree(repo_path, tree_id) as lazy, GitTree(repo_path, tree_id) as full:
        full.entries()
        for path in [*files, "a", "a/b", "a/x.md", "e.md/f", "", "a//d.md", "zz/y"]:
            for tree in (lazy, full):
                if path in files:
                    assert tree.read(path) == files[path]
                else:
                    with pytest.raises(KeyError):
                        tree.blob_id(path)
    with pytest.raises(KeyError):
        GitTree(repo_path, "0" * 40)


def test_changed_paths_across_file_and_folder_swaps(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    old = {"x": b"file", "d/a.md": b"1", "d/s/b.md": b"2", "keep/k.md": b"k"}
    new = {"x/inner.md": b"now a folder", "d": b"now a file", "keep/k.md": b"k"}
    c1 = commit_snapshot(repo_path, old)
    c2 = commit_snapshot(repo_path, new, parents=(c1,))
    with repository.bare_repo(repo_path) as repo:
        t1, t2 = repository.commit_tree_id(repo, c1), repository.commit_tree_id(repo, c2)
        changed = repository.changed_paths(repo, t1, t2)
        assert repository.changed_paths(repo, t2, t1) == changed
    oracle = git(repo_path, "diff-tree", "-r", "--no-renames", "--name-only", c1, c2).split()
    assert changed == set(oracle)


def test_push_sends_only_what_the_new_commit_adds(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "remote.git", tmp_path / "mirror.git"
    files = {f"p/{i:03d}/index.html": b"page %d" % i for i in range(50)}
    c1 = commit_snapshot(remote, files)
    with repository.bare_repo(mirror) as repo:
        repository.fetch_refs(str(remote), repo, ["refs/heads/main"], PublishError)
        old_tree = repository.commit_tree_id(repo, c1)
        sent = {"p/007/index.html": b"changed", "new/one.html": b"new"}
        edits = {p: (MODE_FILE, repository.add_blob(repo, data)) for p, data in sent.items()}
        tree = edit_tree(repo, old_tree, {**edits, "p/001/index.html": None})
        c2 = repository.make_commit(repo, tree, [c1], author=AUTHOR, message="m\n", when=WHEN)
        new = new_objects(repo, {repository.oid(c1)}, {repository.oid(c2)})
        assert new is not None
        assert len(new) == 1 + 4 + 2  # commit; root, p, p/007, new trees; two blobs
        repository.push_refs(str(remote), repo, {"refs/heads/main": (c1, c2)}, PublishError)
    git(remote, "fsck", "--strict")
    assert git(remote, "show", "main:p/007/index.html") == "changed"


def test_a_first_push_sends_commits_then_trees_then_blobs(tmp_path: Path) -> None:
    """git's pack order (compute_write_order): the server keeps the pack as sent, and its
    connectivity check reads every tree, so the trees must not be spread among the pages."""
    remote, mirror = tmp_path / "remote.git", tmp_path / "mirror.git"
    for bare in (remote, mirror):
        git(tmp_path, "init", "-q", "--bare", str(bare))
    git(remote, "config", "receive.unpackLimit", "1")  # keep the pack as sent, as for a site
    files = {f"2020/{i:02d}/post-{i}.html": b"page %d" % i for i in range(8)}  # 10 trees
    with repository.bare_repo(mirror) as repo:
        blobs = {p: (MODE_FILE, repository.add_blob(repo, data)) for p, data in files.items()}
        tree = edit_tree(repo, None, blobs)
        c1 = repository.make_commit(repo, tree, [], author=AUTHOR, message="m\n", when=WHEN)
        new = new_objects(repo, set(), {repository.oid(c1)})
        assert new is not None
        kinds = [repo[sha].type_name for sha in new]
        assert kinds == [b"commit"] + [b"tree"] * (1 + 1 + 8) + [b"blob"] * 8
        repository.push_refs(str(remote), repo, {"refs/heads/main": (None, c1)}, PublishError)
    git(remote, "fsck", "--strict")
    packed = git(remote, "verify-pack", "-v", *map(str, remote.glob("objects/pack/*.idx")))
    order = [line.split()[1] for line in packed.splitlines() if line[:1].isalnum() and " " in line]
    order = [kind for kind in order if kind in ("commit", "tree", "blob")]
    assert order == ["commit"] + ["tree"] * 10 + ["blob"] * 8
    assert git(remote, "show", "main:2020/03/post-3.html") == "page 3"
