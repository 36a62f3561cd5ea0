"""The git reads behind an email's source section (:mod:`deploybot.notify.compose.sources`): which
source commits a build commit was made from, and those commits in the source repository.

* The range: each build commit's record is a note under :data:`deploybot.record.refs.NOTES_REF`
  (``refs/notes/deploybot``) in the publish repository, ``key value`` lines (the publish
  stage's format). Each record is a notes commit whose tree holds the note of one build (or,
  written by ``git notes``, of many, fanned out as ``ab/cdef...``), so a build's record is in
  the newest notes commit whose tree names it: the notes history is walked from its tip,
  first parents, at most :data:`MAX_NOTES` commits. The build's own record gives the new
  source commit, its first parent's the old one: each the commit its tree was built from
  (:func:`deploybot.record.reasons.built_from`: ``build-source``, else ``source-commit``), not
  a later one whose changes the build does not read.
* The commits: ``git log old..new`` in the source repository (and ``git log new..old``, the
  commits dropped when the source branch went back or was rewritten), with git's default order
  (newest commit date first) and its stop rule (once every commit left to walk is reachable
  from ``old``), reading at most :data:`MAX_WALK` commits each: a source rewound to an
  unrelated history, or a first build of a long one, costs that much and no more.

Nothing here raises for what the source section can do without: a record or a commit that
is missing or cannot be read (a source mirror that lost one, a notes ref never fetched)
leaves the section out or the walk shorter, and is logged.
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.repo import Repo

from deploybot.config.checks import author_name
from deploybot.git import repository
from deploybot.git.damage import UNREADABLE_OBJECT_ERRORS
from deploybot.notify.compose.sources import MAX_LISTED, SourceCommit, SourceLog, SourceRepo
from deploybot.notify.gitlog.commit_log import abbrev_length, unique_abbrev
from deploybot.notify.gitlog.message import commit_message, commit_subject

log = logging.getLogger(__name__)

MAX_NOTES = 10_000
"""The most notes commits read to find the records of one build and its parent."""
MAX_WALK = 1_000
"""The most source commits read for one email's section, each way (new and dropped)."""
SLOP = 5
"""git's ``SLOP`` (revision.c): commits walked on once every one left is uninteresting, in
case a commit with an older date turns out reachable from ``old`` (clock skew)."""

_T = TypeVar("_T")


def read_source_log(
    publish_path: Path,
    build: str,
    source: SourceRepo,
    *,
    max_listed: int = MAX_LISTED,
    max_walk: int = MAX_WALK,
) -> SourceLog | None:
    """The source section's data for build commit ``build`` of the publish repository at
    ``publish_path``, read from ``source``.

    Returns:
        None when ``build``'s record names no source commit, or that commit is not in
        ``source.path``; else the :class:`deploybot.notify.compose.sources.SourceLog` (see
        :mod:`deploybot.notify.compose.sources`).

    Raises:
        OSError: a repository cannot be opened. (Missing objects do not raise: see the
            module docstring.)
    """
    from deploybot.record import note, reasons

    with Repo(str(publish_path)) as publish:
        parent = _first_parent(publish, build)
        records = _records(publish, [build] if parent is None else [build, parent])
    mine = records.get(build, {})
    new = reasons.built_from(mine)
    if new is None:
        log.info("build %s has no record of its source commit: no source section", build[:12])
        return None
    old = reasons.built_from(records.get(parent, {})) if parent is not None else None
    with Repo(str(source.path)) as repo:
        if _commit(repo, new) is None:
            log.info("source commit %s is not in %s: no source section", new[:12], source.path)
            return None
        if old is not None and _commit(repo, old) is None:
            log.info("source commit %s is not in %s: listing from %s", old[:12], source.path,
                     new[:12])  # fmt: skip
            old = None
        walk = _walk(repo, new, old, max_walk)
        # what the previous build's source had and this one's has not: a rewound source
        back = _walk(repo, old, new, max_walk) if old is not None and old != new else _Walk()
        length = abbrev_length(repo)
        listed = tuple(_brief(repo, c, length) for c in walk.commits[:max_listed])
        dropped = tuple(_brief(repo, c, length) for c in back.commits[:max_listed])
        short = {sha: unique_abbrev(repo, sha.encode(), length).decode() for sha in (new, old)
                 if sha is not None}  # fmt: skip
    return SourceLog(
        url=source.url,
        branch=source.branch,
        new=short[new],
        old=short[old] if old is not None else None,
        first=parent is None,
        commits=listed,
        more=len(walk.commits) - len(listed),
        complete=walk.complete,
        why=reasons.why_built(mine),
        source_moved=reasons.reason(mine) is note.Reason.SOURCE,
        dropped=dropped,
        dropped_more=len(back.commits) - len(dropped),
        dropped_complete=back.complete,
    )


def read_record(publish_path: Path, build: str) -> dict[str, str]:
    """The record of build commit ``build`` of the publish repository at ``publish_path``
    (:func:`deploybot.record.note.note_fields`), or ``{}`` when it has none (or its notes
    cannot be read: see the module docstring). Raises ``OSError`` when the repository cannot
    be opened."""
    with Repo(str(publish_path)) as publish:
        return _records(publish, [build]).get(build, {})


