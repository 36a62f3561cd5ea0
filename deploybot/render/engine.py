"""Rendering with recorded dependencies, streaming into a sink, and the full build.

A *producer* makes some outputs: a source path (post, page or static file), the theme's
index (:data:`INDEX`), the theme's assets (:data:`ASSETS`) or the feeds (:data:`FEEDS`).
:class:`Engine` renders one producer at a time with the functions of :mod:`.build`, records
what it read (:mod:`.deps`), writes its outputs to an :class:`OutputSink` (so a 10k-post
build never holds every output in memory) and its outputs, dependencies, warnings and
content to the :class:`~deploybot.render.cache.BuildCache`. :meth:`Engine.full` is the
full build, in :func:`~deploybot.render.build.build_site`'s order and with its warnings;
:mod:`.incremental` re-runs only the producers a change reaches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from deploybot.render import build
from deploybot.render.cache import BuildCache, CacheError, SourceRow
from deploybot.render.deps import LazySite, Recorder, TrackedDict, TrackingLoader, TrackingTree
from deploybot.render.layouts import make_environment
from deploybot.render.markdown import make_markdown
from deploybot.render.model import Page, Post, RenderOptions, RenderWarning, SiteModel
from deploybot.render.site import load_site
from deploybot.render.siteconfig import CONFIG_PATH, load_config
from deploybot.render.source import SourceTree

FEEDS = ":feeds"
INDEX = ":theme-index"
ASSETS = ":theme-assets"
ASSETS_KEY = "a"
"""Dependency key of the theme's ``assets/`` folder (any file in it changed)."""
NEVER = 2**62
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class NeedFullBuild(Exception):
    """An incremental build cannot tell what changed; the message says why."""


class OutputSink(Protocol):
    """Where outputs go. Paths are the publish tree's (POSIX, relative)."""

    def write(self, path: str, data: bytes) -> None:
        """Store ``data`` as the output ``path``."""
        ...

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Store the source blob ``blob_id`` as ``path``; ``read()`` gives its bytes when
        the sink does not have the blob already."""
        ...

    def delete(self, path: str) -> None:
        """Remove the output ``path`` (no error when absent)."""
        ...


class MemorySink:
    """An :class:`OutputSink` over a ``{path: bytes}`` dict (tests, previews)."""

    def __init__(self, base: Mapping[str, bytes] | None = None) -> None:
        self.files: dict[str, bytes] = dict(base or {})
        self.written: set[str] = set()
        self.deleted: set[str] = set()

    def write(self, path: str, data: bytes) -> None:
        """Set ``files[path]``."""
        self.files[path] = data
        self.written.add(path)
        self.deleted.discard(path)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Set ``files[path]`` to ``read()``."""
        self.write(path, read())

    def delete(self, path: str) -> None:
        """Remove ``files[path]``."""
        self.files.pop(path, None)
        self.deleted.add(path)
        self.written.discard(path)


@dataclasses.dataclass(frozen=True)
class BuildReport:
    """What a build did.

    Attributes:
        full: whether it was a full build.
        reason: why it was full ('' for an incremental build).
        rendered: the producers that ran (source paths, or ``:feeds`` etc.).
        warnings: as :attr:`~deploybot.render.model.SiteBuild.warnings`.
        timezone: the site's IANA timezone.
    """

    full: bool
    reason: str
    rendered: frozenset[str]
    warnings: tuple[RenderWarning, ...]
    timezone: str


class SubsetTree:
    """A :class:`SourceTree` showing only ``paths`` of ``inner`` (to read one source)."""

    def __init__(self, inner: SourceTree, paths: Iterable[str]) -> None:
        self.inner = inner
        self._paths = sorted(paths)

    def paths(self) -> Iterator[str]:
        """Yield the chosen paths, sorted."""
        return iter(self._paths)

    def read(self, path: str) -> bytes:
        """Return the inner tree's bytes. Raises ``KeyError`` when absent."""
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the inner tree's blob id. Raises ``KeyError`` when absent."""
        return self.inner.blob_id(path)


