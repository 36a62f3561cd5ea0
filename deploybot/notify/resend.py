"""``deploybot notify --commit REV``: the combined email for any existing commit, sent now.

For re-sending an email that was lost, and for checking the format against real history: the email
is composed exactly as the pipeline composes it (:func:`deploybot.notify.commit_email.build_email`)
with ``old`` = the commit's first parent, and handed straight to a transport, bypassing the outbox
(whose ``sent/`` would otherwise refuse a second copy).
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from dulwich.errors import NotGitRepository
from dulwich.refs import HEADREF, Ref
from dulwich.repo import Repo

from deploybot.config.checks import author_name
from deploybot.config.schema import NotifyConfig
from deploybot.git import damage as git_damage
from deploybot.git.rev_parse import resolve_commit
from deploybot.notify.compose.envelope import BRANCH_PREFIX
from deploybot.notify.compose.sources import SourceRepo
from deploybot.notify.deliver.transport import make_transport
from deploybot.notify.gitlog.damage import damaged_repository_error
from deploybot.support.errors import DeploybotError, UsageError

PLACEHOLDER_TO = "commits@example.org"
PLACEHOLDER_FROM = "deploybot@example.org"


@dataclasses.dataclass(frozen=True)
class Target:
    """The commit to announce: its id, first parent (None for a root commit), full refname
    and committer name (the default pusher)."""

    commit: str
    parent: str | None
    refname: str
    committer: str


def default_notify(repo_path: Path, transport: str = "stdout") -> NotifyConfig:
    """``[notify]`` for use without a config file: placeholder addresses, the repository
    path as ``repository_url`` (its last component is the ``[repo]`` name)."""
    return NotifyConfig(
        transport=transport,
        to=(PLACEHOLDER_TO,),
        sender=PLACEHOLDER_FROM,
        repository_url=str(repo_path.resolve()),
    )


def resolve(repo_path: Path, rev: str, branch: str | None) -> Target:
    """Resolve ``rev`` (id, prefix, ref name, ``~N``/``^N``) and the branch in ``repo_path``.

    ``branch`` None means the repository's current branch (where ``HEAD`` points, bare or
    not).

    Raises:
        DeploybotError: not a repository, ``rev`` names no commit, or ``HEAD`` is detached
            and no ``branch`` was given (exit 1).
    """
    try:
        repo = Repo(str(repo_path))
    except (NotGitRepository, OSError) as exc:
        raise DeploybotError(f"{repo_path}: not a git repository ({exc})") from None
    with repo:
        try:
            commit = resolve_commit(repo, rev)
        except KeyError as exc:
            raise UsageError(f"{repo_path}: {exc.args[0]}") from None
        return Target(
            commit=commit.id.decode("ascii"),
            parent=commit.parents[0].decode("ascii") if commit.parents else None,
            refname=_refname(repo, branch or _branch_named_in(repo, rev)),
            committer=author_name(commit.committer.decode("utf-8", "replace")),
        )


def _branch_named_in(repo: Repo, rev: str) -> str | None:
    """The branch ``rev`` starts from (``asf-site~1`` -> ``asf-site``), when it names one."""
    base = re.split(r"[~^]", rev, maxsplit=1)[0].removeprefix(BRANCH_PREFIX)
    return base if base and Ref((BRANCH_PREFIX + base).encode()) in repo.refs else None


def _refname(repo: Repo, branch: str | None) -> str:
    if branch:
        return branch if branch.startswith(BRANCH_PREFIX) else BRANCH_PREFIX + branch
    head = repo.refs.read_ref(HEADREF) or b""
    if not head.startswith(b"ref: " + BRANCH_PREFIX.encode()):
        raise DeploybotError("HEAD is not on a branch: name one with --branch")
    return head[len(b"ref: ") :].decode("utf-8")


def commit_email(
    repo_path: Path,
    target: Target,
    notify: NotifyConfig,
    *,
    now: datetime,
    host: str | None,
    sources: SourceRepo | None = None,
) -> bytes:
    """Compose the combined email for ``target`` (see
    :func:`deploybot.notify.commit_email.build_email`)."""
    from deploybot.notify.commit_email import build_email

    if not notify.pusher:
        notify = dataclasses.replace(notify, pusher=target.committer)
    return build_email(
        repo_path, target.refname, target.parent, target.commit, notify, now=now, host=host,
        sources=sources,
    )  # fmt: skip


def resend_commit(
    repo_path: Path,
    rev: str,
    notify: NotifyConfig,
    *,
    branch: str | None = None,
    now: datetime,
    host: str | None = None,
    stream: BinaryIO | None = None,
    sources: SourceRepo | None = None,
) -> str:
    """Compose the email for ``rev`` and send it with ``notify.transport`` right away.

    ``stdout`` writes the whole message, headers included, to ``stream`` (default
    ``sys.stdout.buffer``). With ``sources`` (the source mirror) the email names the
    commit's source commits when its record names them (:mod:`deploybot.notify.compose.sources`).

    Returns:
        The commit id announced (40 hex).

    Raises:
        DeploybotError: see :func:`resolve`.
        ConfigError: see :func:`deploybot.notify.deliver.transport.make_transport`.
        DamagedRepositoryError: an object the email needs is missing or cannot be read (a
            damaged repository: :func:`deploybot.notify.gitlog.damage.damaged_repository_error`);
            nothing was sent (exit 1: the repository does not mend by waiting).
        NotifyError: the transport failed (exit 75).
    """
    target = resolve(repo_path, rev, branch)
    send = make_transport(notify, stream=stream)
    try:
        message = commit_email(repo_path, target, notify, now=now, host=host, sources=sources)
    except git_damage.DAMAGE_ERRORS as exc:
        damaged = damaged_repository_error(exc, repo_path)
        if damaged is None:
            raise
        raise damaged from exc
    send(message)
    return target.commit
