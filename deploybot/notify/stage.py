"""The notify stage's entry points: announce a build commit, deliver what waits, list it.

Three channels share the outbox: email (``*.eml``, :mod:`deploybot.notify.deliver.transport`),
the webhook (``*.http``, :mod:`deploybot.notify.deliver.webhook`) and the forge's commit statuses
(``*.status``, :mod:`deploybot.notify.deliver.forge_status`). :func:`deliver_all` runs them in
threads of their own, so a slow or failing channel neither blocks nor delays another; each
keeps its own retries and backoff.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from deploybot.config.schema import NotifyConfig, StatusConfig
from deploybot.notify.announce import (
    PUBLISHED,
    Context,
    RefUpdate,
    plan,
    queue_plan,
    read_record,
    write_record,
)
from deploybot.notify.compose.names import repo_name_for
from deploybot.notify.compose.sources import SourceRepo
from deploybot.notify.deliver.forge_status import STATUS, deliver_statuses, is_on
from deploybot.notify.deliver.outbox import (
    EMAIL,
    FAILED_DIR,
    KINDS,
    DeliveryReport,
    PendingEmail,
    deliver_pending,
    list_pending,
    list_refused,
)
from deploybot.notify.deliver.transport import make_transport
from deploybot.notify.deliver.webhook import (
    WEBHOOK,
    make_webhook_sender,
    queue_webhook,
    webhook_payload,
    webhook_url,
)
from deploybot.state import checkpoint

log = logging.getLogger("deploybot.notify.delivery")

OUTBOX = "outbox"


def announce(
    update: RefUpdate,
    notify: NotifyConfig,
    *,
    state_dir: Path,
    now: datetime,
    host: str | None = None,
    retry_now: bool = False,
    sources: SourceRepo | None = None,
    status: StatusConfig | None = None,
) -> DeliveryReport:
    """Queue the emails and the webhook entry for ``update`` (the build commit
    ``update.new``), then deliver (the commit statuses waiting too, with ``status``).

    Args:
        update: the publish branch's update (:class:`deploybot.notify.announce.RefUpdate`).
        notify: the ``[notify]`` configuration.
        state_dir: holds ``outbox/`` and the last-emailed record (``notify/``).
        now: send time, timezone-aware (``Date`` headers).
        host: ``X-Git-Host`` and Message-ID domain; default
            :func:`deploybot.notify.compose.names.default_host`.
        retry_now: also retry messages whose backoff has not expired.
        sources: the source repository the builds were made from; each build's email then
            names its source commits (:mod:`deploybot.notify.compose.sources`). None: no
            email names them.

    Returns:
        The merged :class:`DeliveryReport` of both channels.

    Raises:
        ConfigError: an unusable transport setting (email channel).
        OSError: the state directory cannot be written.
    """
    outbox = state_dir / OUTBOX
    queue_emails(update, notify, state_dir=state_dir, now=now, host=host, sources=sources)
    if notify.webhook.url or notify.webhook.url_env:
        queue_webhook(outbox, _payload(update, notify))
    return deliver_all(notify, outbox, retry_now=retry_now, status=status)


def note_pushing(state_dir: Path, refname: str, commit: str) -> None:
    """Record, durably (fsynced), that this state directory is about to push build
    ``commit`` to ``refname``. Call it *before* the push: if the push lands and the run
    dies before the email is queued (kill -9, disk full), :func:`unannounced` finds the
    branch head equal to this record and the next run sends the email; a push that never
    landed leaves a record no head will equal. Raises OSError when the state dir is
    unwritable (then nothing is pushed)."""
    write_record(state_dir, refname, commit, PUBLISHED)
    checkpoint.reached(checkpoint.BEFORE_PUSH, state_dir)


def unannounced(repo_path: Path, refname: str, head: str, state_dir: Path) -> RefUpdate | None:
    """Return the update to ``head`` from its first parent when ``head`` still needs its
    email, else None.

    ``head`` is owed an email when it was never announced and either this state directory
    pushed it (:func:`note_pushing`) or it descends from the last commit emailed here:
    in both cases a run pushed it and died before its email reached the outbox. A head
    pushed from elsewhere, seen by a fresh state directory, is owed nothing here.
    """
    record = read_record(state_dir, refname)
    if record == head:
        return None
    if read_record(state_dir, refname, PUBLISHED) != head:  # not pushed here
        if record is None:
            return None
        # lazy on purpose, as in .announce: git's log and diff code only when it is needed
        from deploybot.notify.gitlog.summary import is_ancestor

        if not is_ancestor(repo_path, record, head):
            return None
    with Repo(str(repo_path)) as repo:
        commit = repo[ObjectID(head.encode("ascii"))]
        assert isinstance(commit, Commit)
        parents = commit.parents
    old = parents[0].decode("ascii") if parents else None
    return RefUpdate(repo_path, refname, old, head)


def queue_emails(
    update: RefUpdate,
    notify: NotifyConfig,
    *,
    state_dir: Path,
    now: datetime,
    host: str | None = None,
    sources: SourceRepo | None = None,
) -> list[str]:
    """Queue the emails announcing everything up to ``update.new`` and move the record there.

    See :mod:`.announce` for which emails; with ``transport = "none"`` nothing is queued.
    ``sources``: as :func:`announce`.

    Returns:
        The outbox keys queued, in sending order (empty when nothing was due).
    """
    if notify.transport == "none":
        write_record(state_dir, update.refname, update.new)
        return []
    ctx = Context.from_config(
        update.repo_path, update.refname, notify, now=now, host=host, sources=sources
    )
    outbox = state_dir / OUTBOX
    chosen = plan(ctx, update.old, update.new, outbox, state_dir)
    keys = queue_plan(ctx, chosen, outbox) if chosen and chosen.commits else []
    write_record(state_dir, update.refname, update.new)
    return keys


def _payload(update: RefUpdate, notify: NotifyConfig) -> dict[str, object]:
    from deploybot.notify.gitlog.summary import brief_summary, diff_tree  # lazy: .announce

    repo_path, refname, old, new = update.repo_path, update.refname, update.old, update.new
    with Repo(str(repo_path)) as repo:
        obj = repo[new.encode("ascii")]
        author = obj.author.decode("utf-8", "replace") if isinstance(obj, Commit) else ""
    [(_, subject)] = brief_summary(repo_path, [new])
    return webhook_payload(
        repo_name=repo_name_for(notify.repository_url, repo_path),
        repository_url=notify.repository_url,
        refname=refname,
        old=old,
        new=new,
        subject=subject,
        author=author,
        diff=diff_tree(repo_path, old, new, harder=False),
    )


def deliver_all(
    notify: NotifyConfig,
    outbox: Path,
    *,
    retry_now: bool = False,
    clock: Callable[[], float] = time.time,
    status: StatusConfig | None = None,
) -> DeliveryReport:
    """Deliver the due emails, webhook entries and (with ``status``, the ``[status]``
    table) commit statuses in ``outbox``, each channel in its thread.

    A channel that is off (``transport = "none"``, no webhook URL, no ``status.api``) is
    left alone. If a channel
    raises (a ConfigError for its settings, or a bug), the other still finishes first; then
    the first such exception is raised.

    Returns:
        Both channels' reports merged (emails first).
    """
    if not outbox.is_dir():
        return DeliveryReport(sent=(), failed=())
    jobs: list[Callable[[], DeliveryReport]] = []
    if notify.transport != "none" and any(outbox.glob(f"*{EMAIL}")):
        jobs.append(lambda: _deliver_email(notify, outbox, retry_now, clock))
    if (notify.webhook.url or notify.webhook.url_env) and any(outbox.glob(f"*{WEBHOOK}")):
        jobs.append(lambda: _deliver_webhook(notify, outbox, retry_now, clock))
    if status is not None and is_on(status) and any(outbox.glob(f"*{STATUS}")):
        jobs.append(lambda: deliver_statuses(status, outbox, retry_now=retry_now, clock=clock))
    if not jobs:  # the common case: nothing waits; no transport set up, no threads
        return DeliveryReport(sent=(), failed=())
    with ThreadPoolExecutor(max_workers=max(len(jobs), 1)) as pool:
        futures = [pool.submit(job) for job in jobs]
    reports, errors = [], []
    for future in futures:
        error = future.exception()
        if error is None:
            reports.append(future.result())
        else:
            errors.append(error)
    if errors:
        raise errors[0]
    return merge_reports(*reports)


def _deliver_email(
    notify: NotifyConfig, outbox: Path, retry_now: bool, clock: Callable[[], float]
) -> DeliveryReport:
    send = make_transport(notify)
    return deliver_pending(outbox, send, retry_now=retry_now, now=clock, suffix=EMAIL)


def _deliver_webhook(
    notify: NotifyConfig, outbox: Path, retry_now: bool, clock: Callable[[], float]
) -> DeliveryReport:
    send = make_webhook_sender(notify.webhook)
    if send is None:
        return DeliveryReport(sent=(), failed=())
    return deliver_pending(outbox, send, retry_now=retry_now, now=clock, suffix=WEBHOOK)


def without_withdrawn(report: DeliveryReport, outbox_dir: Path) -> DeliveryReport:
    """``report`` without the failures and deferrals of messages no longer in the outbox
    (``outbox_dir``, or its ``failed/``): withdrawn since (a commit's pending status, when
    its final one was queued), nothing of them is left to deliver, so they are not "kept
    in the outbox" and no reason to try again later."""

    def kept(key: str) -> bool:
        folders = (outbox_dir, outbox_dir / FAILED_DIR)
        return any((folder / f"{key}{kind}").exists() for folder in folders for kind in KINDS)

    return dataclasses.replace(
        report,
        failed=tuple((key, why) for key, why in report.failed if kept(key)),
        deferred=tuple((key, due) for key, due in report.deferred if kept(key)),
    )


