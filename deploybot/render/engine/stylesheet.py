"""Rendering a Sass or SCSS page or collection document: Liquid, then LibSass
(:mod:`deploybot.render.sass.convert`), in no layout (Jekyll's ``asset_file?``).

A page gives its CSS and, when ``sass.sourcemap`` asks for one, its ``.css.map``. A document
of a collection (``_styles/main.scss`` with front matter) is converted too, but
jekyll-sass-converter 2.2 associates only pages with the converter (its ``:pages,
:pre_render`` hook, ``converters/scss.rb``): a document compiles as ``stdin`` (the name
line comments and errors give it), with no source map and no ``sourceMappingURL``. Checked
with ``jekyll build``: ``tests/fixtures/jekyll/sass_collection``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from deploybot.render.engine.document import RenderContext, RenderedDocument, render_content
from deploybot.render.highlight.clock import highlight_budget
from deploybot.render.model import Document, RenderWarning
from deploybot.render.read.source import MemoryTree
from deploybot.render.sass import convert as sass


def render_stylesheet(
    doc: Document, out: str, page: Mapping[str, Any], ctx: RenderContext
) -> Iterator[RenderedDocument]:
    """Yield the CSS of the Sass or SCSS page ``doc`` (written at ``out``) and, when
    written, its source map beside it (:func:`~deploybot.render.sass.convert.map_path`).
    ``site.sass`` holds the settings; the imports are read from ``ctx.tree``.
    Raises ``SourceError`` for a Liquid or Sass error or a limit passed."""
    sheet, warnings = _compile(doc, page, ctx, document=False)
    yield RenderedDocument(doc.path, out, sheet.css, sheet.css.encode("utf-8"), warnings)
    if sheet.source_map is not None:
        data = sheet.source_map.encode("utf-8")
        yield RenderedDocument(doc.path, sass.map_path(out, doc.path), "", data, ())


def render_sass_document(
    doc: Document, out: str, page: Mapping[str, Any], ctx: RenderContext
) -> RenderedDocument:
    """Return the CSS of the Sass or SCSS collection document ``doc`` (written at ``out``):
    compiled as ``stdin``, never with a source map (the module docstring says why); its
    ``content`` (what ``site.<label>`` shows) is the CSS. Raises ``SourceError`` for a
    Liquid or Sass error (at the document's file and line) or a limit passed."""
    sheet, warnings = _compile(doc, page, ctx, document=True)
    return RenderedDocument(doc.path, out, sheet.css, sheet.css.encode("utf-8"), warnings)


def _compile(
    doc: Document, page: Mapping[str, Any], ctx: RenderContext, *, document: bool
) -> tuple[sass.Stylesheet, tuple[RenderWarning, ...]]:
    """Liquid, then LibSass: the stylesheet and the warnings of ``doc``."""
    with highlight_budget(ctx.highlight_timeout):
        text, warnings = render_content(doc, ctx, page)
    settings, notes = sass.sass_settings(ctx.site.get("sass"))
    if document:
        settings = dataclasses.replace(settings, sourcemap="never")
    tree = ctx.tree or MemoryTree({})
    sheet = sass.compile_stylesheet(
        text,
        doc.path,
        tree,
        settings,
        body_line=doc.body_line,
        limits=sass.SassLimits(max_output=ctx.max_page_bytes or sass.SassLimits().max_output),
        folders=lambda: sass.tree_folders(tree),
        entry=sass.DOCUMENT_ENTRY if document else None,
    )
    return sheet, warnings + tuple(RenderWarning(doc.path, None, note) for note in notes)
