"""Branch previews: where the watch, render, publish and notify stages meet for them.

One pass (:func:`run_previews`, after the production run of
:func:`deploybot.pipeline.run.run_once`):

1. **watch**: the tips of the source branches ``preview.branches`` matches
   (:func:`deploybot.watch.preview.previewed_tips`: one ref advertisement);
2. for each tip that moved since its preview (the record,
   :mod:`deploybot.state.previews`), fetch that branch into the previews' own source mirror,
   **render** it fully with ``baseurl`` ``/preview/<folder>`` (and ``url``
   ``preview.site_url`` when set) and **publish** it as the folder
   ``preview/<folder>/`` of ``preview.publish_branch`` (:mod:`deploybot.publish.preview`);
   **notify** when ``preview.notify`` is on (:mod:`deploybot.notify.preview`);
3. remove the preview of each recorded branch that is gone (deleted, or no longer matched).

Everything lives in the previews' part of the state folder (:func:`deploybot.state.previews.
preview_state`), under its own lock: the production mirrors, no-op stamp, notify records
and build record are never read or written here. A preview that fails (bad input in its
branch, a push refused) is told in its :class:`PreviewResult` and the log, and never fails
the run: the production site is what the run's exit status is about. The next run tries it
again, except after bad input in the branch (exit 1), which, as in production, waits for a
new commit to the branch.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from pathlib import Path

from dulwich.repo import Repo

from deploybot.config.forges import BuildState
from deploybot.config.schema import Config
from deploybot.git import repository
from deploybot.notify.compose.preview import PreviewNews
from deploybot.notify.deliver.outbox import (
    DeliveryReport,
    describe_key,
    prune_delivered,
    refusal_line,
)
from deploybot.notify.preview import announce_preview
from deploybot.notify.stage import deliver_all
from deploybot.pipeline import statuses
from deploybot.pipeline.options import render_options
from deploybot.publish import commit
from deploybot.publish import preview as publish_preview
from deploybot.publish.commit import PublishResult
from deploybot.state import previews as records
from deploybot.state import statedir
from deploybot.support.errors import EX_INPUT, DeploybotError, LockHeldError, one_line
from deploybot.watch import fetch
from deploybot.watch import preview as watch_preview

log = logging.getLogger("deploybot.preview")


class PreviewStatus(StrEnum):
    """What became of one branch's preview (:attr:`PreviewResult.status`)."""

    PUBLISHED = "published"
    """A commit replaced the branch's folder."""
    UNCHANGED = "unchanged"
    """The branch moved, but its preview's files are the same: no commit."""
    REMOVED = "removed"
    """The branch is gone: a commit deleted its folder."""
    OLDER = "older"
    """Nothing pushed: the folder shows a descendant of the branch's tip (another run)."""
    FAILED = "failed"
    """The build or the push failed (``error``); the next run tries again."""
    REFUSED = "refused"
    """Two branches give this folder name; neither is previewed (``error`` names both)."""


@dataclass(frozen=True)
class PreviewResult:
    """One branch's preview in a run.

    ``folder`` is the preview branch's folder (``preview/feature-x``); ``source_commit``
    the branch's tip built (None for a removal or a refusal); ``commit`` the preview
    branch's commit showing it (the new one, or the tip when nothing changed); ``url`` the
    preview's address (``preview.site_url`` + ``/preview/<folder>/``; None when unset or
    for a removal), what a commit status links to; ``error`` (one line) and ``exit_code``
    (as the CLI's: 1, 75, 78) for ``FAILED`` and ``REFUSED``; ``mail_sent`` and
    ``mail_failures`` (``(outbox key, reason)``) for ``preview.notify``.
    """

    branch: str
    folder: str
    status: PreviewStatus
    source_commit: str | None = None
    commit: str | None = None
    url: str | None = None
    error: str | None = None
    exit_code: int = 0
    changed_paths: tuple[str, ...] = ()
    mail_sent: tuple[str, ...] = ()
    mail_failures: tuple[tuple[str, str], ...] = ()


def preview_url(config: Config, branch: str) -> str | None:
    """The address of ``branch``'s preview: ``preview.site_url`` (no slash at its end) +
    ``/preview/<folder>/``; None when ``preview.site_url`` is unset."""
    site = config.preview.site_url.rstrip("/")
    return f"{site}/{publish_preview.folder_of(branch)}/" if site else None


