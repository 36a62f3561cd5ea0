"""The links of one built HTML page: each ``href``, ``src`` and ``srcset`` URL, with its line.

Pure: bytes in, rows out. The page is parsed by lxml's HTML parser (libxml2: C, forgiving as
browsers are, never fetching anything: ``no_network``; its default limits bound depth and text
node sizes, ``huge_tree`` stays off). Every element's ``href`` (``<a>``, ``<link>``, ``<area>``),
``src`` (``<img>``, ``<script>``, ``<iframe>``, ``<source>``...) and each URL of ``srcset``
(HTML's "image candidate strings": a URL, then an optional width or density, comma separated)
is taken, in document order; ``<base href>`` moves what relative links resolve against. Each
becomes a :class:`Link` with its target (:func:`deploybot.render.links.resolve.target_of`);
links that are not the site's are left out.

Bounded: at most ``max_links`` links a page (the rest are counted, not kept), and a URL longer
than :data:`MAX_URL` characters is counted as dropped too (no server serves it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deploybot.render.links.resolve import SiteAddress, target_of

if TYPE_CHECKING:
    from lxml import etree

MAX_URL = 4096
"""The longest URL kept (characters); longer ones are counted in :attr:`PageLinks.dropped`."""
MAX_PAGE_LINKS = 20_000
"""The most links kept for one page; the rest are counted in :attr:`PageLinks.dropped`."""


@dataclass(frozen=True)
class Link:
    """One link of a page: its ``target`` (:mod:`.resolve`), the URL as written (``link``)
    and the 1-based ``line`` of its element's start tag (None when libxml2 does not know)."""

    target: str
    link: str
    line: int | None


@dataclass(frozen=True)
class PageLinks:
    """A page's site links (:class:`Link`, in document order) and how many were ``dropped``
    past the caps (:data:`MAX_PAGE_LINKS`, :data:`MAX_URL`)."""

    links: tuple[Link, ...]
    dropped: int = 0


def page_links(
    data: bytes, page: str, site: SiteAddress, max_links: int = MAX_PAGE_LINKS
) -> PageLinks:
    """The site links of the HTML ``data`` written as output path ``page`` (see the module
    docstring). Never raises for bad HTML: what libxml2 recovers is read, and a page it cannot
    parse at all has no links."""
    root = _parse(data)
    if root is None:
        return PageLinks(())
    base = _base(root, page, site)
    links: list[Link] = []
    dropped = 0
    for element, value in _urls(root):
        if len(value) > MAX_URL:
            dropped += 1
            continue
        target = target_of(value, page, site, base)
        if target is None:
            continue
        if len(links) >= max_links:
            dropped += 1
            continue
        line = element.sourceline
        links.append(Link(target, value.strip(), line if isinstance(line, int) else None))
    return PageLinks(tuple(links), dropped)


@functools.cache
def _lxml() -> tuple[Any, Any]:
    """lxml's HTML parser (one per process: the engine parses in one thread) and the XPath
    of every ``href``, ``src`` and ``srcset`` attribute, in document order (libxml2 walks the
    tree, not Python). Imported here: a build with the check off, or writing no page, needs
    none of lxml."""
    from lxml import etree

    parser = etree.HTMLParser(
        recover=True, no_network=True, remove_comments=True, remove_pis=True, encoding="utf-8"
    )
    return parser, etree.XPath("//@href|//@src|//@srcset")


def _parse(data: bytes) -> etree._Element | None:
    from lxml import etree

    try:
        return etree.fromstring(data, _lxml()[0])
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _base(root: etree._Element, page: str, site: SiteAddress) -> str | None:
    """The folder (a target ending in ``/``, or ``""``) the page's first ``<base href>``
    resolves relative links against, or None (the page's own folder)."""
    for element in root.iter("base"):
        href = element.get("href")
        if href is None:
            continue
        target = target_of(href, page, site)
        if target is None:
            return None
        return target if target.endswith("/") or not target else target.rsplit("/", 1)[0] + "/"
    return None


def _urls(root: etree._Element) -> list[tuple[etree._Element, str]]:
    """Each ``(element, URL)`` of ``root``'s ``href``, ``src`` and ``srcset`` attributes, in
    document order (``<base>``'s aside); a ``srcset`` gives one per image candidate."""
    found: list[tuple[etree._Element, str]] = []
    for value in _lxml()[1](root):
        element = value.getparent()
        if element is None or element.tag == "base":
            continue
        if value.attrname == "srcset":
            found += [(element, url) for url in srcset_urls(str(value))]
        else:
            found.append((element, str(value)))
    return found


def srcset_urls(value: str) -> list[str]:
    """The URLs of a ``srcset`` value (HTML's "parse a srcset attribute", simplified: each
    comma-separated candidate's first whitespace-separated token; a URL holding a comma is
    cut there, which the spec allows only when the comma is not followed by a space)."""
    urls = []
    for candidate in value.split(","):
        token = candidate.split()
        if token:
            urls.append(token[0])
    return urls
