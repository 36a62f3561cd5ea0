"""Rendering with recorded dependencies, streaming into a sink, and the full build.

A *producer* makes some outputs: a source path (post, page or static file), the theme's
index (:data:`INDEX`), the theme's assets (:data:`ASSETS`), the feeds (:data:`FEEDS`) or a
plugin's generator (``:plugin:NAME``, :mod:`.plugin_outputs`: the sitemap, jekyll-feed...).
:class:`Engine` renders one producer at a time with the
functions of :mod:`.build`, records what it read (:mod:`.deps`), writes its outputs to an
:class:`~deploybot.render.outputs.sinks.OutputSink` (so a 10k-post build never holds every output
in memory) and its outputs, dependencies, warnings and content to the
:class:`~deploybot.render.engine.cache.BuildCache`. :meth:`Engine.full` is the full build, in
:func:`~deploybot.render.engine.build.build_site`'s order and with its warnings; :mod:`.incremental`
re-runs only the producers a change reaches.

The ``site`` the templates see is a :class:`~deploybot.render.engine.deps.LazySite` over the cache
(posts, pages, static files, categories, tags), a post's ``page`` carries its neighbours
from the cache, and ``{% include %}`` reads through the tracking tree; so everything a render
reads is recorded, and the result equals :func:`~deploybot.render.engine.build.build_site`'s.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from deploybot.render.engine import build, plugin_outputs
from deploybot.render.engine.cache import BuildCache, CacheError, SourceRow
from deploybot.render.engine.deps import (
    NEIGHBOURS,
    Key,
    Kind,
    Recorder,
    SiteContent,
    TrackedDict,
    TrackingTree,
)
from deploybot.render.engine.parallel import Doc, Workers
from deploybot.render.engine.plugin_outputs import PRODUCER, CacheView, deps_of, generators
from deploybot.render.engine.reread import ReadMemo
from deploybot.render.engine.site_lists import EngineContents, Neighbours, SiteLists, doc_date_us
from deploybot.render.limits import out_of_memory
from deploybot.render.links.check import LinkRecorder
from deploybot.render.links.extract import PageLinks, page_links
from deploybot.render.links.resolve import SiteAddress, is_page
from deploybot.render.liquid.excerpt import CUT, excerpt_source
from deploybot.render.liquid.plugins import registry
from deploybot.render.liquid.plugins.registry import Plugin, PrerenderContext, Promotion
from deploybot.render.markdown.renderer import markdown_for, markdown_to_html
from deploybot.render.model import (
    Page,
    Post,
    RenderOptions,
    RenderWarning,
    SiteModel,
    site_time,
)
from deploybot.render.outputs.sinks import (
    BuildReport,
    CheckedSink,
    MemorySink,
    NeedFullBuild,
    OutputSink,
    RenderedSource,
    micros,
)
from deploybot.render.read.limited import check_file_size
from deploybot.render.read.publisher import future_cutoff, in_the_future_us
from deploybot.render.read.site import SourceFile, read_source_file
from deploybot.render.read.siteconfig import CONFIG_PATH
from deploybot.render.read.source import SourceTree
from deploybot.render.theme import site_theme
from deploybot.render.theme.deferred import DeferredEnvironment, check_theme_folder

if TYPE_CHECKING:
    import jinja2

__all__ = ["BuildReport", "Engine", "MemorySink", "NeedFullBuild", "OutputSink"]

FEEDS = ":feeds"
INDEX = ":theme-index"
ASSETS = ":theme-assets"
NEVER = 2**62


def options_key(options: RenderOptions) -> str:
    """Return the options a cache is only valid for (theme, timezone, feed limit, Markdown
    typography and footnotes, the source's GitHub repository, and the limits (layout
    budgets, file, page and YAML sizes, Markdown elements): a page that fitted a looser
    limit must be checked again; whether links are checked: a cache made without has no
    link rows)."""
    return "\0".join(
        str(v)
        for v in (
            options.theme,
            options.timezone,
            options.feed_limit,
            options.typography,
            options.footnotes,
            options.layout_limits,
            options.liquid_limits,
            options.max_file_bytes,
            options.max_page_bytes,
            options.max_yaml_size,
            options.markdown_max_elements,
            options.repository,
            options.baseurl,
            options.url,
            options.check_links,
            options.kept,
            # the command line's _config.yml overrides (preview's --drafts, --future); kept
            # out of the key when there are none, so the pipeline's caches stay valid
            *((options.config_overrides,) if options.config_overrides else ()),
        )
    )


def promotion_of(row: SourceRow | None) -> Promotion | None:
    """Return the promotion a plugin gave the page ``row`` (its permalink and whether its
    original is copied), ``None`` for any other row."""
    if row is None or row.kind != "page" or row.model.readme is None:
        return None
    return str(row.model.doc.front_matter["permalink"]), row.model.original is not None


def _strip(model: Post | Page) -> Post | Page:
    """Return ``model`` as the cache keeps it: a page without its body; a post with only its
    excerpt's source as the body (and :data:`~deploybot.render.liquid.excerpt.CUT` as its separator,
    so its ``excerpt`` is unchanged)."""
    if isinstance(model, Post):
        if not model.excerpt_separator:
            return dataclasses.replace(model, doc=dataclasses.replace(model.doc, body=""))
        source = excerpt_source(model.doc.body, model.excerpt_separator)
        doc = dataclasses.replace(model.doc, body=source)
        return dataclasses.replace(model, doc=doc, excerpt_separator=CUT)
    return dataclasses.replace(model, doc=dataclasses.replace(model.doc, body=""))


class Engine(SiteLists):
    """One build's shared state: config, Jinja2 environment, tracked ``site``, sink, cache.

    Raises ``SourceError`` from the constructor for a bad ``_config.yml``.
    """

    def __init__(
        self, tree: SourceTree, options: RenderOptions, cache: BuildCache, sink: OutputSink
    ) -> None:
        source = build.read_settings(tree, options)
        self.layered, self.links, tree = source.layered, source.links, source.tree
        self.tree, self.options, self.cache = tree, options, cache
        self.sink: OutputSink = CheckedSink(sink, options.max_site_bytes)
        self.config, self.plugin_notes = source.config, source.notes
        self.link_recorder: LinkRecorder | None = None
        if options.check_links:
            site = SiteAddress.of(self.config.url, self.config.baseurl)
            self.link_recorder = LinkRecorder(sink, cache, site, options.kept)
            self.sink = CheckedSink(self.link_recorder, options.max_site_bytes)
        self.hidden = () if options.theme == "default" else (options.theme.strip("/"),)
        self.recorder = Recorder()
        tracked_tree = TrackingTree(tree, self.recorder)
        check_theme_folder(tracked_tree, options.theme)
        env = DeferredEnvironment(lambda: self._tracked_environment(tracked_tree))
        self.time = site_time(self.config, options)
        self.time_us = micros(self.time)
        cutoff = future_cutoff(self.config, options)
        self.cut_us = NEVER if cutoff is None else micros(cutoff)
        # the cut-off moves with the clock (not future: true, nor _config.yml's time)
        self.clock_cutoff = cutoff is not None and self.config.time is None
        self.md = markdown_for(options, self.config.data)
        self.contents = EngineContents(self)
        self.env = env
        self.tracked_tree = tracked_tree
        self.layout_names: dict[str, str] = {}
        self.data_paths: list[str] = []
        self._setup({}, [])
        self.rendered: set[str] = set()
        self.owners: dict[str, str] | None = None  # full build: output -> owner label
        # every symlink of the tree -> the paths its resolution looked at (.links)
        self.chains: dict[str, list[str]] = {}
        self.overwrites: list[RenderWarning] = []
        self._urls: dict[str, str] | None = None  # source path -> URL, for plugins
        self.first_reads = ReadMemo()  # for the render's second read (.reread)

    def _tracked_environment(self, tracked_tree: TrackingTree) -> jinja2.Environment:
        """The build's Jinja2 environment (made at its first use: a site with Liquid layouts
        never asks), its loader recording each template a render reads."""
        from deploybot.render.engine.tracking_loader import TrackingLoader
        from deploybot.render.theme.layouts import make_environment

        options = self.options
        limits = options.layout_limits
        env = make_environment(tracked_tree, options.theme, self.config, limits, check=False)
        assert env.loader is not None
        env.loader = TrackingLoader(env.loader, self.recorder)
        return env

    def site_content(self) -> SiteContent:
        """Return the engine: it makes ``site``'s lists from the cache."""
        return self

    def config_blob(self) -> str:
        """Return the blob id of ``_config.yml`` ('' when absent)."""
        try:
            return self.tree.blob_id(CONFIG_PATH)
        except KeyError:
            return ""

    def config_key(self) -> str:
        """Return what the build's config is made of: the blob id of ``_config.yml``, and of
        the gem theme's ``_config.yml`` merged under it when there is one (a change of
        either is a full build)."""
        theme = "" if self.layered is None else self.layered.config_key()
        return self.config_blob() + (f"+{theme}" if theme else "")

    def meta(self) -> dict[str, str]:
        """Return the cache ``meta`` values describing this build."""
        return {
            "options": options_key(self.options),
            "config": self.config_key(),
            "time_us": str(self.time_us),
            "cut_us": str(self.cut_us),
            "layouts": json.dumps(self.layout_names, sort_keys=True),
            "data": json.dumps(self.data_paths),
            "links": json.dumps(self.chains, sort_keys=True),
            "theme": "" if self.layered is None else self.layered.listing_json(),
        }

    def read_source(self, path: str, index: Promotion | None = None) -> SourceRow | None:
        """Return what ``path`` is (post, doc, page, static, other) per Jekyll's reading
        rules, or ``None`` when it is not in the tree; ``index``: a plugin's promotion of
        it to a page (:func:`~deploybot.render.read.site.read_source_file`). Raises
        ``SourceError`` for a broken file."""
        try:
            blob = self.tree.blob_id(path)
        except KeyError:
            if not (self.links.is_symlink(path) or self.links.is_submodule(path)):
                return None
            blob = ""  # a symlink that does not resolve, or a submodule: a warning only
        with out_of_memory(path, "reading"):
            found = self._load(path, index)
        self.first_reads.remember(self.tree, path, blob, index, found)
        notes = tuple((w.line, w.message) for w in found.warnings)
        if found.post is not None and found.post.is_post:
            post = found.post
            return SourceRow(path, blob, "post", True, micros(post.date), _strip(post), notes)
        if found.post is not None:
            doc = found.post
            return SourceRow(path, blob, "doc", True, doc_date_us(doc), _strip(doc), notes)
        if found.page is not None:
            return SourceRow(path, blob, "page", False, 0, _strip(found.page), notes)
        if found.static is not None:
            return SourceRow(path, blob, "static", False, 0, found.static, notes)
        return SourceRow(path, blob, "other", False, 0, None, notes)

    def expand_links(self, changed: list[str]) -> list[str]:
        """Return ``changed`` (source paths) plus every symlink whose resolution looked at
        one of them (its target changed, came or went), and keep the map of symlinks
        up to date for :meth:`meta`. Raises ``CacheError`` for an unreadable map."""
        try:
            before: dict[str, list[str]] = json.loads(self.cache.meta("links") or "{}")
        except ValueError as exc:
            raise CacheError(f"links: {exc}") from exc
        touched = set(changed)
        touched.update(link for link, chain in before.items() if touched.intersection(chain))
        self.chains = {link: chain for link, chain in before.items() if link not in touched}
        for path in touched:
            if self.links.is_symlink(path):
                self.chains[path] = list(self.links.resolve(path).chain)
        return sorted(touched)

    def load_source(self, path: str) -> SourceFile:
        """Read the source ``path`` of the tree again (no future cut-off). Raises
        ``SourceError`` for a broken file."""
        return self._load(path)

    def _load(self, path: str, index: Promotion | None = None) -> SourceFile:
        """Read the source ``path`` of the tree (no future cut-off), promoted by ``index``."""
        max_yaml = self.options.max_yaml_size
        found = read_source_file(
            self.tree,
            path,
            self.config,
            self.time,
            self.hidden,
            max_yaml,
            self.links,
            index,
            frontless=registry.read_frontless,
        )
        md = self.md
        return plugin_outputs.adjust_source(found, self.config, lambda t: markdown_to_html(t, md))

    def visible(self, row: SourceRow | None, cut_us: int) -> bool:
        """Return whether ``row`` publishes outputs under the future cut-off ``cut_us``."""
        if row is None or row.kind == "other":
            return False
        if row.kind == "static":
            return bool(row.model.output_path)
        if row.kind == "doc":  # date_us < 0: a document without a date
            return bool(row.model.output_path) and (
                row.date_us < 0 or not in_the_future_us(row.date_us, cut_us)
            )
        return row.kind != "post" or (row.published and not in_the_future_us(row.date_us, cut_us))

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

    def render_source(self, row: SourceRow, neighbours: Neighbours | None = None) -> None:
        """Render the post, document, page or static file ``row`` into the sink and the
        cache; a post or a document gets ``neighbours`` (``(previous, next)``; default: from
        the cache).

        Raises ``SourceError`` for bad input."""
        path = row.path
        if row.kind == "static":
            # The sink may copy the blob without reading it: check its size first anyway.
            check_file_size(self.tree, path, self.options.max_file_bytes)
            out = row.model.output_path
            self._put(out, path)
            with out_of_memory(path, "copying"):
                self.sink.copy(out, row.blob, lambda: self.tree.read(path))
            self._record(path, [out], {Kind.BLOB + path: row.blob}, ())
            return
        self.apply(row, self.render_row(row, neighbours))

    def render_row(self, row: SourceRow, neighbours: Neighbours | None = None) -> RenderedSource:
        """Render the post, document or page ``row`` (a post or document with
        ``neighbours``, default: from the cache) without writing anything: what
        :meth:`apply` stores. A render worker runs this (:mod:`.parallel`). Raises
        ``SourceError`` for bad input, and naming the file when it runs out of memory."""
        with out_of_memory(row.path, "rendering"), self.contents.reading(row.path):
            done = self._render_row(row, neighbours)
        if done.content is not None:
            self.contents.finished(row.path, done.content, done.outputs[0][1])
        return done

    def _render_row(self, row: SourceRow, neighbours: Neighbours | None) -> RenderedSource:
        path, index = row.path, promotion_of(row)
        found = self.first_reads.read_again(
            self.tree, path, row.blob, index, lambda: self._load(path, index)
        )
        doc: Post | Page | None = found.post if row.kind in ("post", "doc") else found.page
        assert doc is not None
        context = PrerenderContext(self.config, frozenset(self.layout_names), self.source_urls)
        doc, read = registry.before_render(doc, context)
        self.recorder.push()
        outputs: list[tuple[str, bytes]] = []
        warnings: list[RenderWarning] = []
        content = None
        try:
            if isinstance(doc, Post) and not doc.is_post:
                rendered = self._render_doc(doc, neighbours)
                content = rendered.content  # a plugin's feed of a collection reads it
                outputs.append((rendered.output_path, rendered.output))
                warnings.extend(rendered.warnings)
            elif isinstance(doc, Post):
                pair = self.neighbours(row) if neighbours is None else neighbours
                page = build.post_variables(doc, self.md, *pair, self.contents)
                tracked = TrackedDict(page, self.recorder, Kind.PAGE, True, NEIGHBOURS)
                rendered = build.render_doc_output(doc, tracked, self.ctx, "post")
                content = rendered.content
                outputs.append((rendered.output_path, rendered.output))
                warnings.extend(rendered.warnings)
            else:
                for rendered in self._page_outputs(doc):
                    if not outputs:  # the page's own (page 1 of a paginated index)
                        content = rendered.content  # what site.pages shows once rendered
                    outputs.append((rendered.output_path, rendered.output))
                    warnings.extend(rendered.warnings)
        finally:
            deps = self.recorder.pop()
        deps[Kind.BLOB + path] = row.blob
        labels = self.config.collections
        deps.update(plugin_outputs.reads_deps(read, self.layout_names, labels))  # hooks read
        info = plugin_outputs.document_info(doc, self.config, self.layout_names)
        own = dict(outputs)[doc.output_path]
        hooked = plugin_outputs.hook_document(self.config.data, info, own, content or "")
        for name in hooked.layouts:  # a layout whose presence a hook read
            deps[Kind.LAYOUT + name] = self.layout_names.get(name, "")
        (_, mine), *extra = hooked.outputs
        outputs = [(p, mine if p == doc.output_path else d) for p, d in outputs]
        outputs, notes = plugin_outputs.post_render(info, outputs, extra)
        warnings.extend(notes)
        if isinstance(doc, Page) and doc.original is not None:  # kept by a plugin
            outputs.append((doc.original.output_path, self.tree.read(path)))
        content = None if content is None else hooked.content
        warnings.extend(hooked.warnings)
        return RenderedSource(outputs, content, deps, warnings)

    def links_of(self, outputs: list[tuple[str, bytes]]) -> dict[str, PageLinks]:
        """Return the links of each HTML page of ``outputs`` (:func:`.links.extract.page_links`,
        by output path), or nothing when links are not checked: what a render worker sends
        with a render, so the parent need not parse the page (:meth:`apply`)."""
        if self.link_recorder is None:
            return {}
        site = self.link_recorder.site
        return {path: page_links(data, path, site) for path, data in outputs if is_page(path)}

    def apply(self, row: SourceRow, done: RenderedSource) -> None:
        """Store ``row``'s render ``done``: its outputs into the sink (with their links when
        ``done`` has them), its content, outputs, dependencies and warnings into the cache,
        and its whole output too while a listing reads it
        (:meth:`~.site_lists.EngineContents.watched`). Raises ``SourceError`` for an output
        path refused or past ``max_site_bytes``."""
        content = done.content if done.packed is None else done.packed
        if content is not None:
            self.cache.put_content(row.path, content)
        self.contents.note_readers(done.deps)
        if row.kind in ("post", "doc") and row.path in self.contents.watched():
            text = done.outputs[0][1].decode("utf-8", "surrogatepass")
            self.cache.put_listed_output(row.path, text)
        if done.links and self.link_recorder is not None:
            self.link_recorder.expect(done.links)
        for output_path, data in done.outputs:
            self._put(output_path, row.path)
            self.sink.write(output_path, data)
        self._record(row.path, [p for p, _ in done.outputs], done.deps, done.warnings)

    def _page_outputs(self, doc: Page) -> Iterable[build.RenderedDocument]:
        """Render a page (each page of posts, when it is the paginated ``index.html``)."""
        pager = None
        if self.liquid_theme and doc.doc.path.rsplit("/", 1)[-1] == "index.html":
            pages = [r.model for r in self.cache.rows("page")]
            self.recorder.add(Key.PAGES)  # which index.html is paginated
            pager = site_theme.pager_of(self.config, pages)
        return build.render_page_outputs(
            doc, self.ctx, pager, lambda page: TrackedDict(page, self.recorder, Kind.PAGE, True)
        )

    def render_assets(self) -> None:
        """Copy the theme's ``assets/`` files (recording ``a``)."""
        outputs: list[str] = []
        assets = () if self.liquid_theme else build.theme_assets(self.tree, self.options.theme)
        for path, data in assets:
            self._put(path, f"theme {self.options.theme}")
            self.sink.write(path, data)
            outputs.append(path)
        self._record(ASSETS, outputs, {Key.ASSETS: ""}, ())

    def render_index(self) -> None:
        """Render the theme's ``index.html`` listing (when the theme has one)."""
        self.recorder.push()
        try:
            with self.contents.reading(None):
                data = None if self.liquid_theme else build.render_index(self.ctx)
        finally:
            deps = self.recorder.pop()
        if data is not None:
            self._put("index.html", f"theme {self.options.theme}")
            self.sink.write("index.html", data)
        self._record(INDEX, [] if data is None else ["index.html"], deps, ())

    def render_feeds(self) -> None:
        """Write ``atom.xml`` and ``rss.xml`` from cached post models and contents.

        Raises :class:`CacheError` when a shown post's content is missing."""
        if self.liquid_theme:  # the site's own theme: Jekyll writes no feeds of its own
            self._record(FEEDS, [], {Key.TIME: ""}, ())
            return
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
        self._record(FEEDS, sorted(files), {Key.TIME: ""}, ())

    def source_urls(self) -> dict[str, str]:
        """Return the URL of every written page, static file, post and document by source
        path (:func:`~.plugin_outputs.source_urls`), made once per build."""
        if self._urls is None:
            docs = [d for ds in CacheView(self).docs().values() for d in ds]
            self._urls = plugin_outputs.source_urls(
                (r.model for r in self.cache.rows("page")),
                (r.model for r in self.cache.rows("static")),
                (r.model for r in self.cache.iter_posts(self.cut_us)),
                docs,
            )
        return self._urls

    def excerpt_of(self, post: Post) -> str:
        """Return ``post``'s rendered excerpt (a cached model keeps its excerpt's source)."""
        return build.excerpt_of(self.md)(post)

    def render_plugin(self, plugin: Plugin) -> None:
        """Write the outputs of ``plugin``'s generator (:mod:`.plugin_outputs`), recording
        the dependencies its needs stand for. Raises :class:`CacheError` when a content
        it reads is missing."""

        def put(path: str, data: bytes, owner: str) -> None:
            self._put(path, owner)
            self.sink.write(path, data)

        view = CacheView(self)
        try:
            outputs = plugin_outputs.run(plugin, view, put)
        except KeyError as exc:
            raise CacheError(f"no cached content for {exc.args[0]}") from exc
        self._record(
            PRODUCER + plugin.name,
            outputs,
            deps_of(plugin, self.config.collections, view.read_time),
            view.warnings,
        )

    def page_owns_index(self) -> bool:
        """Return whether a source (a page, a static file, a document) writes
        ``index.html``: then the theme index is not made."""
        if any(not p.startswith(":") for p in self.cache.producers_of("index.html")):
            return True
        rows = [*self.cache.rows("page"), *self.cache.rows("static"), *self.cache.rows("doc")]
        return any(
            r.model.output_path == "index.html" and self.visible(r, self.cut_us) for r in rows
        )

    def warnings(self) -> tuple[RenderWarning, ...]:
        """Return every warning of the current state, sorted as ``build_site`` sorts them."""
        found = [RenderWarning(p, n, m) for p, n, m in self.cache.all_warnings()]
        found += [RenderWarning(p, n, m) for p, n, m in self.cache.render_warnings()]
        found += [
            RenderWarning(p, None, "skipped: the post has a future date")
            for p in self.cache.future_warnings(self.cut_us)
        ]
        if not self.config.url and not self.liquid_theme and self.cache.posts(self.cut_us, 1):
            found.append(build.no_url_warning(self.config_blob() != ""))
        found += self.overwrites
        found += self.config.warnings
        found += site_theme.theme_warnings(self.config, self.layered)
        found += registry.unknown_warnings(self.config)
        found += self.plugin_notes
        return tuple(sorted(found, key=lambda w: (w.path, w.line or 0, w.message)))

    def _read_all(self, workers: Workers) -> list[SourceRow]:
        """Read every source (:meth:`read_source`, by ``workers``) into the cache; return
        the rows stored, in path order (a render worker's copy of the cache)."""
        stored: list[SourceRow] = []
        for row in workers.read():
            if row is not None and (row.kind != "other" or row.warnings):
                self.cache.put_source(row)
                stored.append(row)
        return stored

    def promote(self, stored: list[SourceRow]) -> list[SourceRow]:
        """Return the rows ``stored`` with the files the plugins make pages
        (:func:`~deploybot.render.liquid.plugins.registry.promotions`) read again as those
        pages, and stored so."""
        pages = [row.model for row in stored if row.kind == "page"]
        static = [row.model for row in stored if row.kind == "static"]
        chosen = registry.promotions(pages, static, self.config)
        if not chosen:
            return stored
        done = []
        for row in stored:
            new = row if row.path not in chosen else self.read_source(row.path, chosen[row.path])
            if new is not None and new is not row:
                self.cache.put_source(new)
            done.append(new or row)
        return done

    def _render_docs(self, rows: list[SourceRow]) -> None:
        """Render the visible collection documents ``rows`` here, in order (each
        collection's order is read once; they are few beside the posts)."""
        pairs = self.doc_neighbours(dict.fromkeys(row.model.collection for row in rows))
        for row in rows:
            if self.visible(row, self.cut_us):
                self.render_source(row, pairs.get(row.model.doc.path, (None, None)))

    def full(self, reason: str) -> BuildReport:
        """Build everything (in ``build_site``'s order), replacing the cache's rows.

        The sink should start empty (or hold the previous output, which is then replaced:
        the caller deletes what this build did not write). Raises ``SourceError``."""
        self.cache.clear()
        self.contents.clear_watched()
        self.setup_full()
        self.owners = {}
        paths = sorted([*self.tree.paths(), *self.links.submodules()])
        for path in paths:
            if self.links.is_symlink(path):
                self.chains[path] = list(self.links.resolve(path).chain)
        if self.liquid_theme and self.ctx.liquid is not None:
            # Made (python-liquid imported: 0.35 s) before the render workers fork, which
            # then share it; each made its own, after the fork, when it met a layout.
            self.ctx.liquid.prepare()
        with Workers(self, paths) as workers:
            stored = self._read_all(workers)
            stored = self.promote(stored)
            self.render_assets()
            for row in stored:
                if row.kind == "static" and self.visible(row, self.cut_us):
                    self.render_source(row)
            index_of = {row.path: i for i, row in enumerate(stored)}
            pages = [i for i, row in enumerate(stored) if row.kind == "page"]
            posts = [index_of[row.path] for row in self.cache.iter_posts(self.cut_us)]
            docs: list[Doc] = [(i, None) for i in pages]
            docs += [(j, _pair(posts, k)) for k, j in enumerate(posts)]
            workers.share(stored, docs)
            renders = workers.render()
            if not self.page_owns_index():
                self.render_index()  # here, while the workers (if any) render the rest
            for row, done in renders:
                self.apply(row, done)
        self._render_docs([row for row in stored if row.kind == "doc"])
        self.render_feeds()
        for plugin in generators(self.config.data):
            self.render_plugin(plugin)
        return BuildReport(
            True,
            reason,
            frozenset(self.rendered),
            self.warnings(),
            self.config.timezone,
            self.waiting(),
        )


def _pair(posts: list[int], k: int) -> tuple[int | None, int | None]:
    """Return the (older, newer) neighbours of ``posts[k]`` in a newest-first list (as
    :func:`~deploybot.render.engine.build.neighbours`)."""
    return (posts[k + 1] if k + 1 < len(posts) else None, posts[k - 1] if k > 0 else None)
