"""``deploybot outbox`` and ``deploybot notify``: the commands that use the notify stage alone.

No build happens here: :func:`deliver_outbox` retries what waits in the outbox under the state
directory's lock, and :func:`resend` composes and sends the email of any existing commit.
The pipeline uses :func:`deliver` too, to send what waits before each run.

The notify stage, the outbox and the state folder are imported by the functions that use
them: ``deploybot notify`` without a config (:func:`resend`) needs none of them, and their
imports (dulwich's client, the webhook and forge transports) were a third of its start.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from deploybot.config.schema import Config
from deploybot.support.errors import NotifyError, UsageError

if TYPE_CHECKING:
    from deploybot.notify.compose.sources import SourceRepo
    from deploybot.notify.deliver.outbox import DeliveryReport
    from deploybot.state import statedir


def deliver(config: Config, outbox: Path, *, retry_now: bool = False) -> DeliveryReport:
    """Deliver what waits in ``outbox``; a transport that cannot even be made (NotifyError)
    is reported as one failure ``("*", reason)`` instead of raised."""
    from deploybot.notify import stage as notify
    from deploybot.notify.deliver.outbox import DeliveryReport

    try:
        return notify.deliver_all(config.notify, outbox, retry_now=retry_now, status=config.status)
    except NotifyError as exc:
        return DeliveryReport(sent=(), failed=(("*", str(exc)),))


def deliver_outbox(config: Config, *, retry_now: bool = False) -> DeliveryReport:
    """Deliver what waits in the outbox (both channels), holding the state directory.

    ``retry_now`` ignores the retry backoff.

    Raises:
        LockHeldError: a run holds the lock (75). ConfigError: state.dir unusable (78).
        DiskFullError: no space to record a delivery (75).
    """
    from deploybot.state import statedir

    with statedir.held(config, sweep=False) as paths:
        return deliver(config, paths.outbox, retry_now=retry_now)


def drop_waiting(config: Config, key: str) -> str:
    """Drop the email or webhook post ``key`` (or the one key starting so) waiting in the
    outbox, or refused in its ``failed/``: it is filed in ``dropped/`` and never sent
    (``deploybot outbox drop``). Returns its whole key.

    Raises:
        UsageError: no such message waits (2). LockHeldError: a run holds the lock (75).
        ConfigError: state.dir unusable (78).
    """
    from deploybot.notify.deliver import outbox as outbox_files
    from deploybot.state import statedir

    with statedir.held(config, sweep=False) as paths:
        path = _waiting(paths.outbox, key)
        outbox_files.drop(path)
        return path.stem


def retry_waiting(config: Config, key: str) -> DeliveryReport:
    """Send the email or webhook post ``key`` (or the one key starting so) again now: a
    refused one (``failed/``) goes back into the outbox, a waiting one loses its backoff;
    then what is due in the outbox is delivered (``deploybot outbox retry``), with the
    settings of ``config`` as they are now (the SMTP envelope's recipients are
    ``notify.to`` now; the message, its ``To:`` included, is the one queued).

    Raises:
        UsageError: no such message waits (2). LockHeldError: a run holds the lock (75).
        ConfigError: state.dir unusable (78). DiskFullError: no space to record it (75).
    """
    from deploybot.notify.deliver import outbox as outbox_files
    from deploybot.state import statedir

    with statedir.held(config, sweep=False) as paths:
        outbox_files.requeue(_waiting(paths.outbox, key))
        return deliver(config, paths.outbox)


MIN_KEY = 4
"""The shortest start of a key ``outbox drop`` and ``outbox retry`` take."""


def _waiting(folder: Path, key: str) -> Path:
    """The one message ``key`` names (:func:`find_waiting`); UsageError when ``key`` is
    shorter than :data:`MIN_KEY`, names none, or names several (listed)."""
    if len(key) < MIN_KEY:
        raise UsageError(
            f"{key!r}: give at least {MIN_KEY} characters of a key (deploybot outbox lists them)"
        )
    from deploybot.notify.deliver import outbox as outbox_files

    found = outbox_files.find_waiting(folder, key)
    if not found:
        raise UsageError(f"{key} is not waiting in the outbox (deploybot outbox lists it)")
    if len(found) > 1:
        keys = ", ".join(path.stem for path in found)
        raise UsageError(f"{key} starts {len(found)} keys: {keys}; give more of one")
    return found[0]


def resend(
    config: Config | None,
    rev: str,
    *,
    repo: Path | None = None,
    branch: str | None = None,
    transport: str | None = None,
) -> tuple[str, str]:
    """Send the combined email of commit ``rev`` now (``deploybot notify``); no outbox.

    With a config, the repository defaults to the publish mirror, the branch to
    ``publish.branch`` and the settings to ``[notify]``, and the email names the build's
    source commits from the source mirror (when the commit's record names them); without
    one, to ``.``, HEAD's branch (or the branch ``rev`` names) and placeholder addresses,
    and no source commits. ``transport`` overrides.

    Returns:
        ``(commit id, transport used)``.

    Raises:
        UsageError: ``rev`` names no commit. DeploybotError: not a repository.
        NotifyError: the transport failed.
    """
    from deploybot.notify.resend import default_notify, resend_commit

    repo = repo or (_state_paths(config).publish if config else Path("."))
    settings = config.notify if config else default_notify(repo)
    settings = dataclasses.replace(settings, transport=transport or settings.transport)
    if branch is None and config is not None:
        branch = config.publish.branch
    sources = source_repo(config) if config is not None else None
    commit = resend_commit(
        repo, rev, settings, branch=branch, now=datetime.now(UTC), sources=sources
    )
    return commit, settings.transport


def source_repo(config: Config) -> SourceRepo | None:
    """The source mirror of ``config``'s state directory, where the emails read the source
    commits a build was made from; None when no run has fetched it yet."""
    from deploybot.notify.compose.sources import SourceRepo

    mirror = _state_paths(config).source
    if not mirror.is_dir():
        return None
    return SourceRepo(mirror, config.source.url, config.source.branch)


def _state_paths(config: Config) -> statedir.StatePaths:
    from deploybot.state import statedir

    return statedir.state_paths(config)
