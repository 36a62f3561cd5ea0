"""Reading git trees without a work tree: paths, lazy lookups, tree diffs and the objects a
fast-forward push must send. Costs follow the folders a change touches, not the tree's size.

Paths are ``str``, decoded from git's bytes as UTF-8 with ``surrogateescape`` so that any byte
sequence survives the round trip. Object ids are 40-hex ``str`` (dulwich's ``bytes`` inside).
Re-exported by :mod:`deploybot.git.repository`.
"""

from __future__ import annotations

import os
import stat
import weakref
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

from dulwich.errors import ObjectFormatException
from dulwich.object_store import iter_tree_contents
from dulwich.objects import S_ISGITLINK, Blob, Commit, ObjectID, Tree
from dulwich.repo import Repo

from deploybot.git import path_rules
from deploybot.git.object_size import object_size
from deploybot.git.tree_check import damage_found, malformed_tree
from deploybot.support.errors import SourceError


def encode_path(path: str) -> bytes:
    """Return git's bytes for ``path`` (UTF-8, lone surrogates back to raw bytes)."""
    return path.encode("utf-8", "surrogateescape")


def decode_path(path: bytes) -> str:
    """Return ``path`` as ``str`` (UTF-8; undecodable bytes become lone surrogates)."""
    return path.decode("utf-8", "surrogateescape")


def oid(hexsha: str) -> ObjectID:
    """Return a 40-hex ``str`` object id as dulwich's ``bytes`` id."""
    return ObjectID(hexsha.encode("ascii"))