def micros(moment: datetime) -> int:
    """Return an aware ``moment`` as whole microseconds since the epoch (exact)."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def options_key(options: RenderOptions) -> str:
    """Return the options a cache is only valid for (theme, timezone, feed limit)."""
    return f"{options.theme}\0{options.timezone}\0{options.feed_limit}"


def _strip(model: Post | Page) -> Post | Page:
    """Return ``model`` without its body (what the cache keeps)."""
    return dataclasses.replace(model, doc=dataclasses.replace(model.doc, body=""))


class Engine:
    """One build's shared state: config, Jinja2 environment, tracked ``site``, sink, cache.

    Raises ``SourceError`` from the constructor for a bad ``_config.yml``.
    """

    def __init__(
        self, tree: SourceTree, options: RenderOptions, cache: BuildCache, sink: OutputSink
    ) -> None:
        if options.build_time is not None and options.build_time.tzinfo is None:
            raise ValueError("RenderOptions.build_time must be timezone-aware")
        self.tree, self.options, self.cache, self.sink = tree, options, cache, sink
        self.config = load_config(tree, options.timezone)
        self.hidden = () if options.theme == "default" else (options.theme.strip("/"),)
        self.recorder = Recorder()
        env = make_environment(TrackingTree(tree, self.recorder), options.theme, self.config)
        assert env.loader is not None
        env.loader = TrackingLoader(env.loader, self.recorder)
        self.time = (options.build_time or EPOCH).astimezone(ZoneInfo(self.config.timezone))
        self.time_us = micros(self.time)
        cutoff = options.build_time is None or self.config.future
        self.cut_us = NEVER if cutoff else micros(self.time)
        data = build.site_variables(SiteModel(self.config, (), (), (), self.time))
        del data["posts"]
        site = LazySite(data, self.recorder, self._site_posts)
        self.ctx = build.RenderContext(env, make_markdown(), site)
        self.rendered: set[str] = set()
        self.owners: dict[str, str] | None = None  # full build: output -> owner label
        self.overwrites: list[RenderWarning] = []

    def config_blob(self) -> str:
        """Return the blob id of ``_config.yml`` ('' when absent)."""
        try:
            return self.tree.blob_id(CONFIG_PATH)
        except KeyError:
            return ""

    def meta(self) -> dict[str, str]:
        """Return the cache ``meta`` values describing this build."""
        return {
            "options": options_key(self.options),
            "config": self.config_blob(),
            "time_us": str(self.time_us),
            "cut_us": str(self.cut_us),
        }

    def _site_posts(self) -> list[dict[str, Any]]:
        return [build.post_variables(row.model) for row in self.cache.posts(self.cut_us)]

    def read_source(self, path: str) -> SourceRow | None:
        """Return what ``path`` is (post, page, static, other) per Jekyll's reading rules, or
        ``None`` when it is not in the tree. Raises ``SourceError`` for a broken file."""
        try:
            blob = self.tree.blob_id(path)
        except KeyError:
            return None
        model, warnings = load_site(SubsetTree(self.tree, [path]), self.config, None, self.hidden)
        notes = tuple((w.line, w.message) for w in warnings)
        if model.posts:
            post = model.posts[0]
            return SourceRow(path, blob, "post", True, micros(post.date), _strip(post), notes)
        if model.pages:
            return SourceRow(path, blob, "page", False, 0, _strip(model.pages[0]), notes)
        kind = "static" if model.static else "other"
        return SourceRow(path, blob, kind, False, 0, None, notes)

    def visible(self, row: SourceRow | None, cut_us: int) -> bool:
        """Return whether ``row`` publishes outputs under the future cut-off ``cut_us``."""
        if row is None or row.kind in ("other",):
            return False
        return row.kind != "post" or (row.published and row.date_us <= cut_us)

    # producers

    def _put(self, path: str, owner: str) -> None:
        if self.owners is None:
            return
        if path in self.owners:
            message = f"output {path} (from {self.owners[path]}) is overwritten by {owner}"
            self.overwrites.append(RenderWarning(owner, None, message))
        self.owners[path] = owner

    def _record(
        self, producer: str, outputs: list[str], deps: dict[str, str], warnings: Iterable[Any]
    ) -> None:
        self.rendered.add(producer)
        self.cache.set_outputs(producer, outputs)
        self.cache.set_deps(producer, deps)
        self.cache.set_render_warnings(producer, ((w.path, w.line, w.message) for w in warnings))

    def render_source(self, row: SourceRow) -> None:
        """Render the post, page or static file ``row`` into the sink and the cache.

        Raises ``SourceError`` for bad input."""
        path = row.path
        if row.kind == "static":
            self._put(path, path)
            self.sink.copy(path, row.blob, lambda: self.tree.read(path))
            self._record(path, [path], {"b:" + path: row.blob}, ())
            return
        model, _ = load_site(SubsetTree(self.tree, [path]), self.config, None, self.hidden)
        doc: Post | Page = model.posts[0] if row.kind == "post" else model.pages[0]
        self.recorder.push()
        try:
            rendered = self._render(doc)
        finally:
            deps = self.recorder.pop()
        deps["b:" + path] = row.blob
        self._put(rendered.output_path, path)
        self.sink.write(rendered.output_path, rendered.output)
        if row.kind == "post":
            self.cache.put_content(path, rendered.content)
        self._record(path, [rendered.output_path], deps, rendered.warnings)

    def _render(self, doc: Post | Page) -> build.RenderedDocument:
        # build.render_post/render_page with a tracked ``page`` mapping
        if isinstance(doc, Post):
            page = TrackedDict(build.post_variables(doc), self.recorder, "p:", True)
            return build._render(doc.doc, doc.output_path, "post", page, self.ctx)
        page = TrackedDict(build.page_variables(doc), self.recorder, "p:", True)
        return build._render(doc.doc, doc.output_path, "page", page, self.ctx)

    def render_assets(self) -> None:
        """Copy the theme's ``assets/`` files (recording ``a``)."""
        outputs: list[str] = []
        for path, data in build.theme_assets(self.tree, self.options.theme):
            self._put(path, f"theme {self.options.theme}")
            self.sink.write(path, data)
            outputs.append(path)
        self._record(ASSETS, outputs, {ASSETS_KEY: ""}, ())

    def render_index(self) -> None:
        """Render the theme's ``index.html`` listing (when the theme has one)."""
        self.recorder.push()
        try:
            data = build.render_index(self.ctx)
        finally:
            deps = self.recorder.pop()
        if data is not None:
            self._put("index.html", f"theme {self.options.theme}")
            self.sink.write("index.html", data)
        self._record(INDEX, [] if data is None else ["index.html"], deps, ())

    def render_feeds(self) -> None:
        """Write ``atom.xml`` and ``rss.xml`` from cached post models and contents.

        Raises :class:`CacheError` when a shown post's content is missing."""
        rows = self.cache.posts(self.cut_us, max(self.options.feed_limit, 0))
        contents: dict[str, str] = {}
        for row in rows:
            content = self.cache.content(row.path)
            if content is None:
                raise CacheError(f"no cached content for {row.path}")
            contents[row.path] = content
        model = SiteModel(self.config, tuple(r.model for r in rows), (), (), self.time)
        files = build.feed_files(model, contents, self.options.feed_limit)
        for path, data in files.items():
            self._put(path, "feeds")
            self.sink.write(path, data)
        self._record(FEEDS, sorted(files), {"s:time": ""}, ())

    def page_owns_index(self) -> bool:
        """Return whether a page writes ``index.html`` (then the theme index is not made)."""
        return any(not p.startswith(":") for p in self.cache.producers_of("index.html"))

    def warnings(self) -> tuple[RenderWarning, ...]:
        """Return every warning of the current state, sorted as ``build_site`` sorts them."""
        found = [RenderWarning(p, n, m) for p, n, m in self.cache.all_warnings()]
        found += [RenderWarning(p, n, m) for p, n, m in self.cache.render_warnings()]
        found += [
            RenderWarning(p, None, "skipped: the post has a future date")
            for p in self.cache.future_warnings(self.cut_us)
        ]
        if not self.config.url and self.cache.posts(self.cut_us, 1):
            message = "no 'url' set: feed links are not absolute"
            found.append(RenderWarning(CONFIG_PATH, None, message))
        found += self.overwrites
        return tuple(sorted(found, key=lambda w: (w.path, w.line or 0, w.message)))

    def full(self, reason: str) -> BuildReport:
        """Build everything (in ``build_site``'s order), replacing the cache's rows.

        The sink should start empty (or hold the previous output, which is then replaced:
        the caller deletes what this build did not write). Raises ``SourceError``."""
        self.cache.clear()
        self.owners = {}
        rows: list[SourceRow] = []
        for path in self.tree.paths():
            row = self.read_source(path)
            if row is not None and (row.kind != "other" or row.warnings):
                self.cache.put_source(row)
                if row.kind in ("static", "page"):
                    rows.append(row)
        self.render_assets()
        for row in rows:
            if row.kind == "static":
                self.render_source(row)
        pages = [r for r in rows if r.kind == "page"]
        if not any(r.model.output_path == "index.html" for r in pages):
            self.render_index()
        for row in pages:
            self.render_source(row)
        for row in self.cache.posts(self.cut_us):
            self.render_source(row)
        self.render_feeds()
        return BuildReport(
            True, reason, frozenset(self.rendered), self.warnings(), self.config.timezone
        )
