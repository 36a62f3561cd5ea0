"""Small dulwich helpers shared by the watch, publish and notify stages.

Everything here works on bare repositories, with no work tree and no index: trees are read and
written as objects, refs are fetched into a local *mirror* (a bare repo whose ``refs/heads/*``
mirror the remote's, as last seen) and pushed with a compare-and-swap on the advertised tips.

Paths are ``str``, decoded from git's bytes as UTF-8 with ``surrogateescape`` so that any byte
sequence survives the round trip. Object ids are 40-hex ``str``.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from dulwich.client import (
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    LocalGitClient,
    SubprocessGitClient,
    get_transport_and_path,
)
from dulwich.errors import GitProtocolError, NotGitRepository, SendPackError
from dulwich.index import commit_tree
from dulwich.object_store import iter_tree_contents
from dulwich.objects import S_ISGITLINK, Blob, Commit, ObjectID, Tree
from dulwich.pack import UnpackedObject, pack_objects_to_data
from dulwich.refs import Ref
from dulwich.repo import Repo

from deploybot.errors import TemporaryError

MODE_FILE = 0o100644
"""Mode of a regular, non-executable file in a git tree."""

# What dulwich raises when a remote cannot be reached or talked to.
_TRANSPORT_ERRORS = (
    OSError,
    GitProtocolError,
    NotGitRepository,
    HTTPUnauthorized,
    HTTPProxyUnauthorized,
)


class RemoteMovedError(Exception):
    """A pushed ref's advertised tip was not the one the new commit was built on.

    Raised by :func:`push_refs` before any pack is sent; the caller re-fetches and rebuilds.
    """


def encode_path(path: str) -> bytes:
    """Return git's bytes for ``path`` (UTF-8, lone surrogates back to raw bytes)."""
    return path.encode("utf-8", "surrogateescape")


def decode_path(path: bytes) -> str:
    """Return ``path`` as ``str`` (UTF-8; undecodable bytes become lone surrogates)."""
    return path.decode("utf-8", "surrogateescape")


def oid(hexsha: str) -> ObjectID:
    """Return a 40-hex ``str`` object id as dulwich's ``bytes`` id."""
    return ObjectID(hexsha.encode("ascii"))


def open_bare(path: Path) -> Repo:
    """Open the bare repository at ``path``, creating it (and its parents) when missing.

    The caller must ``close()`` it; prefer :func:`bare_repo`.
    """
    if (path / "objects").is_dir() or (path / ".git").exists():
        return Repo(str(path))
    path.mkdir(parents=True, exist_ok=True)
    return Repo.init_bare(str(path))


@contextmanager
def bare_repo(path: Path) -> Iterator[Repo]:
    """Context manager around :func:`open_bare` that closes the repo (and its pack files)."""
    repo = open_bare(path)
    try:
        yield repo
    finally:
        repo.close()


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


def add_blob(repo: Repo, data: bytes) -> str:
    """Store ``data`` as a blob in ``repo`` (unless already there); return its 40-hex id."""
    blob = Blob.from_string(data)
    if blob.id not in repo.object_store:
        repo.object_store.add_object(blob)
    return blob.id.decode("ascii")


def write_tree(repo: Repo, entries: Mapping[str, tuple[int, str]]) -> str:
    """Write the nested trees for ``{path: (mode, blob hex)}``; return the root tree's hex id.

    The blobs must already be in ``repo``. An empty mapping gives git's empty tree.
    """
    if not entries:
        empty = Tree()
        repo.object_store.add_object(empty)
        return empty.id.decode("ascii")
    items = [(encode_path(path), oid(sha), mode) for path, (mode, sha) in entries.items()]
    return commit_tree(repo.object_store, items).decode("ascii")


def commit_tree_id(repo: Repo, commit_id: str) -> str:
    """Return the root tree id (40 hex) of the commit ``commit_id``.

    Raises ``KeyError`` when the object is missing and ``TypeError`` when it is no commit.
    """
    obj = repo[oid(commit_id)]
    if not isinstance(obj, Commit):
        raise TypeError(f"{commit_id} is a {obj.type_name.decode()}, not a commit")
    tree: bytes = obj.tree
    return tree.decode("ascii")