def is_object_id(text: str) -> bool:
    """Return whether ``text`` is a full object id: 40 lower-case hex digits, as git prints."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def tree_entries(
    repo: Repo, tree_id: str | None, *, include_gitlinks: bool = False
) -> dict[str, tuple[int, str]]:
    """Return every blob under the tree ``tree_id`` as ``{path: (mode, blob hex)}``.

    Submodules (gitlinks, mode 160000) are skipped unless ``include_gitlinks``. ``tree_id``
    ``None`` gives ``{}``. Raises ``KeyError`` when the tree is not in ``repo``.
    """
    if tree_id is None:
        return {}
    entries: dict[str, tuple[int, str]] = {}
    for entry in iter_tree_contents(repo.object_store, oid(tree_id)):
        if S_ISGITLINK(entry.mode) and not include_gitlinks:
            continue
        entries[decode_path(entry.path)] = (entry.mode, entry.sha.decode("ascii"))
    return entries


def count_files(repo: Repo, tree_id: str | None, limit: int) -> int:
    """Return how many files (every entry that is not a folder, gitlinks included) the tree
    ``tree_id`` holds, counting no further than ``limit``: a tree of ``limit`` files or more
    gives ``limit``, having read only the folders on the way to its first ``limit`` files (the
    publish guard asks whether a published tree is larger than a few files, and a full walk of
    a 1,000-post site reads 1,000 trees). ``tree_id`` ``None`` gives 0. Raises ``KeyError``
    when a tree is not in ``repo``."""
    if tree_id is None or limit <= 0:
        return 0
    count = 0
    for _entry in iter_tree_contents(repo.object_store, oid(tree_id)):
        count += 1
        if count >= limit:
            break
    return count


def changed_paths(
    repo: Repo, old_tree: str | None, new_tree: str | None, *, include_gitlinks: bool = False
) -> frozenset[str]:
    """Return the file paths that differ between two trees (40-hex ids, ``None`` = empty).

    Adds, edits (content or mode) and deletes; a rename counts as both its old and its new
    path. Submodule entries are ignored, as :class:`GitTree` lists none, unless
    ``include_gitlinks`` (the render stage warns about each submodule). Only subtrees
    whose ids differ are read, and each pair of trees is compared as two sets of entries,
    so the cost follows the change (and the size of the folders it touches), not the tree.
    Raises ``KeyError`` when a tree is not in ``repo``.
    """
    old, new = (oid(old_tree) if old_tree else None), (oid(new_tree) if new_tree else None)
    return frozenset(
        decode_path(path)
        for path, a, b in iter_changes(repo, old, new)
        if include_gitlinks or any(side is not None and not _is_gitlink(side[0]) for side in (a, b))
    )


Entry = tuple[int, bytes]
"""A tree entry that is not a tree: (git mode, object id as 40 hex bytes)."""


def iter_changes(
    repo: Repo, old_id: bytes | None, new_id: bytes | None, prefix: bytes = b""
) -> Iterator[tuple[bytes, Entry | None, Entry | None]]:
    """Yield ``(path, old entry, new entry)`` for each non-tree path that differs between two
    trees (``None`` = the empty tree, or the path absent on that side), in no set order.

    Subtrees with the same id on both sides are never read, so a one-file change in a site of
    10,000 pages reads a handful of trees, as git's ``diff-tree`` does. A path that is a file
    on one side and a folder on the other yields the file and every path under the folder.
    The walk keeps its own stack, so a tree of any depth is read.
    Raises ``KeyError`` when a tree is not in ``repo``, ``SourceError`` naming the folder
    when one cannot be parsed (:func:`read_tree`).
    """
    pending = [(old_id, new_id, prefix)]
    while pending:
        old_id, new_id, prefix = pending.pop()
        if old_id == new_id:
            continue
        old, new = read_tree(repo, old_id, prefix), read_tree(repo, new_id, prefix)
        for name in old.keys() | new.keys():
            a, b = old.get(name), new.get(name)
            if a == b:
                continue
            path = prefix + name
            a_dir = a is not None and stat.S_ISDIR(a[0])
            b_dir = b is not None and stat.S_ISDIR(b[0])
            if a_dir or b_dir:
                old_sub = a[1] if a is not None and a_dir else None
                new_sub = b[1] if b is not None and b_dir else None
                pending.append((old_sub, new_sub, path + b"/"))
            a_file, b_file = (None if a_dir else a), (None if b_dir else b)
            if a_file is not None or b_file is not None:
                yield path, a_file, b_file


def read_tree(repo: Repo, tree_id: bytes | None, folder: bytes = b"") -> dict[bytes, Entry]:
    """Return ``{name: (mode, id)}`` of the tree ``tree_id`` (``None``: empty) at ``folder``
    (for messages; ``b""`` or ending in ``/``).

    Raises:
        KeyError: the tree is not in ``repo``.
        SourceError: the object is not a tree, or cannot be parsed (a NUL byte in an entry
            name, a bad mode): names ``folder`` and the entry, as far as it can be read
            (:func:`~deploybot.git.tree_check.malformed_tree`).
        DamageFound: the object's bytes do not hash to ``tree_id``: damaged on disk
            (:class:`~deploybot.git.tree_check.DamageFound`).
    """
    if tree_id is None:
        return {}
    try:
        tree = repo[tree_id]
    except ObjectFormatException as exc:
        raise malformed_tree(repo, tree_id, folder) from exc
    if not isinstance(tree, Tree):  # a folder entry naming a blob or a commit
        if tree.id != tree_id:  # or an object file overwritten with another object's
            raise damage_found(repo, tree_id)
        where = decode_path(folder).rstrip("/") or "(the root folder)"
        raise SourceError(
            f"refused path: a folder whose git object is a {tree.type_name.decode()}",
            path_rules.shortened(path_rules.printable(where)),
        )
    return {entry.path: (entry.mode, entry.sha) for entry in tree.iteritems()}


def _is_gitlink(mode: int | None) -> bool:
    return mode is not None and S_ISGITLINK(mode)


def new_objects(
    repo: Repo, have: AbstractSet[ObjectID], want: AbstractSet[ObjectID]
) -> list[ObjectID] | None:
    """Return the objects a push of ``want`` must send when every wanted commit's parents
    are in ``have`` (the fast-forward a build makes) or it has none (a first build): each
    commit, and what its tree has that its first parent's tree has not at the same path
    (only differing subtrees are read, so the cost follows the change). ``None`` otherwise:
    the caller lets dulwich walk the history. An object the remote has elsewhere may be sent
    again, which git accepts.

    The commits come first, then every tree, then the blobs: git's own pack order
    (``builtin/pack-objects.c``, ``compute_write_order``). The server keeps the pack as it
    is sent, and its connectivity check (``rev-list --objects``) reads every tree of the
    published site on each push: with the trees together it maps a few MB of the pack,
    not all of it (54 MB of 55 at 10,000 posts when trees and pages alternated)."""
    commits: dict[ObjectID, None] = {}
    trees: dict[ObjectID, None] = {}
    blobs: dict[ObjectID, None] = {}
    for sha in want - have:
        commit = repo[sha]
        if not isinstance(commit, Commit):
            return None
        if any(parent not in have for parent in commit.parents):
            return None
        parent_tree = None
        if commit.parents:
            parent = repo[commit.parents[0]]
            if not isinstance(parent, Commit):
                return None
            parent_tree = parent.tree
        commits[sha] = None
        _new_tree_objects(repo, parent_tree, commit.tree, trees, blobs)
    return [*commits, *trees, *blobs]


def _new_tree_objects(
    repo: Repo,
    old_id: ObjectID | None,
    new_id: ObjectID,
    trees: dict[ObjectID, None],
    blobs: dict[ObjectID, None],
) -> None:
    pending: list[tuple[ObjectID | None, ObjectID]] = [(old_id, new_id)]
    while pending:
        old_id, new_id = pending.pop()
        if old_id == new_id or new_id in trees:
            continue
        trees[new_id] = None
        old = read_tree(repo, old_id)
        for name, (mode, sha) in read_tree(repo, new_id).items():
            before = old.get(name)
            if before is not None and before[1] == sha:
                continue
            if stat.S_ISDIR(mode):
                below = before[1] if before is not None and stat.S_ISDIR(before[0]) else None
                pending.append((None if below is None else ObjectID(below), ObjectID(sha)))
            elif not S_ISGITLINK(mode):
                blobs[ObjectID(sha)] = None


def _check_names(folder: bytes, items: Mapping[bytes, object]) -> None:
    """Raise ``SourceError`` for the first (sorted) refused name among ``items``."""
    for name in sorted(items):
        path_rules.check_name(decode_path(name), decode_path(folder))


class GitTree:
    """A :class:`~deploybot.render.read.source.SourceTree` over a tree object in a bare repository.

    Lazy: :meth:`blob_id` and :meth:`read` walk only the folders on the path asked for (each
    folder's tree object is read once), so an incremental build that reads a few files of a
    10k-file tree never lists it; :meth:`paths` and :meth:`entries` index the whole tree
    (``{path: (mode, blob hex)}``, submodules skipped) on first use. Objects are read through
    a repository handle opened on first use; call :meth:`close` (or use it as a context
    manager) to release it; a later read reopens it. Each folder's entry names are checked
    by :mod:`deploybot.git.path_rules` when the folder is first read (lookups and listings raise
    ``SourceError`` naming a ``..``, ``.git``, control-character or non-UTF-8 entry).

    Args:
        repo_path: the bare repository holding the tree.
        tree_id: the tree's 40-hex id.

    Raises:
        KeyError: when the tree is not in the repository.
        SourceError: when the root tree object cannot be parsed (:func:`read_tree`).
    """

    def __init__(self, repo_path: Path, tree_id: str) -> None:
        self.repo_path = Path(repo_path)
        self.tree_id = tree_id
        self._repo: Repo | None = None
        self._entries: dict[str, tuple[int, str]] | None = None
        self._gitlinks: list[str] = []
        self._sorted: list[str] | None = None
        self._folders: dict[bytes, dict[bytes, tuple[int, bytes]] | None] = {}
        _LIVE.add(self)
        repo = Repo(str(self.repo_path))
        try:
            read_tree(repo, oid(tree_id))  # KeyError when absent, SourceError when malformed
        finally:
            repo.close()

    def _handle(self) -> Repo:
        if self._repo is None:
            self._repo = Repo(str(self.repo_path))
        return self._repo

    def entries(self) -> Mapping[str, tuple[int, str]]:
        """Return ``{path: (mode, blob hex)}`` for every file (and symlink) in the tree.

        Raises ``SourceError`` when a name in the tree is refused (:mod:`deploybot.git.path_rules`).
        """
        if self._entries is None:
            self._entries = dict(self._walk(b""))
        return self._entries

    def _walk(self, folder: bytes) -> Iterator[tuple[str, tuple[int, str]]]:
        items = self._folder(folder)
        for name, (mode, sha) in (items or {}).items():
            path = folder + b"/" + name if folder else name
            if stat.S_ISDIR(mode):
                yield from self._walk(path)
            elif S_ISGITLINK(mode):
                self._gitlinks.append(decode_path(path))
            else:
                yield decode_path(path), (mode, sha.decode("ascii"))

    def paths(self) -> Iterator[str]:
        """Yield every file path in the tree, sorted."""
        if self._sorted is None:
            self._sorted = sorted(self.entries())
        return iter(self._sorted)

    def _folder(self, folder: bytes) -> dict[bytes, tuple[int, bytes]] | None:
        """Return ``{name: (mode, sha)}`` of the folder ``folder`` (``b""``: the root), or
        ``None`` when there is no such folder. Every name in a folder is checked when the
        folder is first read, so nothing reads through a ``..`` or ``.git`` entry: raises
        ``SourceError`` naming the first refused one (:mod:`deploybot.git.path_rules`)."""
        if folder not in self._folders:
            if not folder:
                tree_id: bytes | None = oid(self.tree_id)
            else:
                parent, _, name = folder.rpartition(b"/")
                items = self._folder(parent)
                entry = None if items is None else items.get(name)
                tree_id = entry[1] if entry is not None and stat.S_ISDIR(entry[0]) else None
            prefix = folder + b"/" if folder else b""
            items = None if tree_id is None else read_tree(self._handle(), tree_id, prefix)
            if items is not None:
                _check_names(folder, items)
            self._folders[folder] = items
        return self._folders[folder]

    def _entry(self, path: str) -> tuple[int, str]:
        if self._entries is not None:
            return self._entries[path]
        folder, _, name = encode_path(path).rpartition(b"/")
        items = self._folder(folder)
        entry = None if items is None or not name else items.get(name)
        if entry is None or stat.S_ISDIR(entry[0]) or S_ISGITLINK(entry[0]):
            raise KeyError(path)
        return entry[0], entry[1].decode("ascii")

    def blob_id(self, path: str) -> str:
        """Return the blob id (40 hex) of ``path``. Raises ``KeyError`` when absent."""
        return self._entry(path)[1]

    def is_symlink(self, path: str) -> bool:
        """Return whether ``path`` is a symlink (its blob is the link target)."""
        return stat.S_ISLNK(self._entry(path)[0])

    def submodules(self) -> list[str]:
        """Return the paths of the submodules (gitlinks) in the tree, sorted (lists the
        tree, as :meth:`entries`)."""
        self.entries()
        return sorted(self._gitlinks)

    def is_submodule(self, path: str) -> bool:
        """Return whether ``path`` is a submodule (gitlink) of the tree."""
        folder, _, name = encode_path(path).rpartition(b"/")
        items = self._folder(folder)
        entry = None if items is None or not name else items.get(name)
        return entry is not None and S_ISGITLINK(entry[0])

    def size(self, path: str) -> int:
        """Return the size in bytes of ``path``'s blob from its object header (the blob is
        not inflated; :func:`~deploybot.git.object_size.object_size`). Raises ``KeyError`` when
        absent."""
        return object_size(self._handle(), self._entry(path)[1])

    def read(self, path: str) -> bytes:
        """Return the bytes of ``path``. Raises ``KeyError`` when absent, ``SourceError``
        when its entry names an object that is not a blob."""
        blob = self._handle()[oid(self._entry(path)[1])]
        if not isinstance(blob, Blob):  # a file entry naming a tree or a commit
            raise SourceError(
                f"refused path: a file whose git object is a {blob.type_name.decode()}",
                path_rules.shortened(path_rules.printable(path)),
            )
        return blob.as_raw_string()

    def close(self) -> None:
        """Release the repository handle used for reads (safe to call more than once)."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    def __enter__(self) -> GitTree:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GitTree({str(self.repo_path)!r}, {self.tree_id!r})"

    def _forget_handle(self) -> None:
        """Drop the repository handle without closing it (see :func:`_after_fork`)."""
        if self._repo is not None:
            _INHERITED.append(self._repo)
            self._repo = None


_LIVE: weakref.WeakSet[GitTree] = weakref.WeakSet()
_INHERITED: list[Repo] = []


def _after_fork() -> None:
    """In a forked child (a render worker): make every tree open its own repository
    handle. The inherited one shares its pack files' offsets with the parent and the other
    children, so interleaved seeks and reads would return the wrong bytes."""
    for tree in list(_LIVE):
        tree._forget_handle()


os.register_at_fork(after_in_child=_after_fork)
