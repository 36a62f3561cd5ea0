"""The preview's builds: the working tree rendered into the served folder, incrementally.

One :class:`PreviewBuilder` owns the served folder and a build cache beside it (both in the
preview's temporary folder). :meth:`PreviewBuilder.build` runs the pipeline's engine
(:func:`deploybot.render.engine.incremental.build_into`) on the paths saved since the last
good build, as ``run-once`` drives it on the paths a push changed: incrementally when it
can, else (``NeedFullBuild``, ``_config.yml`` changed, no build yet) fully. ``site.time`` is
the time of the last full build (the feeds' dates, a footer's "built at", a draft's date),
not of each save: a new one would re-render every page that shows it; the future cut-off is
each build's time, so a post falls due while the preview runs. A git theme
``_config.yml`` names is fetched by the full build and kept at that commit until the next.

A build's outputs are held back (:class:`StagedSink`) until it succeeds, then written into
the folder file by file, each replaced atomically, so the server always serves whole files
of the last good build. A failed build changes nothing on disk, rolls the cache back to the
last good build, and keeps its changed paths for the next attempt.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from deploybot.config.schema import RenderConfig
from deploybot.git import path_rules
from deploybot.livepreview.paths import normal_baseurl
from deploybot.pipeline.build_folder import render_options
from deploybot.pipeline.theme import ThemeFetch, themed_source
from deploybot.record import note
from deploybot.render.engine.cache import BuildCache, renderer_version
from deploybot.render.engine.incremental import build_into, unread_changes
from deploybot.render.model import RenderOptions, RenderWarning
from deploybot.render.outputs.sinks import BuildReport, NeedFullBuild
from deploybot.render.read.siteconfig import CONFIG_PATH, load_config
from deploybot.render.read.source import DirTree
from deploybot.support.errors import DeploybotError, SourceError

log = logging.getLogger(__name__)


class StagedSink:
    """An :class:`~deploybot.render.outputs.sinks.OutputSink` that holds a build's writes
    and deletes until :meth:`apply` (or forgets them: a failed build). ``files`` maps an
    output path to a way to read its bytes, ``deleted`` the paths removed."""

    def __init__(self) -> None:
        self.files: dict[str, Callable[[], bytes]] = {}
        self.deleted: set[str] = set()

    def write(self, path: str, data: bytes) -> None:
        """Hold ``data`` as ``path``."""
        self.files[path] = lambda: data
        self.deleted.discard(path)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Hold ``read`` (the source blob's bytes, read when applied) as ``path``."""
        self.files[path] = read
        self.deleted.discard(path)

    def delete(self, path: str) -> None:
        """Note ``path`` removed."""
        self.files.pop(path, None)
        self.deleted.add(path)


@dataclass(frozen=True)
class BuildOutcome:
    """What one preview build did.

    Attributes:
        ok: whether it succeeded (the folder holds its output).
        full: a full build (else incremental).
        reason: why it was full ('' for incremental).
        seconds: wall-clock time of the build and its writing, in seconds.
        changed: the output paths written or removed.
        error: the error's one-line text (``PATH:LINE: MESSAGE`` for bad input), or None.
        warnings: the build's warnings.
    """

    ok: bool
    full: bool = False
    reason: str = ""
    seconds: float = 0.0
    changed: frozenset[str] = frozenset()
    error: str | None = None
    warnings: tuple[RenderWarning, ...] = ()


@dataclass
class PreviewSettings:
    """How the preview builds: the ``[render]`` config (defaults without a config), the
    Jekyll command-line overrides (``--drafts``: ``show_drafts``, ``--future``:
    ``future``), and the folder git themes are fetched into (None: the preview's own)."""

    render: RenderConfig = field(default_factory=RenderConfig)
    drafts: bool = False
    future: bool = False
    themes_dir: Path | None = None

    def options(self, build_time: datetime, cutoff: datetime) -> RenderOptions:
        """The render options of a build with ``site.time`` ``build_time`` and the future
        ``cutoff`` (both aware)."""
        overrides = {}
        if self.drafts:
            overrides["show_drafts"] = True
        if self.future:
            overrides["future"] = True
        options = render_options(self.render, build_time, cutoff)
        return replace(options, config_overrides=tuple(sorted(overrides.items())))


