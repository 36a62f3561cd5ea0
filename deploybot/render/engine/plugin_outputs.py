"""The plugins' generated outputs (``feed.xml``, ``sitemap.xml``, redirect pages...): the site
as a generator sees it (:class:`~deploybot.render.liquid.plugins.registry.SiteView`), from the
full build's model (:class:`ModelView`) or from the engine's cache (:class:`CacheView`), and
the dependency keys a generator's needs stand for in an incremental build (:func:`deps_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from deploybot.render.engine.cache import BuildCache
from deploybot.render.engine.deps import WHOLE, Key, Kind, collection_key
from deploybot.render.engine.document import RenderContext, render_document
from deploybot.render.liquid.plugins.registry import DocumentInfo, Needs, Plugin, Reads, SiteView
from deploybot.render.model import (
    Document,
    Page,
    Post,
    RenderWarning,
    SiteConfig,
    SiteModel,
    StaticFile,
    listed_static,
)
from deploybot.render.outputs.sinks import micros
from deploybot.render.read.publisher import in_the_future, in_the_future_us
from deploybot.render.read.site import SourceFile
from deploybot.render.read.source import SourceTree

PRODUCER = ":plugin:"
"""The prefix of a generator's producer label (``:plugin:jekyll-feed``)."""

_KEYS: Mapping[Needs, tuple[str, ...]] = {
    Needs.POSTS: (Key.ORDER, Kind.POST + WHOLE),
    Needs.PAGES: (Key.PAGES,),
    Needs.DOCS: (),  # each collection's own key: see deps_of
    Needs.STATIC: (Key.STATIC,),
    Needs.EVERY_BUILD: (),
}


def deps_of(plugin: Plugin, labels: Iterable[str], read_time: bool = False) -> dict[str, str]:
    """Return the dependency keys (``{key: ""}``) ``plugin``'s needs stand for (with
    :attr:`Plugin.post_fields`, those post fields in place of any; the documents: each
    collection of ``labels`` but ``posts``), and ``site.time``'s when its generator read
    it (``read_time``)."""
    deps = {key: "" for need in sorted(plugin.needs) for key in _KEYS[need]}
    if Needs.DOCS in plugin.needs:
        deps.update((collection_key(label), "") for label in labels if label != "posts")
    if Needs.POSTS in plugin.needs and plugin.post_fields:
        del deps[Kind.POST + WHOLE]
        deps.update((Kind.POST + name, "") for name in plugin.post_fields)
    if read_time:
        deps[Key.TIME] = ""
    return deps


def generators(data: Mapping[str, Any]) -> list[Plugin]:
    """Return the plugins ``_config.yml``'s ``data`` switches on that generate outputs."""
    from deploybot.render.liquid.plugins.registry import enabled

    return [p for p in enabled(data) if p.generate is not None]


def _exists(tree: SourceTree, path: str) -> bool:
    try:
        tree.blob_id(path)
    except KeyError:
        return False
    return True


class ModelView:
    """:class:`SiteView` of the full build: its ``model``, each collection's documents in
    its order (``docs``: :func:`~.build.collection_docs`), the rendered ``contents`` (source
    path -> HTML), ``excerpt`` (a post's rendered excerpt), ``site.data``, the tree and the
    future cut-off."""

    def __init__(
        self,
        model: SiteModel,
        docs: Mapping[str, Sequence[Post]],
        contents: Mapping[str, str],
        excerpt: Callable[[Post], str],
        data: Mapping[str, Any],
        tree: SourceTree,
        cut: datetime | None,
        ctx: RenderContext | None = None,
    ) -> None:
        self.model, self._docs, self.contents, self._excerpt = model, docs, contents, excerpt
        self._data, self.tree, self.cut, self.ctx = data, tree, cut, ctx
        self.warnings: list[RenderWarning] = []  # of the pages generators rendered

    @property
    def config(self) -> SiteConfig:
        """The site settings."""
        return self.model.config

    @property
    def time(self) -> datetime:
        """``site.time``."""
        return self.model.time

    def posts(self, limit: int | None = None) -> Sequence[Post]:
        """The newest ``limit`` posts (all for ``None``)."""
        return self.model.posts if limit is None else self.model.posts[:limit]

    def pages(self) -> Sequence[Page]:
        """The pages, in source-path order."""
        return sorted(self.model.pages, key=lambda p: p.doc.path)

    def docs(self) -> Mapping[str, Sequence[Post]]:
        """Each written collection's written documents, in its order."""
        return {
            label: [
                d
                for d in docs
                if d.output_path and not (d.dated and in_the_future(d.date, self.cut))
            ]
            for label, docs in self._docs.items()
            if self.config.collections[label].output
        }

    def static(self) -> Sequence[StaticFile]:
        """The written static files (originals kept by plugins' pages too)."""
        listed = listed_static(self.model.static, self.model.pages)
        return [s for s in listed if s.output_path]

    def content(self, path: str) -> str:
        """The rendered content of ``path``. Raises ``KeyError`` when not rendered."""
        return self.contents[path]

    def excerpt(self, post: Post) -> str:
        """``post``'s rendered excerpt."""
        return self._excerpt(post)

    def data(self) -> Mapping[str, Any]:
        """``site.data``."""
        return self._data

    def exists(self, path: str) -> bool:
        """Whether the source has the file ``path``."""
        return _exists(self.tree, path)

    def site(self) -> Mapping[str, Any]:
        """The Liquid ``site``."""
        assert self.ctx is not None
        return self.ctx.site

    def render(self, path: str, front_matter: Mapping[str, Any], page: Mapping[str, Any]) -> bytes:
        """A generated page rendered through its layout (:func:`render_generated`)."""
        assert self.ctx is not None
        return render_generated(self.ctx, path, front_matter, page, self.warnings)


