"""The only place where the four stages meet: watch -> render -> publish -> notify.

:func:`run_once` is one whole run, the unit that cron, the daemon and ``deploybot run-once``
all call. Stages hand each other plain frozen dataclasses; this module maps the configuration
onto each stage's arguments and decides the order, the lock and what a failure leaves behind:
a failed run leaves the publish branch and the mail outbox as they were.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import filelock

from deploybot import notify, publish, render, watch
from deploybot.config import Config
from deploybot.errors import LockHeldError, NotifyError

log = logging.getLogger(__name__)

UP_TO_DATE = "up-to-date"
UNCHANGED = "unchanged"
PUBLISHED = "published"


@dataclass(frozen=True)
class RunResult:
    """What one run did.

    ``status`` is ``"published"`` (a build commit was pushed), ``"unchanged"`` (the source
    moved but the built tree is the same, so no commit) or ``"up-to-date"`` (the publish head
    was already built from the source head). ``elapsed`` is in seconds. ``mail_failures`` holds
    ``(outbox key, reason)`` pairs for emails still waiting in the outbox.
    """

    status: str
    source_commit: str | None = None
    build_commit: str | None = None
    changed_paths: tuple[str, ...] = ()
    warnings: tuple[render.RenderWarning, ...] = ()
    mail_sent: tuple[str, ...] = ()
    mail_failures: tuple[tuple[str, str], ...] = ()
    elapsed: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


class _Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.marks: dict[str, float] = {}
        self._last = self.start

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.marks[name] = now - self._last
        self._last = now

    def total(self) -> float:
        return time.perf_counter() - self.start


def state_paths(config: Config) -> dict[str, Path]:
    """Return the state dir's layout: ``lock``, the ``source``/``publish`` mirrors, ``outbox``."""
    root = config.state.dir
    return {
        "lock": root / "lock",
        "source": root / "source.git",
        "publish": root / "publish.git",
        "outbox": root / "outbox",
    }


def run_once(
    config: Config, *, full: bool = False, now: Callable[[], datetime] | None = None
) -> RunResult:
    """Run the whole pipeline once, holding the state directory's lock.

    Args:
        config: the loaded configuration.
        full: build even when the publish head was already built from the source head.
        now: the wall clock (for the build commit's date and the email's ``Date``); tests
            may pin it. Returns an aware datetime.

    Returns:
        A :class:`RunResult`. Emails that could not be delivered are listed in
        ``mail_failures`` and stay in the outbox; the caller decides the exit status.

    Raises:
        LockHeldError: another run holds the lock (exit 75).
        FetchError, PublishError: the source could not be fetched or the push failed (75).
        SourceError: bad input in the source (exit 1); nothing was published.
        ConfigError: the configuration is unusable (exit 78).
    """
    paths = state_paths(config)
    paths["lock"].parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(paths["lock"]))
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise LockHeldError(f"another deploybot run holds the lock {paths['lock']}") from None
    try:
        return _run_locked(config, paths, full=full, now=now or _utcnow)
    finally:
        lock.release()


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _run_locked(
    config: Config, paths: dict[str, Path], *, full: bool, now: Callable[[], datetime]
) -> RunResult:
    timer = _Timer()
    earlier = _deliver(config, paths["outbox"])
    head = publish.fetch_publish_head(config.publish.url, config.publish.branch, paths["publish"])
    snap = watch.fetch_source(
        config.source.url, config.source.branch, paths["source"], since=head.source_commit
    )
    timer.mark("fetch")
    log.info("source %s at %s", config.source.branch, snap.commit[:12])
    if snap.commit == head.source_commit and not full:
        return RunResult(
            UP_TO_DATE,
            source_commit=snap.commit,
            build_commit=head.commit,
            mail_sent=earlier.sent,
            mail_failures=earlier.failed,
            elapsed=timer.total(),
            timings=timer.marks,
        )
    with snap.tree:
        site = render.build_site(snap.tree, _render_options(config, snap))
    timer.mark("render")
    for warning in site.warnings:
        log.warning("%s", format_warning(warning))
    when = now().astimezone(ZoneInfo(config.publish.timezone or site.timezone))
    result = publish.publish_build(
        config.publish.url,
        config.publish.branch,
        paths["publish"],
        site.files,
        keep=config.publish.keep,
        author=config.publish.author,
        message=publish.format_build_message(config.publish.message, when),
        when=when,
        source_commit=snap.commit,
    )
    timer.mark("publish")
    report = earlier
    if result.new is not None and config.notify.transport != "none":
        message = notify.build_email(
            result.repo_path, result.refname, result.old, result.new, config.notify, now=now()
        )
        notify.queue_email(paths["outbox"], result.new, message)
        report = _merge(earlier, _deliver(config, paths["outbox"]))
        timer.mark("notify")
    return RunResult(
        PUBLISHED if result.new else UNCHANGED,
        source_commit=snap.commit,
        build_commit=result.new or head.commit,
        changed_paths=result.changed_paths,
        warnings=site.warnings,
        mail_sent=report.sent,
        mail_failures=report.failed,
        elapsed=timer.total(),
        timings=timer.marks,
    )


def _render_options(config: Config, snap: watch.SourceSnapshot) -> render.RenderOptions:
    offset = timezone(timedelta(seconds=snap.commit_tz_offset))
    return render.RenderOptions(
        theme=config.render.theme,
        timezone=config.render.timezone,
        feed_limit=config.render.feed_limit,
        build_time=datetime.fromtimestamp(snap.commit_time, tz=offset),
    )


def _deliver(config: Config, outbox: Path) -> notify.DeliveryReport:
    if config.notify.transport == "none" or not outbox.exists():
        return notify.DeliveryReport(sent=(), failed=())
    try:
        send = notify.make_sender(config.notify)
    except NotifyError as exc:
        return notify.DeliveryReport(sent=(), failed=(("*", str(exc)),))
    return notify.deliver_pending(outbox, send)


def _merge(a: notify.DeliveryReport, b: notify.DeliveryReport) -> notify.DeliveryReport:
    failed = {key: reason for key, reason in a.failed}
    failed.update(dict(b.failed))
    for key in b.sent:
        failed.pop(key, None)
    return notify.DeliveryReport(sent=a.sent + b.sent, failed=tuple(failed.items()))


def format_warning(warning: render.RenderWarning) -> str:
    """Return ``"warning: PATH:LINE: MESSAGE"`` for a render warning (one line)."""
    where = warning.path if warning.line is None else f"{warning.path}:{warning.line}"
    return f"warning: {where}: {warning.message}"
