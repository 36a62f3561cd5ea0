"""The full build: site model -> rendered documents -> output files.

Each post or page is rendered by a pure function of its own document, the layouts and the site
settings (:func:`render_post`, :func:`render_page`); the feeds and the index are functions of
the post list and the rendered post contents. :func:`build_site` only joins them, so an
incremental build can call the same functions for what changed.
"""

from __future__ import annotations

import contextlib
import functools
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2
import mistune

from deploybot import pathrules
from deploybot.errors import SourceError, one_line
from deploybot.render.excerpt import MarkdownFn, post_excerpt
from deploybot.render.feeds import FeedEntry, FeedInfo, atom_feed, rss_feed
from deploybot.render.highlight import block_line
from deploybot.render.highlight_clock import DEFAULT_TIMEOUT, HighlightTimeout, highlight_budget
from deploybot.render.layouts import (
    bundled_templates_dir,
    choose_layout,
    make_environment,
    render_layout,
    render_template,
)
from deploybot.render.limits import LimitedTree, LimitError, page_too_large, site_too_large
from deploybot.render.liquid import render_liquid, restore_fragments
from deploybot.render.markdown import make_markdown, markdown_for, markdown_to_html
from deploybot.render.model import (
    Document,
    LayoutKind,
    Page,
    Post,
    RenderOptions,
    RenderWarning,
    SiteBuild,
    SiteModel,
)
from deploybot.render.site import load_site
from deploybot.render.siteconfig import load_config
from deploybot.render.sitemap import SITEMAP_PATH, sitemap_xml
from deploybot.render.sitemap import wanted as sitemap_wanted
from deploybot.render.source import SourceTree


@dataclass(frozen=True)
class RenderContext:
    """The read-only inputs every document render shares: layouts, Markdown, ``site``, the
    source tree for ``{% include %}`` (``None``: includes render nothing, with a warning),
    the most bytes one page's output may have (``None``: no limit), and the seconds one
    page may spend highlighting code (:mod:`.highlight_clock`).
    """

    env: jinja2.Environment
    md: mistune.Markdown
    site: Mapping[str, Any]
    tree: SourceTree | None = None
    max_page_bytes: int | None = None
    highlight_timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class RenderedDocument:
    """A rendered post or page: ``content`` is the HTML before the layout (feeds use it),
    ``output`` the final file bytes."""

    source: str
    output_path: str
    content: str
    output: bytes
    warnings: tuple[RenderWarning, ...]


def site_variables(model: SiteModel, md: mistune.Markdown | None = None) -> dict[str, Any]:
    """Return the ``site`` mapping for templates and Liquid: ``_config.yml``'s keys plus
    ``time``, ``posts`` (newest first; each with ``title``, ``url``, ``date``, ``id``,
    ``categories``, ``tags``, ``excerpt`` and its front matter, but not its content),
    ``pages`` (:func:`page_variables`), ``static_files`` (``path``, ``url``, ``name``,
    ``basename``, ``extname``) and ``categories``/``tags`` (name -> posts, newest first).
    ``md`` renders excerpts (default: :func:`make_markdown`'s defaults)."""
    config = model.config
    posts = [post_variables(post, md) for post in model.posts]
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
        **content_variables(model, posts),
    }


def post_variables(
    post: Post,
    md: mistune.Markdown | None = None,
    previous: Post | None = None,
    next: Post | None = None,  # Jekyll's name
) -> dict[str, Any]:
    """Return the ``page`` mapping of a post (front matter plus computed fields).

    ``excerpt`` renders lazily with ``md``; ``previous``/``next`` (the older and the newer
    post, Jekyll's ``page.previous``/``page.next``) are added as their own mappings (without
    neighbours of their own) when given.
    """
    neighbours = {
        name: post_variables(other, md)
        for name, other in (("previous", previous), ("next", next))
        if other is not None
    }
    return {
        **post.doc.front_matter,
        "title": post.title,
        "date": post.date,
        "url": post.url,
        "id": post.id,
        "slug": post.slug,
        "categories": list(post.categories),
        "tags": list(post.tags),
        "path": post.doc.path,
        "excerpt": post_excerpt(post.doc, post.excerpt_separator, _markdown_fn(md)),
        **neighbours,
    }


def page_variables(page: Page) -> dict[str, Any]:
    """Return the ``page`` mapping of a page (front matter plus computed fields)."""
    return {
        **page.doc.front_matter,
        "title": page.title,
        "url": page.url,
        "date": page.date,
        "path": page.doc.path,
    }


