"""Rendering one post or page: Liquid, then Markdown, then its layouts (Jinja2 or Liquid).

Jekyll's ``Renderer#render_document``: the body goes through Liquid (with ``site``,
``page``, ``layout`` and ``paginator``), then the converter (Markdown for ``.md`` files),
and the result (``page.content`` from then on) is placed in the layouts. The layouts are
the site's own Liquid ones (``_layouts/``, :mod:`deploybot.render.liquid.layouts`) or a Jinja2 theme
(:mod:`deploybot.render.theme.layouts`), whichever :class:`RenderContext` carries.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import mistune

from deploybot.render.engine import related
from deploybot.render.engine.contents import Contents
from deploybot.render.highlight.clock import DEFAULT_TIMEOUT, HighlightTimeout, highlight_budget
from deploybot.render.highlight.highlighter import block_line
from deploybot.render.limits import LimitError, page_too_large
from deploybot.render.liquid.layouts import LiquidLayouts
from deploybot.render.liquid.templates import Liquid, RenderState, restore_fragments
from deploybot.render.markdown.renderer import markdown_to_html
from deploybot.render.model import Document, LayoutKind, RenderWarning
from deploybot.render.read.source import SourceTree
from deploybot.render.theme.deferred import DeferredEnvironment
from deploybot.support.errors import SourceError, one_line

_HTML_OUTPUTS = (".html", ".htm", ".xhtml")


@dataclass(frozen=True)
class RenderContext:
    """The read-only inputs every document render shares: the Jinja2 layouts ``env`` (made
    at its first use),
    Markdown, ``site``, the source tree, the most bytes one page's output may have
    (``None``: no limit), the build's :class:`~deploybot.render.liquid.templates.Liquid`, when the
    site has its own ``_layouts/``, its :class:`~deploybot.render.liquid.layouts.LiquidLayouts`
    (then ``env`` is unused), and the seconds one page may spend highlighting code
    (:mod:`deploybot.render.highlight.clock`), and the :class:`~.contents.Contents` that
    ``content`` and ``output`` of a listing read (told when a document's content is
    converted).
    """

    env: DeferredEnvironment
    md: mistune.Markdown
    site: Mapping[str, Any]
    tree: SourceTree | None = None
    max_page_bytes: int | None = None
    liquid: Liquid | None = None
    layouts: LiquidLayouts | None = None
    highlight_timeout: float = DEFAULT_TIMEOUT
    contents: Contents | None = None


@dataclass(frozen=True)
class RenderedDocument:
    """A rendered post or page: ``content`` is the HTML before the layout (feeds use it),
    ``output`` the final file bytes."""

    source: str
    output_path: str
    content: str
    output: bytes
    warnings: tuple[RenderWarning, ...]


def liquid_of(ctx: RenderContext) -> Liquid:
    """Return the context's Liquid (a default one, without includes, when it has none)."""
    if ctx.liquid is not None:
        return ctx.liquid
    return Liquid(ctx.tree, max_output=ctx.max_page_bytes or 50_000_000)


_HIGHLIGHT_TAG = re.compile(r"\{%-?\s*highlight\s")


def unhighlighted_tags(doc: Document, ctx: RenderContext) -> tuple[RenderWarning, ...]:
    """The warning for a ``{% highlight %}`` in ``doc``'s body when kramdown highlights
    nothing (``highlighter: none``): Jekyll then writes the block without Rouge, which
    deploybot does not (yet)."""
    if getattr(ctx.md.renderer, "highlight", True) or not _HIGHLIGHT_TAG.search(doc.body):
        return ()
    message = "{% highlight %} without a highlighter is not supported: it is highlighted"
    return (RenderWarning(doc.path, None, message),)


def _convert(doc: Document, text: str, ctx: RenderContext) -> str:
    return markdown_to_html(text, ctx.md) if doc.markdown else text


