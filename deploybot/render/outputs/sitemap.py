"""``sitemap.xml`` (the sitemaps.org protocol 0.9), as the jekyll-sitemap plugin writes it.

Written when ``_config.yml`` lists ``jekyll-sitemap`` in ``plugins`` (see :func:`wanted`).

Entries (jekyll-sitemap's ``sitemap.xml`` template): every post, then every HTML page, each
with ``<loc>`` (absolute URL) and, when known, ``<lastmod>`` (W3C datetime: the front-matter
``last_modified_at`` as ``date_to_xmlschema`` reads it, else the date). Left out: pages and
posts with ``sitemap: false`` in their front matter, and the 404 page. Not written when the
source has its own ``sitemap.xml``. Format: https://www.sitemaps.org/protocol.html.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.render.liquid.jekyll_filters import local_time
from deploybot.render.model import Page, Post, SiteModel
from deploybot.render.outputs.feeds import xml_escape
from deploybot.render.read.dates import xmlschema

SITEMAP_PATH = "sitemap.xml"
PLUGIN = "jekyll-sitemap"
NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
_SKIPPED_OUTPUTS = frozenset({"404.html"})


def wanted(model: SiteModel) -> bool:
    """Return whether the build should write ``sitemap.xml``: ``_config.yml`` enables the
    ``jekyll-sitemap`` plugin (in ``plugins``, or ``gems`` before Jekyll 3.5) and the source
    has no ``sitemap.xml`` of its own. Jekyll itself writes no sitemap without the plugin."""
    plugins: list[Any] = []
    for key in ("plugins", "gems"):
        value = model.config.data.get(key)
        plugins.extend(value if isinstance(value, list) else [value])
    if PLUGIN not in plugins or any(s.output_path == SITEMAP_PATH for s in model.static):
        return False
    return not any(page.output_path == SITEMAP_PATH for page in model.pages)


def sitemap_xml(model: SiteModel, root: str) -> bytes:
    """Return the sitemap (UTF-8 bytes) of ``model``'s posts and pages under ``root`` (the
    absolute site URL without a trailing slash; relative URLs when it is empty)."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="{NAMESPACE}">',
    ]
    tz = ZoneInfo(model.config.timezone)
    for url, lastmod in _entries(model.posts, model.pages, tz):
        lines.append("<url>")
        lines.append(f"<loc>{xml_escape(root + url)}</loc>")
        if lastmod is not None:
            lines.append(f"<lastmod>{xmlschema(lastmod)}</lastmod>")
        lines.append("</url>")
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _entries(
    posts: Iterable[Post], pages: Iterable[Page], tz: ZoneInfo
) -> Iterable[tuple[str, datetime | None]]:
    for post in posts:
        if _listed(post.doc.front_matter, post.output_path):
            yield post.url, _modified(post.doc.front_matter, tz) or post.date
    for page in pages:
        if page.output_path.endswith(".html") and _listed(page.doc.front_matter, page.output_path):
            yield page.url, _modified(page.doc.front_matter, tz) or page.date


def _listed(front_matter: Any, output_path: str) -> bool:
    return front_matter.get("sitemap", True) is not False and output_path not in _SKIPPED_OUTPUTS


def _modified(front_matter: Any, tz: ZoneInfo) -> datetime | None:
    # jekyll-sitemap's template prints ``last_modified_at | date_to_xmlschema``.
    value = front_matter.get("last_modified_at")
    return None if value is None else local_time(value, tz)
