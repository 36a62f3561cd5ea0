"""jekyll-sitemap 1.4: ``sitemap.xml`` (the sitemaps.org protocol 0.9) and ``robots.txt``.

The sitemap is the plugin's ``sitemap.xml`` template minified as the plugin minifies it
(``MINIFY_REGEX``: the whitespace after ``>`` and a line end, or after ``}``, is dropped),
written here in Python. Its entries, in the template's order:

- the documents of every written collection (``site.collections``, by label: ``posts``
  oldest first, the others in their order), but those with ``sitemap: false``, each with
  ``<lastmod>`` from ``last_modified_at`` or its date;
- the HTML pages (``site.html_pages``: ``.html``, ``.htm``, ``.xhtml`` outputs, in
  ``site.pages`` order, then jekyll-archives' pages, then those jekyll-paginate adds), but
  those with ``sitemap: false`` and ``/404.html``, with ``<lastmod>`` only from
  ``last_modified_at``;
- the static files ending in ``.htm``, ``.html``, ``.xhtml`` or ``.pdf``, but those whose
  front matter defaults set ``sitemap: false`` and ``404.html``, with ``<lastmod>`` their
  modification time: git keeps none, so deploybot gives ``site.time`` (the source
  commit's date), where Jekyll gives the time the file was checked out.

A URL's ``/index.html`` becomes ``/``. ``sitemap.xml`` is not written when a page or static
file of the source has the URL ``/sitemap.xml``, nor ``robots.txt`` (``Sitemap:`` and the
sitemap's absolute URL) when one has ``/robots.txt``; ``sitemap.xsl`` in the source adds the
stylesheet line. With jekyll-redirect-from, a document it redirects (``redirect_to``) is
left out. A ``last_modified_at`` that is no date leaves ``<lastmod>`` out (Jekyll
stops the build there).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins import jekyll_archives, jekyll_redirect_from, paginate
from deploybot.render.liquid.plugins.registry import Needs, Plugin, SiteView, is_enabled
from deploybot.render.model import Page, Post, StaticFile
from deploybot.render.read.collections import POSTS
from deploybot.render.read.defaults import defaults_for

NAME = "jekyll-sitemap"
SITEMAP_PATH = "sitemap.xml"
ROBOTS_PATH = "robots.txt"
NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
_HTML = (".html", ".xhtml", ".htm")
_STATIC = (".htm", ".html", ".xhtml", ".pdf")
_HEAD = (
    '<urlset xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    f'xsi:schemaLocation="{NAMESPACE} {NAMESPACE}/sitemap.xsd" xmlns="{NAMESPACE}">\n'
)


def _urls(view: SiteView) -> set[str]:
    """The URLs of the source's pages and static files (the plugin's ``file_exists?``)."""
    return {p.url for p in view.pages()} | {s.url for s in view.static()}


def generate(view: SiteView) -> list[tuple[str, bytes]]:
    """Return ``sitemap.xml`` and ``robots.txt`` of ``view`` (those the source lacks)."""
    taken = _urls(view)
    outputs = []
    if "/" + SITEMAP_PATH not in taken:
        outputs.append((SITEMAP_PATH, sitemap_xml(view).encode("utf-8")))
    if "/" + ROBOTS_PATH not in taken:
        url = jf.absolute_url(SITEMAP_PATH, view.config.url, view.config.baseurl)
        outputs.append((ROBOTS_PATH, f"Sitemap: {url}\n".encode()))
    return outputs


def sitemap_xml(view: SiteView) -> str:
    """Return the sitemap of ``view`` (see the module docstring)."""
    config = view.config
    tz = ZoneInfo(config.timezone)

    def absolute(url: str) -> str:
        return jf.xml_escape(
            jf.absolute_url(url.replace("/index.html", "/"), config.url, config.baseurl)
        )

    def lastmod(value: Any) -> str:
        moment = jf.local_time(value, tz)
        return (
            "" if moment is None else f"<lastmod>{jf.date_to_xmlschema(moment, tz=tz)}</lastmod>\n"
        )

    out = ['<?xml version="1.0" encoding="UTF-8"?>\n']
    if view.exists("sitemap.xsl"):
        href = jf.absolute_url("/sitemap.xsl", config.url, config.baseurl)
        out.append(f'<?xml-stylesheet type="text/xsl" href="{href}"?>\n')
    out.append(_HEAD)
    redirects = is_enabled(config.data, jekyll_redirect_from.NAME)
    for doc in _documents(view):
        fm = doc.doc.front_matter
        if redirects and jekyll_redirect_from.hides_from_sitemap(fm):
            continue
        modified = fm.get("last_modified_at")
        when = doc.date if modified in (None, False, "") else modified
        out.append(f"<url>\n<loc>{absolute(doc.url)}</loc>\n{lastmod(when)}</url>\n")
    for url, data in _html_pages(view):
        if data.get("sitemap") is False or url == "/404.html":
            continue
        if redirects and jekyll_redirect_from.hides_from_sitemap(data):
            continue
        modified = data.get("last_modified_at")
        stamp = lastmod(modified) if modified not in (None, False) else ""
        out.append(f"<url>\n<loc>{absolute(url)}</loc>\n{stamp}</url>\n")
    for static in _static_files(view):
        out.append(
            f"<url>\n<loc>{absolute(_static_path(static))}</loc>\n{lastmod(view.time)}</url>\n"
        )
    out.append("</urlset>\n")  # the template ends with a newline, as the file Jekyll writes
    return "".join(out)


def _documents(view: SiteView) -> Iterator[Post]:
    """The written documents of ``site.collections`` (by label), ``sitemap: false`` out."""
    docs = dict(view.docs())
    docs[POSTS] = list(reversed(view.posts()))
    for label in sorted(docs):
        collection = view.config.collections.get(label)
        if collection is not None and collection.output is False:
            continue
        for doc in docs[label]:
            if doc.doc.front_matter.get("sitemap") is not False:
                yield doc


def _html_pages(view: SiteView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(url, front matter)`` of ``site.html_pages``: the pages, jekyll-archives' after
    them, then the paginated copies (the generators run in that order)."""
    pages = sorted(view.pages(), key=lambda p: (posixpath.basename(p.doc.path), p.doc.path))
    for page in pages:
        if page.output_ext in _HTML:
            yield page.url, page.doc.front_matter
    for url, front in jekyll_archives.listed(view.config, view.posts()):
        if url.endswith("/") or url.endswith(_HTML):
            yield url, front
    yield from _paginated(view, pages)


