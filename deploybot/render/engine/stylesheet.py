"""Rendering a Sass or SCSS page: Liquid, then LibSass (:mod:`deploybot.render.theme.sass`),
in no layout; the CSS and, when ``sass.sourcemap`` asks for one, its ``.css.map``."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from deploybot.render.engine.document import RenderContext, RenderedDocument, render_content
from deploybot.render.highlight.clock import highlight_budget
from deploybot.render.model import Document, RenderWarning
from deploybot.render.read.source import MemoryTree, SourceTree
from deploybot.render.theme import sass


def render_stylesheet(
    doc: Document, out: str, page: Mapping[str, Any], ctx: RenderContext
) -> Iterator[RenderedDocument]:
    """Yield the CSS of the Sass or SCSS page ``doc`` (written at ``out``) and, when
    written, its source map beside it (:func:`~deploybot.render.theme.sass.map_path`).
    ``site.sass`` holds the settings; the imports are read from ``ctx.tree``.
    Raises ``SourceError`` for a Liquid or Sass error or a limit passed."""
    with highlight_budget(ctx.highlight_timeout):
        text, warnings = render_content(doc, ctx, page)
    settings, notes = sass.sass_settings(ctx.site.get("sass"))
    tree = ctx.tree or MemoryTree({})
    sheet = sass.compile_stylesheet(
        text,
        doc.path,
        tree,
        settings,
        body_line=doc.body_line,
        limits=sass.SassLimits(max_output=ctx.max_page_bytes or sass.SassLimits().max_output),
        folders=lambda: _folders(tree),
    )
    warnings += tuple(RenderWarning(doc.path, None, note) for note in notes)
    yield RenderedDocument(doc.path, out, sheet.css, sheet.css.encode("utf-8"), warnings)
    if sheet.source_map is not None:
        data = sheet.source_map.encode("utf-8")
        yield RenderedDocument(doc.path, sass.map_path(out, doc.path), "", data, ())


def _folders(tree: SourceTree) -> list[str]:
    """Every folder of ``tree`` (each file's parents), sorted."""
    found: set[str] = set()
    for path in tree.paths():
        folder = posixpath.dirname(path)
        while folder and folder not in found:
            found.add(folder)
            folder = posixpath.dirname(folder)
    return sorted(found)
