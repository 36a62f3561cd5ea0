"""The watch stage: fetch the source branch into a local bare mirror and snapshot its tip.

The mirror (a bare repository under the state folder) keeps every object it has fetched, so a
repeated fetch only transfers what is new.
The snapshot's tree is read straight from git objects (no checkout), and ``changed_paths``
says which files differ from the commit of the previous run, for incremental builds.
"""

from __future__ import annotations

import enum
import stat
from dataclasses import dataclass
from pathlib import Path

from dulwich.errors import NotGitRepository, ObjectFormatException
from dulwich.graph import can_fast_forward
from dulwich.objects import Commit
from dulwich.refs import Ref
from dulwich.repo import Repo

from deploybot.git import path_rules, repository
from deploybot.git.locations import is_remote_url
from deploybot.git.remote import Remote
from deploybot.git.repository import GitTree
from deploybot.git.tree import decode_path, read_tree
from deploybot.support.errors import ConfigError, DeploybotError, FetchError, SourceError
from deploybot.support.redact import redact_url


@dataclass(frozen=True)
class SourceSnapshot:
    """The source branch's tip as fetched.

    ``tree`` reads blobs through a repository handle it opens on first read; the caller
    closes it with ``snapshot.tree.close()`` (or ``with snapshot.tree:``) when done.

    Attributes:
        commit: the source commit id (40 hex).
        tree: the commit's tree, as a ``SourceTree``.
        commit_time: committer time, seconds since the epoch.
        commit_tz_offset: committer timezone, seconds east of UTC.
        since: the commit ``changed_paths`` is relative to (as passed in).
        changed_paths: files added, edited or deleted since ``since`` (both sides of a
            rename); ``None`` when ``since`` is ``None`` or not in the mirror.
    """

    commit: str
    tree: GitTree
    commit_time: int
    commit_tz_offset: int
    since: str | None
    changed_paths: frozenset[str] | None


def fetch_source(
    url: Remote | str, branch: str, mirror: Path, since: str | None = None
) -> SourceSnapshot:
    """Fetch ``branch`` from ``url`` into the bare mirror ``mirror``; snapshot its tip.

    ``url`` is ``source.url`` with its keys (:class:`~deploybot.git.remote.Remote`), or
    a plain URL: anything dulwich's ``get_transport_and_path`` takes, a local path,
    ``file://``, ``http(s)://``, ``git://``, ``ssh://`` or ``user@host:path``. ``mirror``
    is created when missing. ``since`` is the source commit of the previous build, if any.

    Raises:
        FetchError: the remote cannot be reached or read for now (one line, naming the URL).
        SourceError: the fetch failed because a tree of the branch cannot be parsed or has
            an empty name (git refuses to send it; see :func:`check_local_trees`), or a tree
            fetched cannot be, or the server says its repository is corrupt.
        ConfigError: the remote has no such branch (names ``source.branch``, and the
            branches it has, or that it has none: a second look at its refs), is not there,
            wants credentials, or its host does not resolve, or the URL is a local path that
            holds no git repository (names ``source.url``): retrying would not help, so it
            is not a FetchError (:func:`deploybot.git.repository.fetch_refs`).
    """
    remote = repository.as_remote(url, "source.url")
    location = remote.url
    repository.check_local_repository(location, "source.url")
    refname = f"refs/heads/{branch}"
    with repository.bare_repo(mirror) as repo:
        try:
            tip = repository.fetch_refs(remote, repo, [refname], FetchError)[refname]
        except (FetchError, SourceError, ObjectFormatException) as exc:  # dulwich's local transport
            check_local_trees(location, refname)
            if isinstance(exc, ObjectFormatException):
                raise SourceError(
                    f"cannot fetch from {redact_url(location)}: an object cannot be parsed ({exc})"
                ) from exc
            raise
        if tip is None:
            raise ConfigError(
                f"'source.branch': no branch {branch!r} in {redact_url(location)}"
                + _branches_there(remote)
            )
        commit = _commit(repo, tip)
        tree_id = commit.tree.decode("ascii")
        changed = _changed_since(repo, since, tree_id)
    return SourceSnapshot(
        commit=tip,
        tree=GitTree(mirror, tree_id),
        commit_time=commit.commit_time,
        commit_tz_offset=commit.commit_timezone,
        since=since,
        changed_paths=changed,
    )


BRANCHES_SHOWN = 10
"""Branches a missing ``source.branch``'s error names (then "and N more")."""
_NAME_SHOWN = 100  # characters of one branch name shown


def _branches_there(remote: Remote) -> str:
    """What follows "no branch X in URL": the branches the remote has (the first
    :data:`BRANCHES_SHOWN`, sorted), or that it has none; "" when they cannot be read
    now (the error is the missing branch, not this second look)."""
    try:
        names = repository.remote_branches(remote)
    except DeploybotError:
        return ""
    if not names:
        return ": the repository has no commits yet (no branch at all)"
    shown = [n if len(n) <= _NAME_SHOWN else n[: _NAME_SHOWN - 3] + "..." for n in names]
    more = len(names) - BRANCHES_SHOWN
    tail = f" and {more} more" if more > 0 else ""
    return f" (its branches: {', '.join(shown[:BRANCHES_SHOWN])}{tail})"


