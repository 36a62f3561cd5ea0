"""The publish side of branch previews: one folder per source branch on a preview branch.

A preview of the source branch ``feature/x`` is its build with ``baseurl`` ``/preview/feature-x``,
published as the folder ``preview/feature-x/`` of the preview branch (``preview.publish_branch``)
in one commit, ``Preview of feature/x at <source commit>``; the branch's deletion is a commit
``Remove the preview of feature/x`` deleting that folder. Each commit replaces only its own
folder (:func:`deploybot.git.tree_edit.replace_folder`, no work tree): every other path of the
preview branch keeps its entry, so the previews of other branches are left as they are.

The folder's name (:func:`folder_name`) is the branch name made one safe path segment: each
``/`` and each character outside ``[A-Za-z0-9._-]`` becomes ``-`` (``feature/new ü`` ->
``feature-new--``). Two branches can give one name (``feature/x`` and ``feature-x``); the
pipeline refuses both then (:func:`collisions`).

The push follows the production publish's rules (:mod:`deploybot.publish.commit`): never
forced, a compare-and-swap on the tip just fetched, redone on the new tip when another run
(another branch's preview) pushed first, up to :data:`~deploybot.publish.commit.MAX_TRIES`
times; the caller's ``check_head`` runs on every tip fetched before anything is built on it
(the never-backwards check, :func:`last_preview`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.git import path_rules, repository, tree_edit
from deploybot.git.remote import Remote
from deploybot.git.repository import MODE_FILE, RemoteMovedError
from deploybot.publish.commit import MAX_TRIES, PublishResult
from deploybot.support.errors import PublishError
from deploybot.support.redact import redact_url

ROOT = "preview"
"""The preview branch's folder holding one folder per previewed source branch."""

FOLDER_TRAILER = "Preview-Folder"
"""The trailer of each preview commit naming the folder it replaced (:func:`last_preview`)."""

HISTORY_LIMIT = 1000
"""Commits of the preview branch :func:`last_preview` reads back at most."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_SUBJECT = re.compile(r"^Preview of (?P<branch>.+) at (?P<commit>[0-9a-f]{40})$")


def folder_name(branch: str) -> str:
    """The one path segment naming ``branch``'s preview: each ``/`` and each character outside
    ``[A-Za-z0-9._-]`` replaced by ``-`` (``feature/x`` -> ``feature-x``). A git branch name
    never starts with ``.`` nor holds ``..``, so the segment is never ``.`` or ``..``.

    Raises:
        SourceError: the result is a name git refuses as a path (:mod:`deploybot.git.path_rules`:
            ``.git`` and the like), which no valid branch name gives.
    """
    name = _UNSAFE.sub("-", branch)
    path_rules.check_path(f"{ROOT}/{name}", "preview folder")
    return name


def folder_of(branch: str) -> str:
    """The preview branch's folder of ``branch`` (``preview/feature-x``, no slash at the end)."""
    return f"{ROOT}/{folder_name(branch)}"


def baseurl_of(branch: str) -> str:
    """The ``baseurl`` ``branch``'s preview is built with (``/preview/feature-x``: Jekyll's
    form, no slash at the end; its pages live under ``/preview/feature-x/``)."""
    return f"/{folder_of(branch)}"