def render_content(
    doc: Document, ctx: RenderContext, page: Mapping[str, Any]
) -> tuple[str, tuple[RenderWarning, ...]]:
    """Return ``doc``'s body as HTML (Liquid subset, then Markdown when it is Markdown).

    Raises ``SourceError`` naming ``doc`` (and the line, for Liquid) when the output passes
    ``ctx.max_page_bytes``: each stage stops as soon as it does."""
    limit = ctx.max_page_bytes
    try:
        liquid = render_liquid(
            doc.body,
            path=doc.path,
            first_line=doc.body_line,
            variables={"site": ctx.site, "page": page},
            include=_include_reader(ctx.tree),
            max_output=limit,
        )
        html = markdown_to_html(liquid.text, ctx.md) if doc.markdown else liquid.text
        return restore_fragments(html, liquid.fragments, limit), liquid.warnings
    except HighlightTimeout as exc:
        line = block_line(doc.body, exc.lang, exc.code)
        where = None if line is None else doc.body_line + line - 1
        raise SourceError(exc.message, doc.path, where) from exc
    except LimitError as exc:
        raise SourceError(exc.message, doc.path, exc.line) from exc


def _render(
    doc: Document, out: str, kind: LayoutKind, page: Mapping[str, Any], ctx: RenderContext
) -> RenderedDocument:
    with highlight_budget(ctx.highlight_timeout):  # the content, and excerpts the layout shows
        return _render_timed(doc, out, kind, page, ctx)


def _render_timed(
    doc: Document, out: str, kind: LayoutKind, page: Mapping[str, Any], ctx: RenderContext
) -> RenderedDocument:
    content, warnings = render_content(doc, ctx, page)
    with layout_errors(doc.path):
        template, warning = choose_layout(
            ctx.env, doc.front_matter.get("layout", ""), kind, doc.path
        )
        html = (
            content
            if template is None
            else render_layout(template, content, {"site": ctx.site, "page": page})
        )
    extra = (warning,) if warning else ()
    output = html.encode("utf-8")
    if ctx.max_page_bytes is not None and len(output) > ctx.max_page_bytes:
        raise SourceError(page_too_large(ctx.max_page_bytes), doc.path)
    return RenderedDocument(doc.path, out, content, output, warnings + extra)


def render_post(
    post: Post, ctx: RenderContext, neighbours: tuple[Post | None, Post | None] = (None, None)
) -> RenderedDocument:
    """Render one post through its layout (default ``post``); ``neighbours`` is
    ``(previous, next)``: the older and the newer post. Raises ``SourceError``."""
    page = post_variables(post, ctx.md, *neighbours)
    return _render(post.doc, post.output_path, "post", page, ctx)


def render_page(page: Page, ctx: RenderContext) -> RenderedDocument:
    """Render one page through its layout (default ``page``). Raises ``SourceError``."""
    return _render(page.doc, page.output_path, "page", page_variables(page), ctx)


def site_root(model: SiteModel) -> str:
    """Return the absolute site URL (``url`` + ``baseurl``), without a trailing slash."""
    return model.config.url + model.config.baseurl


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


@contextlib.contextmanager
def layout_errors(path: str) -> Iterator[None]:
    """Turn what Jinja2 raises while loading or rendering a layout for the document ``path``
    into a ``SourceError`` (one line): a syntax error names the layout file and line, a
    missing layout or a sandbox refusal names ``path``."""
    try:
        yield
    except jinja2.TemplateSyntaxError as exc:
        raise SourceError(f"layout: {exc.message}", exc.filename or exc.name, exc.lineno) from exc
    except jinja2.TemplateNotFound as exc:
        raise SourceError(f"the theme has no layout {exc.name!r}", path) from exc
    except jinja2.TemplateError as exc:
        raise SourceError(f"layout failed: {one_line(exc)}", path) from exc


def render_index(ctx: RenderContext) -> bytes | None:
    """Return the theme's ``index.html`` listing ``site.posts``, or ``None`` when the theme
    has none. Raises ``SourceError`` as :func:`layout_errors` and
    :func:`~deploybot.render.layouts.render_template` do."""
    with layout_errors("index.html"), highlight_budget(ctx.highlight_timeout):
        try:
            template = ctx.env.get_template("index.html")
        except jinja2.TemplateNotFound:
            return None
        page = {"title": ctx.site.get("title", ""), "url": "/"}
        return render_template(template, {"site": ctx.site, "page": page}).encode("utf-8")


def theme_assets(tree: SourceTree, theme: str) -> Iterator[tuple[str, bytes]]:
    """Yield ``(output path, bytes)`` for the theme's ``assets/`` files, sorted by path."""
    if theme == "default":
        root = bundled_templates_dir() / "assets"
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
        pathrules.check_path(path, "output path")
        if not copied:  # a static file is a copy of a source blob: not made by the build
            self.written += len(data)
            if self.written > self.max_bytes:
                raise SourceError(site_too_large(self.max_bytes), path)
        if path in self.files:
            message = f"output {path} (from {self.owner[path]}) is overwritten by {owner}"
            self.warnings.append(RenderWarning(owner, None, message))
        self.files[path] = data
        self.owner[path] = owner