def _first_parent(repo: Repo, build: str) -> str | None:
    commit = repo[ObjectID(build.encode("ascii"))]
    if not isinstance(commit, Commit):
        raise KeyError(f"{build} is not a commit")
    return commit.parents[0].decode("ascii") if commit.parents else None


def _records(repo: Repo, builds: list[str]) -> dict[str, dict[str, str]]:
    """The newest record of each of ``builds``, its ``key value`` lines
    (:func:`deploybot.record.note.note_fields`); builds without one are left out."""
    from deploybot.record.refs import NOTES_REF

    found: dict[str, dict[str, str]] = {}
    tip = repository.local_ref(repo, NOTES_REF)
    seen_trees: set[bytes] = set()
    for _ in range(MAX_NOTES):
        if tip is None or len(found) == len(builds):
            break
        notes = _commit(repo, tip)
        if notes is None:
            log.info("notes commit %s is missing: stopped looking for records", tip[:12])
            break
        if notes.tree not in seen_trees:
            seen_trees.add(notes.tree)
            for build in builds:
                if build not in found:
                    record = _note(repo, notes.tree, build)
                    if record is not None:
                        found[build] = record
        tip = notes.parents[0].decode("ascii") if notes.parents else None
    return found


def _note(repo: Repo, tree_id: bytes, build: str) -> dict[str, str] | None:
    """The ``key value`` lines of ``build``'s note in the notes tree ``tree_id`` (flat, or
    fanned out in 2-digit folders as ``git notes`` writes it), or None."""
    from deploybot.record.note import note_fields

    name = build.encode("ascii")
    tree = _object(repo, tree_id, Tree)
    while tree is not None and name:
        entries = {entry.path: entry.sha for entry in tree.iteritems()}
        if name in entries:
            blob = _object(repo, entries[name], Blob)
            text = blob.as_raw_string().decode("utf-8", "replace") if blob is not None else ""
            return note_fields(text)
        sub = entries.get(name[:2])
        tree = _object(repo, sub, Tree) if sub is not None else None
        name = name[2:]
    return None


@dataclass
class _Walk:
    commits: list[Commit] = field(default_factory=list)
    complete: bool = True


def _walk(repo: Repo, new: str, old: str | None, budget: int) -> _Walk:
    """``git log old..new``'s commits (all of ``new``'s ancestry without ``old``), newest
    commit date first, reading at most ``budget`` commits (``complete`` False then)."""
    out = _Walk()
    bad: dict[bytes, bool] = {}  # every commit seen: is it reachable from old?
    queue: list[tuple[int, int, bytes]] = []
    parsed: dict[bytes, Commit] = {}
    counter = 0

    def push(sha: bytes, uninteresting: bool) -> None:
        nonlocal counter
        if sha in bad:
            if uninteresting and not bad[sha]:
                _mark(parsed, bad, sha)
            return
        commit = _commit(repo, sha.decode("ascii"))
        if commit is None:  # history cut short (a shallow boundary, a lost object)
            return
        parsed[sha] = commit
        bad[sha] = uninteresting
        counter += 1
        heapq.heappush(queue, (-commit.commit_time, counter, sha))

    push(new.encode("ascii"), False)
    if old is not None:
        push(old.encode("ascii"), True)
    slop = SLOP
    while queue:
        if len(parsed) > budget:
            out.complete = False
            break
        if all(bad[sha] for _, _, sha in queue):
            slop -= 1
            if slop <= 0:
                break
        else:
            slop = SLOP
        _, _, sha = heapq.heappop(queue)
        commit = parsed[sha]
        for parent in commit.parents:
            push(parent, bad[sha])
        if not bad[sha]:
            out.commits.append(commit)
    out.commits = [c for c in out.commits if not bad[c.id]]
    return out


def _mark(parsed: dict[bytes, Commit], bad: dict[bytes, bool], sha: bytes) -> None:
    """Mark ``sha`` and its ancestors already seen as reachable from ``old`` (git's
    ``mark_parents_uninteresting``): a commit first reached from ``new`` can later turn out
    to be ``old``'s."""
    todo = [sha]
    while todo:
        current = todo.pop()
        if bad.get(current, True):
            continue
        bad[current] = True
        commit = parsed.get(current)
        if commit is not None:
            todo.extend(commit.parents)


def _brief(repo: Repo, commit: Commit, length: int) -> SourceCommit:
    return SourceCommit(
        short=unique_abbrev(repo, commit.id, length).decode("ascii"),
        author=author_name(commit.author.decode("utf-8", "replace")),
        subject=commit_subject(commit_message(commit)),
    )


def _commit(repo: Repo, sha: str) -> Commit | None:
    return _object(repo, sha.encode("ascii"), Commit)


def _object(repo: Repo, sha: bytes, kind: type[_T]) -> _T | None:
    """The object ``sha`` if it is in ``repo``, readable, and a ``kind``, else None."""
    try:
        obj = repo.object_store[ObjectID(sha)]
    except KeyError:
        return None
    except UNREADABLE_OBJECT_ERRORS as exc:  # a damaged file: as good as missing here
        log.info("git object %s in %s cannot be read (%s)", sha.decode("ascii", "replace"),
                 repo.path, exc)  # fmt: skip
        return None
    return obj if isinstance(obj, kind) else None
