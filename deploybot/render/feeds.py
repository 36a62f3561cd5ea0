"""The site feeds: ``atom.xml`` (Atom, RFC 4287) and ``rss.xml`` (RSS 2.0).

The element order and layout follow the Jekyll-Bootstrap templates as the TVM site publishes
them (tvm-site-notes §3): entries newest first, full post HTML entity-escaped (Jekyll's
``xml_escape``: ``& < > "``), absolute links from ``url`` + ``baseurl`` + the extensionless
post URL, entry dates in the site timezone. Feed-level times are ``site.time``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from deploybot.render.dates import rfc822, xmlschema


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


def atom_feed(info: FeedInfo, entries: Sequence[FeedEntry]) -> bytes:
    """Return an Atom 1.0 document (UTF-8 bytes) for ``entries`` in the given order.

    Each entry has ``title``, ``link``, ``updated`` (RFC 3339), ``id`` (the link) and
    ``content type="html"`` (RFC 4287 §4.1.3).
    """
    root = xml_escape(info.root)
    head = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        "",
        f" <title>{xml_escape(info.title)}</title>",
        f' <link href="{root}/atom.xml" rel="self"/>',
        f' <link href="{root}"/>',
        f" <updated>{xmlschema(info.updated)}</updated>",
        f" <id>{root}</id>",
        " <author>",
        f"   <name>{xml_escape(info.author_name)}</name>",
        f"   <email>{xml_escape(info.author_email)}</email>",
        " </author>",
        "",
    ]
    body = [_atom_entry(entry) for entry in entries]
    return ("\n".join(head) + "\n" + "".join(body) + "\n</feed>\n").encode("utf-8")


def _atom_entry(entry: FeedEntry) -> str:
    link = xml_escape(entry.link)
    return (
        " <entry>\n"
        f"   <title>{xml_escape(entry.title)}</title>\n"
        f'   <link href="{link}"/>\n'
        f"   <updated>{xmlschema(entry.date)}</updated>\n"
        f"   <id>{link}</id>\n"
        f'   <content type="html">{xml_escape(entry.content)}</content>\n'
        " </entry>\n"
    )


def rss_feed(info: FeedInfo, entries: Sequence[FeedEntry]) -> bytes:
    """Return an RSS 2.0 document (UTF-8 bytes) for ``entries`` in the given order.

    The channel carries ``title``, ``description``, ``link``, ``atom:link rel="self"``,
    ``lastBuildDate``/``pubDate`` (RFC 822 dates) and ``ttl``; each item ``title``,
    ``description`` (escaped HTML), ``link``, ``guid`` (the link) and ``pubDate``.
    """
    root = xml_escape(info.root)
    head = [
        '<?xml version="1.0" encoding="UTF-8" ?>',
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">',
        "<channel>",
        f"        <title>{xml_escape(info.title)}</title>",
        f"        <description>{xml_escape(info.description)}</description>",
        f"        <link>{root}</link>",
        f'        <atom:link href="{root}/rss.xml" rel="self" type="application/rss+xml" />',
        f"        <lastBuildDate>{rfc822(info.updated)}</lastBuildDate>",
        f"        <pubDate>{rfc822(info.updated)}</pubDate>",
        "        <ttl>60</ttl>",
        "",
    ]
    body = [_rss_item(entry) for entry in entries]
    return ("\n".join(head) + "\n" + "".join(body) + "\n</channel>\n</rss>\n").encode("utf-8")


def _rss_item(entry: FeedEntry) -> str:
    link = xml_escape(entry.link)
    return (
        "        <item>\n"
        f"                <title>{xml_escape(entry.title)}</title>\n"
        f"                <description>{xml_escape(entry.content)}</description>\n"
        f"                <link>{link}</link>\n"
        f"                <guid>{link}</guid>\n"
        f"                <pubDate>{rfc822(entry.date)}</pubDate>\n"
        "        </item>\n"
    )
