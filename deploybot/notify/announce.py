"""Which emails a new build commit calls for, and queueing them exactly once.

The state is a record of the last commit emailed per publish branch,
``<state_dir>/notify/last-emailed.json`` = ``{refname: {"commit": 40 hex, "at": Unix s}}``,
written atomically only after the emails are in the outbox. With it, git-multimail's rules
(``notifier-research.md`` §1.2) apply to everything the branch gained since the last email,
not only to the newest build:

- one new commit: the combined email
  (:func:`deploybot.notify.compose.email.compose_combined_email`);
- several (builds made while mail was off, or commits pushed by hand): the summary email and
  one ``NN/TT`` email per commit, oldest first (:mod:`deploybot.notify.compose.series`); more than
  ``max_commit_emails``: the summary only;
- no record (a fresh machine): only the new build commit, never the whole history;
- a record that is not an ancestor of the new commit (history rewritten): only the new build.

Emails that are still waiting in the outbox and were never handed to a transport with an
uncertain outcome (state ``queued`` or ``failed``, no message of their batch sent) are
*withdrawn* and folded into the new announcement: three builds made while the SMTP server is
down become one summary and three commit emails when it is back, not three combined emails.
A commit email keeps the Message-ID of the combined email it replaces (both derive from the
commit id), so even a failed attempt that did reach the list is recognisable as a duplicate.

The email composer and git's log and diff code (:mod:`.compose.email`, :mod:`.compose.series`,
:mod:`.gitlog`) are imported by the functions that plan and make an email, not with this
module: every run imports it, and a run with mail off (``transport = "none"``) needs neither.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deploybot.config.schema import NotifyConfig
from deploybot.notify.commit_email import source_log
from deploybot.notify.compose.envelope import Envelope, Limits
from deploybot.notify.compose.sources import SourceRepo
from deploybot.notify.deliver.outbox import (
    EMAIL,
    SENT_DIR,
    SUPERSEDED_DIR,
    queue_email,
    read_status,
    withdraw,
    write_json,
)

if TYPE_CHECKING:
    from deploybot.notify.compose.links import BrokenLinks
    from deploybot.notify.gitlog.excerpt import LogExcerpt

log = logging.getLogger(__name__)

RECORD = Path("notify") / "last-emailed.json"
PUBLISHED = Path("notify") / "last-published.json"
"""The last build commit this state directory pushed (or was about to: it is written, fsynced,
right before the push), so a run that dies between the push and queueing that build's email
is caught up by the next one."""


@dataclass(frozen=True)
class Context:
    """What every email of one announcement shares: the repository the git data comes from,
    the ``[notify]`` settings, the envelope (``date`` is the send time of the first email),
    the size limits, and where the builds' source commits can be read (None: nowhere, so
    no email names them)."""

    repo_path: Path
    notify: NotifyConfig
    envelope: Envelope
    limits: Limits
    sources: SourceRepo | None = None

    @classmethod
    def from_config(
        cls,
        repo_path: Path,
        refname: str,
        notify: NotifyConfig,
        *,
        now: datetime,
        host: str | None,
        sources: SourceRepo | None = None,
    ) -> Context:
        """The context for announcing ``refname`` of ``repo_path`` with ``notify`` at ``now``
        (``host`` None: :func:`deploybot.notify.compose.names.default_host`); see
        :meth:`.Envelope.from_config`."""
        envelope = Envelope.from_config(
            notify, repo_path=repo_path, refname=refname, date=now, host=host
        )
        return cls(repo_path, notify, envelope, Limits.from_config(notify), sources)


@dataclass(frozen=True)
class RefUpdate:
    """One update of the publish branch to announce, as git's post-receive hook reads it
    (``<old> <new> <refname>``), in the repository that holds both commits."""

    repo_path: Path
    """A repository (bare or not) holding the branch's history."""
    refname: str
    """``refs/heads/<publish branch>``."""
    old: str | None
    """The tip before (40 hex), None when the update created the branch."""
    new: str
    """The build commit (40 hex)."""


@dataclass(frozen=True)
class Queued:
    """One composed message of an announcement, before it is queued."""

    key: str
    """Its outbox key: the commit, or ``<old>-<new>`` for a summary."""
    message: bytes
    """The message (RFC 5322), as composed."""
    kind: str
    """``combined`` (one build), ``summary`` or ``diff`` (a series): the outbox's ``role``."""