def collisions(branches: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The folder names (:func:`folder_name`) two or more of ``branches`` give, each with
    those branches sorted; ``{}`` when every branch has a folder of its own."""
    by_name: dict[str, list[str]] = {}
    for branch in branches:
        by_name.setdefault(folder_name(branch), []).append(branch)
    return {name: tuple(sorted(found)) for name, found in by_name.items() if len(found) > 1}


def preview_message(branch: str, source_commit: str) -> str:
    """The message of the commit publishing ``branch``'s preview of ``source_commit``: the
    subject ``Preview of <branch> at <source commit>`` and the :data:`FOLDER_TRAILER`."""
    return f"Preview of {branch} at {source_commit}\n\n{FOLDER_TRAILER}: {folder_of(branch)}\n"


def removal_message(branch: str) -> str:
    """The message of the commit deleting ``branch``'s preview folder."""
    return f"Remove the preview of {branch}\n\n{FOLDER_TRAILER}: {folder_of(branch)}\n"


@dataclass(frozen=True)
class FolderCommit:
    """What a preview commit says: ``author`` (``Name <email>``, also the committer),
    ``message`` (:func:`preview_message`, :func:`removal_message`) and ``when`` (aware)."""

    author: str
    message: str
    when: datetime


def publish_folder(
    url: Remote,
    branch: str,
    mirror: Path,
    folder: str,
    blobs: Mapping[str, str] | None,
    change: FolderCommit,
    *,
    check_head: Callable[[Repo, str], None] | None = None,
) -> PublishResult:
    """Replace ``folder`` of ``branch`` at ``url`` by the files ``blobs`` (``{path in the
    folder: blob hex}``, already in ``mirror``) or, with ``blobs`` None, delete it; commit as
    ``change`` says and push, never forced (the module doc). A missing branch is created
    with a root commit (not for a removal: nothing is there to remove); a tree that does
    not change makes no commit.

    ``check_head(mirror repo, remote tip)`` runs on every tip fetched, before anything is
    built on it; what it raises (:class:`~deploybot.publish.commit.OlderSourceError`) stops
    the publish.

    Returns:
        A :class:`~deploybot.publish.commit.PublishResult` (``new`` None: nothing changed).

    Raises:
        PublishError: the remote is unreachable, rejected the push, or moved under us
            :data:`~deploybot.publish.commit.MAX_TRIES` times.
        ConfigError: as :func:`deploybot.git.repository.fetch_refs`.
        SourceError: a path of ``blobs`` is refused by :mod:`deploybot.git.path_rules`.
        ValueError: a file of the branch is in the way of ``folder``.
    """
    for path in blobs or ():
        path_rules.check_path(f"{folder}/{path}", "output path")
    refname = f"refs/heads/{branch}"
    with repository.bare_repo(mirror) as repo:
        subtree = None
        if blobs:
            subtree = repository.write_tree(repo, {p: (MODE_FILE, b) for p, b in blobs.items()})
        for _ in range(MAX_TRIES):
            old = repository.fetch_refs(url, repo, [refname], PublishError)[refname]
            if check_head is not None and old is not None:
                check_head(repo, old)
            if old is None and subtree is None:
                return PublishResult(mirror, refname, None, None, ())  # nothing to remove
            old_tree = repository.commit_tree_id(repo, old) if old else None
            new_tree = tree_edit.replace_folder(repo, old_tree, folder, subtree)
            if old is not None and new_tree == old_tree:
                return PublishResult(mirror, refname, old, None, ())
            new = repository.make_commit(
                repo, new_tree, [old] if old else [], author=change.author,
                message=change.message, when=change.when,
            )  # fmt: skip
            changed = tuple(sorted(repository.changed_paths(repo, old_tree, new_tree)))
            try:
                repository.push_refs(url, repo, {refname: (old, new)}, PublishError)
            except RemoteMovedError:
                continue
            repository.set_local_refs(repo, {refname: new})
            return PublishResult(mirror, refname, old, new, changed)
    raise PublishError(
        f"push to {redact_url(url.url)}: {refname} kept moving; gave up after {MAX_TRIES} tries"
    )


def last_preview(repo: Repo, head: str, folder: str, limit: int = HISTORY_LIMIT) -> str | None:
    """The source commit (40 hex) of the newest commit from ``head`` (following first
    parents, at most ``limit`` commits) that published ``folder`` (its
    :data:`FOLDER_TRAILER`); None when the newest one touching it removed it, when none
    is found, or when a commit is missing from ``repo``."""
    current: str | None = head
    for _ in range(limit):
        if current is None:
            return None
        try:
            commit = repo[repository.oid(current)]
        except KeyError:
            return None
        if not isinstance(commit, Commit):
            return None
        text = commit.message.decode("utf-8", "replace")
        if f"\n{FOLDER_TRAILER}: {folder}\n" in f"\n{text}":
            found = _SUBJECT.match(text.partition("\n")[0])
            return found.group("commit") if found else None
        current = commit.parents[0].decode("ascii") if commit.parents else None
    return None