def render_generated(
    ctx: RenderContext,
    path: str,
    front_matter: Mapping[str, Any],
    page: Mapping[str, Any],
    warnings: list[RenderWarning],
) -> bytes:
    """Return the output of a page of no body at ``path`` with ``front_matter`` (its
    ``layout``) and the ``page`` mapping, rendered as a page is (through its layouts),
    adding the render's warnings to ``warnings`` (a missing layout's). Raises
    ``SourceError``."""
    doc = Document(path, dict(front_matter), "", 1, False)
    rendered = render_document(doc, path, "page", dict(page), ctx)
    warnings.extend(rendered.warnings)
    return rendered.output


class EngineState(Protocol):
    """What :class:`CacheView` reads of an :class:`~deploybot.render.engine.full.Engine`."""

    config: SiteConfig
    time: datetime
    cut_us: int
    cache: BuildCache
    tree: SourceTree
    ctx: RenderContext

    def collection_docs(self, label: str) -> list[Post]:
        """The documents of collection ``label``, in its order."""
        ...

    def site_data(self) -> dict[str, Any]:
        """``site.data``."""
        ...

    def excerpt_of(self, post: Post) -> str:
        """``post``'s rendered excerpt."""
        ...


class CacheView:
    """:class:`SiteView` of an :class:`~deploybot.render.engine.full.Engine`'s cache."""

    def __init__(self, engine: EngineState) -> None:
        self.engine = engine
        self.read_time = False  # whether site.time was read (directly, or as a date)
        self.warnings: list[RenderWarning] = []  # of the pages generators rendered

    @property
    def config(self) -> SiteConfig:
        """The site settings."""
        return self.engine.config

    @property
    def time(self) -> datetime:
        """``site.time`` (noting the read)."""
        self.read_time = True
        return self.engine.time

    def posts(self, limit: int | None = None) -> Sequence[Post]:
        """The newest ``limit`` visible posts (all for ``None``)."""
        rows = self.engine.cache.posts(self.engine.cut_us, limit)
        return [row.model for row in rows]

    def pages(self) -> Sequence[Page]:
        """The pages, in source-path order."""
        return [row.model for row in self.engine.cache.rows("page")]

    def docs(self) -> Mapping[str, Sequence[Post]]:
        """Each written collection's written documents, in its order."""
        cut = self.engine.cut_us
        found: dict[str, Sequence[Post]] = {}
        for label, collection in self.config.collections.items():
            if label == "posts" or not collection.output:
                continue
            docs = self.engine.collection_docs(label)
            self.read_time |= any(not d.dated for d in docs)  # dated site.time
            found[label] = [
                d
                for d in docs
                if d.output_path and not (d.dated and in_the_future_us(micros(d.date), cut))
            ]
        return found

    def static(self) -> Sequence[StaticFile]:
        """The written static files (originals kept by plugins' pages too)."""
        static = [r.model for r in self.engine.cache.rows("static")]
        pages = [r.model for r in self.engine.cache.rows("page")]
        return [s for s in listed_static(static, pages) if s.output_path]

    def content(self, path: str) -> str:
        """The cached content of ``path``. Raises ``KeyError`` when there is none."""
        content = self.engine.cache.content(path)
        if content is None:
            raise KeyError(path)
        return content

    def excerpt(self, post: Post) -> str:
        """``post``'s rendered excerpt (the cached model keeps its excerpt's source)."""
        return self.engine.excerpt_of(post)

    def data(self) -> Mapping[str, Any]:
        """``site.data``."""
        return self.engine.site_data()

    def exists(self, path: str) -> bool:
        """Whether the source has the file ``path``."""
        return _exists(self.engine.tree, path)

    def site(self) -> Mapping[str, Any]:
        """The Liquid ``site`` (the engine's, which tracks its reads)."""
        return self.engine.ctx.site

    def render(self, path: str, front_matter: Mapping[str, Any], page: Mapping[str, Any]) -> bytes:
        """A generated page rendered through its layout (:func:`render_generated`)."""
        return render_generated(self.engine.ctx, path, front_matter, page, self.warnings)