@dataclass(frozen=True)
class _Batch:
    """A never-delivered batch in the outbox: the start of the range it announced, and its
    messages still waiting."""

    start: str
    waiting: list[Path]


@dataclass(frozen=True)
class Plan:
    """The range to announce: ``start..new`` holds ``commits`` (oldest first); ``withdrawn``
    are the outbox messages it replaces."""

    start: str | None
    commits: tuple[str, ...]
    withdrawn: tuple[Path, ...]


def read_record(state_dir: Path, refname: str, record: Path = RECORD) -> str | None:
    """Return the last commit emailed for ``refname`` (or, with ``record=PUBLISHED``, the
    last one this state directory pushed), or None (no record, unreadable)."""
    try:
        data = json.loads((state_dir / record).read_text(encoding="utf-8"))
        commit = data[refname]["commit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return commit if isinstance(commit, str) else None


def write_record(state_dir: Path, refname: str, commit: str, record: Path = RECORD) -> None:
    """Record ``commit`` as the last commit emailed for ``refname`` (or, with
    ``record=PUBLISHED``, pushed by this state directory); an atomic write.

    Raises:
        OSError: the state directory cannot be written.
    """
    path = state_dir / record
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    data[refname] = {"commit": commit, "at": time.time()}
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_json(path, data)


def plan(ctx: Context, old: str | None, new: str, outbox: Path, state_dir: Path) -> Plan | None:
    """Return what to announce for ``new`` (whose parent on the branch is ``old``), or None
    when ``new`` was already announced. See the module docstring for the rules."""
    from deploybot.notify.gitlog.summary import is_ancestor, new_commits  # lazy: module doc

    record = read_record(state_dir, ctx.envelope.refname)
    if record == new:
        return None
    start = old
    if record is not None and record != old:
        if is_ancestor(ctx.repo_path, record, new):
            start = record
        else:
            log.warning("last emailed commit %s is not an ancestor of %s", record[:12], new[:12])
    withdrawn: list[Path] = []
    while start is not None:
        batch = _withdrawable(outbox, ctx.envelope.refname, start)
        if batch is None:
            break
        start = batch.start
        withdrawn += batch.waiting
    return Plan(start, tuple(new_commits(ctx.repo_path, start, new)), tuple(withdrawn))


def queue_plan(ctx: Context, chosen: Plan, outbox: Path) -> list[str]:
    """Compose the emails for ``chosen``, withdraw what it replaces, queue them in order.

    Returns:
        The outbox keys queued (summary first).

    Raises:
        ValueError: see :func:`deploybot.notify.compose.email.compose_combined_email`.
        OSError: the outbox cannot be written.
    """
    new = chosen.commits[-1]
    if len(chosen.commits) == 1:
        messages = [Queued(new, _combined(ctx, chosen.start, new), "combined")]
    else:
        messages = _series(ctx, chosen)
    keys = [queued.key for queued in messages]
    withdraw(list(chosen.withdrawn))
    queued_at = time.time()
    for seq, queued in enumerate(messages):
        meta = {
            "queued_at": queued_at,
            "seq": seq,
            "subject": _subject_of(queued.message),
            "role": queued.kind,
            "refname": ctx.envelope.refname,
            "old": chosen.start,
            "new": new,
            "batch": keys[0],
            "batch_keys": keys,
        }
        queue_email(outbox, queued.key, queued.message, meta=meta)
    return keys


def _combined(ctx: Context, old: str | None, new: str) -> bytes:
    from deploybot.notify.compose.email import compose_combined_email  # lazy: module doc
    from deploybot.notify.gitlog.summary import brief_summary

    [(short, subject)] = brief_summary(ctx.repo_path, [new])
    return compose_combined_email(
        envelope=ctx.envelope,
        log_text=_log(ctx, new),
        old=old,
        new=new,
        subject_line=subject,
        limits=ctx.limits,
        short=short,
        sources=source_log(ctx.repo_path, new, ctx.sources),
        broken=broken_links(ctx.repo_path, new),
    )


def _series(ctx: Context, chosen: Plan) -> list[Queued]:
    """The summary email, then (within ``max_commit_emails``) one email per commit."""
    from deploybot.notify.compose.series import (  # lazy on purpose: module docstring
        compose_summary_email,
        summary_message_id,
    )
    from deploybot.notify.gitlog.summary import brief_summary, diff_tree_summary

    assert chosen.start is not None  # a created branch is always announced as one email
    start, commits, n = chosen.start, list(chosen.commits), ctx.notify
    [old_brief, *new_brief] = brief_summary(ctx.repo_path, [start, *commits])
    summary = compose_summary_email(
        envelope=ctx.envelope,
        old=start,
        new=commits[-1],
        old_brief=old_brief,
        new_brief=new_brief,
        changes=diff_tree_summary(ctx.repo_path, start, commits[-1]),
        limits=ctx.limits,
    )
    out = [Queued(f"{start}-{commits[-1]}", summary, "summary")]
    if n.max_commit_emails and len(commits) > n.max_commit_emails:
        log.warning(
            "too many new commits (%d > max_commit_emails %d): summary email only",
            len(commits),
            n.max_commit_emails,
        )
        return out
    msgid = summary_message_id(start, commits[-1], ctx.envelope.to, ctx.envelope.host)
    for num, (commit, (_, subject)) in enumerate(zip(commits, new_brief, strict=True), 1):
        email = _commit_email(ctx, commit, num, len(commits), subject, msgid)
        out.append(Queued(commit, email, "diff"))
    return out


def _commit_email(ctx: Context, commit: str, num: int, tot: int, subject: str, msgid: str) -> bytes:
    from deploybot.notify.compose.series import compose_commit_email  # lazy: module doc

    # git-multimail's IncrementalDateTime: one second apart, so clients sort them.
    date = ctx.envelope.date + timedelta(seconds=num)
    return compose_commit_email(
        envelope=replace(ctx.envelope, date=date),
        log_text=_log(ctx, commit),
        commit=commit,
        num=num,
        tot=tot,
        subject_line=subject,
        in_reply_to=msgid,
        limits=ctx.limits,
        sources=source_log(ctx.repo_path, commit, ctx.sources),
        broken=broken_links(ctx.repo_path, commit),
    )


def _log(ctx: Context, commit: str) -> LogExcerpt:
    """The part of ``commit``'s ``git log`` text its email shows (cost bounded by that)."""
    from deploybot.notify.gitlog.commit_log import read_log_excerpt  # lazy: module doc

    return read_log_excerpt(
        ctx.repo_path,
        commit,
        max_lines=ctx.limits.max_lines,
        max_line_length=ctx.limits.max_line_length,
    )


def _subject_of(message: bytes) -> str:
    """The decoded Subject of a composed message, for outbox listings."""
    from email import message_from_bytes, policy

    head = message.split(b"\n\n", 1)[0] + b"\n\n"
    return str(message_from_bytes(head, policy=policy.default).get("Subject", ""))


def _withdrawable(outbox: Path, refname: str, end: str) -> _Batch | None:
    """A never-delivered batch of ``refname`` announcing ``..end``.

    Looks in the outbox and in ``superseded/`` (a run that withdrew a batch and died before
    queueing its replacement). None when there is none, or when a message of it was sent or
    is ``sending`` (uncertain), or when it announced a created branch.
    """
    for folder in (outbox, outbox / SUPERSEDED_DIR):
        for path in sorted(folder.glob(f"*{EMAIL}")) if folder.is_dir() else []:
            status = read_status(path)
            if status.get("refname") != refname or status.get("new") != end:
                continue
            start, keys = status.get("old"), status.get("batch_keys") or [path.stem]
            if isinstance(start, str) and _never_delivered(outbox, keys):
                paths = [outbox / f"{key}{EMAIL}" for key in keys]
                return _Batch(start, [p for p in paths if p.exists()])
    return None


def _never_delivered(outbox: Path, keys: list[str]) -> bool:
    for key in keys:
        if (outbox / SENT_DIR / f"{key}{EMAIL}").exists():
            return False
        pending = outbox / f"{key}{EMAIL}"
        if pending.exists() and read_status(pending).get("state") == "sending":
            return False
    return True


def broken_links(repo_path: Path, build: str) -> BrokenLinks | None:
    """The broken links build commit ``build`` of ``repo_path`` has, as its record lists
    them (:meth:`.compose.links.BrokenLinks.from_record`), or None."""
    from deploybot.notify.compose.links import BrokenLinks  # lazy on purpose: module doc
    from deploybot.notify.source_read import read_record

    return BrokenLinks.from_record(read_record(repo_path, build))


__all__ = ["Context", "Plan", "plan", "queue_plan", "read_record", "source_log", "write_record"]