def build_site(tree: SourceTree, options: RenderOptions) -> SiteBuild:
    """Build the whole site from ``tree`` (see :mod:`deploybot.render`).

    Raises ``SourceError`` (message, path, line) for bad input, or input or output over a
    limit of ``options``.
    """
    tree = LimitedTree(tree, options.max_file_bytes)
    config = load_config(tree, options.timezone, options.max_yaml_size)
    hidden = () if options.theme == "default" else (options.theme.strip("/"),)
    build_time = _aware(options.build_time)
    model, warnings = load_site(
        tree, config, build_time, hidden, max_yaml_size=options.max_yaml_size
    )
    md = markdown_for(options)
    env = make_environment(tree, options.theme, config, options.layout_limits)
    site = site_variables(model, md)
    ctx = RenderContext(env, md, site, tree, options.max_page_bytes, options.highlight_timeout)
    out = _Output(options.max_site_bytes)
    for path, data in theme_assets(tree, options.theme):
        out.put(path, data, f"theme {options.theme}")
    for path in model.static:
        out.put(path, tree.read(path), path, copied=True)
    index = render_index(ctx)
    if index is not None and not any(p.output_path == "index.html" for p in model.pages):
        out.put("index.html", index, f"theme {options.theme}")
    contents: dict[str, str] = {}
    for rendered in [
        *(render_page(p, ctx) for p in model.pages),
        *(render_post(p, ctx, neighbours(model.posts, i)) for i, p in enumerate(model.posts)),
    ]:
        out.put(rendered.output_path, rendered.output, rendered.source)
        contents[rendered.source] = rendered.content
        warnings.extend(rendered.warnings)
    for path, data in feed_files(model, contents, options.feed_limit).items():
        out.put(path, data, "feeds")
    if sitemap_wanted(model):
        out.put(SITEMAP_PATH, sitemap_xml(model, site_root(model)), "sitemap")
    if not config.url and model.posts:
        warnings.append(
            RenderWarning("_config.yml", None, "no 'url' set: feed links are not absolute")
        )
    every = sorted([*warnings, *out.warnings], key=lambda w: (w.path, w.line or 0, w.message))
    return SiteBuild(dict(sorted(out.files.items())), tuple(every), config.timezone)


def neighbours(posts: Sequence[Post], index: int) -> tuple[Post | None, Post | None]:
    """Return ``(previous, next)`` of ``posts[index]`` in a newest-first list: the older and
    the newer post (``None`` at either end)."""
    older = posts[index + 1] if index + 1 < len(posts) else None
    newer = posts[index - 1] if index > 0 else None
    return older, newer


def content_variables(model: SiteModel, posts: list[dict[str, Any]]) -> dict[str, Any]:
    """Return ``site.pages``, ``site.static_files``, ``site.categories`` and ``site.tags``
    (``posts`` are the post mappings in ``model.posts`` order)."""
    categories: dict[str, list[dict[str, Any]]] = {}
    tags: dict[str, list[dict[str, Any]]] = {}
    for post, variables in zip(model.posts, posts, strict=True):
        for name in dict.fromkeys(post.categories):
            categories.setdefault(name, []).append(variables)
        for name in dict.fromkeys(post.tags):
            tags.setdefault(name, []).append(variables)
    return {
        "pages": [page_variables(page) for page in model.pages],
        "static_files": [static_file_variables(path) for path in model.static],
        "categories": categories,
        "tags": tags,
    }


def static_file_variables(path: str) -> dict[str, Any]:
    """Return the ``site.static_files`` entry of the static file ``path`` (``path``, ``url``,
    ``name``, ``basename``, ``extname``)."""
    name = posixpath.basename(path)
    return {
        "path": "/" + path,
        "url": "/" + path,
        "name": name,
        "basename": posixpath.splitext(name)[0],
        "extname": posixpath.splitext(path)[1],
    }


def _markdown_fn(md: mistune.Markdown | None) -> MarkdownFn:
    def convert(text: str) -> str:
        return markdown_to_html(text, md or _default_markdown())

    return convert


@functools.cache
def _default_markdown() -> mistune.Markdown:
    return make_markdown()


def _include_reader(tree: SourceTree | None) -> Callable[[str], bytes | None] | None:
    if tree is None:
        return None
    source = tree

    def read(name: str) -> bytes | None:
        try:
            return source.read(f"_includes/{name}")
        except KeyError:
            return None

    return read


def _aware(moment: datetime | None) -> datetime | None:
    if moment is not None and moment.tzinfo is None:
        raise ValueError("RenderOptions.build_time must be timezone-aware")
    return moment
