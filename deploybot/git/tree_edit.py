"""Edit a git tree in place of rewriting it: only the trees on changed paths are written.

An incremental build changes a handful of files of a publish tree that may hold 10k; rebuilding
every tree object (``dulwich.index.commit_tree``) would cost time in the tree's size.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator, Mapping

from dulwich.objects import ObjectID, Tree
from dulwich.repo import Repo

from deploybot.git.repository import encode_path, oid, writing


def edit_tree(
    repo: Repo, tree_id: str | None, changes: Mapping[str, tuple[int, str] | None]
) -> str:
    """Return the id (40 hex) of ``tree_id`` with ``changes`` applied; write only the trees
    on the changed paths, so the cost follows the change, not the tree's size.

    ``changes`` maps a file path to ``(mode, blob hex)`` (add or replace) or ``None``
    (delete; absent paths are ignored). Folders left empty disappear. ``tree_id`` ``None``
    is the empty tree. Blobs must already be in ``repo``.

    Raises:
        ValueError: a path would be both a file and a folder (e.g. ``a`` and ``a/b``).
        DiskFullError: the disk is full (see :func:`deploybot.git.repository.writing`).
        KeyError: ``tree_id`` or a tree under it is not in ``repo``.
    """
    nested: dict[bytes, object] = {}
    for path, entry in changes.items():
        parts = encode_path(path).split(b"/")
        node = nested
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"build output has both a file and a folder {path!r}")
            node = child
        if isinstance(node.get(parts[-1]), dict):
            raise ValueError(f"build output has both a file and a folder {path!r}")
        node[parts[-1]] = entry
    with writing(repo):
        new = _edit(repo, oid(tree_id) if tree_id else None, nested)
        if new is None:
            empty = Tree()
            repo.object_store.add_object(empty)
            return empty.id.decode("ascii")
    return new.decode("ascii")


def _edit(repo: Repo, tree_id: bytes | None, changes: Mapping[bytes, object]) -> bytes | None:
    """Apply nested ``changes`` to one tree; return its new id (``None`` when empty)."""
    tree = _copy_of(repo, tree_id)
    for name, change in changes.items():
        current = tree[name] if name in tree else None  # noqa: SIM401 (Tree has no get)
        if isinstance(change, dict):
            if current is not None and not stat.S_ISDIR(current[0]):
                if any(v is not None for v in _leaves(change)):
                    raise ValueError(f"build output has both a file and a folder {name!r}")
                continue
            sub = _edit(repo, current[1] if current else None, change)
            if sub is None:
                if current is not None:
                    del tree[name]
            else:
                tree.add(name, stat.S_IFDIR, ObjectID(sub))
        elif change is None:
            if current is not None and not stat.S_ISDIR(current[0]):
                del tree[name]
        else:
            if current is not None and stat.S_ISDIR(current[0]):
                raise ValueError(f"build output has both a file and a folder {name!r}")
            assert isinstance(change, tuple)
            mode, sha = change
            tree.add(name, int(mode), oid(str(sha)))
    if not len(tree):
        return None
    if tree.id not in repo.object_store:
        repo.object_store.add_object(tree)
    return bytes(tree.id)


def _leaves(nested: Mapping[bytes, object]) -> Iterator[object]:
    for value in nested.values():
        if isinstance(value, dict):
            yield from _leaves(value)
        else:
            yield value


def replace_folder(repo: Repo, tree_id: str | None, folder: str, subtree: str | None) -> str:
    """Return the id (40 hex) of ``tree_id`` with the folder ``folder`` (``preview/x``, no
    slash at either end) replaced by the tree ``subtree`` (40 hex, in ``repo``), or removed
    when ``subtree`` is None (or the empty tree); every other path keeps its entry. Only the
    trees on the way to ``folder`` are written. Folders left empty disappear.

    Raises:
        ValueError: a path on the way to ``folder`` is a file, or ``folder`` is empty.
        DiskFullError: the disk is full (see :func:`deploybot.git.repository.writing`).
        KeyError: ``tree_id`` or a tree on the way is not in ``repo``.
    """
    parts = encode_path(folder).split(b"/")
    if not folder or any(not part for part in parts):
        raise ValueError(f"not a folder path: {folder!r}")
    with writing(repo):
        leaf = oid(subtree) if subtree else None
        new = _put(repo, oid(tree_id) if tree_id else None, parts, leaf)
        if new is None:
            empty = Tree()
            repo.object_store.add_object(empty)
            return empty.id.decode("ascii")
    return new.decode("ascii")


def _put(repo: Repo, tree_id: bytes | None, parts: list[bytes], leaf: bytes | None) -> bytes | None:
    """``tree_id`` with ``parts`` (one folder path) set to the tree ``leaf`` (None: removed);
    its new id, None when it is left empty."""
    tree = _copy_of(repo, tree_id)
    name = parts[0]
    current = tree[name] if name in tree else None  # noqa: SIM401 (Tree has no get)
    if current is not None and not stat.S_ISDIR(current[0]):
        raise ValueError(f"{name.decode('utf-8', 'replace')!r} is a file, not a folder")
    if len(parts) > 1:
        child = _put(repo, current[1] if current else None, parts[1:], leaf)
    else:
        child = leaf if leaf is not None and len(_tree(repo, leaf)) else None
    if child is None:
        if current is not None:
            del tree[name]
    else:
        tree.add(name, stat.S_IFDIR, ObjectID(child))
    if not len(tree):
        return None
    if tree.id not in repo.object_store:
        repo.object_store.add_object(tree)
    return bytes(tree.id)


def _tree(repo: Repo, tree_id: bytes) -> Tree:
    tree = repo[tree_id]
    if not isinstance(tree, Tree):
        raise KeyError(tree_id.decode("ascii"))
    return tree


def _copy_of(repo: Repo, tree_id: bytes | None) -> Tree:
    """A new tree object holding the entries of ``tree_id`` (none for None), to edit.
    Raises KeyError when ``tree_id`` names no tree."""
    tree = Tree()
    if tree_id is not None:
        old = repo[tree_id]
        if not isinstance(old, Tree):
            raise KeyError(tree_id.decode("ascii"))
        for entry in old.iteritems():
            tree.add(entry.path, entry.mode, entry.sha)
    return tree