def render_content(
    doc: Document,
    ctx: RenderContext,
    page: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> tuple[str, tuple[RenderWarning, ...]]:
    """Return ``doc``'s body as HTML (Liquid with ``site``, ``page`` and ``extra``, then
    Markdown when it is Markdown), and the warnings.

    Raises ``SourceError`` naming ``doc`` (and the line, for Liquid) when the output passes
    ``ctx.max_page_bytes``: each stage stops as soon as it does."""
    liquid = liquid_of(ctx)
    state = liquid.start(doc.path, ctx.site)
    variables = {"site": ctx.site, "page": page, **(extra or {})}
    try:
        text = _liquid(liquid, state, doc, variables)
        html = restore_fragments(_convert(doc, text, ctx), state.fragments, ctx.max_page_bytes)
    except HighlightTimeout as exc:
        raise _timeout_error(doc, exc) from exc
    except LimitError as exc:
        raise SourceError(exc.message, doc.path, exc.line) from exc
    return html, state.all_warnings() + unhighlighted_tags(doc, ctx)


def _liquid(liquid: Liquid, state: RenderState, doc: Document, variables: Any) -> str:
    """The body after Liquid (none with ``render_with_liquid: false``, Jekyll 4's key)."""
    if doc.front_matter.get("render_with_liquid") is False:
        return doc.body
    return liquid.render(state, doc.body, doc.path, variables, doc.body_line)


def _default_layout(doc: Document, out: str) -> object:
    """The ``layout`` a document asks for: ``""`` (the theme's default) for an HTML output
    without the key; no layout for another output (``feed.xml``) without it, since
    Jekyll applies no layout a file does not name."""
    wanted = doc.front_matter.get("layout", "")
    if wanted == "" and "layout" not in doc.front_matter and not out.endswith(_HTML_OUTPUTS):
        return None
    return wanted


def _timeout_error(doc: Document, exc: HighlightTimeout) -> SourceError:
    """The one-line error for a page whose highlighting ran out of time, at the line of the
    code block in ``doc`` when it can be found there (else the block was in a layout)."""
    line = block_line(doc.body, exc.lang, exc.code)
    return SourceError(exc.message, doc.path, None if line is None else doc.body_line + line - 1)


def render_document(
    doc: Document,
    out: str,
    kind: LayoutKind,
    page: Mapping[str, Any],
    ctx: RenderContext,
    paginator: Mapping[str, Any] | None = None,
) -> RenderedDocument:
    """Render ``doc`` (written to ``out``) with its ``page`` mapping (and ``paginator``)
    through its layouts: the site's own when ``ctx.layouts`` is set, else the Jinja2
    theme's (``kind`` names the default layout there), with one highlighting budget for the
    content and whatever the layouts show (excerpts). Raises ``SourceError``."""
    with highlight_budget(ctx.highlight_timeout), related.rendering(ctx.site, page):
        return _render_document(doc, out, kind, page, ctx, paginator)


def _render_document(
    doc: Document,
    out: str,
    kind: LayoutKind,
    page: Mapping[str, Any],
    ctx: RenderContext,
    paginator: Mapping[str, Any] | None,
) -> RenderedDocument:
    if ctx.layouts is not None:
        return _render_liquid_site(doc, out, page, ctx, paginator)
    content, warnings = render_content(doc, ctx, page)
    if ctx.contents is not None:
        ctx.contents.converted(doc.path, content)
    from deploybot.render.theme.layouts import choose_layout, render_layout  # Jinja2: lazy

    with layout_errors(doc.path):
        env = ctx.env.get()
        template, warning = choose_layout(env, _default_layout(doc, out), kind, doc.path)
        html = (
            content
            if template is None
            else render_layout(template, content, {"site": ctx.site, "page": page})
        )
    extra = (warning,) if warning else ()
    return _finish(doc, out, content, html, warnings + extra, ctx)


def _render_liquid_site(
    doc: Document,
    out: str,
    page: Mapping[str, Any],
    ctx: RenderContext,
    paginator: Mapping[str, Any] | None,
) -> RenderedDocument:
    """Jekyll's ``render_document`` with the site's Liquid layouts."""
    assert ctx.layouts is not None
    liquid = liquid_of(ctx)
    state = liquid.start(doc.path, ctx.site)
    wanted = doc.front_matter.get("layout")
    variables: dict[str, Any] = {"site": ctx.site, "page": page, "paginator": paginator}
    try:
        layout = ctx.layouts.layout_data(wanted, doc.path)
        body = {**variables, "layout": layout}
        text = _liquid(liquid, state, doc, body)
        content = restore_fragments(_convert(doc, text, ctx), state.fragments)
        if isinstance(page, dict):
            # Jekyll sets the document's content to the converted HTML before the layouts.
            dict.__setitem__(page, "content", content)
        if ctx.contents is not None:
            ctx.contents.converted(doc.path, content)
        html, notes = ctx.layouts.apply(liquid, state, content, wanted, variables)
        html = restore_fragments(html, state.fragments, ctx.max_page_bytes)
    except HighlightTimeout as exc:
        raise _timeout_error(doc, exc) from exc
    except LimitError as exc:
        raise SourceError(exc.message, doc.path, exc.line) from exc
    notes += unhighlighted_tags(doc, ctx)
    return _finish(doc, out, content, html, state.all_warnings() + notes, ctx)


def _finish(
    doc: Document,
    out: str,
    content: str,
    html: str,
    warnings: tuple[RenderWarning, ...],
    ctx: RenderContext,
) -> RenderedDocument:
    output = html.encode("utf-8")
    if ctx.max_page_bytes is not None and len(output) > ctx.max_page_bytes:
        raise SourceError(page_too_large(ctx.max_page_bytes), doc.path)
    return RenderedDocument(doc.path, out, content, output, warnings)


@contextlib.contextmanager
def layout_errors(path: str) -> Iterator[None]:
    """Turn what Jinja2 raises while loading or rendering a layout for the document ``path``
    into a ``SourceError`` (one line): a syntax error names the layout file and line, a
    missing layout or a sandbox refusal names ``path``."""
    import jinja2  # lazy on purpose: only a Jinja2 theme's render comes here

    try:
        yield
    except jinja2.TemplateSyntaxError as exc:
        raise SourceError(f"layout: {exc.message}", exc.filename or exc.name, exc.lineno) from exc
    except jinja2.TemplateNotFound as exc:
        raise SourceError(f"the theme has no layout {exc.name!r}", path) from exc
    except jinja2.TemplateError as exc:
        raise SourceError(f"layout failed: {one_line(exc)}", path) from exc
