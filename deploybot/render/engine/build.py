"""The full build: site model -> rendered documents -> output files.

Each post or page is rendered by a pure function of its own document, the layouts and the site
settings (:func:`render_post`, :func:`render_page`); the feeds and the index are functions of
the post list and the rendered post contents. :func:`build_site` only joins them, so an
incremental build can call the same functions for what changed.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mistune

from deploybot.git import path_rules
from deploybot.render import fingerprint
from deploybot.render.engine import plugin_outputs
from deploybot.render.engine.contents import (
    DOC_GROUP,
    LAST,
    POST_GROUP,
    Contents,
    Made,
    Rank,
    page_rank,
)
from deploybot.render.engine.deps import ContentSource, DocMapping, LazyContent, Part, linked
from deploybot.render.engine.document import (
    RenderContext,
    RenderedDocument,
    layout_errors,
    render_document,
)
from deploybot.render.engine.stylesheet import render_sass_document, render_stylesheet
from deploybot.render.highlight.clock import highlight_budget
from deploybot.render.limits import site_too_large
from deploybot.render.liquid.excerpt import MarkdownFn, post_excerpt
from deploybot.render.liquid.jekyll_filters import to_text
from deploybot.render.liquid.layouts import LiquidLayouts
from deploybot.render.liquid.plugins import paginate, registry
from deploybot.render.markdown.renderer import (
    make_markdown,
    markdown_for,
    markdown_to_html,
)
from deploybot.render.model import (
    LayoutKind,
    Page,
    Post,
    RenderOptions,
    RenderWarning,
    SiteBuild,
    SiteConfig,
    SiteModel,
    StaticFile,
    listed_static,
    site_time,
)
from deploybot.render.outputs.feeds import FeedEntry, FeedInfo, atom_feed, rss_feed
from deploybot.render.read.collections import POSTS, ordered
from deploybot.render.read.data import read_data
from deploybot.render.read.layered import LayeredTree
from deploybot.render.read.limited import LimitedTree
from deploybot.render.read.publisher import future_cutoff, in_the_future
from deploybot.render.read.site import load_site, promote
from deploybot.render.read.siteconfig import CONFIG_PATH, load_config
from deploybot.render.read.source import SourceTree
from deploybot.render.read.symlinks import ResolvedTree
from deploybot.render.sass.convert import is_sass
from deploybot.render.theme import site_theme
from deploybot.render.theme.deferred import DeferredEnvironment, check_theme_folder
from deploybot.support.errors import SourceError

if TYPE_CHECKING:
    import jinja2

__all__ = ["RenderContext", "RenderedDocument", "build_site", "render_document"]


def _environment(
    tree: SourceTree, config: SiteConfig, options: RenderOptions
) -> jinja2.Environment:
    """The build's Jinja2 environment (:class:`DeferredEnvironment` makes it at its first use:
    never for a site with Liquid layouts), its theme folder checked already."""
    from deploybot.render.theme.layouts import make_environment

    limits = options.layout_limits
    return make_environment(tree, options.theme, config, limits, check=False)


def site_variables(
    model: SiteModel, md: mistune.Markdown | None = None, contents: ContentSource | None = None
) -> dict[str, Any]:
    """Return the ``site`` mapping for templates and Liquid: ``_config.yml``'s keys plus
    ``time``, ``posts`` (newest first; each with ``title``, ``url``, ``date``, ``id``,
    ``categories``, ``tags``, ``excerpt``, its front matter, ``previous``/``next``
    (:func:`linked`) and, given ``contents``, its ``content`` and ``output``
    (:func:`listed`)), ``pages`` (:func:`listed_page`), ``static_files`` (``path``,
    ``url``, ``name``, ``basename``, ``extname``), ``categories``/``tags`` (name -> posts,
    newest first), each collection's documents under its label and ``collections``
    (:func:`collection_lists`).
    ``md`` renders excerpts (default: :func:`make_markdown`'s defaults)."""
    config = model.config
    posts = linked([listed(post_variables(p, md), p, contents) for p in model.posts], True)
    return {
        **config.data,
        "title": config.title,
        "description": config.description,
        "url": config.url,
        "baseurl": config.baseurl,
        "author": {"name": config.author_name, "email": config.author_email},
        "timezone": config.timezone,
        "time": model.time,
        "posts": posts,
        **content_variables(model, posts, md, contents),
    }


def listed(variables: dict[str, Any], doc: Post, contents: ContentSource | None) -> dict[str, Any]:
    """Return a post or document's mapping ``variables`` with its ``content`` and
    ``output`` as the reader sees them (:mod:`.contents`), or as is without ``contents``."""
    if contents is None:
        return variables
    path = doc.doc.path
    output = LazyContent(path, contents, Part.OUTPUT)
    return {**variables, "content": LazyContent(path, contents), "output": output}


def listed_page(page: Page, contents: ContentSource | None) -> dict[str, Any]:
    """Return a page's mapping as ``site.pages`` lists it (:func:`page_variables`), with
    its ``content`` as the reader sees it (:mod:`.contents`) given ``contents``. Its
    ``output`` is the front matter's, if any: Jekyll's ``Page#to_liquid`` has none of its
    own (``ATTRIBUTES_FOR_LIQUID``), so ``p.output`` is ``nil`` even once rendered."""
    variables = page_variables(page)
    if contents is None:
        return variables
    return DocMapping({**variables, "content": LazyContent(page.doc.path, contents)})


def post_variables(
    post: Post,
    md: mistune.Markdown | None = None,
    previous: Post | None = None,
    next: Post | None = None,  # Jekyll's name
    contents: ContentSource | None = None,
) -> dict[str, Any]:
    """Return the ``page`` mapping of a post (front matter plus computed fields).

    ``excerpt`` renders lazily with ``md``; ``previous``/``next`` (the older and the newer
    post, Jekyll's ``page.previous``/``page.next``) are added as their own mappings (without
    neighbours of their own, with their ``content`` and ``output`` from ``contents``:
    :func:`listed`) when given.
    """
    neighbours = {
        name: DocMapping(listed(post_variables(other, md), other, contents))
        for name, other in (("previous", previous), ("next", next))
        if other is not None
    }
    given = post.doc.front_matter.get("title")
    values: dict[str, Any] = {
        **post.doc.front_matter,
        "title": post.title if given is None or given is False else given,  # as YAML gave it
        "date": post.date,
        "url": post.url,
        "id": post.id,
        "slug": post.slug,
        "categories": list(post.categories),
        "tags": list(post.tags),
        "path": post.doc.path,
        "relative_path": post.doc.path,
        "collection": post.collection,
        "name": post.doc.front_matter.get("name") or posixpath.basename(post.doc.path),
    }
    fields = dict(values)
    values["excerpt"] = post_excerpt(post.doc, post.excerpt_separator, _markdown_fn(md), fields)
    return {**values, **neighbours}


def page_variables(page: Page) -> dict[str, Any]:
    """Return the ``page`` mapping of a page (front matter plus computed fields: Jekyll's
    ``url``, ``path``, ``name``, ``dir``; ``title`` only when the front matter has one, so
    an untitled page's ``page.title`` is ``nil`` as in Jekyll)."""
    url = page.url
    values = {
        **page.doc.front_matter,
        "title": page.doc.front_matter.get("title", page.title),  # as YAML gave it: false too
        "url": url,
        "date": page.date,
        "path": page.doc.path,
        "name": posixpath.basename(page.doc.path),
        "dir": url if url.endswith("/") else posixpath.dirname(url).rstrip("/") + "/",
    }
    if "title" not in page.doc.front_matter:
        del values["title"]
    return values


def render_post(
    post: Post,
    ctx: RenderContext,
    neighbours: tuple[Post | None, Post | None] = (None, None),
    contents: ContentSource | None = None,
) -> RenderedDocument:
    """Render one post through its layout (default ``post``); ``neighbours`` is
    ``(previous, next)``: the older and the newer post (their ``content`` and ``output`` from
    ``contents``). Raises ``SourceError``."""
    page = DocMapping(post_variables(post, ctx.md, *neighbours, contents))
    return render_doc_output(post, page, ctx, "post")


def render_page(page: Page, ctx: RenderContext) -> RenderedDocument:
    """Render one page through its layout (default ``page``). Raises ``SourceError``."""
    return render_document(page.doc, page.output_path, "page", page_variables(page), ctx)


def render_page_outputs(
    page: Page,
    ctx: RenderContext,
    pager: site_theme.Pager | None,
    wrap: Callable[[dict[str, Any]], Mapping[str, Any]] = dict,
) -> Iterator[RenderedDocument]:
    """Yield the renders of ``page``: one, or one per page of posts when it is the
    paginated ``index.html`` (``pager``; jekyll-paginate); ``wrap`` makes the ``page``
    mapping each render sees (the engine's tracks its reads); a Sass or SCSS page gives its
    CSS and its source map (:mod:`.stylesheet`). Raises ``SourceError``."""
    if is_sass(page.doc.path):
        yield from render_stylesheet(page.doc, page.output_path, wrap(page_variables(page)), ctx)
        return
    if pager is None or pager.template != page.doc.path:
        yield render_document(page.doc, page.output_path, "page", wrap(page_variables(page)), ctx)
        return
    posts = site_theme.paginated_posts(ctx.site)
    count = max(paginate.page_count(pager.settings, len(posts)), 1)
    for number in range(1, count + 1):
        url = paginate.page_url(pager.settings, number, page.url)
        own = paginate.own_url(pager.settings, number, page.url)
        variables = wrap({**page_variables(page), "url": own})
        paginator = paginate.paginator(pager.settings, number, posts, page.url) if posts else None
        out = page.output_path if number == 1 else paginate.output_path(url)
        yield render_document(page.doc, out, "page", variables, ctx, paginator)


def site_root(model: SiteModel) -> str:
    """Return the absolute site URL (``url`` + ``baseurl``), without a trailing slash."""
    return model.config.url + model.config.baseurl


def no_url_warning(config_file: bool) -> RenderWarning:
    """The warning of a site whose bundled feeds have posts but no ``url`` to make their
    links absolute (they are valid all the same: :mod:`deploybot.render.outputs.feeds`);
    ``config_file``: whether the source has a ``_config.yml`` (the warning names it, to be written,
    either way)."""
    if config_file:
        return RenderWarning(CONFIG_PATH, None, "no 'url' set: feed links are not absolute")
    message = "not in the source, so no 'url': feed links are not absolute"
    return RenderWarning(CONFIG_PATH, None, message)


def _has_config_file(tree: SourceTree) -> bool:
    try:
        tree.blob_id(CONFIG_PATH)
    except KeyError:
        return False
    return True


def feed_files(model: SiteModel, contents: Mapping[str, str], limit: int) -> dict[str, bytes]:
    """Return ``{"atom.xml": …, "rss.xml": …}`` for the newest ``limit`` posts.

    ``contents`` maps a post's source path to its rendered content HTML.
    """
    config = model.config
    description = config.description or f"{config.title} - {config.author_name}"
    root = site_root(model)
    info = FeedInfo(
        config.title, description, root, config.author_name, config.author_email, model.time
    )
    entries = [
        FeedEntry(p.title, root + p.url, p.date, contents[p.doc.path])
        for p in model.posts[: max(limit, 0)]
    ]
    return {"atom.xml": atom_feed(info, entries), "rss.xml": rss_feed(info, entries)}


def render_index(ctx: RenderContext) -> bytes | None:
    """Return the theme's ``index.html`` listing ``site.posts``, or ``None`` when the theme
    has none. Raises ``SourceError`` as :func:`layout_errors` and
    :func:`~deploybot.render.theme.layouts.render_template` do."""
    import jinja2  # lazy on purpose: only a Jinja2 theme has this index

    from deploybot.render.theme.layouts import render_template

    with layout_errors("index.html"), highlight_budget(ctx.highlight_timeout):
        try:
            template = ctx.env.get().get_template("index.html")
        except jinja2.TemplateNotFound:
            return None
        page = {"title": ctx.site.get("title", ""), "url": "/"}
        return render_template(template, {"site": ctx.site, "page": page}).encode("utf-8")


def theme_assets(tree: SourceTree, theme: str) -> Iterator[tuple[str, bytes]]:
    """Yield ``(output path, bytes)`` for the theme's ``assets/`` files, sorted by path."""
    if theme == "default":
        root = Path(fingerprint.bundled_templates_dir()) / "assets"
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
        for file in files:
            yield "assets/" + file.relative_to(root).as_posix(), file.read_bytes()
        return
    prefix = theme.strip("/") + "/assets/"
    for path in tree.paths():
        if path.startswith(prefix):
            yield "assets/" + path[len(prefix) :], tree.read(path)


class _Output:
    """Output files with their producers, warning when one path is written twice, and
    refusing more than ``max_bytes`` of rendered output (``SourceError`` naming the path)."""

    def __init__(self, max_bytes: int) -> None:
        self.files: dict[str, bytes] = {}
        self.owner: dict[str, str] = {}
        self.warnings: list[RenderWarning] = []
        self.max_bytes = max_bytes
        self.written = 0

    def put(self, path: str, data: bytes, owner: str, *, copied: bool = False) -> None:
        path_rules.check_path(path, "output path")
        if not copied:  # a static file is a copy of a source blob: not made by the build
            self.written += len(data)
            if self.written > self.max_bytes:
                raise SourceError(site_too_large(self.max_bytes), path)
        if path in self.files:
            message = f"output {path} (from {self.owner[path]}) is overwritten by {owner}"
            self.warnings.append(RenderWarning(owner, None, message))
        self.files[path] = data
        self.owner[path] = owner


@dataclass(frozen=True)
class SiteSource:
    """The source as every build reads it before its files: ``layered``, the Jekyll theme
    laid under the site (None without one); ``links``, the tree with its symlinks resolved;
    ``tree``, that tree within ``render.max_file_bytes`` per file; ``config``, the site
    settings after the theme's (its ``_config.yml``, its plugins) and the plugins' config
    hooks, with their warnings (``notes``)."""

    layered: LayeredTree | None
    links: ResolvedTree
    tree: LimitedTree
    config: SiteConfig
    notes: list[RenderWarning]


def read_settings(tree: SourceTree, options: RenderOptions) -> SiteSource:
    """Read ``tree``'s settings as a build of ``options`` reads them (:class:`SiteSource`).

    Raises ``SourceError`` for a bad ``_config.yml``, or a ``theme:`` the tree lacks.
    """
    layered = site_theme.jekyll_theme_of(tree)
    links = ResolvedTree(tree)
    limited = LimitedTree(links, options.max_file_bytes)
    theme = site_theme.theme_config(layered, options.max_file_bytes)
    config = load_config(
        limited,
        options.timezone,
        options.max_yaml_size,
        theme,
        options.baseurl,
        options.url,
        overrides=options.config_overrides,
    )
    site_theme.check_theme_given(config, layered)
    config = site_theme.with_theme_plugins(config, layered)
    config, notes = registry.adjust_config(config, options.repository)
    return SiteSource(layered, links, limited, config, notes)


def build_site(tree: SourceTree, options: RenderOptions) -> SiteBuild:
    """Build the whole site from ``tree`` (see :mod:`deploybot.render`).

    Raises ``SourceError`` (message, path, line) for bad input, or input or output over a
    limit of ``options``.
    """
    settings = read_settings(tree, options)
    tree, links, config = settings.tree, settings.links, settings.config
    layered, notes = settings.layered, settings.notes
    hidden = () if options.theme == "default" else (options.theme.strip("/"),)
    cut = future_cutoff(config, options)
    model, warnings = load_site(
        tree,
        config,
        site_time(config, options),
        hidden,
        max_yaml_size=options.max_yaml_size,
        cutoff=cut,
        links=links,
        frontless=registry.read_frontless,
    )
    chosen = registry.promotions(model.pages, model.static, config)
    model = promote(model, tree, chosen, hidden, options.max_yaml_size, links)
    warnings = [*config.warnings, *registry.unknown_warnings(config), *notes, *warnings]
    md = markdown_for(options, config.data)
    model = plugin_outputs.adjust_model(model, lambda text: markdown_to_html(text, md))
    check_theme_folder(tree, options.theme)
    env = DeferredEnvironment(lambda: _environment(tree, config, options))
    names = site_theme.site_layouts(tree.paths(), options.theme)
    shown = BuildContents(model)
    site = site_variables(model, md, shown)
    liquid_theme = bool(names) or (layered is not None and options.theme == "default")
    if liquid_theme:
        site.update(site_theme.liquid_site(config))
    site["data"] = read_data(tree, tree.paths(), options.max_yaml_size)
    liquid = site_theme.make_liquid(tree, config, md, options)
    layouts = LiquidLayouts(tree, names, options.max_yaml_size) if liquid_theme else None
    ctx = RenderContext(
        env,
        md,
        site,
        tree,
        options.max_page_bytes,
        liquid,
        layouts,
        options.highlight_timeout,
        shown,
    )
    shown.ctx = ctx
    out = _Output(options.max_site_bytes)
    if layouts is None:
        for path, data in theme_assets(tree, options.theme):
            out.put(path, data, f"theme {options.theme}")
    for static in model.static:
        if static.output_path:
            out.put(static.output_path, tree.read(static.path), static.path, copied=True)
    for page in model.pages:
        if page.original is not None:  # a plugin's page keeping its original
            out.put(page.original.output_path, tree.read(page.doc.path), page.doc.path, copied=True)
    index = render_index(ctx) if layouts is None else None
    if index is not None and not owns_index(model):
        out.put("index.html", index, f"theme {options.theme}")
    contents: dict[str, str] = {}
    pager = site_theme.pager_of(config, model.pages) if layouts is not None else None
    sources: dict[str, Post | Page] = {d.doc.path: d for d in model.pages}
    sources.update((d.doc.path, d) for d in (*model.posts, *model.docs))
    written = [
        d for d in model.docs if d.output_path and not (d.dated and in_the_future(d.date, cut))
    ]
    urls = plugin_outputs.source_urls(model.pages, model.static, model.posts, written)
    context = registry.PrerenderContext(config, frozenset(names), lambda: urls)

    def prepare(doc: Post) -> Post:
        prepared: Post = registry.before_render(doc, context)[0]
        return prepared

    def page_outputs(page: Page) -> list[RenderedDocument]:
        return list(render_page_outputs(registry.before_render(page, context)[0], ctx, pager))

    shown.prepare, shown.page_outputs = prepare, page_outputs
    shown.hook = lambda source, rendered: hooked_render(source, rendered, config, names)
    renders: list[RenderedDocument] = []
    for page in model.pages:
        with shown.reading(page.doc.path):
            outputs = page_outputs(page)
        shown.finished(page.doc.path, shown.hook(page, outputs[0]).content)
        renders.extend(outputs)
    for i, post in enumerate(model.posts):
        with shown.reading(post.doc.path):
            rendered = render_post(prepare(post), ctx, neighbours(model.posts, i), shown)
        shown.done_with(post.doc.path, shown.hook(post, rendered))
        renders.append(rendered)
    renders.extend(render_documents(model, ctx, cut, shown, prepare, shown.hook))
    for rendered in renders:
        source = sources[rendered.source]
        hooked = plugin_outputs.HookedDocument([], rendered.content, [])
        info = plugin_outputs.document_info(source, config, names)
        if rendered.output_path == source.output_path:  # not a paginated copy
            hooked = plugin_outputs.hook_document(
                config.data, info, rendered.output, hooked.content
            )
        own, *extra = hooked.outputs or [(rendered.output_path, rendered.output)]
        done, found = plugin_outputs.post_render(info, [own], extra)
        for path, data in done:
            out.put(path, data, rendered.source)
        contents.setdefault(rendered.source, hooked.content)
        warnings.extend([*rendered.warnings, *found, *hooked.warnings])
    if layouts is None:  # the site's own theme: no bundled feeds (Jekyll writes none)
        for path, data in feed_files(model, contents, options.feed_limit).items():
            out.put(path, data, "feeds")
    docs = collection_docs(model)
    view = plugin_outputs.ModelView(
        model, docs, contents, excerpt_of(md), site["data"], tree, cut, ctx
    )
    for plugin in plugin_outputs.generators(config.data):
        plugin_outputs.run(plugin, view, out.put)
    warnings.extend(view.warnings)
    if not config.url and model.posts and layouts is None:
        warnings.append(no_url_warning(_has_config_file(tree)))
    warnings.extend(site_theme.theme_warnings(config, layered))
    every = sorted([*warnings, *out.warnings], key=lambda w: (w.path, w.line or 0, w.message))
    return SiteBuild(dict(sorted(out.files.items())), tuple(every), config.timezone)


def hooked_render(
    source: Post | Page, rendered: RenderedDocument, config: SiteConfig, layouts: Iterable[str]
) -> Made:
    """Return the content and the output ``source`` writes at its own path once the
    plugins' document hooks ran over its render (:func:`~.plugin_outputs.hook_document`:
    a ``redirect_to`` page), as a listing shows them (the engine lists the same)."""
    info = plugin_outputs.document_info(source, config, layouts)
    hooked = plugin_outputs.hook_document(config.data, info, rendered.output, rendered.content)
    return Made(hooked.content, hooked.outputs[0][1].decode("utf-8", "surrogatepass"))


def excerpt_of(md: mistune.Markdown | None) -> Callable[[Post], str]:
    """Return a function giving a post's rendered excerpt (``page.excerpt``) with ``md``."""

    def excerpt(post: Post) -> str:
        return to_text(post_variables(post, md).get("excerpt"))

    return excerpt


def owns_index(model: SiteModel) -> bool:
    """Whether a source of the site writes ``index.html`` (a page, a static file or a
    document): then the theme's index is not made."""
    written = [page.output_path for page in model.pages]
    written += [doc.output_path for doc in model.docs]
    written += [static.output_path for static in model.static]
    return "index.html" in written


def render_documents(
    model: SiteModel,
    ctx: RenderContext,
    cut: datetime | None,
    contents: Contents | None = None,
    prepare: Callable[[Post], Post] = lambda doc: doc,
    hook: Callable[[Post, RenderedDocument], Made] = lambda doc, rendered: _as_made(rendered),
) -> Iterator[RenderedDocument]:
    """Render every written document of the collections other than ``posts`` (not those
    dated after ``cut``, Jekyll's ``Publisher#publish?``), with its neighbours in its
    collection's order (as the reader of ``contents``, told each one's output as ``hook``
    makes it), each as ``prepare`` makes it (the plugins' prerender hooks). Raises
    ``SourceError``."""
    for docs in collection_docs(model).values():
        for i, doc in enumerate(docs):
            if not doc.output_path or (doc.dated and in_the_future(doc.date, cut)):
                continue
            if contents is None:
                yield render_collection_doc(docs, i, ctx, None, prepare)
                continue
            with contents.reading(doc.doc.path):
                rendered = render_collection_doc(docs, i, ctx, contents, prepare)
            contents.done_with(doc.doc.path, hook(doc, rendered))
            yield rendered


def render_collection_doc(
    docs: Sequence[Post],
    index: int,
    ctx: RenderContext,
    contents: ContentSource | None,
    prepare: Callable[[Post], Post] = lambda doc: doc,
) -> RenderedDocument:
    """Render ``docs[index]`` of a collection in its order, as ``prepare`` makes it (the
    plugins' prerender hooks), with its neighbours (their ``content`` and ``output`` from
    ``contents``). Raises ``SourceError``."""
    doc = prepare(docs[index])
    page = DocMapping(post_variables(doc, ctx.md, *in_order_neighbours(docs, index), contents))
    return render_doc_output(doc, page, ctx)


def render_doc_output(
    doc: Post, page: Mapping[str, Any], ctx: RenderContext, kind: LayoutKind = "page"
) -> RenderedDocument:
    """Render the post or collection document ``doc`` with its ``page`` mapping: a Sass or
    SCSS one compiles to CSS in no layout (jekyll-sass-converter converts documents too:
    :func:`~.stylesheet.render_sass_document`), any other through its layouts (the Jinja2
    theme's default: ``kind``). Raises ``SourceError``."""
    if is_sass(doc.doc.path):
        return render_sass_document(doc.doc, doc.output_path, page, ctx)
    return render_document(doc.doc, doc.output_path, kind, page, ctx)


def _as_made(rendered: RenderedDocument) -> Made:
    return Made(rendered.content, rendered.output.decode("utf-8", "surrogatepass"))


class BuildContents(Contents):
    """:class:`~.contents.Contents` of :func:`build_site`: ranks, bodies and renders from
    the site model (``ctx``, ``prepare``, ``page_outputs`` and ``hook`` are set once the
    render context is made)."""

    def __init__(self, model: SiteModel) -> None:
        super().__init__()
        self.ctx: RenderContext | None = None
        self.prepare: Callable[[Post], Post] = lambda doc: doc
        self.page_outputs: Callable[[Page], list[RenderedDocument]] = lambda page: []
        self.hook: Callable[[Post | Page, RenderedDocument], Made] = lambda s, r: _as_made(r)
        self.model = model
        self.ranks: dict[str, Rank] = {p.doc.path: page_rank(p.doc.path) for p in model.pages}
        self.pages = {p.doc.path: p for p in model.pages}
        count = len(model.posts)
        self.posts: dict[str, tuple[Post, int]] = {}
        for i, post in enumerate(model.posts):  # newest first; Jekyll renders oldest first
            self.ranks[post.doc.path] = (POST_GROUP, count - i)
            self.posts[post.doc.path] = (post, i)
        self.docs: dict[str, tuple[list[Post], int]] = {}
        for c, docs in enumerate(collection_docs(model).values()):
            for j, doc in enumerate(docs):
                self.ranks[doc.doc.path] = (DOC_GROUP, c, j)
                self.docs[doc.doc.path] = (docs, j)

    def rank(self, path: str) -> Rank:
        """Return the place of ``path`` in Jekyll's render order."""
        return self.ranks.get(path, LAST)

    def raw(self, path: str) -> str:
        """Return the body of the post, document or page ``path``."""
        if path in self.posts:
            return self.posts[path][0].doc.body
        if path in self.pages:
            return self.pages[path].doc.body
        docs, index = self.docs[path]
        return docs[index].doc.body

    def render(self, path: str) -> Made:
        """Render the post, document or page ``path`` now; return its content and output."""
        assert self.ctx is not None
        if path in self.pages:
            page = self.pages[path]
            return self.hook(page, self.page_outputs(page)[0])
        if path in self.posts:
            post, i = self.posts[path]
            pair = neighbours(self.model.posts, i)
            return self.hook(post, render_post(self.prepare(post), self.ctx, pair, self))
        docs, index = self.docs[path]
        rendered = render_collection_doc(docs, index, self.ctx, self, self.prepare)
        return self.hook(docs[index], rendered)


def collection_docs(model: SiteModel) -> dict[str, list[Post]]:
    """Return each collection's documents (not ``posts``) in its order, by label."""
    found: dict[str, list[Post]] = {}
    for label, collection in model.config.collections.items():
        if label == POSTS:
            continue
        docs = [d for d in model.docs if d.collection == label]
        keyed = [(d.doc.path, d.date, d.doc.front_matter) for d in docs]
        by_path = {d.doc.path: d for d in docs}
        found[label] = [by_path[path] for path, _, _ in ordered(collection, keyed)]
    return found


def in_order_neighbours(docs: Sequence[Post], index: int) -> tuple[Post | None, Post | None]:
    """Return ``(previous, next)`` of ``docs[index]`` in a collection's order (Jekyll's
    ``Document#previous_doc``/``next_doc``): the documents just before and after it (``None``
    at either end; both ``None`` for an ``index`` of -1, a document not in ``docs``)."""
    if index < 0:
        return None, None
    previous = docs[index - 1] if index > 0 else None
    after = docs[index + 1] if index + 1 < len(docs) else None
    return previous, after


def neighbours(posts: Sequence[Post], index: int) -> tuple[Post | None, Post | None]:
    """Return ``(previous, next)`` of ``posts[index]`` in a newest-first list: the older and
    the newer post (``None`` at either end)."""
    older = posts[index + 1] if index + 1 < len(posts) else None
    newer = posts[index - 1] if index > 0 else None
    return older, newer


def content_variables(
    model: SiteModel,
    posts: Sequence[dict[str, Any]],
    md: mistune.Markdown | None = None,
    contents: ContentSource | None = None,
) -> dict[str, Any]:
    """Return ``site.pages`` (:func:`listed_page`), ``site.static_files``,
    ``site.categories``, ``site.tags``, each collection's documents (:func:`linked`, with
    their ``content`` and ``output`` from ``contents``) and ``site.collections`` (``posts``
    are the post mappings in ``model.posts`` order; ``md`` renders the documents'
    excerpts)."""
    categories: dict[str, list[dict[str, Any]]] = {}
    tags: dict[str, list[dict[str, Any]]] = {}
    # Jekyll's post_attr_hash: names in the order the oldest-first posts bring them, each
    # name's posts newest first.
    for post, variables in reversed(list(zip(model.posts, posts, strict=True))):
        for name in dict.fromkeys(post.categories):
            categories.setdefault(name, []).insert(0, variables)
        for name in dict.fromkeys(post.tags):
            tags.setdefault(name, []).insert(0, variables)
    docs = {
        label: linked([listed(post_variables(d, md), d, contents) for d in items], False)
        for label, items in collection_docs(model).items()
    }
    ordered = by_name(model.pages)
    pages = [listed_page(page, contents) for page in ordered]
    return {
        "pages": pages,
        "html_pages": html_pages(ordered, pages),
        "static_files": [
            static_file_variables(s) for s in listed_static(model.static, model.pages)
        ],
        "categories": categories,
        "tags": tags,
        **docs,
        "collections": collection_lists(model.config, docs, list(posts)[::-1], model.static),
    }


HTML_EXTS = (".html", ".xhtml", ".htm")
"""Jekyll's ``HTML_EXTENSIONS`` (``Page#html?``)."""


def html_pages(pages: Sequence[Page], mappings: Sequence[Any]) -> list[Any]:
    """Return ``site.html_pages``: of the ``mappings`` of ``pages`` (``site.pages``, in
    its order, one mapping per page), those of a page whose output is HTML or whose URL
    ends in ``/`` (Jekyll 4.3's ``SiteDrop#html_pages``), the same mapping objects."""
    return [
        mapping
        for page, mapping in zip(pages, mappings, strict=True)
        if page.output_ext in HTML_EXTS or page.url.endswith("/")
    ]


def by_name(pages: Iterable[Page]) -> list[Page]:
    """Return ``pages`` in ``site.pages`` order, which is Jekyll's render order of pages
    (:func:`~.contents.page_rank`: by file name, then path); then the pages plugins'
    generators added (:attr:`Page.appended`), each generator's in source-path order (the
    static files' order, which they were made from)."""
    return sorted(pages, key=_listed_order)


def _listed_order(page: Page) -> tuple[int, Rank]:
    rank = page_rank(page.doc.path)
    return (page.appended, (rank[0], "", rank[2]) if page.appended else rank)


def collection_lists(
    config: SiteConfig,
    docs: Mapping[str, list[Any]],
    posts: list[Any],
    static: Sequence[StaticFile],
) -> list[dict[str, Any]]:
    """Return ``site.collections``: one mapping per collection (``posts`` too), sorted by
    label, with ``label``, ``docs`` (``posts`` oldest first), ``files`` (its static files),
    ``output``, ``relative_directory``, ``directory`` (the folder from the source root;
    Jekyll gives the absolute path on its disk) and its settings from ``_config.yml``."""
    lists = []
    for label in sorted(config.collections):
        collection = config.collections[label]
        files = [static_file_variables(s) for s in static if s.collection == label]
        lists.append(
            {
                **collection.metadata,
                "label": label,
                "docs": posts if label == POSTS else docs.get(label, []),
                "files": files,
                "output": collection.output,
                "relative_directory": collection.relative_directory,
                "directory": collection.folder,
            }
        )
    return lists


def static_file_variables(static: StaticFile) -> dict[str, Any]:
    """Return the ``site.static_files`` entry of a static file (``path``, ``url``,
    ``name``, ``basename``, ``extname``, ``collection``; Jekyll's ``StaticFileDrop``
    without ``modified_time``)."""
    name = posixpath.basename(static.path)
    return {
        "path": static.path if static.collection else "/" + static.path,
        "url": static.url,
        "name": name,
        "basename": re.sub(r"\.*\Z", "", posixpath.splitext(name)[0]),
        "extname": posixpath.splitext(name)[1],
        "collection": static.collection,
    }


def _markdown_fn(md: mistune.Markdown | None) -> MarkdownFn:
    def convert(text: str) -> str:
        return markdown_to_html(text, md or _default_markdown())

    return convert


@functools.cache
def _default_markdown() -> mistune.Markdown:
    return make_markdown()