@dataclass(frozen=True)
class HookedDocument:
    """A document's outputs after the plugins' document hooks: ``outputs`` (its own first,
    then the extra ones), its ``content``, the hooks' ``warnings`` and the layout names
    whose presence they read."""

    outputs: list[tuple[str, bytes]]
    content: str
    warnings: list[RenderWarning]
    layouts: tuple[str, ...] = ()


def hook_document(
    data: Mapping[str, Any], info: DocumentInfo, output: bytes, content: str
) -> HookedDocument:
    """Run the document hooks of the plugins ``_config.yml``'s ``data`` switches on over
    the rendered document ``info`` (its ``output`` and ``content``)."""
    from deploybot.render.liquid.plugins.registry import enabled

    extra: list[tuple[str, bytes]] = []
    warnings: list[RenderWarning] = []
    layouts: list[str] = []
    for plugin in enabled(data):
        if plugin.document is None:
            continue
        result = plugin.document(info)
        output = output if result.output is None else result.output
        content = content if result.content is None else result.content
        extra.extend(result.extra)
        warnings.extend(result.warnings)
        layouts.extend(result.layouts)
    return HookedDocument([(info.output_path, output), *extra], content, warnings, tuple(layouts))


def document_info(
    doc: Post | Page, config: SiteConfig, layouts: Iterable[str] = ()
) -> DocumentInfo:
    """Return what a document hook sees of ``doc``."""
    fm = doc.doc.front_matter
    names = frozenset(layouts)
    return DocumentInfo(doc.doc.path, doc.url, doc.output_path, fm, config, names, doc.output_ext)


def post_render(
    info: DocumentInfo,
    outputs: list[tuple[str, bytes]],
    generated: Sequence[tuple[str, bytes]] = (),
) -> tuple[list[tuple[str, bytes]], list[RenderWarning]]:
    """Return the ``(path, bytes)`` outputs a document ``info`` rendered to (its own, a
    paginated index's copies), then the pages its document hooks ``generated``
    (jekyll-redirect-from's: pages of their own, with no front matter of the document),
    after the plugins' post-render hooks
    (:func:`~deploybot.render.liquid.plugins.registry.after_render`), and their warnings
    (each once)."""
    from deploybot.render.liquid.plugins.registry import after_render, enabled

    if not any(p.post_render is not None for p in enabled(info.config.data)):
        return [*outputs, *generated], []
    done, warnings = [], []
    own = replace(info, front_matter={})
    for (path, data), page in [*((o, info) for o in outputs), *((g, own) for g in generated)]:
        data, found = after_render(page, data)
        done.append((path, data))
        warnings.extend(found)
    return done, list(dict.fromkeys(warnings))


def adjust_model(model: SiteModel, markdown: Callable[[str], str]) -> SiteModel:
    """Return ``model`` with every post, page and document after the plugins' read hooks
    (:func:`~deploybot.render.liquid.plugins.registry.adjust_document`)."""
    from deploybot.render.liquid.plugins.registry import adjust_document, enabled

    config = model.config
    if not any(p.read is not None for p in enabled(config.data)):
        return model

    def each(docs: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(adjust_document(d, config, markdown) for d in docs)

    return replace(model, posts=each(model.posts), pages=each(model.pages), docs=each(model.docs))


def adjust_source(
    found: SourceFile, config: SiteConfig, markdown: Callable[[str], str]
) -> SourceFile:
    """Return the read source ``found`` after the plugins' read hooks."""
    from deploybot.render.liquid.plugins.registry import adjust_document

    if found.post is not None:
        return replace(found, post=adjust_document(found.post, config, markdown))
    if found.page is not None:
        return replace(found, page=adjust_document(found.page, config, markdown))
    return found


def source_urls(
    pages: Iterable[Page], static: Iterable[StaticFile], posts: Iterable[Post], docs: Iterable[Post]
) -> dict[str, str]:
    """Return the URL of each written page, static file (outside collections), post and
    collection document, by source path (jekyll-relative-links' ``potential_targets``)."""
    found = {p.doc.path: p.url for p in pages}
    found.update((s.path, s.url) for s in static if s.collection is None and s.output_path)
    found.update((d.doc.path, d.url) for d in (*posts, *docs))
    return found


def reads_deps(reads: Reads, layouts: Mapping[str, str], labels: Iterable[str]) -> dict[str, str]:
    """Return the dependency keys of what a prerender hook read (``layouts``: the site's
    layout names -> paths; ``labels``: the collections)."""
    deps = {Kind.LAYOUT + name: layouts.get(name, "") for name in reads.layouts}
    deps.update((key, "") for need in sorted(reads.needs) for key in _KEYS[need])
    if Needs.DOCS in reads.needs:
        deps.update((collection_key(label), "") for label in labels if label != "posts")
    return deps


def run(plugin: Plugin, view: SiteView, put: Callable[[str, bytes, str], None]) -> list[str]:
    """Run ``plugin``'s generator over ``view``, handing each output to ``put(path, bytes,
    owner)``; return the output paths. Raises what the generator raises."""
    assert plugin.generate is not None
    paths = []
    for path, data in plugin.generate(view):
        put(path, data, plugin.name)
        paths.append(path)
    return paths