def _paginated(view: SiteView, pages: list[Page]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    settings = paginate.pagination(view.config.data)
    if settings is None or not pages:
        return
    template = paginate.template_page(settings, (p.doc.path for p in pages))
    page = next((p for p in pages if p.doc.path == template), None)
    if page is None:
        return
    posts = [p for p in view.posts() if not p.doc.front_matter.get("hidden")]
    for number in range(2, paginate.page_count(settings, len(posts)) + 1):
        yield paginate.own_url(settings, number, page.url), page.doc.front_matter


def _static_files(view: SiteView) -> Iterator[StaticFile]:
    config = view.config
    for static in view.static():
        name = posixpath.basename(static.path)
        if posixpath.splitext(name)[1] not in _STATIC or name == "404.html":
            continue
        values = defaults_for(
            config.defaults, static.path, static.collection, config.collections_dir
        )
        if values.get("sitemap") is not False:
            yield static


def _static_path(static: StaticFile) -> str:
    """``StaticFileDrop#path``: the file's path from the source root, with a leading ``/``."""
    return "/" + static.path


PLUGIN = Plugin(
    NAME,
    "sitemap.xml of every written document, HTML page and HTML/PDF static file; robots.txt",
    generate=generate,
    needs=frozenset({Needs.POSTS, Needs.PAGES, Needs.DOCS, Needs.STATIC}),
    post_fields=(
        *("url", "date", "last_modified_at", "sitemap", "redirect_to", "hidden"),
        *("tags", "categories"),  # jekyll-archives' pages
    ),
)
