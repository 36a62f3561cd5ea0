"""The site feeds: ``atom.xml`` (Atom, RFC 4287) and ``rss.xml`` (RSS 2.0).

The element order and layout follow the Jekyll-Bootstrap templates as the TVM site publishes
them (tvm-site-notes §3): entries newest first, full post HTML entity-escaped (Jekyll's
``xml_escape``: ``& < > "``), absolute links from ``url`` + ``baseurl`` + the extensionless
post URL, entry dates in the site timezone. Feed-level times are ``site.time``.

Where those templates write an invalid feed, these do not (the W3C validator's reading of
RFC 4287): without ``url`` the links are relative, and an id (``atom:id``, an RSS ``guid``)
must be an absolute IRI (§4.2.6), so it is then a name-based UUID URN of the site's title
and the link (:func:`feed_id`), the same in every build; and an author's ``name`` may not
be empty (§3.2.1), so without ``author.name`` it is the site's title, and an empty
``email`` is left out (jekyll-feed, in the same case, writes ``<id>/feed.xml</id>`` and an
empty name). A site with ``url`` gets what Jekyll writes, byte for byte, its author block
too (the TVM site's is an empty name and email): a site moving to deploybot sees no change
in its feeds.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from deploybot.render.read.dates import rfc822, xmlschema


@dataclass(frozen=True)
class FeedInfo:
    """Feed-level data: ``root`` is the absolute site URL (``url`` + ``baseurl``, no trailing
    slash); ``updated`` the build time (aware)."""

    title: str
    description: str
    root: str
    author_name: str
    author_email: str
    updated: datetime


@dataclass(frozen=True)
class FeedEntry:
    """One post in a feed: ``link`` absolute, ``date`` aware, ``content`` the post's HTML."""

    title: str
    link: str
    date: datetime
    content: str


_NOT_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_escape(text: str) -> str:
    """Escape ``& < > "`` as Jekyll's ``xml_escape`` filter does (apostrophes stay) and drop
    the control characters XML 1.0 forbids, so the feed always parses."""
    # xml.sax.saxutils.escape's replacements, without importing it (it imports urllib.request,
    # http.client and ssl: tens of milliseconds of a one-post publish).
    text = _NOT_XML_CHARS.sub("", text).replace("&", "&amp;")
    return text.replace(">", "&gt;").replace("<", "&lt;").replace('"', "&quot;")


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def feed_id(link: str, title: str) -> str:
    """Return the id (``atom:id``, RSS ``guid``) of what ``link`` names in the feeds of
    the site titled ``title``: ``link`` itself when it is absolute (it has a scheme, as
    ``url`` gives it), else ``urn:uuid:`` and the version 5 (name-based, SHA-1) UUID of
    ``title``, a line feed and ``link`` (RFC 4122 §4.3), since RFC 4287 §4.2.6 wants an
    absolute IRI. The same in every build while the title and the link stay."""
    if _SCHEME.match(link):
        return link
    name = f"{title}\n{link}"
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, name)}"


def atom_feed(info: FeedInfo, entries: Sequence[FeedEntry]) -> bytes:
    """Return an Atom 1.0 document (UTF-8 bytes) for ``entries`` in the given order.

    Each entry has ``title``, ``link``, ``updated`` (RFC 3339), ``id`` (the link, or
    :func:`feed_id`'s URN) and ``content type="html"`` (RFC 4287 §4.1.3). The feed's
    author: see :func:`_atom_author`.
    """
    root = xml_escape(info.root)
    author = _atom_author(info)
    head = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        "",
        f" <title>{xml_escape(info.title)}</title>",
        f' <link href="{root}/atom.xml" rel="self"/>',
        f' <link href="{root or "/"}"/>',
        f" <updated>{xmlschema(info.updated)}</updated>",
        f" <id>{xml_escape(feed_id(info.root or '/', info.title))}</id>",
        *author,
        *([" </author>"] if author else []),
        "",
    ]
    body = [_atom_entry(entry, info.title) for entry in entries]
    return ("\n".join(head) + "\n" + "".join(body) + "\n</feed>\n").encode("utf-8")


def _atom_author(info: FeedInfo) -> list[str]:
    """The feed's ``<author>`` lines: with ``url`` (an absolute root), what the templates
    write, empty name and email included; without it, a valid one (see the module doc)."""
    if _SCHEME.match(info.root):
        return [
            " <author>",
            f"   <name>{xml_escape(info.author_name)}</name>",
            f"   <email>{xml_escape(info.author_email)}</email>",
        ]
    name = info.author_name or info.title
    author = [" <author>", f"   <name>{xml_escape(name)}</name>"] if name else []
    if author and info.author_email:
        author.append(f"   <email>{xml_escape(info.author_email)}</email>")
    return author


def _atom_entry(entry: FeedEntry, site_title: str) -> str:
    link = xml_escape(entry.link)
    return (
        " <entry>\n"
        f"   <title>{xml_escape(entry.title)}</title>\n"
        f'   <link href="{link}"/>\n'
        f"   <updated>{xmlschema(entry.date)}</updated>\n"
        f"   <id>{xml_escape(feed_id(entry.link, site_title))}</id>\n"
        f'   <content type="html">{xml_escape(entry.content)}</content>\n'
        " </entry>\n"
    )


def rss_feed(info: FeedInfo, entries: Sequence[FeedEntry]) -> bytes:
    """Return an RSS 2.0 document (UTF-8 bytes) for ``entries`` in the given order.

    The channel carries ``title``, ``description``, ``link``, ``atom:link rel="self"``,
    ``lastBuildDate``/``pubDate`` (RFC 822 dates) and ``ttl``; each item ``title``,
    ``description`` (escaped HTML), ``link``, ``guid`` (the link; without ``url``,
    :func:`feed_id`'s URN, ``isPermaLink="false"``) and ``pubDate``.
    """
    root = xml_escape(info.root)
    head = [
        '<?xml version="1.0" encoding="UTF-8" ?>',
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">',
        "<channel>",
        f"        <title>{xml_escape(info.title)}</title>",
        f"        <description>{xml_escape(info.description)}</description>",
        f"        <link>{root or '/'}</link>",
        f'        <atom:link href="{root}/rss.xml" rel="self" type="application/rss+xml" />',
        f"        <lastBuildDate>{rfc822(info.updated)}</lastBuildDate>",
        f"        <pubDate>{rfc822(info.updated)}</pubDate>",
        "        <ttl>60</ttl>",
        "",
    ]
    body = [_rss_item(entry, info.title) for entry in entries]
    return ("\n".join(head) + "\n" + "".join(body) + "\n</channel>\n</rss>\n").encode("utf-8")


def _rss_item(entry: FeedEntry, site_title: str) -> str:
    link = xml_escape(entry.link)
    guid = feed_id(entry.link, site_title)
    permalink = "" if guid == entry.link else ' isPermaLink="false"'
    return (
        "        <item>\n"
        f"                <title>{xml_escape(entry.title)}</title>\n"
        f"                <description>{xml_escape(entry.content)}</description>\n"
        f"                <link>{link}</link>\n"
        f"                <guid{permalink}>{xml_escape(guid)}</guid>\n"
        f"                <pubDate>{rfc822(entry.date)}</pubDate>\n"
        "        </item>\n"
    )
