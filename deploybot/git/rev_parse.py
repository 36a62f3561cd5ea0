"""Resolve a revision the way ``git rev-parse`` does for the common forms.

dulwich's ``parse_commit`` takes names and (abbreviated) ids only; people also type
``HEAD~1``, ``main^`` and ``asf-site^2``. Supported here: any name or id dulwich resolves,
followed by any chain of ``~N``, ``~``, ``^N`` and ``^`` (git's ``gitrevisions(7)``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from dulwich.objects import Commit
from dulwich.objectspec import parse_commit, parse_ref
from dulwich.repo import Repo

from deploybot.git import damage as git_damage
from deploybot.support.errors import DamagedRepositoryError, SourceError

_SUFFIX_RE = re.compile(r"(~\d*|\^\d*)$")


def resolve_commit(repo: Repo, rev: str) -> Commit:
    """Return the commit ``rev`` names in ``repo``.

    Raises:
        KeyError: ``rev`` names no commit (the message quotes ``rev`` as typed), or asks for
            a parent the commit does not have.
        DamagedRepositoryError: the commit ``rev`` names (a ref's) is missing from ``repo``,
            or it, or the pack or index holding it, cannot be read
            (:func:`deploybot.git.damage.damaged_object`; the line names the repository
            and ``git fsck``).
    """
    steps: list[str] = []
    base = rev
    while (m := _SUFFIX_RE.search(base)) and m.start() > 0:
        steps.insert(0, m.group(1))
        base = base[: m.start()]
    try:
        commit = parse_commit(repo, base.encode("utf-8"))
    except git_damage.DAMAGE_ERRORS as exc:
        damage = git_damage.damaged_object(exc)
        typed = (
            damage is not None and damage.missing and (damage.sha or "").startswith(base.lower())
        )
        if damage is not None and not typed:  # not an id typed: what a ref names is gone
            raise DamagedRepositoryError(damage.message(fallback=repo.path)) from exc
        if not isinstance(exc, (KeyError, ValueError)):
            raise
        _check_ref_target(repo, base)
        raise KeyError(f"unknown revision {rev!r}") from None
    for step in steps:
        commit = _step(repo, commit, step, rev)
    return commit


def _check_ref_target(repo: Repo, name: str) -> None:
    """Raise DamagedRepositoryError when ``name`` is a ref of ``repo`` whose object is not
    there (dulwich's ``parse_commit`` says only that it knows no such revision)."""
    try:
        sha = repo.refs[parse_ref(repo.refs, name.encode("utf-8"))]
    except (KeyError, ValueError):
        return  # no such ref: an unknown revision indeed
    if sha not in repo.object_store:
        damage = git_damage.DamagedObject(sha.decode("ascii", "replace"), None, missing=True)
        raise DamagedRepositoryError(damage.message(fallback=repo.path))


def _step(repo: Repo, commit: Commit, step: str, rev: str) -> Commit:
    count = int(step[1:]) if len(step) > 1 else 1
    if step[0] == "~":
        for _ in range(count):
            commit = _parent(repo, commit, 1, rev)
        return commit
    return commit if count == 0 else _parent(repo, commit, count, rev)


def _parent(repo: Repo, commit: Commit, number: int, rev: str) -> Commit:
    if len(commit.parents) < number:
        raise KeyError(
            f"unknown revision {rev!r}: {commit.id.decode()[:12]} has no parent {number}"
        )
    parent = repo[commit.parents[number - 1]]
    assert isinstance(parent, Commit)
    return parent


def commit_datetime(seconds: int, offset: int, commit: str) -> datetime:
    """Return a commit's committer date (``seconds`` since the epoch, ``offset`` seconds
    east of UTC, as git stores them) as an aware datetime.

    Raises:
        SourceError: naming ``commit`` (40 hex), when git's header holds a date Python's
            ``datetime`` cannot (an offset of a day or more, a year before 1 or after 9999).
    """
    try:
        return datetime.fromtimestamp(seconds, tz=timezone(timedelta(seconds=offset)))
    except (ValueError, OverflowError, OSError) as exc:
        hours, minutes = divmod(abs(offset) // 60, 60)
        git_date = f"{seconds} {'-' if offset < 0 else '+'}{hours:02d}{minutes:02d}"
        raise SourceError(
            f"commit {commit}: committer date {git_date} is out of range (a date needs an "
            "offset under 24 hours and a year from 1 to 9999)"
        ) from exc