class PreviewBuilder:
    """Builds ``source`` (a folder on disk) into ``root/site`` with its cache in
    ``root/work``.

    ``root`` is the preview's own folder (made here when missing); nothing else is written,
    and when it lies inside ``source`` it is not read. Not thread-safe: one build at a time,
    and every call from one thread (the cache's sqlite connection is that thread's, opened
    by the first build).
    """

    def __init__(self, source: Path, root: Path, settings: PreviewSettings) -> None:
        self.source = source
        self.site = root / "site"
        self.work = root / "work"
        self.settings = settings
        self.outputs: set[str] = set()
        self.baseurl = ""
        self._listing: set[str] = set()
        self._unbuilt: set[str] | None = None  # None: the next build is a full one
        self._why_full = "the first build"
        self.site.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        self._opened: BuildCache | None = None
        self._theme_pin: str | None = None
        self._site_time: datetime | None = None
        self._skip = _inside(source, root)

    @property
    def _cache(self) -> BuildCache:
        if self._opened is None:
            self._opened = BuildCache.open(self.work / "build.sqlite", renderer_version())
        return self._opened

    def close(self) -> None:
        """Close the build cache (from the thread that built)."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None

    def build(self, changed: Iterable[str] | None) -> BuildOutcome:
        """Build the source paths ``changed`` since the last call (``None``: a full build),
        with those a failed build left; return what it did. Never raises for bad input in
        the source or a failed build: the outcome says why (and the traceback of an
        unexpected error is logged)."""
        if changed is None or CONFIG_PATH in (changed := set(changed)):
            self._full("the first build" if changed is None else "the site config changed")
        elif self._unbuilt is not None:
            self._unbuilt |= changed
        start = time.monotonic()
        try:
            report, written = self._build(self._unbuilt)
        except DeploybotError as exc:
            self._cache.rollback()
            return BuildOutcome(False, seconds=time.monotonic() - start, error=_error_text(exc))
        except OSError as exc:  # writing the folder (disk full...): it may be half written
            self._cache.rollback()
            self._full("the last build could not be written")
            error = f"cannot write the build into {self.site}: {exc}"
            return BuildOutcome(False, seconds=time.monotonic() - start, error=error)
        except Exception as exc:  # a bug: shown on the page too, the server keeps serving
            log.exception("the preview build failed")
            self._cache.rollback()
            self._full("the last build failed unexpectedly")  # who knows what the cache holds
            error = f"internal error: {type(exc).__name__}: {exc}"
            return BuildOutcome(False, seconds=time.monotonic() - start, error=error)
        self._cache.commit({})
        self._unbuilt = set()
        seconds = time.monotonic() - start
        if report is None:
            return BuildOutcome(True, seconds=seconds, reason="nothing the build reads changed")
        return BuildOutcome(
            True, report.full, report.reason, seconds, written, warnings=report.to_tell
        )  # fmt: skip

    def _full(self, why: str) -> None:
        """Make the next build a full one, for the reason ``why`` (its report's)."""
        self._unbuilt = None
        self._why_full = why

    def _build(self, changed: set[str] | None) -> tuple[BuildReport | None, frozenset[str]]:
        """Build and write; return the report (None: the saves touched nothing the build
        reads, so nothing was built) and the output paths written or removed."""
        now = datetime.now(UTC)
        if changed is None or self._site_time is None:
            self._site_time = now
        options = self.settings.options(self._site_time, now)
        tree = DirTree(self.source, self._skip)
        listing = set(tree.paths())
        if changed is None:
            self._theme_pin = None  # _config.yml may name another theme, or another ref
        # a git theme is fetched once, then kept at that commit: a save is no network trip
        fetch = ThemeFetch(self.settings.themes_dir or self.work / "themes", pinned=self._theme_pin)
        with themed_source(tree, self.settings.render, fetch) as themed:
            sink = StagedSink()
            report = None
            if changed is not None and self.outputs:
                changed = _with_folders(changed, self._listing | listing)
                if unread_changes(themed.tree, options, self._cache, changed) is not None:
                    self._listing = listing
                    return None, frozenset()
                try:
                    report = build_into(themed.tree, options, self._cache, sink, sorted(changed))
                except NeedFullBuild as exc:
                    log.info("full build: %s", exc)
                    self._cache.rollback()
                    sink, reason = StagedSink(), str(exc)
            else:
                reason = self._why_full if self.outputs else "the first build"
            if report is None:
                report = build_into(
                    themed.tree, options, self._cache, sink, None, full_reason=reason
                )
            written = self._apply(sink, full=report.full)
        self._listing = listing
        self._theme_pin = themed.record.get(note.THEME_COMMIT)
        self.baseurl = normal_baseurl(load_config(tree, overrides=options.config_overrides).baseurl)
        return report, written

    def _apply(self, sink: StagedSink, *, full: bool) -> frozenset[str]:
        """Write ``sink``'s files into the folder and remove its deletes (for a full build,
        every earlier output it did not make). Raises SourceError for a refused output
        path before anything is written."""
        for path in [*sink.files, *sink.deleted]:
            path_rules.check_path(path, "output path")
        gone = (self.outputs - set(sink.files)) if full else (sink.deleted & self.outputs)
        for path in sorted(gone, reverse=True):
            _remove(self.site, path)
        for path, read in sink.files.items():
            _write(self.site, path, read())
        self.outputs = (self.outputs - gone) | set(sink.files)
        return frozenset(gone | set(sink.files))


def _with_folders(changed: set[str], listing: set[str]) -> set[str]:
    """``changed`` with every path of ``listing`` (the files before and after) below one
    of them: watchfiles reports a folder moved or removed as one path."""
    found = set(changed)
    for path in listing:
        parts = path.split("/")
        if any("/".join(parts[:depth]) in changed for depth in range(1, len(parts))):
            found.add(path)
    return found


def _error_text(exc: DeploybotError) -> str:
    """One line for the terminal and the page: ``PATH:LINE: MESSAGE`` for bad input."""
    if isinstance(exc, SourceError):
        return str(exc)
    return str(exc) or type(exc).__name__


def _inside(source: Path, root: Path) -> str | None:
    """``root``'s path inside ``source`` (``/``-separated: the reading skips it), or None."""
    src, dst = source.resolve(), root.resolve()
    return dst.relative_to(src).as_posix() if src in dst.parents else None


def _write(root: Path, rel: str, data: bytes) -> None:
    """Write ``data`` as ``root/rel`` atomically (a temporary file renamed over it); a file
    of an earlier build where a folder is needed, or a folder where the file goes, is
    removed first (everything in ``root`` is the preview's own)."""
    target = root / rel
    parent = target.parent
    for folder in [*reversed(target.relative_to(root).parents)][1:]:
        where = root / folder
        if where.is_file() or where.is_symlink():
            where.unlink()
    parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    temporary = parent / f".{target.name}.deploybot-tmp"
    temporary.write_bytes(data)
    os.replace(temporary, target)


def _remove(root: Path, rel: str) -> None:
    """Remove the file ``root/rel`` (if there) and the folders it leaves empty."""
    target = root / rel
    if target.is_file() or target.is_symlink():
        target.unlink()
    folder = target.parent
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