def make_commit(
    repo: Repo,
    tree: str,
    parents: Sequence[str],
    *,
    author: str,
    message: str,
    when: datetime,
) -> str:
    """Write a commit object and return its 40-hex id; no ref is updated.

    ``author`` (``Name <email>``) is also the committer; both times come from the aware
    datetime ``when`` (seconds since the epoch plus its UTC offset). ``message`` is stored
    verbatim, so include git's trailing newline. Raises ``ValueError`` for a naive ``when``.
    """
    offset = when.utcoffset()
    if offset is None:
        raise ValueError("commit time must be a timezone-aware datetime")
    commit = Commit()
    commit.tree = oid(tree)
    commit.parents = [oid(p) for p in parents]
    commit.author = commit.committer = author.encode("utf-8")
    commit.author_time = commit.commit_time = int(when.timestamp())
    commit.author_timezone = commit.commit_timezone = int(offset.total_seconds())
    commit.encoding = None
    commit.message = message.encode("utf-8")
    repo.object_store.add_object(commit)
    return commit.id.decode("ascii")


def changed_paths(repo: Repo, old_tree: str | None, new_tree: str | None) -> frozenset[str]:
    """Return the file paths that differ between two trees (40-hex ids, ``None`` = empty).

    Adds, edits (content or mode) and deletes; a rename counts as both its old and its new
    path. Submodule entries are ignored, as :class:`GitTree` ignores them. Only subtrees
    whose ids differ are read, and each pair of trees is compared as two sets of entries,
    so the cost follows the change (and the size of the folders it touches), not the tree.
    Raises ``KeyError`` when a tree is not in ``repo``.
    """
    paths: set[str] = set()
    _diff_trees(
        repo, oid(old_tree) if old_tree else None, oid(new_tree) if new_tree else None, b"", paths
    )
    return frozenset(paths)


def _tree_items(repo: Repo, tree_id: bytes | None) -> dict[bytes, tuple[int, bytes]]:
    if tree_id is None:
        return {}
    tree = repo[tree_id]
    if not isinstance(tree, Tree):
        raise KeyError(tree_id.decode("ascii"))
    return {entry.path: (entry.mode, entry.sha) for entry in tree.iteritems()}


def _diff_trees(
    repo: Repo, old_id: bytes | None, new_id: bytes | None, prefix: bytes, out: set[str]
) -> None:
    """Add to ``out`` the file paths under ``prefix`` that differ between two trees."""
    if old_id == new_id:
        return
    old, new = _tree_items(repo, old_id), _tree_items(repo, new_id)
    for name in set(old) | set(new):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        path = prefix + name
        a_dir = a is not None and stat.S_ISDIR(a[0])
        b_dir = b is not None and stat.S_ISDIR(b[0])
        if a_dir or b_dir:
            _diff_trees(repo, a[1] if a_dir else None, b[1] if b_dir else None, path + b"/", out)
        for side, is_dir in ((a, a_dir), (b, b_dir)):
            if side is not None and not is_dir and not _is_gitlink(side[0]):
                out.add(decode_path(path))


def _is_gitlink(mode: int | None) -> bool:
    return mode is not None and S_ISGITLINK(mode)


def set_local_refs(repo: Repo, refs: Mapping[str, str | None]) -> None:
    """Point each local ref at its 40-hex id, or delete it when the id is ``None``."""
    for name, sha in refs.items():
        ref = Ref(name.encode("utf-8"))
        if sha is None:
            if ref in repo.refs:
                del repo.refs[ref]
        else:
            repo.refs[ref] = oid(sha)


def local_ref(repo: Repo, name: str) -> str | None:
    """Return the 40-hex id the local ref ``name`` points at, or ``None`` when it is absent."""
    ref = Ref(name.encode("utf-8"))
    return repo.refs[ref].decode("ascii") if ref in repo.refs else None