def run_previews(
    config: Config,
    *,
    now: Callable[[], datetime],
    before_build: Callable[[str], None] | None = None,
    retry_now: bool = False,
) -> tuple[PreviewResult, ...]:
    """Build, publish and remove the previews that changed (the module doc), holding the
    previews' lock. ``now`` gives the commits' and emails' time (aware);
    ``before_build(source commit)`` is called before the first build (the daemon's worker
    gate; it may raise to stop there). Returns one :class:`PreviewResult` per preview
    built, removed, failed or refused, in branch order; ``()`` when previews are off, nothing
    changed, or another run holds the previews' lock (that run does them).

    Raises:
        FetchError, ConfigError: the source's branches cannot be listed (as
            :func:`deploybot.watch.preview.previewed_tips`).
        DiskFullError: no space left in the state folder.
    """
    if not config.preview.branches:
        return ()
    try:
        with statedir.held(records.preview_state(config)) as paths:
            run = _Run(config, paths, now, before_build, retry_now)
            results = run.all()
            statedir.housekeep(paths)
            prune_delivered(paths.outbox)
            return results
    except LockHeldError as exc:
        log.info("previews: %s: that run builds them", exc)
        return ()


@dataclass
class _Run:
    """One pass over the previews, under their lock."""

    config: Config
    paths: statedir.StatePaths
    now: Callable[[], datetime]
    before_build: Callable[[str], None] | None
    retry_now: bool

    @property
    def root(self) -> Path:
        return self.paths.lock.parent

    def all(self) -> tuple[PreviewResult, ...]:
        config = self.config
        tips = watch_preview.previewed_tips(
            config.source.remote(), config.preview.branches, config.source.branch
        )
        shown = records.read_record(self.root)
        clashes = publish_preview.collisions(tips)
        results: list[PreviewResult] = []
        for name, branches in sorted(clashes.items()):
            why = (
                f"the branches {', '.join(branches)} would all be previewed in "
                f"{publish_preview.ROOT}/{name}/: rename all but one"
            )
            log.error("preview: %s", why)
            results += [
                PreviewResult(b, f"{publish_preview.ROOT}/{name}", PreviewStatus.REFUSED,
                              error=why, exit_code=78)
                for b in branches
            ]  # fmt: skip
        for branch, tip in tips.items():
            name = publish_preview.folder_name(branch)
            last = shown.get(name)
            if name in clashes or (last and last.branch == branch and last.source_commit == tip):
                continue
            result = self._guarded(branch, partial(self._publish, branch, shown))
            if result.exit_code == EX_INPUT:
                # bad input in the branch: as in production, it waits for a new commit
                shown[name] = records.Shown(branch, tip, last.commit if last else "")
                records.write_record(self.root, shown)
            results.append(result)
        live = {publish_preview.folder_name(b) for b in tips}
        for name, entry in sorted(shown.items()):
            if name not in live:
                results.append(self._guarded(entry.branch, partial(self._remove, name, shown)))
        if config.preview.notify or config.status.api:
            self._deliver_waiting()
        return tuple(sorted(results, key=lambda r: r.branch))

    def _guarded(self, branch: str, step: Callable[[], PreviewResult]) -> PreviewResult:
        """``step()``; a DeploybotError it raises is this preview's failure, logged."""
        try:
            return step()
        except DeploybotError as exc:
            if isinstance(exc, LockHeldError):
                raise
            error = one_line(str(exc))
            log.error("preview of %s failed: %s", branch, error)
            folder = publish_preview.folder_of(branch)
            return PreviewResult(branch, folder, PreviewStatus.FAILED, error=error,
                                 exit_code=exc.exit_code)  # fmt: skip

    def _publish(self, branch: str, shown: dict[str, records.Shown]) -> PreviewResult:
        """Build ``branch``'s tip and publish it in its folder; record it in ``shown``. Its
        commit statuses (``[status]``): pending before the build, then success linking to
        the preview, or what the failure was (:mod:`deploybot.pipeline.statuses`)."""
        config, paths = self.config, self.paths
        started = time.monotonic()
        snap = fetch.fetch_source(config.source.remote(), branch, paths.source)
        if self.before_build is not None:
            gate, self.before_build = self.before_build, None
            gate(snap.commit)
        where = statuses.Preview(branch, preview_url(config, branch))
        self._told(statuses.started(config, paths.outbox, snap.commit, where))
        try:
            result = self._publish_tip(branch, shown, snap)
        except Exception as exc:
            self._told(statuses.failed(config, paths.outbox, snap.commit, exc, where))
            raise
        if result.status is PreviewStatus.OLDER:
            return result
        assert result.commit is not None
        elapsed = time.monotonic() - started
        text = statuses.published(result.commit, elapsed, "Preview published")
        if result.status is PreviewStatus.UNCHANGED:
            text = f"Preview built in {elapsed:.2f} s: {result.folder}/ already shows it"
        statuses.finished(config, paths.outbox, snap.commit, BuildState.SUCCESS, text, where)
        self._told(statuses.deliver(config, paths.outbox))
        return result

    def _told(self, report: DeliveryReport) -> None:
        """Log what of a preview's emails and commit statuses was not delivered, or was
        refused for good (never the preview's failure)."""
        for key, reason in report.failed:
            log.warning("preview: %s waiting in the outbox: %s", describe_key(key), reason)
        for key, reason in report.refused:
            log.warning("preview: %s", refusal_line(key, reason, self.config.path))

    def _publish_tip(
        self, branch: str, shown: dict[str, records.Shown], snap: fetch.SourceSnapshot
    ) -> PreviewResult:
        """:meth:`_publish` of the fetched tip ``snap``, without its statuses."""
        config, paths = self.config, self.paths
        folder = publish_preview.folder_of(branch)
        log.info("preview of %s at %s: building into %s/", branch, snap.commit[:12], folder)
        with snap.tree:
            blobs = self._build(branch, snap)
            when = self.now().astimezone(UTC)
            message = publish_preview.preview_message(branch, snap.commit)
            change = publish_preview.FolderCommit(config.publish.author, message, when)
            try:
                pushed = publish_preview.publish_folder(
                    config.preview.remote(config.publish), config.preview.publish_branch,
                    paths.publish, folder, blobs, change,
                    check_head=self._not_backwards(branch, snap),
                )  # fmt: skip
            except commit.OlderSourceError as exc:
                log.info("preview of %s: %s", branch, exc)
                self._told(statuses.failed(config, paths.outbox, snap.commit, exc,
                                           statuses.Preview(branch, None)))  # fmt: skip
                return PreviewResult(branch, folder, PreviewStatus.OLDER, snap.commit, exc.head)
        shown_at = pushed.new or pushed.old
        assert shown_at is not None
        name = publish_preview.folder_name(branch)
        shown[name] = records.Shown(branch, snap.commit, shown_at)
        records.write_record(self.root, shown)
        url = preview_url(config, branch)
        status = PreviewStatus.PUBLISHED if pushed.new else PreviewStatus.UNCHANGED
        log.info(
            "preview of %s at %s: %s %s on %s (%d files changed)%s", branch, snap.commit[:12],
            status.value, shown_at[:12], config.preview.publish_branch,
            len(pushed.changed_paths), f": {url}" if url else "",
        )  # fmt: skip
        result = PreviewResult(branch, folder, status, snap.commit, shown_at, url,
                               changed_paths=pushed.changed_paths)  # fmt: skip
        if pushed.new is not None and config.preview.notify:
            result = self._announce(result, pushed)
        return result

    def _build(self, branch: str, snap: fetch.SourceSnapshot) -> dict[str, str]:
        """Render ``snap`` fully with ``branch``'s baseurl into the preview mirror; the
        outputs' blob ids by path. Raises SourceError (bad input), as the production build."""
        from deploybot.pipeline.theme import ThemeFetch, themed_source
        from deploybot.render.engine.incremental import build_into, open_cache

        config, paths = self.config, self.paths
        cutoff = self.now().astimezone(UTC).replace(microsecond=0)
        options = dataclasses.replace(
            render_options(config, snap, cutoff),
            baseurl=publish_preview.baseurl_of(branch),
            url=config.preview.site_url.rstrip("/") or None,
        )
        how = ThemeFetch(paths.themes, config.source.timeout, config.source.max_fetch_bytes)
        with (
            themed_source(snap.tree, config.render, how) as themed,
            open_cache(paths.cache) as cache,
            commit.BlobWriter(paths.publish) as sink,
        ):
            report = build_into(themed.tree, options, cache, sink, None,
                                full_reason=f"a preview of {branch}")  # fmt: skip
            cache.commit({"source_commit": snap.commit, "preview_of": branch})
            log.info("preview of %s: %d producers rendered", branch, len(report.rendered))
            return dict(sink.blobs)

    def _not_backwards(
        self, branch: str, snap: fetch.SourceSnapshot
    ) -> Callable[[Repo, str], None]:
        """The check run on every preview branch tip fetched: raises OlderSourceError when
        ``branch``'s folder there shows a source commit that descends from ``snap.commit``
        and the branch no longer points at ``snap.commit`` (a run that read the branch
        later published first). A branch rewound to ``snap.commit`` (its tip is still
        ``snap.commit``: a reset), or a folder whose commit is gone from the source (a
        force-push), does not stop it: the preview follows its branch."""
        folder = publish_preview.folder_of(branch)
        source = self.config.source

        def check(repo: Repo, head: str) -> None:
            last = publish_preview.last_preview(repo, head, folder)
            if last is None or last == snap.commit:
                return
            order, _why = fetch.order_against(
                source.remote(), branch, self.paths.source, snap.commit, last,
                commit_time=snap.commit_time, published_at=None,
            )  # fmt: skip
            if order is not fetch.Order.OLDER:
                return
            refname = f"refs/heads/{branch}"
            now_at = repository.remote_refs(source.remote(), [refname]).get(refname)
            if now_at != snap.commit:
                raise commit.OlderSourceError(snap.commit, last, head)
            log.info("preview of %s: the branch was rewound to %s", branch, snap.commit[:12])

        return check

    def _remove(self, name: str, shown: dict[str, records.Shown]) -> PreviewResult:
        """Delete the folder ``name`` of a branch that is gone; forget it in ``shown``."""
        config, entry = self.config, shown[name]
        folder = f"{publish_preview.ROOT}/{name}"
        when = self.now().astimezone(UTC)
        change = publish_preview.FolderCommit(
            config.publish.author, publish_preview.removal_message(entry.branch), when
        )
        pushed = publish_preview.publish_folder(
            config.preview.remote(config.publish), config.preview.publish_branch,
            self.paths.publish, folder, None, change,
        )  # fmt: skip
        del shown[name]
        records.write_record(self.root, shown)
        log.info("preview of %s: the branch is gone: removed %s/ (%s)", entry.branch, folder,
                 (pushed.new or "nothing left to remove")[:12])  # fmt: skip
        return PreviewResult(entry.branch, folder, PreviewStatus.REMOVED,
                             commit=pushed.new or pushed.old,
                             changed_paths=pushed.changed_paths)  # fmt: skip

    def _announce(self, result: PreviewResult, pushed: PublishResult) -> PreviewResult:
        """``result`` with the email of its preview queued and delivered."""
        assert result.source_commit is not None and pushed.new is not None
        news = PreviewNews(
            result.branch, result.source_commit, pushed.new, result.folder, result.url,
            len(pushed.changed_paths),
        )  # fmt: skip
        report = announce_preview(
            news, self.config.notify, repo_path=self.paths.publish, refname=pushed.refname,
            outbox=self.paths.outbox, now=self.now(), retry_now=self.retry_now,
        )  # fmt: skip
        return dataclasses.replace(result, mail_sent=report.sent,
                                   mail_failures=_waiting(report))  # fmt: skip

    def _deliver_waiting(self) -> None:
        """Retry the preview emails and commit statuses still waiting in the previews'
        outbox (told in the log)."""
        report = deliver_all(
            self.config.notify, self.paths.outbox, retry_now=self.retry_now,
            status=self.config.status,
        )  # fmt: skip
        self._told(report)


def _waiting(report: DeliveryReport) -> tuple[tuple[str, str], ...]:
    """The emails of ``report`` not delivered, as ``(key, reason)`` pairs."""
    later = tuple((key, "waiting for a retry") for key, _due in report.deferred)
    return report.failed + later
