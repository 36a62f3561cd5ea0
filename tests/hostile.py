"""Test helper: commit trees git itself would refuse (entries named ``..``, ``.git``, ``a/b``,
with CR/LF or bytes that are not UTF-8), written object by object with dulwich, whose
``Tree.add`` does not check names."""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path

from dulwich.objects import Blob, Tree

from deploybot.git import repository
from tests.gitrepo import SNAPSHOT_AUTHOR, SNAPSHOT_WHEN

Names = tuple[bytes, ...]
"""A path as its raw tree entry names, one per folder level: ``(b"..", b"x")``."""


def commit_names(
    repo_path: Path, files: Mapping[Names, bytes], *, branch: str = "main", parent: str = ""
) -> str:
    """Commit ``files`` ({entry names: bytes}) as the whole tree of a new commit on ``branch``
    of the bare repository ``repo_path`` (made if missing); return the commit id. HEAD
    points at ``branch``."""
    with repository.bare_repo(repo_path) as repo:
        nested: dict[bytes, object] = {}
        for names, data in files.items():
            node = nested
            for name in names[:-1]:
                child = node.setdefault(name, {})
                assert isinstance(child, dict)
                node = child
            blob = Blob.from_string(data)
            repo.object_store.add_object(blob)
            node[names[-1]] = blob.id
        tree_id = _write(repo.object_store, nested)
        commit = repository.make_commit(
            repo,
            tree_id.decode("ascii"),
            [parent] if parent else [],
            author=SNAPSHOT_AUTHOR,
            message="hostile\n",
            when=SNAPSHOT_WHEN,
        )
        repository.set_local_refs(repo, {f"refs/heads/{branch}": commit})
        repo.refs.set_symbolic_ref(b"HEAD", f"refs/heads/{branch}".encode())
    return commit


def _write(store: object, nested: Mapping[bytes, object]) -> bytes:
    tree = Tree()
    for name, value in nested.items():
        if isinstance(value, dict):
            tree.add(name, stat.S_IFDIR, _write(store, value))
        else:
            assert isinstance(value, bytes)
            tree.add(name, repository.MODE_FILE, value)
    store.add_object(tree)  # type: ignore[attr-defined]
    return bytes(tree.id)
