"""Small dulwich helpers shared by the watch and publish stages (and housekeeping).

Everything here works on bare repositories, with no work tree and no index: trees are read and
written as objects, refs are fetched into a local *mirror* (a bare repo whose ``refs/heads/*``
mirror the remote's, as last seen) and pushed with a compare-and-swap on the advertised tips.

Paths are ``str``, decoded from git's bytes as UTF-8 with ``surrogateescape`` so that any byte
sequence survives the round trip. Object ids are 40-hex ``str``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit, urlunsplit

from dulwich.client import (
    FetchPackResult,
    GitClient,
    HttpGitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    LocalGitClient,
    SubprocessGitClient,
    get_transport_and_path,
)
from dulwich.errors import (
    GitProtocolError,
    NotGitRepository,
    SendPackError,
)
from dulwich.file import _GitFile
from dulwich.index import commit_tree
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.pack import UnpackedObject, full_unpacked_object, pack_object_chunks
from dulwich.refs import Ref
from dulwich.repo import Repo

from deploybot.git import failure
from deploybot.git.bounds import Exchange, Overrun, bound
from deploybot.git.damage import DAMAGE_ERRORS as DAMAGE_ERRORS  # re-exported: deploybot.git.damage
from deploybot.git.damage import STORE_DAMAGE_ERRORS as STORE_DAMAGE_ERRORS
from deploybot.git.damage import UNREADABLE_OBJECT_ERRORS as UNREADABLE_OBJECT_ERRORS
from deploybot.git.damage import DamagedObject as DamagedObject
from deploybot.git.damage import _absolute
from deploybot.git.damage import damaged_object as damaged_object
from deploybot.git.locations import is_remote_url
from deploybot.git.remote import Remote
from deploybot.git.tree import GitTree as GitTree  # re-exported: callers need one module
from deploybot.git.tree import changed_paths as changed_paths
from deploybot.git.tree import encode_path as encode_path
from deploybot.git.tree import is_object_id as is_object_id
from deploybot.git.tree import new_objects
from deploybot.git.tree import oid as oid
from deploybot.git.tree import tree_entries as tree_entries
from deploybot.git.tree_check import DamageFound
from deploybot.support.errors import (
    ConfigError,
    FetchError,
    PublishError,
    TemporaryError,
    disk_full,
    is_disk_full,
    one_line,
)
from deploybot.support.redact import register_url_credentials

if TYPE_CHECKING:
    import urllib3

MODE_FILE = 0o100644
"""Mode of a regular, non-executable file in a git tree."""

LOOSE_COMPRESSION = 1
"""zlib level of the loose objects a mirror writes: git's own default (``core.looseCompression``
1). dulwich's is zlib's 6, about three times slower on a build's pages and feeds (a one-post
publish of a 1,000-post site rewrites two 2 MB feeds) for a few percent of space, and
``gc`` repacks them anyway."""

LOCAL_PACK_COMPRESSION = 1
"""zlib level of a pack pushed to a repository on this machine (through git's
``receive-pack``, which inflates it again): bytes through a pipe are free, time is not."""

IDLE_TIMEOUT = 300.0
"""Seconds a git server on a socket (``git://``, ``http(s)://``) may stay silent during a
fetch or push before it counts as unreachable. dulwich sets no timeout of its own on these
sockets, so a dead peer held the run, and the state lock, forever. The whole exchange is
bounded by the remote's ``timeout`` (:mod:`deploybot.git.bounds`); within it, a silence this
long is enough."""


# What dulwich raises when a remote cannot be reached or talked to (ValueError: a server
# naming a protocol version dulwich does not speak), and what a bound raises.
_TRANSPORT_ERRORS = (
    OSError,
    GitProtocolError,
    NotGitRepository,
    HTTPUnauthorized,
    HTTPProxyUnauthorized,
    ValueError,
    Overrun,
)


def _drop_received_pack(repo: Repo, exc: BaseException) -> None:
    """After a fetch into ``repo`` failed on a damaged pack the server sent (``exc``):
    remove the temporary file dulwich received it into (``objects/tmp_pack_*``), which it
    leaves behind then. The caller holds the state folder's lock: such a file is this
    fetch's, or a killed run's."""
    damage = damaged_object(exc)
    if damage is None or not damage.received:
        return
    for temp in Path(repo.object_store.path).glob("tmp_pack_*"):
        temp.unlink(missing_ok=True)


def _raise_if_damage(remote: Remote, exc: BaseException) -> None:
    """Raise ``exc`` again when it is damage met in a repository on disk (the mirror, or a
    local remote read in process: :func:`damaged_object`), which no wait mends: the
    pipeline fetches a damaged mirror again, and names any other repository. Damage in
    the pack ``remote`` was sending is the server's: SourceError
    (:func:`deploybot.git.failure.damaged_pack`)."""
    damage = damaged_object(exc)
    if damage is not None and damage.received:
        raise failure.damaged_pack(remote, damage.detail) from exc
    if damage is not None:
        raise exc


class RemoteMovedError(Exception):
    """A pushed ref's advertised tip was not the one the new commit was built on.

    Raised by :func:`push_refs` before any pack is sent; the caller re-fetches and rebuilds.
    """


def open_bare(path: Path) -> Repo:
    """Open the bare repository at ``path``, creating it (and its parents) when missing.

    A folder holding only what a killed ``Repo.init_bare`` left (no ``objects/``) is made
    anew. The caller must ``close()`` it; prefer :func:`bare_repo`.
    """
    if (path / ".git").exists():
        return _fast_loose(Repo(str(path)))
    if (path / "objects").is_dir():
        for sub in ("info", "pack"):  # made last by init_bare: maybe not, after a kill
            (path / "objects" / sub).mkdir(exist_ok=True)
        return _fast_loose(Repo(str(path)))
    if path.is_dir() and {p.name for p in path.iterdir()} <= _INIT_NAMES:
        # A run killed inside init_bare (objects/ comes last): start the mirror anew.
        shutil.rmtree(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)  # a mirror: private like its state dir
    return _fast_loose(Repo.init_bare(str(path)))


def _fast_loose(repo: Repo) -> Repo:
    """Write loose objects at :data:`LOOSE_COMPRESSION` (a mirror is ours to tune)."""
    if hasattr(repo.object_store, "loose_compression_level"):
        repo.object_store.loose_compression_level = LOOSE_COMPRESSION
    return repo


_INIT_NAMES = frozenset({"branches", "refs", "hooks", "info", "HEAD", "HEAD.lock", "description"})
"""What ``Repo.init_bare`` makes before ``objects/`` (dulwich ``BASE_DIRECTORIES``, HEAD)."""


@contextmanager
def bare_repo(path: Path) -> Iterator[Repo]:
    """Context manager around :func:`open_bare` that closes the repo (and its pack files)."""
    repo = open_bare(path)
    try:
        yield repo
    finally:
        repo.close()


@contextmanager
def writing(repo: Repo) -> Iterator[None]:
    """Around writes into ``repo``: a full disk becomes a DiskFullError naming the repository,
    and leaves no ``.lock`` file behind.

    dulwich's ``GitFile`` flushes before it can clean up, so when the disk is full at close
    (a small object or a ref, still buffered) it leaves ``<name>.lock`` behind, which locks
    that object or ref for every later run (``FileLocked``), and complains again on stderr
    when collected. The files the failed write left open are found in the traceback,
    closed without flushing, and their lock files removed.
    """
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        _abandon_git_files(exc)
        raise disk_full(exc, f"into {repo.path}") from exc


def _abandon_git_files(exc: BaseException) -> None:
    traceback = exc.__traceback__
    while traceback is not None:
        for value in list(traceback.tb_frame.f_locals.values()):
            if isinstance(value, _GitFile) and not value.closed:
                raw = getattr(value._file, "raw", None)  # a closed raw file is not flushed
                if raw is not None:
                    raw.close()
                value.abort()
        traceback = traceback.tb_next


def add_blob(repo: Repo, data: bytes) -> str:
    """Store ``data`` as a blob in ``repo`` (unless already there); return its 40-hex id.

    Raises DiskFullError (see :func:`writing`) when the disk is full.
    """
    blob = Blob.from_string(data)
    if blob.id not in repo.object_store:
        with writing(repo):
            repo.object_store.add_object(blob)
    return blob.id.decode("ascii")


def write_tree(repo: Repo, entries: Mapping[str, tuple[int, str]]) -> str:
    """Write the nested trees for ``{path: (mode, blob hex)}``; return the root tree's hex id.

    The blobs must already be in ``repo``. An empty mapping gives git's empty tree.
    Raises DiskFullError (see :func:`writing`) when the disk is full.
    """
    with writing(repo):
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
    with writing(repo):
        repo.object_store.add_object(commit)
    return commit.id.decode("ascii")


def set_local_refs(repo: Repo, refs: Mapping[str, str | None]) -> None:
    """Point each local ref at its 40-hex id, or delete it when the id is ``None``.

    Raises DiskFullError (see :func:`writing`) when the disk is full.
    """
    with writing(repo):
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


def as_remote(remote: Remote | str, key: str) -> Remote:
    """``remote``, or a plain URL made a :class:`Remote` named by ``key`` (``source.url``,
    ``publish.url``) with the default bounds and no token."""
    return remote if isinstance(remote, Remote) else Remote(remote, key)


def _key_for(error: type[TemporaryError]) -> str:
    """The key a plain URL given with ``error`` stands for: the publish stage's raise
    PublishError."""
    return "publish.url" if issubclass(error, PublishError) else "source.url"


def fetch_refs(
    remote: Remote | str, repo: Repo, refnames: Sequence[str], error: type[TemporaryError]
) -> dict[str, str | None]:
    """Fetch the refs ``refnames`` (e.g. ``refs/heads/main``) from ``remote`` into ``repo``
    (a plain URL is ``source.url``'s, or ``publish.url``'s with ``error`` PublishError).

    Returns ``{refname: 40-hex tip, or None when the remote lacks it}`` and points the same
    local refs at those tips (deleting those the remote lacks), so the next fetch negotiates
    from them and only transfers new objects. Only the named refs' objects are fetched, with
    their full history: a shallow (depth 1) first fetch would be smaller, but dulwich 1.2.21
    serves it wrongly (its local transport re-sends everything on the next fetch, its HTTP
    server fails on ``deepen``), so the mirror stays complete. The exchange is bounded by
    the remote's ``timeout`` and ``max_fetch_bytes`` (:mod:`deploybot.git.bounds`).

    Raises:
        error: (one line naming the URL) the remote cannot be reached or read for now, or
            took longer than its ``timeout``.
        ConfigError: the remote is not there, wants credentials or refuses them, its host
            does not resolve, its token variable is unset, or it sent more than a cap
            (:func:`deploybot.git.failure.failure`; names the key).
        SourceError: the server says its repository is corrupt.
    """
    remote = as_remote(remote, _key_for(error))
    names = [Ref(name.encode("utf-8")) for name in refnames]

    def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        tips = {refs[name] for name in names if name in refs}
        return sorted(tip for tip in tips if tip not in repo.object_store)

    check_refs(repo)
    result = _fetch(remote, repo, wants, error, names)
    fetched = result.refs or {}
    tips: dict[str, str | None] = {}
    for name in names:
        sha = fetched.get(name)
        tips[name.decode("utf-8")] = sha.decode("ascii") if sha else None
    set_local_refs(repo, tips)
    return tips


def remote_head(remote: Remote | str, refname: str) -> str | None:
    """The id ``refname`` (``refs/heads/main``) points at in the repository ``remote``, or
    None when it has no such ref: the ref advertisement only (``git ls-remote``), no
    objects fetched, within the remote's ``timeout``. The caller sets the socket timeout
    (no :func:`_idle_timeout` here: the poller asks many remotes at once, from threads).

    Raises:
        FetchError: the remote cannot be reached or read for now (one line naming the URL).
        ConfigError, SourceError: as :func:`fetch_refs`.
    """
    remote = as_remote(remote, "source.url")
    name = Ref(refname.encode("utf-8"))
    with _session(remote) as (client, path, bounds):
        try:
            refs = client.get_refs(path.encode("utf-8"), ref_prefix=[name]).refs
        except _TRANSPORT_ERRORS as exc:
            raise failure.failure(
                remote, exc, bounds.overrun(), "read the refs of", FetchError
            ) from exc
    sha = (refs or {}).get(name)
    return sha.decode("ascii") if sha else None


def remote_refs(remote: Remote, refnames: Sequence[str]) -> dict[str, str]:
    """The ids the refs ``refnames`` (``HEAD``, ``refs/tags/v1``...) point at in ``remote``,
    those it has: one ref advertisement (``git ls-remote``), no objects fetched, within the
    remote's ``timeout`` (one caller at a time: it sets the socket timeout itself).

    Raises:
        FetchError, ConfigError, SourceError: as :func:`remote_head`.
    """
    names = [Ref(name.encode("utf-8")) for name in refnames]
    with _session(remote) as (client, path, bounds):
        try:
            with _idle_timeout(remote.timeout):
                refs = client.get_refs(path.encode("utf-8"), ref_prefix=names).refs
        except _TRANSPORT_ERRORS as exc:
            raise failure.failure(
                remote, exc, bounds.overrun(), "read the refs of", FetchError
            ) from exc
    tips: dict[str, str] = {}
    for name in names:
        sha = (refs or {}).get(name)
        if sha:
            tips[name.decode("utf-8")] = sha.decode("ascii")
    return tips


def remote_branches(remote: Remote | str) -> list[str]:
    """The names of the branches of the repository ``remote`` (its refs under
    ``refs/heads/``, without that prefix), sorted; ``[]`` for a repository with no commits
    yet. The ref advertisement only (``git ls-remote --heads``), within the remote's
    ``timeout`` and caps; names that are not UTF-8 are decoded with replacement.

    Raises:
        FetchError, ConfigError, SourceError: as :func:`remote_head`.
    """
    return sorted(branch_tips(remote, errors="replace"))


def branch_tips(remote: Remote | str, *, errors: str = "strict") -> dict[str, str]:
    """``{branch name: tip (40 hex)}`` of the repository ``remote``: its refs under
    ``refs/heads/``, as :func:`remote_branches` reads them (one ref advertisement, within
    the remote's ``timeout``). ``errors``: how a name that is not UTF-8 is decoded
    (``"strict"``: it is left out, as no branch deploybot could name; ``"replace"``).

    Raises:
        FetchError, ConfigError, SourceError: as :func:`remote_head`.
    """
    remote = as_remote(remote, "source.url")
    heads = Ref(b"refs/heads/")
    with _session(remote) as (client, path, bounds):
        try:
            with _idle_timeout(remote.timeout):
                refs = client.get_refs(path.encode("utf-8"), ref_prefix=[heads]).refs
        except _TRANSPORT_ERRORS as exc:
            raise failure.failure(
                remote, exc, bounds.overrun(), "read the refs of", FetchError
            ) from exc
    tips: dict[str, str] = {}
    for name, sha in (refs or {}).items():
        if not name.startswith(heads) or not sha:
            continue
        try:
            tips[name[len(heads) :].decode("utf-8", errors)] = sha.decode("ascii")
        except UnicodeDecodeError:
            continue
    return tips


def _fetch(
    remote: Remote,
    repo: Repo,
    wants: Callable[..., list[ObjectID]],
    error: type[TemporaryError],
    prefixes: Sequence[Ref] | None = None,
) -> FetchPackResult:
    """One bounded fetch into ``repo`` of what ``wants`` picks of the advertised refs (those
    under ``prefixes``, when given): a pack cut short is dropped, damage the server reports
    is a SourceError, a transport failure ``error`` or ConfigError
    (:func:`deploybot.git.failure.failure`)."""
    with _session(remote) as (client, path, bounds):
        try:
            with writing(repo), _idle_timeout(remote.timeout):
                return client.fetch(path, repo, determine_wants=wants, ref_prefix=prefixes)
        except _FETCH_ERRORS as exc:
            _drop_received_pack(repo, exc)
            _raise_if_damage(remote, exc)
            if not isinstance(exc, _TRANSPORT_ERRORS):
                raise
            raise failure.failure(remote, exc, bounds.overrun(), "fetch from", error) from exc


def fetch_commit(remote: Remote, repo: Repo, commit: str) -> str | None:
    """Fetch the commit ``commit`` (40 hex) by its id from ``remote`` into ``repo``, with its
    history, whether or not a ref still holds it.

    Asking for an object no ref advertises works only where the server allows it (git's
    ``uploadpack.allowAnySHA1InWant``, or ``allowReachableSHA1InWant`` while some ref
    still reaches it; GitHub serves reachable ones); git's default refuses ("not our
    ref"). A refusal and an unreachable remote are both an answer here, not an error.

    Returns:
        None when the commit is in ``repo`` afterwards, else why not (one line).

    Raises:
        DiskFullError: the mirror could not be written.
        ConfigError: the remote's token variable is unset.
    """
    want = oid(commit)
    if want in repo.object_store:
        return None
    with _session(remote) as (client, path, bounds):
        try:
            with writing(repo), _idle_timeout(remote.timeout):
                client.fetch(path, repo, determine_wants=lambda _refs, depth=None: [want])
        except _TRANSPORT_ERRORS as exc:
            why = failure.failure(remote, exc, bounds.overrun(), "fetch from", FetchError)
            return str(why)
    return None if want in repo.object_store else "the server sent no such commit"


def fetch_branches_and_tags(remote: Remote, repo: Repo, commit: str) -> str | None:
    """Fetch every branch and tag of ``remote`` into ``repo``, for a commit (40 hex) the
    server would not send by its id (:func:`fetch_commit`: git's default refuses an object
    no ref advertises), and say whether ``commit`` came with them. Local refs are not touched.

    Returns:
        None when ``commit`` is in ``repo`` afterwards, else why not (one line).

    Raises:
        FetchError: the remote cannot be reached or read for now.
        ConfigError: as :func:`fetch_refs`.
    """
    prefixes = (b"refs/heads/", b"refs/tags/")

    def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        tips = {sha for name, sha in refs.items() if name.startswith(prefixes) and sha}
        return sorted(tip for tip in tips if tip not in repo.object_store)

    _fetch(remote, repo, wants, FetchError)
    if oid(commit) in repo.object_store:
        return None
    return "no branch or tag of the repository holds that commit"


def push_refs(
    remote: Remote | str,
    repo: Repo,
    updates: Mapping[str, tuple[str | None, str]],
    error: type[TemporaryError],
) -> None:
    """Push ``{refname: (expected remote tip or None, new 40-hex id)}`` from ``repo`` to
    ``remote``, within its ``timeout`` and ``max_fetch_bytes`` (what the server answers).

    Compare-and-swap: when any ref's advertised tip is not the expected one, nothing is sent
    and :class:`RemoteMovedError` is raised. The push is atomic when the server supports it.
    Never forced, so the server's own fast-forward rules apply. Local refs are not touched.

    Raises:
        error: with the server's reason when it rejects a ref (dulwich reports that in
            ``ref_status`` instead of raising), or when the remote cannot be reached for now.
        ConfigError, SourceError: as :func:`fetch_refs`.
    """
    remote = as_remote(remote, _key_for(error))
    wanted = {Ref(name.encode("utf-8")): (old, oid(new)) for name, (old, new) in updates.items()}

    def pack_data(
        have: AbstractSet[ObjectID],
        want: AbstractSet[ObjectID],
        *,
        ofs_delta: bool = False,
        progress: Callable[[bytes], None] | None = None,
    ) -> tuple[int, Iterator[UnpackedObject]]:
        new = new_objects(repo, set(have), set(want))
        if new is None:
            return repo.generate_pack_data(set(have), set(want), ofs_delta=ofs_delta)
        # One object at a time: a first build's push sends every page of the site.
        count, records = len(new), (full_unpacked_object(repo[sha]) for sha in new)
        local = isinstance(client, (SubprocessGitClient, LocalGitClient))
        return count, _compressed(records, LOCAL_PACK_COMPRESSION) if local else records

    def update_refs(advertised: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
        for ref, (old, _new) in wanted.items():
            tip = advertised.get(ref)
            if (tip.decode("ascii") if tip else None) != old:
                raise RemoteMovedError(f"{ref.decode()} moved on the remote")
        return {ref: new for ref, (_old, new) in wanted.items()}

    remote_says = bytearray()  # the end of the server's side-band messages (a hook's reason)

    def said(message: bytes) -> None:
        remote_says.extend(message)
        del remote_says[:-_SAID_KEPT]  # a server talking without end grows no memory

    with _session(remote) as (client, path, bounds):
        encoded = path.encode("utf-8")
        try:
            with _idle_timeout(remote.timeout):
                try:
                    result = client.send_pack(encoded, update_refs, pack_data, said, atomic=True)
                except GitProtocolError as exc:
                    if "atomic" not in str(exc) or isinstance(exc, SendPackError):
                        raise
                    result = client.send_pack(encoded, update_refs, pack_data, said)
        except _TRANSPORT_ERRORS as exc:
            _raise_if_damage(remote, exc)
            raise failure.failure(remote, exc, bounds.overrun(), "push to", error) from exc
    failed = {ref: why for ref, why in (result.ref_status or {}).items() if why is not None}
    if failed:
        refused = {ref.decode("utf-8", "replace"): why for ref, why in failed.items()}
        raise failure.push_refused(remote, refused, bytes(remote_says), error)


_SAID_KEPT = 4096
"""Bytes of a server's side-band messages kept during a push (:func:`deploybot.git.failure.
remote_words` shows at most 300 characters of them)."""


def _compressed(records: Iterator[UnpackedObject], level: int) -> Iterator[UnpackedObject]:
    """The pack entries made at zlib ``level`` here (dulwich's pack writer uses an entry's
    ``comp_chunks`` as they are, and else compresses at zlib's default)."""
    for unpacked in records:
        if unpacked.delta_base is None and unpacked.comp_chunks is None:
            unpacked.comp_chunks = list(
                pack_object_chunks(
                    unpacked.pack_type_num,
                    unpacked.decomp_chunks,
                    DEFAULT_OBJECT_FORMAT,
                    compression_level=level,
                )
            )
        yield unpacked


@contextmanager
def _idle_timeout(total: float) -> Iterator[None]:
    """Give the sockets dulwich opens in the block (it sets no timeout on them) the
    timeout :data:`IDLE_TIMEOUT`, or ``total`` (the exchange's deadline, s) when smaller,
    through the process default (``socket.setdefaulttimeout``), restored afterwards.
    Nothing else opens sockets meanwhile: the run's other network calls (SMTP, webhook)
    come before or after, and set their own timeouts anyway."""
    before = socket.getdefaulttimeout()
    socket.setdefaulttimeout(min(IDLE_TIMEOUT, total))
    try:
        yield
    finally:
        socket.setdefaulttimeout(before)


@contextmanager
def _session(remote: Remote) -> Iterator[tuple[GitClient, str, Exchange]]:
    """One exchange with ``remote``: its client fitted to its bounds
    (:class:`deploybot.git.bounds.Exchange`), the path to give it, and the bounds (their
    deadline runs for the block). Raises ConfigError when the token variable is unset."""
    bounds = Exchange(remote.timeout, remote.max_fetch_bytes)
    client, path = _client(remote, bounds)
    with bounds:
        yield client, path, bounds


def check_local_repository(url: str, key: str) -> None:
    """Raise ConfigError naming ``key`` when ``url`` is a local path (or ``file://``) that
    holds no git repository: retrying cannot fix that, so it is no TemporaryError."""
    if is_remote_url(url) and not url.startswith("file://"):
        return
    path = Path(url.removeprefix("file://"))
    try:
        Repo(str(path)).close()
    except (NotGitRepository, OSError):
        what = "does not exist" if not path.exists() else "is not a git repository"
        raise ConfigError(f"{key}: {path} {what}") from None


def ssh_command(environ: Mapping[str, str] | None = None) -> str | None:
    """The ssh program (and its arguments) ssh:// and scp-like remotes run, as git takes it
    from the environment (``git(1)``): ``GIT_SSH_COMMAND``, a command line (split into
    words as a shell would, with no shell: no variables, pipes or redirections), else
    ``GIT_SSH``, a program's path alone; None: neither is set, dulwich runs ``ssh``. It
    gets OpenSSH's options (``-x``, ``-p PORT``, ``-o SetEnv GIT_PROTOCOL=...``), the host,
    and the git command to run there."""
    env = os.environ if environ is None else environ
    command = env.get("GIT_SSH_COMMAND", "").strip()
    if command:
        return command
    program = env.get("GIT_SSH", "").strip()
    return shlex.quote(program) if program else None


def _http_client(
    url: str, pool: urllib3.PoolManager, user: str | None, token: str | None
) -> tuple[GitClient, str]:
    """dulwich's HTTP(S) client for ``url`` through ``pool``, and the path to give it, as
    ``get_transport_and_path`` makes them (credentials given, else the URL's own, are sent
    as HTTP basic auth and left out of the base URL), but with an IPv6 literal host kept
    in its brackets (RFC 3986 3.2.2): dulwich 1.2 made ``http://[::1]:8080/r.git``
    ``http://::1:8080/r.git``, which urllib3 cannot parse."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    if user is None and parts.username:
        user = unquote(parts.username)
    if token is None and parts.password:
        token = unquote(parts.password)
    base = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    client = HttpGitClient(base, pool_manager=pool, username=user, password=token)
    return client, parts.path


def _client(remote: Remote | str, bounds: Exchange | None = None) -> tuple[GitClient, str]:
    """Return the client for fetching from or pushing to ``remote`` (a plain URL: no
    token), fitted to ``bounds`` when given (:func:`deploybot.git.bounds.bound`), and the
    path to give it. An http(s) remote with a ``token_env`` logs in with it (HTTP basic
    auth, sent to the URL's own origin only: dulwich drops it on a redirect elsewhere).
    An ssh remote runs the ssh program ``GIT_SSH_COMMAND`` or ``GIT_SSH`` names, as git
    does (:func:`ssh_command`; dulwich alone ignores both).

    dulwich's ``LocalGitClient`` (plain paths, ``file://``) writes the refs itself, so the
    remote's hooks (``pre-receive``, ``update``, ``post-receive``) and
    ``receive.denyNonFastForwards`` never run, and it finds what to send by walking every
    tree of the commits both sides have in Python. Where the git CLI exists, git's own
    ``receive-pack`` / ``upload-pack`` run instead, exactly as ``git push``/``git fetch`` to
    that path would.

    Raises:
        ConfigError: the remote's token variable is unset.
    """
    remote = as_remote(remote, "source.url")
    url = remote.url
    client: GitClient
    register_url_credentials(url)  # for what dulwich or urllib3 print in their own shape
    if not is_remote_url(url):
        # Never through get_transport_and_path: it reads a local path with a colon in it
        # ("/srv/my:site.git") as scp-like ssh to the host "/srv/my".
        path, client = url, LocalGitClient()
    else:
        from deploybot.git.http_pool import one_try_pool  # loads http.client and ssl: only for http

        pool = one_try_pool(url, bounds.connected if bounds is not None else None)
        login = remote.credentials() if pool is not None else None
        user, token = login if login is not None else (None, None)
        if pool is not None:
            client, path = _http_client(url, pool, user, token)
        else:
            client, path = get_transport_and_path(url, ssh_command=ssh_command())
    if isinstance(client, LocalGitClient) and shutil.which("git"):
        # No thin packs: on one machine bytes are free, and completing a thin pack makes
        # dulwich resolve deltas against big trees (a 10,000-post _posts/) in Python.
        client = SubprocessGitClient(thin_packs=False)
    if bounds is not None:
        bound(client, bounds)
    return client, path


_FETCH_ERRORS: tuple[type[BaseException], ...] = (*_TRANSPORT_ERRORS, *DAMAGE_ERRORS)
"""What :func:`fetch_refs` reads when a fetch fails: the transport's, or damage (in the
mirror, or in the pack the server sent)."""


def check_refs(repo: Repo) -> None:
    """Raise :class:`~deploybot.git.tree_check.DamageFound` when a ref of ``repo`` (a mirror:
    a loose ref file or a line of ``packed-refs``) holds no object id, or names an object
    that is not there. dulwich hands such a ref's bytes on as an id, and fails far from it
    (an ``AssertionError`` in a pack lookup); a mirror's refs move only once their objects
    are in (:func:`fetch_refs`, :func:`set_local_refs` after a push), so a ref naming a
    missing object means files were lost or overwritten (a pack's index, say, which then
    hides every object of its pack).

    Raises:
        DamageFound: names the ref and what it holds.
        FileFormatException: ``packed-refs`` cannot be parsed (dulwich's
            ``PackedRefsException``; :func:`damaged_object` reads it too).
    """
    for name, value in repo.refs.as_dict().items():
        ref = name.decode("utf-8", "replace")
        if not is_object_id(value.decode("ascii", "replace")):
            shown = one_line(value[:60])
            raise DamageFound(_absolute(repo.path), None, f"the ref {ref} holds {shown!r}")
        if ObjectID(value) not in repo.object_store:
            detail = f"the ref {ref} names {value.decode('ascii')}, which is not there"
            raise DamageFound(_absolute(repo.path), None, detail)


def blob_ids(repo: Repo, files: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    """Store each ``(path, data)`` as a blob; return ``{path: blob hex}``."""
    return {path: add_blob(repo, data) for path, data in files}