def merge_reports(*reports: DeliveryReport) -> DeliveryReport:
    """One report for several runs: a key sent in a later run leaves the failures."""
    sent: list[str] = []
    failed: dict[str, str] = {}
    deferred: dict[str, float] = {}
    refused: dict[str, str] = {}
    for report in reports:
        sent += report.sent
        failed.update(dict(report.failed))
        deferred.update(dict(report.deferred))
        refused.update(dict(report.refused))
        for key in (*report.sent, *dict(report.refused)):
            failed.pop(key, None)
            deferred.pop(key, None)
    return DeliveryReport(
        tuple(sent), tuple(failed.items()), tuple(deferred.items()), tuple(refused.items())
    )


def list_outbox(outbox: Path) -> list[PendingEmail]:
    """Everything waiting in ``outbox``, emails, webhook entries and commit statuses, oldest
    first, and then the emails and statuses refused for good (``failed/``, state
    ``refused``)."""
    items = (
        list_pending(outbox, EMAIL) + list_pending(outbox, WEBHOOK) + list_pending(outbox, STATUS)
    )
    waiting = sorted(items, key=lambda p: (p.queued_at, p.seq, p.key))
    return waiting + list_refused(outbox, EMAIL) + list_refused(outbox, STATUS)


__all__ = [
    "announce",
    "deliver_all",
    "list_outbox",
    "merge_reports",
    "queue_emails",
    "webhook_url",
]