def check_local_trees(url: str, refname: str) -> None:
    """After a failed fetch from a local repository: raise the ``SourceError`` naming the
    first tree entry of ``refname``'s tip that cannot be parsed (a NUL byte in a name), or
    whose name the build refuses (:func:`deploybot.git.path_rules.check_name`: an empty name,
    which git's ``upload-pack`` refuses to send, among them), so the run fails as bad input
    rather than as a fetch to retry forever. Returns when ``url`` is not local or every
    tree passes. The walk keeps its own stack (a tree can be thousands of folders deep) and
    reads each tree once."""
    path = url.removeprefix("file://")
    if is_remote_url(path):
        return
    try:
        remote = Repo(path)
    except (NotGitRepository, OSError):
        return
    with remote:
        try:
            commit = remote[remote.refs[Ref(refname.encode("utf-8"))]]
        except KeyError:
            return
        if not isinstance(commit, Commit):
            return
        pending: list[tuple[bytes, bytes]] = [(commit.tree, b"")]
        seen: set[bytes] = set()
        while pending:
            tree_id, folder = pending.pop()
            if tree_id in seen:
                continue
            seen.add(tree_id)
            try:
                items = read_tree(remote, tree_id, folder)
            except KeyError:
                return
            for name in sorted(items):
                _check_entry(tree_id, folder, name)
            for name, (mode, sha) in items.items():
                if stat.S_ISDIR(mode):
                    pending.append((sha, folder + name + b"/"))


def _check_entry(tree_id: bytes, folder: bytes, name: bytes) -> None:
    """Raise the SourceError for the entry ``name`` of the tree ``tree_id`` at ``folder``
    when the build refuses it (:func:`deploybot.git.path_rules.name_problem`), naming its path
    (the folder, for an empty name) and the tree object."""
    problem = path_rules.name_problem(decode_path(name))
    if problem is not None:
        where = path_rules.printable(decode_path(folder + name)) or "(the root folder)"
        raise SourceError(
            f"refused path: {problem} (tree {tree_id.decode('ascii')})",
            path_rules.shortened(where),
        )


def _commit(repo: Repo, commit_id: str) -> Commit:
    obj = repo[repository.oid(commit_id)]
    if not isinstance(obj, Commit):
        raise ConfigError(f"source.branch: tip {commit_id} is not a commit")
    return obj


def _changed_since(repo: Repo, since: str | None, tree_id: str) -> frozenset[str] | None:
    """Return the paths changed from ``since``'s tree to ``tree_id``; ``None`` if unknown."""
    if since is None or not repository.is_object_id(since):
        return None
    try:
        old_tree = repository.commit_tree_id(repo, since)
        # with submodules: the build warns about each, so one coming or going is a change
        return repository.changed_paths(repo, old_tree, tree_id, include_gitlinks=True)
    except (KeyError, TypeError):  # not in the mirror: the caller rebuilds everything
        return None


class Order(enum.Enum):
    """How a source commit stands to the one the publish head was built from."""

    OLDER = "older"
    """A strict ancestor of it: a build would take the site backwards."""
    NOT_OLDER = "not older"
    """The same, a descendant, unrelated, or made after the published build."""
    CANNOT_TELL = "cannot tell"
    """The published commit is gone from the source (rewound or rewritten) and the server
    does not serve it by id; nothing proves the commit is not one of its ancestors."""


def order_against(
    url: Remote | str,
    branch: str,
    mirror: Path,
    commit: str,
    published: str,
    *,
    commit_time: int,
    published_at: int | None,
) -> tuple[Order, str | None]:
    """Whether source ``commit`` is older than ``published`` (both 40 hex): the
    :class:`Order` and, for ``CANNOT_TELL``, why ``published`` could not be fetched.

    Older means a strict ancestor (``git merge-base --is-ancestor``). ``published`` missing
    from ``mirror`` was pushed after the last fetch: ``branch`` is fetched from ``url``
    (as :func:`fetch_source` takes it) once more. Still missing, the branch no longer holds
    it (rewound or rewritten): it is asked for by id
    (:func:`deploybot.git.repository.fetch_commit`). Still missing: ``NOT_OLDER`` when
    ``commit_time`` (its committer time, s) is later than ``published_at`` (the publish head's
    commit time, i.e. when ``published`` was built): a commit made after that build cannot be among
    ``published``'s ancestors, clocks being right. Else ``CANNOT_TELL``.
    A ``published`` that is not a commit (a wrong record) is ``NOT_OLDER``.

    Raises:
        FetchError: the branch fetch failed (and as :func:`deploybot.git.repository.fetch_refs`).
    """
    if commit == published or not repository.is_object_id(published):
        return Order.NOT_OLDER, None
    remote = repository.as_remote(url, "source.url")
    with repository.bare_repo(mirror) as repo:
        store, theirs = repo.object_store, repository.oid(published)
        why = None
        if theirs not in store:
            repository.fetch_refs(remote, repo, [f"refs/heads/{branch}"], FetchError)
        if theirs not in store:
            why = repository.fetch_commit(remote, repo, published)
        if theirs not in store:
            if published_at is not None and commit_time > published_at:
                return Order.NOT_OLDER, None
            return Order.CANNOT_TELL, why
        ours = repository.oid(commit)
        if not isinstance(store[theirs], Commit) or not isinstance(store[ours], Commit):
            return Order.NOT_OLDER, None
        older = can_fast_forward(repo, ours, theirs)
        return (Order.OLDER if older else Order.NOT_OLDER), None