def one_line(exc: BaseException) -> str:
    """Return ``exc`` as one line for an error message (its type name when it says nothing)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def fetch_refs(
    url: str, repo: Repo, refnames: Sequence[str], error: type[TemporaryError]
) -> dict[str, str | None]:
    """Fetch the refs ``refnames`` (e.g. ``refs/heads/main``) from ``url`` into ``repo``.

    Returns ``{refname: 40-hex tip, or None when the remote lacks it}`` and points the same
    local refs at those tips (deleting those the remote lacks), so the next fetch negotiates
    from them and only transfers new objects. Only the named refs' objects are fetched, with
    their full history: a shallow (depth 1) first fetch would be smaller, but dulwich 1.2.21
    serves it wrongly (its local transport re-sends everything on the next fetch, its HTTP
    server fails on ``deepen``), so the mirror stays complete.

    Raises ``error`` (one line naming ``url``) when the remote cannot be reached or read.
    """
    client, path = get_transport_and_path(url)
    names = [Ref(name.encode("utf-8")) for name in refnames]

    def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        tips = {refs[name] for name in names if name in refs}
        return sorted(tip for tip in tips if tip not in repo.object_store)

    try:
        result = client.fetch(path, repo, determine_wants=wants, ref_prefix=names)
    except _TRANSPORT_ERRORS as exc:
        raise error(f"cannot fetch from {url}: {one_line(exc)}") from exc
    remote = result.refs or {}
    tips: dict[str, str | None] = {}
    for name in names:
        sha = remote.get(name)
        tips[name.decode("utf-8")] = sha.decode("ascii") if sha else None
    set_local_refs(repo, tips)
    return tips


def push_refs(
    url: str,
    repo: Repo,
    updates: Mapping[str, tuple[str | None, str]],
    error: type[TemporaryError],
) -> None:
    """Push ``{refname: (expected remote tip or None, new 40-hex id)}`` from ``repo`` to ``url``.

    Compare-and-swap: when any ref's advertised tip is not the expected one, nothing is sent
    and :class:`RemoteMovedError` is raised. The push is atomic when the server supports it.
    Never forced, so the server's own fast-forward rules apply. Local refs are not touched.

    Raises ``error`` with the server's reason when it rejects a ref (dulwich reports that in
    ``ref_status`` instead of raising) or when the remote cannot be reached.
    """
    client, path = _push_client(url)
    wanted = {Ref(name.encode("utf-8")): (old, oid(new)) for name, (old, new) in updates.items()}

    def pack_data(
        have: AbstractSet[ObjectID],
        want: AbstractSet[ObjectID],
        *,
        ofs_delta: bool = False,
        progress: Callable[[bytes], None] | None = None,
    ) -> tuple[int, Iterator[UnpackedObject]]:
        new = _new_objects(repo, set(have), set(want))
        if new is None:
            return repo.generate_pack_data(set(have), set(want), ofs_delta=ofs_delta)
        return pack_objects_to_data([(repo[sha], None) for sha in new], ofs_delta=ofs_delta)

    def update_refs(advertised: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
        for ref, (old, _new) in wanted.items():
            tip = advertised.get(ref)
            if (tip.decode("ascii") if tip else None) != old:
                raise RemoteMovedError(f"{ref.decode()} moved on the remote")
        return {ref: new for ref, (_old, new) in wanted.items()}

    remote_says = bytearray()  # the server's side-band messages, e.g. a hook's explanation
    encoded = path.encode("utf-8")
    try:
        try:
            result = client.send_pack(
                encoded, update_refs, pack_data, remote_says.extend, atomic=True
            )
        except GitProtocolError as exc:
            if "atomic" not in str(exc) or isinstance(exc, SendPackError):
                raise
            result = client.send_pack(encoded, update_refs, pack_data, remote_says.extend)
    except _TRANSPORT_ERRORS as exc:
        raise error(f"cannot push to {url}: {one_line(exc)}") from exc
    failed = {ref: why for ref, why in (result.ref_status or {}).items() if why is not None}
    if failed:
        reasons = "; ".join(f"{ref.decode()}: {why}" for ref, why in sorted(failed.items()))
        said = _last_words(bytes(remote_says))
        raise error(f"push to {url} rejected: {reasons}" + (f" (remote: {said})" if said else ""))


def _push_client(url: str) -> tuple[GitClient, str]:
    """Return the client for pushing to ``url``.

    dulwich's ``LocalGitClient`` (plain paths, ``file://``) writes the refs itself, so the
    remote's hooks (``pre-receive``, ``update``, ``post-receive``) and
    ``receive.denyNonFastForwards`` never run. Where the git CLI exists, a real ``git
    receive-pack`` is run instead, exactly as ``git push`` to that path would.
    """
    client, path = get_transport_and_path(url)
    if isinstance(client, LocalGitClient) and shutil.which("git"):
        return SubprocessGitClient(), path
    return client, path


def _new_objects(
    repo: Repo, have: AbstractSet[ObjectID], want: AbstractSet[ObjectID]
) -> list[ObjectID] | None:
    """Return the objects a push of ``want`` must send when every wanted commit's parents
    are in ``have`` (the fast-forward a build makes): each commit, and what its tree has
    that its first parent's tree has not at the same path (only differing subtrees are
    read, so the cost follows the change). ``None`` otherwise: the caller lets dulwich walk
    the history. An object the remote has elsewhere may be sent again, which git accepts."""
    found: dict[ObjectID, None] = {}
    for sha in want - have:
        commit = repo[sha]
        if not isinstance(commit, Commit) or not commit.parents:
            return None
        if any(parent not in have for parent in commit.parents):
            return None
        parent = repo[commit.parents[0]]
        if not isinstance(parent, Commit):
            return None
        found[sha] = None
        _new_tree_objects(repo, parent.tree, commit.tree, found)
    return list(found)


def _new_tree_objects(
    repo: Repo, old_id: ObjectID | None, new_id: ObjectID, found: dict[ObjectID, None]
) -> None:
    if old_id == new_id or new_id in found:
        return
    found[new_id] = None
    old = _tree_items(repo, old_id)
    for name, (mode, sha) in _tree_items(repo, new_id).items():
        before = old.get(name)
        if before is not None and before[1] == sha:
            continue
        if stat.S_ISDIR(mode):
            below = before[1] if before is not None and stat.S_ISDIR(before[0]) else None
            _new_tree_objects(repo, below, ObjectID(sha), found)
        elif not S_ISGITLINK(mode):
            found[ObjectID(sha)] = None


def _last_words(progress: bytes, limit: int = 300) -> str:
    """Return the server's side-band lines as one line, at most the last ``limit`` characters."""
    lines = [line.strip() for line in progress.decode("utf-8", "replace").splitlines()]
    return " / ".join(line for line in lines if line)[-limit:]


