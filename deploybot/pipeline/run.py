"""The only place where the four stages meet: watch -> render -> publish -> notify.

:func:`run_once` is one whole run, the unit that cron, the daemon and ``deploybot run-once``
all call. Stages hand each other plain frozen dataclasses; this module maps the configuration
onto each stage's arguments and decides the order, the lock and what a failure leaves behind:
a failed run leaves the publish branch and the mail outbox as they were.

The render stage (mistune, Pygments, Jinja2) is imported only when a build happens, so a
run that finds the publish branch up to date never pays for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from deploybot.config.forges import BuildState
from deploybot.config.schema import Config
from deploybot.git import repository
from deploybot.notify import stage as notify
from deploybot.notify.announce import RefUpdate
from deploybot.notify.compose.sources import SourceRepo
from deploybot.notify.deliver.outbox import DeliveryReport, prune_delivered
from deploybot.pipeline import build_journal, links, noop, statuses
from deploybot.pipeline import mail as mailcmd
from deploybot.pipeline.options import render_options
from deploybot.publish import commit
from deploybot.record import note, reasons
from deploybot.render import fingerprint
from deploybot.state import statedir
from deploybot.support.errors import ConfigError
from deploybot.watch import fetch

if TYPE_CHECKING:
    from deploybot.pipeline.preview import PreviewResult
    from deploybot.pipeline.theme import ThemedSource
    from deploybot.render.engine.cache import BuildCache
    from deploybot.render.model import RenderOptions, RenderWarning
    from deploybot.render.outputs.sinks import BuildReport
    from deploybot.render.read.source import SourceTree

log = logging.getLogger("deploybot.pipeline")


class RunStatus(StrEnum):
    """What a run came to (:attr:`RunResult.status`); its value is the word ``deploybot
    serve``'s log, ``/metrics`` and the fleet's records use."""

    PUBLISHED = "published"
    """A build commit was pushed."""
    UNCHANGED = "unchanged"
    """The source moved but the built tree is the same, so no commit."""
    UP_TO_DATE = "up-to-date"
    """The publish head was already built from the source head."""
    OLDER = "older"
    """Nothing pushed: the publish head was built from a descendant of the source head (or
    from a commit gone from the source repository)."""


@dataclass(frozen=True)
class RunResult:
    """What one run did.

    ``status`` is a :class:`RunStatus`; for ``RunStatus.OLDER`` the publish head was built from
    ``published_source``, a descendant of the source head, or, when
    ``order_known`` is False, a commit gone from the source repository, so that whether it
    descends from the source head cannot be told). ``elapsed`` is in
    seconds. ``mail_failures`` holds ``(outbox key, reason)`` pairs for emails still waiting
    in the outbox; ``mail_refused`` those this run found refused for good (filed in the
    outbox's ``failed/``, not retried: :class:`deploybot.notify.deliver.outbox.Refused`).
    ``next_future``: the earliest date (aware) of a post the published build holds back
    (dated after its cut-off), or None: the no-op stamp holds only until then, since that
    post comes due with no push. ``unread_paths``: for ``"unchanged"``, the
    source paths that changed when the build reads none of them (nothing was built; the
    record names the new source commit), else None. ``warnings``: the build's warnings
    that a run tells (:attr:`deploybot.render.outputs.sinks.BuildReport.to_tell`).
    ``themed``: the site has a Jekyll theme, which may move with no push to either
    remote, so the run writes no no-op stamp (:mod:`deploybot.pipeline.noop`).
    ``previews``: the branch previews this run built, removed, or failed to
    (:class:`deploybot.pipeline.preview.PreviewResult`, each with its ``url``: what a commit
    status of its source commit links to); ``()`` when ``[preview]`` is off or none changed.
    """

    status: RunStatus
    source_commit: str | None = None
    build_commit: str | None = None
    changed_paths: tuple[str, ...] = ()
    warnings: tuple[RenderWarning, ...] = ()
    mail_sent: tuple[str, ...] = ()
    mail_failures: tuple[tuple[str, str], ...] = ()
    mail_refused: tuple[tuple[str, str], ...] = ()
    elapsed: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    published_source: str | None = None
    order_known: bool = True
    next_future: datetime | None = None
    unread_paths: tuple[str, ...] | None = None
    themed: bool = False
    previews: tuple[PreviewResult, ...] = ()


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


def run_once(
    config: Config,
    *,
    full: bool = False,
    now: Callable[[], datetime] | None = None,
    retry_now: bool = False,
    allow_older: bool = False,
    before_build: Callable[[str], None] | None = None,
    force: bool = False,
) -> RunResult:
    """Run the whole pipeline once, holding the state directory's lock.

    Args:
        config: the loaded configuration.
        full: build even when the publish head was already built from the source head.
        now: the wall clock (for the build commit's date and the email's ``Date``); tests
            may pin it. Returns an aware datetime.
        retry_now: retry waiting emails and webhook posts even before their backoff expired.
        allow_older: publish even when the source head is an ancestor of the source commit
            the publish head was built from (else nothing is pushed: status ``"older"``).
        before_build: called with the source commit (40 hex) after the fetch, when a build
            follows (not when up to date); ``deploybot serve`` waits there for a worker, so
            a run stuck in its fetch holds none. It may raise to stop the run there.
        force: publish even a build the publish guard stops (``publish.max_removed``,
            ``publish.min_files``); its record says so.

    Then, when ``[preview]`` is on, the branch previews that changed are built, published
    and removed (:func:`deploybot.pipeline.preview.run_previews`, under the previews' own
    lock; ``before_build`` is called before the first of them when the production run did
    not build): they are ``previews`` of the result, and a preview's failure is told there,
    not raised.

    Returns:
        A :class:`RunResult`. Emails that could not be delivered are listed in
        ``mail_failures`` and stay in the outbox; the caller decides the exit status.

    Raises:
        LockHeldError: another run holds the lock (exit 75).
        FetchError, PublishError: the source could not be fetched or the push failed (75).
        SourceError: bad input in the source (exit 1); nothing was published.
        ConfigError: the configuration is unusable, or state.dir is not writable (exit 78).
        GuardError: the publish guard stopped the build; nothing was pushed (exit 1).
        BrokenLinksError: ``publish.broken_links = "fail"`` and the build has broken links;
            nothing was pushed (exit 1: :mod:`deploybot.pipeline.links`).
        DiskFullError: no space left to write a mirror, the cache, the outbox (exit 75).
        MissingObjectError: a git object is missing even after re-fetching (exit 75).
        DamagedRepositoryError: a git object cannot be read even after re-fetching (1).
    """
    gate = _Once(before_build)
    clock = now or _utcnow
    result = _run_production(
        config, full=full, now=clock, retry_now=retry_now, allow_older=allow_older,
        before_build=gate, force=force,
    )  # fmt: skip
    if not config.preview.branches:
        return result
    with _config_errors_name(config):
        # lazy: the previews' modules (publish, state, notify, watch) only for a site with any
        from deploybot.pipeline.preview import run_previews

        shown = run_previews(config, now=clock, before_build=gate.pending(), retry_now=retry_now)
    return dataclasses.replace(result, previews=shown)


class _Once:
    """``before_build`` called at most once in a run: by the production build or, when it
    did not build, before the first preview (:meth:`pending`)."""

    def __init__(self, before_build: Callable[[str], None] | None) -> None:
        self.before_build, self.called = before_build, False

    def __call__(self, commit: str) -> None:
        if self.before_build is not None and not self.called:
            self.called = True
            self.before_build(commit)

    def pending(self) -> Callable[[str], None] | None:
        """This gate, when it has not been passed yet; else None."""
        return None if self.called or self.before_build is None else self


def _run_production(
    config: Config,
    *,
    full: bool,
    now: Callable[[], datetime],
    retry_now: bool,
    allow_older: bool,
    before_build: Callable[[str], None],
    force: bool,
) -> RunResult:
    """The production part of :func:`run_once` (same arguments), holding the state lock."""
    started = time.time()
    with statedir.held(config, sweep=False) as paths, _config_errors_name(config):
        if not (full or retry_now or allow_older):
            shortcut = _still_up_to_date(config, now().timestamp())
            if shortcut is not None:
                return shortcut
        noop.forget(config.state.dir)  # before anything is written: a kill leaves none
        with build_journal.recording(config.state.dir, paths.source, started) as journal:
            statedir.sweep_stale(config, paths, started=started)
            result = _run_healing(
                config, paths, full=full, now=now, retry_now=retry_now, older=allow_older,
                before_build=journal.hook(before_build), force=force,
            )  # fmt: skip
            journal.result = result
        statedir.housekeep(paths)
        prune_delivered(paths.outbox)
        if (
            result.status in (RunStatus.UP_TO_DATE, RunStatus.PUBLISHED)
            and not result.mail_failures
            and not result.themed
            and not config.preview.branches
        ):
            # a refused email is filed in failed/ and told once: nothing is left to deliver;
            # with previews, a push to any previewed branch is news the stamp cannot see
            _stamp(config, paths, result)
        return result


def _still_up_to_date(config: Config, clock: float) -> RunResult | None:
    """The result of a run that would change nothing (:mod:`deploybot.pipeline.noop`) at the wall
    clock ``clock`` (Unix seconds), or None."""
    timer = _Timer()
    stamp = noop.holds_for(_noop_site(config), time.time(), clock)
    if stamp is None:
        return None
    log.info("source %s at %s: nothing changed since the last run", config.source.branch,
             stamp["commit"][:12])  # fmt: skip
    timer.mark("no-op check")
    return _result(RunStatus.UP_TO_DATE, stamp["commit"], stamp["build"], timer)


def _stamp(config: Config, paths: statedir.StatePaths, result: RunResult) -> None:
    """Stamp a run after which the publish branch is built from the source tip, with
    nothing to deliver (:func:`deploybot.pipeline.noop.record`: only when both remotes are on this
    machine and their refs hold exactly what this run saw)."""
    site = _noop_site(config)
    if site is None or result.source_commit is None or result.build_commit is None:
        return
    # a post held back for its date is due with no push: from its date on, each run looks
    until = None if result.next_future is None else result.next_future.timestamp()
    with repository.bare_repo(paths.publish) as mirror:
        seen = {ref: repository.local_ref(mirror, ref) for ref in noop.publish_refs(site)}
    noop.record(site, result.source_commit, result.build_commit, seen, time.time(), until)


def _noop_site(config: Config) -> noop.Stamp | None:
    """The facts of this site that a no-op stamp describes
    (:func:`deploybot.pipeline.noop.describe`); None for a config built in code (no file) or one
    that cannot be told so."""
    if config.path is None or config.base is None or config.raw_urls is None:
        return None
    source, target = config.source, config.publish
    return noop.describe(
        str(config.path), str(config.base), str(config.state.dir), config.raw_urls,
        (source.url, source.branch), (target.url, target.branch),
    )  # fmt: skip


def _run_healing(
    config: Config,
    paths: statedir.StatePaths,
    *,
    full: bool,
    now: Callable[[], datetime],
    retry_now: bool,
    older: bool,
    before_build: Callable[[str], None] | None,
    force: bool = False,
) -> RunResult:
    """:func:`_run_locked`; when a mirror turns out to miss an object, or to hold one
    it cannot read (a damaged mirror: a file lost, deleted or overwritten under it), delete
    that mirror and run once more, which fetches
    it anew. Mirrors only cache the remotes, and a run redone from the start finds its
    place from the publish branch, so nothing is built, pushed or emailed twice.

    Raises:
        MissingObjectError: the object is missing from a remote repository, or still
            missing after the mirror was fetched anew.
        DamagedRepositoryError: the object cannot be read there, even after a fresh fetch.
    """
    for attempt in (1, 2):
        try:
            return _run_locked(
                config, paths, full=full, now=now, retry_now=retry_now, older=older,
                before_build=before_build, force=force,
            )  # fmt: skip
        except repository.DAMAGE_ERRORS as exc:
            statedir.drop_damaged_mirror(exc, paths, last_try=attempt == 2)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _config_errors_name(config: Config) -> Iterator[None]:
    """Prefix the config file to a stage's ConfigError (stages know the key, not the file)."""
    try:
        yield
    except ConfigError as exc:
        if config.path is None or str(config.path) in str(exc):
            raise
        raise ConfigError(f"{config.path}: {exc}") from exc


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _run_locked(
    config: Config,
    paths: statedir.StatePaths,
    *,
    full: bool,
    now: Callable[[], datetime],
    retry_now: bool = False,
    older: bool = False,
    before_build: Callable[[str], None] | None = None,
    force: bool = False,
) -> RunResult:
    timer = _Timer()
    # Checked here first: publish.url defaults to source.url, so name the key the user wrote.
    repository.check_local_repository(config.source.url, "source.url")
    statuses.check(config)
    earlier = mailcmd.deliver(config, paths.outbox, retry_now=retry_now)
    target = config.publish.remote()
    head = commit.fetch_publish_head(target, config.publish.branch, paths.publish)
    snap = fetch.fetch_source(
        config.source.remote(), config.source.branch, paths.source, since=head.source_commit
    )
    themed = _themed(config, paths, snap)
    timer.mark("fetch")
    log.info("source %s at %s", config.source.branch, snap.commit[:12])
    earlier = _catch_up(config, paths, head, earlier, now=now, retry_now=retry_now)
    cutoff = now().astimezone(UTC).replace(microsecond=0)  # recorded with the build
    output = _Output.of(config, head)
    why = _why_build(head, snap, output, full, cutoff, themed.record)
    if why is None:
        themed.close()
        waiting = head.next_future
        return _result(
            RunStatus.UP_TO_DATE, snap.commit, head.commit, timer, earlier, next_future=waiting,
            themed=bool(themed.record),
        )  # fmt: skip
    if before_build is not None:
        before_build(snap.commit)
    earlier = notify.merge_reports(earlier, statuses.started(config, paths.outbox, snap.commit))
    from deploybot.render.engine.incremental import open_cache

    check = _not_backwards(config, paths, snap, allow_older=older)
    settled = False  # the commit's final status is queued: no error may replace it
    try:
        with snap.tree, themed, open_cache(paths.cache) as cache:
            check(head)
            clock = (now, cutoff)
            build = _Build(config, paths, snap, why, output, clock, check, force, themed)
            done = _build_and_publish(build, head, cache)
            result = done.result
            timer.mark("render+publish")
            _settle(config, paths, snap.commit, result, head, timer.total())
            settled = True
            report = earlier
            with statuses.posting(config, paths.outbox) as posted:
                if result.new is not None:
                    # Before the cache commit: a failure there (disk full) must not cost the
                    # email.
                    pushed = RefUpdate(paths.publish, _refname(config), result.old, result.new)
                    report = _announce(config, pushed, paths, earlier, now, retry_now, False)
                    timer.mark("notify")
            report = notify.merge_reports(report, *posted)
            built_on = result.new or result.old or ""
            if done.cache_describes_it:
                cache.commit({"source_commit": snap.commit, "publish_commit": built_on})
    except commit.OlderSourceError as exc:
        log.info("%s", exc)
        earlier = notify.merge_reports(
            earlier, statuses.failed(config, paths.outbox, snap.commit, exc)
        )
        earlier = notify.without_withdrawn(earlier, paths.outbox)
        return _result(
            RunStatus.OLDER, snap.commit, exc.head, timer, earlier,
            published_source=exc.published, order_known=exc.certain,
        )  # fmt: skip
    except Exception as exc:
        if not settled:
            statuses.failed(config, paths.outbox, snap.commit, exc)
        raise
    status = RunStatus.PUBLISHED if result.new else RunStatus.UNCHANGED
    report = notify.without_withdrawn(report, paths.outbox)
    return _result(
        status, snap.commit, result.new or head.commit, timer, report,
        changed_paths=result.changed_paths, warnings=done.warnings,
        next_future=done.waiting, unread_paths=done.unread, themed=bool(themed.record),
    )  # fmt: skip


def _settle(
    config: Config,
    paths: statedir.StatePaths,
    sha: str,
    result: commit.PublishResult,
    head: commit.PublishHead,
    elapsed: float,
) -> None:
    """Queue the success status of source commit ``sha`` once its build is published
    (``result``), or found to change nothing on the publish ``head``; ``elapsed``: seconds
    since the run started."""
    if result.new is not None:
        text = statuses.published(result.new, elapsed)
    else:
        text = statuses.unchanged(config.publish.branch, head.commit, elapsed)
    statuses.finished(config, paths.outbox, sha, BuildState.SUCCESS, text)


def _result(
    status: RunStatus,
    source_commit: str | None,
    build_commit: str | None,
    timer: _Timer,
    mail: DeliveryReport | None = None,
    **more: Any,
) -> RunResult:
    """A :class:`RunResult` with the fields every run fills: ``status``, the two commits,
    the time ``timer`` measured (and its marks), the emails of ``mail`` sent and still
    waiting (none without); ``more`` holds the other fields, by name."""
    return RunResult(
        status,
        source_commit=source_commit,
        build_commit=build_commit,
        mail_sent=mail.sent if mail is not None else (),
        mail_failures=_waiting(mail) if mail is not None else (),
        mail_refused=mail.refused if mail is not None else (),
        elapsed=timer.total(),
        timings=timer.marks,
        **more,
    )


@dataclass(frozen=True)
class _Done:
    """What :func:`_build_and_publish` did: ``result``, the build's ``warnings`` and the
    date of the next post it held back (``waiting``); ``unread``: the changed source paths
    when none was read, so nothing was built but the record (None otherwise);
    ``cache_describes_it``: False when the cache holds a build that was not published
    (the caller does not commit it)."""

    result: commit.PublishResult
    warnings: tuple[RenderWarning, ...] = ()
    waiting: datetime | None = None
    unread: tuple[str, ...] | None = None
    cache_describes_it: bool = True


def _build_and_publish(build: _Build, head: commit.PublishHead, cache: BuildCache) -> _Done:
    """Render and publish ``build``, on the publish ``head``, incrementally when the cache,
    the head's record and the source diff all describe the same previous build; else (or
    when that build cannot be used after all) fully. A source that moved only in paths the
    build does not read (:func:`_unread`) publishes only its record. The cache is left
    uncommitted for the caller. Raises OlderSourceError (``build.check``), GuardError."""
    from deploybot.render.engine.incremental import build_into
    from deploybot.render.outputs.sinks import NeedFullBuild

    config, paths, snap, why, clock = build.config, build.paths, build.snap, build.why, build.clock
    options = render_options(config, snap, clock[1])
    reason = _why_full(why, head, snap, cache, build.output)
    if reason is None and head.commit is not None:
        try:
            unread = _unread(build, head, options, cache)
            if unread is not None:
                return _Done(build.record_only(head), waiting=head.next_future, unread=unread)
            with commit.BlobWriter(paths.publish) as sink:
                report = build_into(build.tree, options, cache, sink, snap.changed_paths)
                patch = commit.TreePatch(head.commit, frozenset(sink.deleted))
                return _Done(build.push_build(report, sink.blobs, patch), *_told(report))
        except (NeedFullBuild, commit.StaleBaseError) as exc:
            reason = str(exc)
            cache.rollback()
    with commit.BlobWriter(paths.publish) as sink:
        report = build_into(build.tree, options, cache, sink, None, full_reason=reason or "")
        unread = _unread(build, head, options, cache)  # a cache of this build
        if unread is not None and head.commit is not None:
            cache.rollback()  # it built a tree that is not published
            return _Done(build.record_only(head), (), head.next_future, unread, False)
        return _Done(build.push_build(report, sink.blobs, None), *_told(report))


def _told(report: BuildReport) -> tuple[tuple[RenderWarning, ...], datetime | None]:
    """What a build's report tells the run: the warnings to tell
    (:attr:`~deploybot.render.outputs.sinks.BuildReport.to_tell`), the next post it held back."""
    return report.to_tell, report.waiting


def _unread(
    build: _Build, head: commit.PublishHead, options: RenderOptions, cache: BuildCache
) -> tuple[str, ...] | None:
    """The source paths that changed since the publish head's source commit when the
    build reads none of them (:func:`deploybot.render.engine.incremental.unread_changes`) and
    no post the head held back is due at ``cutoff``: building would only date the feeds anew.
    None when the run builds (``why`` is not that the source moved, or a path is read)."""
    from deploybot.render.engine.incremental import unread_changes

    snap, why, cutoff = build.snap, build.why, build.clock[1]
    if why is not note.Reason.SOURCE or snap.changed_paths is None or _due(head, cutoff):
        return None
    unread = unread_changes(build.tree, options, cache, snap.changed_paths)
    if unread is not None:
        log.info("source moved to %s, but only %d paths the build does not read changed",
                 snap.commit[:12], len(unread))  # fmt: skip
    return unread


@dataclass(frozen=True)
class _Output:
    """What shapes this run's output besides the source (:mod:`deploybot.render.fingerprint`):
    the render ``fingerprint``, the ``renderer`` digest, the ``settings`` digests, and what
    of them changed since the publish head's build (``changed``; None when its note does
    not tell)."""

    fingerprint: str
    renderer: str
    settings: str
    changed: tuple[str, ...] | None

    @classmethod
    def of(cls, config: Config, head: commit.PublishHead) -> _Output:
        """This run's, against the publish ``head``'s record. Raises ``OSError`` as
        :func:`deploybot.render.fingerprint.renderer_digest`."""
        renderer = fingerprint.renderer_digest()
        settings = fingerprint.setting_digests(config)
        before = (
            head.record.get(note.RENDERER_DIGEST),
            head.record.get(note.OUTPUT_SETTINGS),
        )
        changed = fingerprint.changed_settings(before, (renderer, settings))
        return cls(fingerprint.render_fingerprint(config, renderer), renderer, settings, changed)

    def words(self) -> str:
        """What changed, in words (:func:`deploybot.record.reasons.describe_changes`)."""
        return reasons.describe_changes(self.changed or ())


def _why_build(
    head: commit.PublishHead,
    snap: fetch.SourceSnapshot,
    output: _Output,
    full: bool,
    cutoff: datetime,
    theme: dict[str, str] | None = None,
) -> note.Reason | None:
    """Why this run builds (:class:`deploybot.record.note.Reason`, the first that applies), or
    None when the publish head is up to date: built from the source tip, with this run's
    render fingerprint (``output``: :mod:`deploybot.render.fingerprint`) and Jekyll theme
    (``theme``, the record's :data:`~deploybot.record.note.THEME` fields), and no held-back post
    due at ``cutoff``."""
    if full:
        return note.Reason.FORCED
    if head.commit is None:
        return note.Reason.FIRST
    if head.source_commit is None:
        return note.Reason.NO_RECORD
    if head.record.get(note.RENDER_FINGERPRINT) != output.fingerprint:
        log.info("%s since %s: building again", output.words(), head.commit[:12])
        return note.Reason.RENDER
    theme = theme or {}
    if any(head.record.get(key, "") != theme.get(key, "") for key in _THEME_KEYS):
        shown = " ".join(theme.values()) or "none"
        log.info("the theme moved since %s (%s): building again", head.commit[:12], shown)
        return note.Reason.THEME
    if snap.commit != head.source_commit:
        return note.Reason.SOURCE
    if _future_due(head, cutoff):
        return note.Reason.DUE
    return None


_THEME_KEYS = (note.THEME, note.THEME_COMMIT)


def _why_full(
    why: note.Reason,
    head: commit.PublishHead,
    snap: fetch.SourceSnapshot,
    cache: BuildCache,
    output: _Output,
) -> str | None:
    """Why this run (building for ``why``) cannot build incrementally, or None when it can."""
    if why is note.Reason.FORCED:
        return "--full given"
    if head.commit is None:
        return "the publish branch does not exist yet"
    if why is note.Reason.RENDER:
        return output.words()
    if snap.changed_paths is None:
        return "the publish head's source commit is unknown here"
    if cache.meta("publish_commit") != head.commit or cache.meta("source_commit") != (
        head.source_commit
    ):
        return "the cache does not describe the published build"
    return None


@dataclass(frozen=True)
class _Build:
    """What a run's publish needs besides the build itself: the run builds ``snap`` for
    ``why``, with the render fingerprint and digests ``output``, at ``clock`` (the wall
    clock and this run's future cut-off); ``check`` is :func:`_not_backwards`'s;
    ``force``: past the publish guard."""

    config: Config
    paths: statedir.StatePaths
    snap: fetch.SourceSnapshot
    why: note.Reason
    output: _Output
    clock: tuple[Callable[[], datetime], datetime]
    check: Callable[[commit.PublishHead], None]
    force: bool = False
    themed: ThemedSource | None = None

    @property
    def tree(self) -> SourceTree:
        """The tree the render stage builds: the source's, with its Jekyll theme under it."""
        return self.snap.tree if self.themed is None else self.themed.tree

    def push_build(
        self,
        report: BuildReport,
        blobs: dict[str, str],
        patch: commit.TreePatch | None,
    ) -> commit.PublishResult:
        """Commit and push the build ``report`` made (its outputs ``blobs``, onto
        ``patch``'s base when given), with its record. Raises as
        :func:`deploybot.publish.commit.publish_build`."""
        config, snap = self.config, self.snap
        now, cutoff = self.clock
        when = now().astimezone(ZoneInfo(config.publish.timezone or report.timezone))
        kind = f"full ({report.reason})" if report.full else "incremental"
        log.info("%s build: %d producers rendered", kind, len(report.rendered))
        record = commit.future_record(cutoff, report.waiting) | {
            note.RENDER_FINGERPRINT: self.output.fingerprint,
            note.REASON: self.why.value,
            note.BUILD_KIND: "full" if report.full else "incremental",
            note.RENDERER_DIGEST: self.output.renderer,
            note.OUTPUT_SETTINGS: self.output.settings,
        }
        if self.why is note.Reason.RENDER and self.output.changed:
            record[note.CHANGED_SETTINGS] = ",".join(self.output.changed)
        if snap.changed_paths is not None:
            record[note.CHANGED_SOURCES] = str(len(snap.changed_paths))
        if self.themed is not None:
            record |= self.themed.record
        mode = config.publish.broken_links
        record |= links.tell(report.links, mode)
        if links.stops(report.links, mode, self.force):
            links.record(self.paths.links, report.links, mode, snap.commit, published=False)
        links.stop_if_broken(report.links, mode, self.force)
        pushed = self._push(when, record, blobs, patch)
        # once pushed: a guard, a push that fails or a moved head publishes nothing
        links.record(self.paths.links, report.links, mode, snap.commit, published=True)
        return pushed

    def record_only(self, head: commit.PublishHead) -> commit.PublishResult:
        """Record that ``head`` (which exists) is also the build of this run's source
        commit, whose changes the build does not read: its record, naming the source
        commit its tree was built from (``build-source``), with no new commit. Raises as
        :func:`deploybot.publish.commit.publish_build` (StaleBaseError: the head moved)."""
        assert head.commit is not None and head.source_commit is not None
        built_from = head.record.get(note.BUILD_SOURCE) or head.source_commit
        record = {**head.record, note.BUILD_SOURCE: built_from}
        when = self.clock[0]().astimezone(UTC)
        return self._push(when, record, {}, commit.TreePatch(head.commit))

    def _push(
        self,
        when: datetime,
        record: dict[str, str],
        blobs: dict[str, str],
        patch: commit.TreePatch | None,
    ) -> commit.PublishResult:
        config, snap = self.config, self.snap
        output = commit.BuildOutput(
            blobs=blobs, patch=patch, keep=config.publish.keep,
            nojekyll=bool(config.publish.nojekyll),
        )  # fmt: skip
        message = commit.format_build_message(config.publish.message, when)
        build_commit = commit.BuildCommit(config.publish.author, message, when, snap.commit, record)
        hooks = commit.PublishHooks(
            before_push=lambda _old, new: notify.note_pushing(
                config.state.dir, f"refs/heads/{config.publish.branch}", new
            ),
            check_head=self.check,
        )
        return commit.publish_build(
            config.publish.remote(), config.publish.branch, self.paths.publish, output,
            build_commit, hooks=hooks,
            guard=commit.Guard(config.publish.max_removed, config.publish.min_files, self.force),
        )  # fmt: skip


def _future_due(head: commit.PublishHead, cutoff: datetime) -> bool:
    """Whether a post the published build held back is now due: the head's record names a
    ``next-future`` date at or before ``cutoff`` (this run's clock). Then the run builds
    the same source again with the new cut-off, so a scheduled run publishes a post once
    its date has passed, with no push. A record with a source commit but no
    ``future-cutoff`` (an older version's, which held posts back without saying so)
    counts as due too: one build records the cut-off, and the next run knows."""
    if head.source_commit is not None and note.FUTURE_CUTOFF not in head.record:
        log.info("the build record has no %s: building the source again", note.FUTURE_CUTOFF)
        return True
    due = _due(head, cutoff)
    if due:
        log.info("a post dated %s is due: building the source again", head.next_future)
    return due


def _due(head: commit.PublishHead, cutoff: datetime) -> bool:
    """Whether the head's record has no future cut-off, or names a held-back post dated
    at or before ``cutoff`` (:func:`_future_due`, without its log lines)."""
    if note.FUTURE_CUTOFF not in head.record:
        return True
    return head.next_future is not None and head.next_future <= cutoff


def _not_backwards(
    config: Config, paths: statedir.StatePaths, snap: fetch.SourceSnapshot, *, allow_older: bool
) -> Callable[[commit.PublishHead], None]:
    """The check run on every publish head seen before a push: raises OlderSourceError when
    the head was built from a source commit that descends from ``snap.commit`` (another
    instance published a newer build, or the source branch was rewound), or when that
    cannot be told (:class:`deploybot.watch.fetch.Order`: the published commit is gone from the
    source), unless ``allow_older``. A head without a record, or from unrelated history,
    passes. Each recorded commit is looked up once per run."""
    seen: dict[str, tuple[fetch.Order, str | None]] = {}

    def check(head: commit.PublishHead) -> None:
        recorded = head.source_commit
        if allow_older or recorded is None:
            return
        if recorded not in seen:
            source = config.source
            seen[recorded] = fetch.order_against(
                source.remote(), source.branch, paths.source, snap.commit, recorded,
                commit_time=snap.commit_time, published_at=head.published_at,
            )  # fmt: skip
        order, why = seen[recorded]
        if order is fetch.Order.OLDER:
            raise commit.OlderSourceError(snap.commit, recorded, head.commit)
        if order is fetch.Order.CANNOT_TELL:
            log.info("%s is not in the source repository: %s", recorded[:12], why)
            raise commit.OlderSourceError(snap.commit, recorded, head.commit, certain=False)

    return check


def _catch_up(
    config: Config,
    paths: statedir.StatePaths,
    head: commit.PublishHead,
    earlier: DeliveryReport,
    *,
    now: Callable[[], datetime],
    retry_now: bool,
) -> DeliveryReport:
    """Announce the publish head when a run pushed it but died before queueing its email
    (:func:`deploybot.notify.stage.unannounced`); done before building, so the owed email goes
    out first and a new build's announcement starts after it."""
    refname = _refname(config)
    if head.commit is None or head.source_commit is None:
        return earlier
    owed = notify.unannounced(paths.publish, refname, head.commit, config.state.dir)
    if owed is None:
        return earlier
    log.info("the email for %s was never queued: sending it now", head.commit[:12])
    return _announce(config, owed, paths, earlier, now, retry_now)


def _announce(
    config: Config,
    update: RefUpdate,
    paths: statedir.StatePaths,
    earlier: DeliveryReport,
    now: Callable[[], datetime],
    retry_now: bool,
    statuses_too: bool = True,
) -> DeliveryReport:
    """Announce ``update`` (a build commit on the publish branch) and deliver what waits
    (the commit statuses too unless not ``statuses_too``: another thread posts them)."""
    announced = notify.announce(
        update,
        config.notify,
        state_dir=config.state.dir,
        now=now(),
        retry_now=retry_now,
        sources=SourceRepo(paths.source, config.source.url, config.source.branch),
        status=config.status if statuses_too else None,
    )
    return notify.merge_reports(earlier, announced)


def _themed(config: Config, paths: statedir.StatePaths, snap: fetch.SourceSnapshot) -> ThemedSource:
    """The source tree with the Jekyll theme its ``_config.yml`` names, fetched into the state
    folder's ``themes/`` with the source's bounds (:mod:`deploybot.pipeline.theme`)."""
    from deploybot.pipeline.theme import ThemeFetch, themed_source

    how = ThemeFetch(paths.themes, config.source.timeout, config.source.max_fetch_bytes)
    return themed_source(snap.tree, config.render, how)


def _refname(config: Config) -> str:
    """The publish branch's refname."""
    return f"refs/heads/{config.publish.branch}"


def _waiting(report: DeliveryReport) -> tuple[tuple[str, str], ...]:
    """Failures, and messages left for a later retry (backoff), as (key, reason) pairs."""
    later = tuple(
        (key, f"waiting for a retry after {time.strftime('%H:%M:%S', time.localtime(due))}")
        for key, due in report.deferred
    )
    return report.failed + later
