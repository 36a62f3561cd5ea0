"""When a run posts its commit statuses (``[status]``), and what each one says.

:func:`deploybot.pipeline.run.run_once` calls these: :func:`check` before anything (a token
missing from the environment is a config error, exit 78, before any work); :func:`started`
when a build of a source commit follows, which queues ``pending`` and posts it at once, best
effort, within :data:`PENDING_TIMEOUT` (a forge that is down costs the build at most that,
and it is tried again later); :func:`finished` after the publish (``success``) or when the
build fails (``failure`` for the source's fault, ``error`` for anything else: :func:`failed`
queues and posts it). A success is only queued: the run then posts it from a thread of its
own (:func:`posting`) while it composes and sends the emails. What is not delivered waits in
the outbox for the next run (or the daemon's retries). Branch previews post theirs as
``<context>/preview`` (:class:`Preview`). The channel itself:
:mod:`deploybot.notify.deliver.forge_status`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deploybot.config.forges import BuildState, CommitStatus
from deploybot.config.schema import Config
from deploybot.notify.deliver import forge_status
from deploybot.notify.deliver.outbox import DeliveryReport
from deploybot.support.errors import DeploybotError, one_line
from deploybot.support.redact import redact_text

PENDING_TIMEOUT = 2.0
"""Seconds the pending status may take (at most ``status.timeout``) before the build starts."""
NOTHING = DeliveryReport(sent=(), failed=())

log = logging.getLogger("deploybot.pipeline")


def check(config: Config) -> None:
    """Raise ConfigError when statuses are on and ``status.token_env`` is not set."""
    if forge_status.is_on(config.status):
        forge_status.read_token(config.status)


@dataclass(frozen=True)
class Preview:
    """A branch preview's statuses (:mod:`deploybot.pipeline.preview`): posted as
    ``<status.context>/preview``, linking to the preview's ``url`` (None: to
    ``status.target_url``), for the source ``branch``."""

    branch: str
    url: str | None


def started(
    config: Config, outbox: Path, sha: str, preview: Preview | None = None
) -> DeliveryReport:
    """Queue ``pending`` for the source commit ``sha`` and post what is due, each POST
    within :data:`PENDING_TIMEOUT`. Returns what was delivered (empty when off). Raises
    OSError (DiskFullError) when the outbox cannot be written."""
    if not forge_status.is_on(config.status):
        return NOTHING
    where = f"a preview of {preview.branch}" if preview else config.publish.branch
    description = f"Building {sha[:7]} for {where}"
    status = _status(config, sha, BuildState.PENDING, description, preview)
    forge_status.queue_status(outbox, status)
    timeout = min(PENDING_TIMEOUT, config.status.timeout)
    return forge_status.deliver_statuses(config.status, outbox, timeout=timeout)


def finished(
    config: Config,
    outbox: Path,
    sha: str,
    state: BuildState,
    description: str,
    preview: Preview | None = None,
) -> None:
    """Queue the final ``state`` of ``sha`` (superseding its pending status if that still
    waits); delivered by the run's next delivery. Nothing when off."""
    if forge_status.is_on(config.status):
        status = _status(config, sha, state, description, preview)
        forge_status.queue_status(outbox, status)


def failed(
    config: Config, outbox: Path, sha: str, exc: BaseException, preview: Preview | None = None
) -> DeliveryReport:
    """Queue and post the status of a build that raised ``exc`` (:func:`failure`). Never
    raises for the status itself: the run's own error is what the caller raises next; a
    status that cannot even be queued is logged."""
    if not forge_status.is_on(config.status):
        return NOTHING
    state, description = failure(exc)
    try:
        finished(config, outbox, sha, state, description, preview)
        return forge_status.deliver_statuses(config.status, outbox)
    except (DeploybotError, OSError) as err:
        log.warning("commit status %s for %s not posted: %s", state, sha[:12], one_line(err))
        return NOTHING


def deliver(config: Config, outbox: Path) -> DeliveryReport:
    """Post the statuses due in ``outbox`` now (a preview's, after its push)."""
    return forge_status.deliver_statuses(config.status, outbox)


@contextmanager
def posting(config: Config, outbox: Path) -> Iterator[list[DeliveryReport]]:
    """Post the statuses due in ``outbox`` in a thread of their own while the block runs
    (the emails are composed meanwhile: a forge neither waits for them nor delays them);
    the list yielded holds the delivery's report once the block is left. Only after the
    render: a process forked for it must not inherit a thread. The block must deliver no
    status itself (``status=None`` to the notify stage). Raises what the delivery raised,
    unless the block raised: then the block's error (the delivery's is logged)."""
    reports: list[DeliveryReport] = []
    if not forge_status.is_on(config.status):
        yield reports
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="status") as pool:
        future = pool.submit(forge_status.deliver_statuses, config.status, outbox)
        try:
            yield reports
        except BaseException:
            error = future.exception()  # waits: the block's own error is the one raised
            if error is not None:
                log.warning("commit statuses not posted: %s", one_line(error))
            raise
        reports.append(future.result())


def failure(exc: BaseException) -> tuple[BuildState, str]:
    """The state and description of a build that raised ``exc``: ``failure`` for bad input
    in the source (exit 1: the line names the file and line) and a build the publish guard
    held; ``error`` for anything else (the network, the push, the config, a bug: named by
    its type only)."""
    from deploybot.publish.commit import GuardError, OlderSourceError

    text = redact_text(one_line(exc))
    if isinstance(exc, GuardError):
        return BuildState.FAILURE, f"Not published: {text}"
    if isinstance(exc, OlderSourceError):
        return BuildState.ERROR, text[:1].upper() + text[1:]
    if isinstance(exc, DeploybotError):
        if exc.exit_code == 1:
            return BuildState.FAILURE, f"Build failed: {text}"
        return BuildState.ERROR, f"Not published: {text}"
    return BuildState.ERROR, f"Build error: internal error ({type(exc).__name__})"


def published(build_commit: str, elapsed: float, what: str = "Published") -> str:
    """``Published in 0.41 s as 1a2b3c4`` (``what``: ``Preview published``)."""
    return f"{what} in {elapsed:.2f} s as {build_commit[:7]}"


def unchanged(branch: str, head: str | None, elapsed: float) -> str:
    """The success of a build that changes nothing on the publish branch."""
    where = f"{branch} {head[:7]}" if head else branch
    return f"Built in {elapsed:.2f} s: {where} already holds this build"


def _status(
    config: Config, sha: str, state: BuildState, description: str, preview: Preview | None
) -> CommitStatus:
    settings = config.status
    if preview is None:
        return CommitStatus(
            sha, state, description, settings.target_url, settings.context, config.source.branch
        )
    return CommitStatus(
        sha, state, description, preview.url or settings.target_url,
        f"{settings.context}/preview", preview.branch,
    )  # fmt: skip