class GitTree:
    """A :class:`~deploybot.render.source.SourceTree` over a tree object in a bare repository.

    Lazy: :meth:`blob_id` and :meth:`read` walk only the folders on the path asked for (each
    folder's tree object is read once), so an incremental build that reads a few files of a
    10k-file tree never lists it; :meth:`paths` and :meth:`entries` index the whole tree
    (``{path: (mode, blob hex)}``, submodules skipped) on first use. Objects are read through
    a repository handle opened on first use; call :meth:`close` (or use it as a context
    manager) to release it; a later read reopens it.

    Args:
        repo_path: the bare repository holding the tree.
        tree_id: the tree's 40-hex id.

    Raises:
        KeyError: when the tree is not in the repository.
    """

    def __init__(self, repo_path: Path, tree_id: str) -> None:
        self.repo_path = Path(repo_path)
        self.tree_id = tree_id
        self._repo: Repo | None = None
        self._entries: dict[str, tuple[int, str]] | None = None
        self._sorted: list[str] | None = None
        self._folders: dict[bytes, dict[bytes, tuple[int, bytes]] | None] = {}
        with bare_repo(self.repo_path) as repo:
            if not isinstance(repo.object_store[oid(tree_id)], Tree):
                raise KeyError(tree_id)

    def _handle(self) -> Repo:
        if self._repo is None:
            self._repo = Repo(str(self.repo_path))
        return self._repo

    def entries(self) -> Mapping[str, tuple[int, str]]:
        """Return ``{path: (mode, blob hex)}`` for every file (and symlink) in the tree."""
        if self._entries is None:
            self._entries = tree_entries(self._handle(), self.tree_id)
        return self._entries

    def paths(self) -> Iterator[str]:
        """Yield every file path in the tree, sorted."""
        if self._sorted is None:
            self._sorted = sorted(self.entries())
        return iter(self._sorted)

    def _folder(self, folder: bytes) -> dict[bytes, tuple[int, bytes]] | None:
        """Return ``{name: (mode, sha)}`` of the folder ``folder`` (``b""``: the root), or
        ``None`` when there is no such folder."""
        if folder not in self._folders:
            if not folder:
                tree_id: bytes | None = oid(self.tree_id)
            else:
                parent, _, name = folder.rpartition(b"/")
                items = self._folder(parent)
                entry = None if items is None else items.get(name)
                tree_id = entry[1] if entry is not None and stat.S_ISDIR(entry[0]) else None
            self._folders[folder] = (
                None if tree_id is None else _tree_items(self._handle(), tree_id)
            )
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

    def read(self, path: str) -> bytes:
        """Return the bytes of ``path``. Raises ``KeyError`` when absent."""
        blob = self._handle()[oid(self._entry(path)[1])]
        if not isinstance(blob, Blob):
            raise KeyError(path)
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


def blob_ids(repo: Repo, files: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    """Store each ``(path, data)`` as a blob; return ``{path: blob hex}``."""
    return {path: add_blob(repo, data) for path, data in files}
