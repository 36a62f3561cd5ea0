"""jekyll-titles-from-headings 0.5: a Markdown page without a ``title`` takes its first
heading's text.

As the plugin's ``generator.rb``: a page written in Markdown with no ``title`` (front
matter or defaults) whose text starts (after blank space) with a heading (``#`` to ``###``,
or a Setext ``===``/``---`` underline) gets that heading's text as ``title``, through
``markdownify | strip_html | normalize_whitespace``, footnote marks (``[^1]``) removed;
``titles_from_headings.collections: true`` does the same for the written documents of
every collection (posts too), whose heading wins over their ``title``;
``strip_title: true`` (the setting, or the document's own front matter) removes the
heading from the text; ``enabled: false`` turns it off. A closing run of ``#`` is kept in
the title, as the plugin's pattern keeps it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from deploybot.render.liquid.plugins.jekyll_seo_tag import normalize_whitespace, strip_html
from deploybot.render.liquid.plugins.registry import Plugin
from deploybot.render.model import Page, Post, SiteConfig

NAME = "jekyll-titles-from-headings"
TITLE = re.compile(r"\A\s*(?:#{1,3}\s+(.*)(?:\s+#{1,3})?|(.*)\r?\n[-=]+\s*)$", re.M)
_FOOTNOTE = re.compile(r"\[\^[^\]]*\]")


def _option(config: SiteConfig, key: str) -> Any:
    settings = config.data.get("titles_from_headings")
    return settings.get(key) if isinstance(settings, Mapping) else None


def title_of(body: str, markdown: Callable[[str], str]) -> str | None:
    """Return the title the heading starting ``body`` gives, ``None`` without one."""
    m = TITLE.search(body)
    if m is None:
        return None
    text = m[1] if m[1] is not None else m[2]
    return _FOOTNOTE.sub("", normalize_whitespace(strip_html(markdown(text))))


def adjust(doc: Post | Page, config: SiteConfig, markdown: Callable[[str], str]) -> Post | Page:
    """Return ``doc`` with the title its first heading gives (see the module docstring)."""
    if _option(config, "enabled") is False or not doc.doc.markdown:
        return doc
    fm = doc.doc.front_matter
    if isinstance(doc, Post):
        if _option(config, "collections") is not True or not doc.output_path:
            return doc
    elif fm.get("title") is not None:
        return doc
    title = title_of(doc.doc.body, markdown)
    if title is None:
        return doc
    strip = (
        fm["strip_title"] is True if "strip_title" in fm else _option(config, "strip_title") is True
    )
    body = TITLE.sub("", doc.doc.body, count=1).strip() if strip else doc.doc.body
    document = dataclasses.replace(doc.doc, front_matter={**fm, "title": title}, body=body)
    return dataclasses.replace(doc, doc=document, title=title)


PLUGIN = Plugin(NAME, "an untitled Markdown page's title from its first heading", read=adjust)
