"""jekyll-default-layout 0.1: a Markdown page or post without a ``layout`` gets one.

As the plugin's ``generator.rb``: a page or post written in Markdown whose front matter
(defaults included) has no ``layout`` key renders with ``home`` when it is the site's
``/`` and the site has that layout, else ``page`` (a page) or ``post`` (a post) when the
site has it, else ``default`` when it has that (collection documents other than posts
are left alone). Only the site's own ``_layouts/`` count. The layout is set as the
document renders: ``page.layout`` shows it in the document itself, not in ``site.pages``
or ``site.posts`` listings (the plugin sets it for those too).
"""

from __future__ import annotations

import dataclasses

from deploybot.render.liquid.plugins.registry import Plugin, PrerenderContext, Reads
from deploybot.render.model import Page, Post

NAME = "jekyll-default-layout"


def layout_for(doc: Post | Page, layouts: frozenset[str]) -> tuple[str | None, tuple[str, ...]]:
    """Return the layout the plugin gives ``doc`` among the site's ``layouts``, and the
    names it looked for (in the plugin's order, stopping at the first found)."""
    wanted = []
    if doc.url == "/":
        wanted.append("home")
    wanted.append("page" if isinstance(doc, Page) else "post")
    wanted.append("default")
    for i, name in enumerate(wanted):
        if name in layouts:
            return name, tuple(wanted[: i + 1])
    return None, tuple(wanted)


def adjust(doc: Post | Page, context: PrerenderContext) -> tuple[Post | Page, Reads]:
    """Return ``doc`` with its default layout set, and the layout names whose presence
    that read (none when the plugin leaves ``doc`` alone)."""
    if not doc.doc.markdown or "layout" in doc.doc.front_matter:
        return doc, Reads()
    if isinstance(doc, Post) and not doc.is_post:
        return doc, Reads()
    layout, read = layout_for(doc, context.layouts)
    if layout is None:
        return doc, Reads(read)
    fm = {**doc.doc.front_matter, "layout": layout}
    return dataclasses.replace(doc, doc=dataclasses.replace(doc.doc, front_matter=fm)), Reads(read)


PLUGIN = Plugin(
    NAME, "a Markdown page or post without a layout gets page/post/home/default", prerender=adjust
)
