"""Atom (RFC 4287) and RSS 2.0 feeds, checked with an XML parser and against the TVM feeds."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.outputs.feeds import FeedEntry, FeedInfo, atom_feed, rss_feed, xml_escape
from deploybot.render.read.source import DirTree, MemoryTree

SHARED = Path(__file__).resolve().parents[2] / "shared"
TVM = SHARED / "corpus" / "tvm-site"
ATOM = "{http://www.w3.org/2005/Atom}"
BUILD_TIME = datetime(2020, 7, 14, 9, 12, 2, tzinfo=timezone(timedelta(hours=-7)))
needs_corpus = pytest.mark.skipif(not TVM.is_dir(), reason="tvm corpus not found at ../shared")


def atom_entries(data: bytes) -> list[tuple[str | None, ...]]:
    """Return (title, link href, updated, id) of each entry, in feed order."""
    root = ET.fromstring(data)
    entries: list[tuple[str | None, ...]] = []
    for e in root.findall(f"{ATOM}entry"):
        link = e.find(f"{ATOM}link")
        href = link.get("href") if link is not None else None
        fields = (e.findtext(f"{ATOM}title"), href, e.findtext(f"{ATOM}updated"))
        entries.append((*fields, e.findtext(f"{ATOM}id")))
    return entries


def rss_items(data: bytes) -> list[tuple[str | None, ...]]:
    root = ET.fromstring(data)
    return [
        tuple(i.findtext(k) for k in ("title", "link", "guid", "pubDate"))
        for i in root.iter("item")
    ]


def test_xml_escape_like_jekyll() -> None:
    assert xml_escape("a & <b> \"c\" 'd'\x0c") == "a &amp; &lt;b&gt; &quot;c&quot; 'd'"


def test_small_feeds_parse_and_carry_escaped_html() -> None:
    zone = ZoneInfo("Europe/Paris")
    info = FeedInfo("A & B", "", "https://ex.org/blog", "Ann", "a@ex.org", BUILD_TIME)
    entry = FeedEntry(
        "<T> & 'x'",
        "https://ex.org/blog/2020/01/01/t",
        datetime(2020, 1, 1, tzinfo=zone),
        "<p>Hi &amp; bye</p>\n",
    )
    atom = ET.fromstring(atom_feed(info, [entry]))
    assert atom.findtext(f"{ATOM}title") == "A & B"
    assert atom.findtext(f"{ATOM}updated") == "2020-07-14T09:12:02-07:00"
    content = atom.find(f"{ATOM}entry/{ATOM}content")
    assert content is not None and content.get("type") == "html"
    assert content.text == "<p>Hi &amp; bye</p>\n"
    assert atom.findtext(f"{ATOM}entry/{ATOM}updated") == "2020-01-01T00:00:00+01:00"
    rss = ET.fromstring(rss_feed(info, [entry]))
    assert rss.findtext("channel/lastBuildDate") == "Tue, 14 Jul 2020 09:12:02 -0700"
    assert rss.findtext("channel/item/pubDate") == "Wed, 01 Jan 2020 00:00:00 +0100"
    assert rss.findtext("channel/item/title") == "<T> & 'x'"


def build_blog(limit: int = 20, build_time: datetime | None = None) -> SiteBuild:
    files = {
        "_config.yml": b"title: Blog\nurl: https://ex.org/\nbaseurl: /b\ntimezone: Asia/Tokyo\n",
        **{
            f"_posts/2020-01-{d:02d}-p{d}.md": f"---\ntitle: P{d}\n---\nbody {d}\n".encode()
            for d in range(1, 6)
        },
    }
    return build_site(MemoryTree(files), RenderOptions(feed_limit=limit, build_time=build_time))


def test_feed_limit_order_links_and_zone() -> None:
    built = build_blog(limit=3)
    entries = atom_entries(built.files["atom.xml"])
    assert [e[0] for e in entries] == ["P5", "P4", "P3"]
    assert entries[0][1] == "https://ex.org/b/2020/01/05/p5.html"
    assert entries[0][2] == "2020-01-05T00:00:00+09:00"
    assert [i[0] for i in rss_items(built.files["rss.xml"])] == ["P5", "P4", "P3"]
    assert built.timezone == "Asia/Tokyo"


def test_feed_time_from_build_time_else_epoch() -> None:
    epoch = ET.fromstring(build_blog().files["atom.xml"])
    assert epoch.findtext(f"{ATOM}updated") == "1970-01-01T09:00:00+09:00"
    later = datetime(2021, 1, 1, tzinfo=UTC)
    atom = ET.fromstring(build_blog(build_time=later).files["atom.xml"])
    assert atom.findtext(f"{ATOM}updated") == "2021-01-01T09:00:00+09:00"


@pytest.fixture(scope="module")
def tvm_build() -> SiteBuild:
    options = RenderOptions(timezone="America/Los_Angeles", build_time=BUILD_TIME)
    return build_site(DirTree(TVM / "source"), options)


@needs_corpus
def test_tvm_feeds_match_published_entries(tvm_build: SiteBuild) -> None:
    published_atom = (TVM / "published" / "atom.xml").read_bytes()
    ours = atom_entries(tvm_build.files["atom.xml"])
    assert len(ours) == 20
    assert ours == atom_entries(published_atom)
    dates = [datetime.fromisoformat(e[2] or "") for e in ours]
    assert dates == sorted(dates, reverse=True)
    published_rss = (TVM / "published" / "rss.xml").read_bytes()
    assert rss_items(tvm_build.files["rss.xml"]) == rss_items(published_rss)


@needs_corpus
def test_tvm_feed_heads(tvm_build: SiteBuild) -> None:
    atom = ET.fromstring(tvm_build.files["atom.xml"])
    assert atom.findtext(f"{ATOM}title") == "TVM"
    assert atom.findtext(f"{ATOM}updated") == "2020-07-14T09:12:02-07:00"
    assert atom.findtext(f"{ATOM}id") == "https://tvm.apache.org"
    rss = ET.fromstring(tvm_build.files["rss.xml"])
    assert rss.findtext("channel/description") == "TVM - "
    assert rss.findtext("channel/pubDate") == "Tue, 14 Jul 2020 09:12:02 -0700"
    assert rss.findtext("channel/ttl") == "60"


@needs_corpus
def test_tvm_feed_content_is_the_post_html(tvm_build: SiteBuild) -> None:
    atom = ET.fromstring(tvm_build.files["atom.xml"])
    content = atom.findtext(f"{ATOM}entry/{ATOM}content") or ""
    assert "Some of the most intriguing applications" in content
    assert '<div class="language-python highlighter-rouge">' in content
    assert "<html" not in content


POSTS = {
    f"_posts/2020-01-{d:02d}-p{d}.md": f"---\ntitle: P{d}\n---\nbody {d}\n".encode()
    for d in range(1, 4)
}
URN = r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def _feeds(files: dict[str, bytes]) -> tuple[ET.Element, ET.Element]:
    built = build_site(MemoryTree(files), RenderOptions(build_time=BUILD_TIME))
    return ET.fromstring(built.files["atom.xml"]), ET.fromstring(built.files["rss.xml"])


def _atom_ids(atom: ET.Element) -> list[str]:
    return [atom.findtext(f"{ATOM}id") or ""] + [
        e.findtext(f"{ATOM}id") or "" for e in atom.iter(f"{ATOM}entry")
    ]


def test_without_url_or_author_the_feeds_are_still_valid() -> None:
    """RFC 4287: an atom:id is an absolute IRI (§4.2.6), a person's name is not empty
    (§3.2.1); RSS 2.0: a guid that is no URL says isPermaLink="false". Jekyll-Bootstrap's
    templates wrote <id></id>, relative entry ids and an empty name and email."""
    files = {"_config.yml": b"title: Tiny\n", **POSTS}
    atom, rss = _feeds(files)
    ids = _atom_ids(atom)
    assert all(re.fullmatch(URN, i) for i in ids), ids
    assert len(set(ids)) == 4
    assert _atom_ids(_feeds(files)[0]) == ids  # the same in every build
    assert _atom_ids(_feeds({**files, "_config.yml": b"title: Other\n"})[0])[1] != ids[1]
    author = atom.find(f"{ATOM}author")
    assert author is not None and [(c.tag, c.text) for c in author] == [(f"{ATOM}name", "Tiny")]
    links = [e.find(f"{ATOM}link").get("href") for e in atom.iter(f"{ATOM}entry")]  # type: ignore[union-attr]
    assert links == ["/2020/01/03/p3.html", "/2020/01/02/p2.html", "/2020/01/01/p1.html"]
    assert rss.findtext("channel/link") == "/"
    guids = list(rss.iter("guid"))
    assert [g.get("isPermaLink") for g in guids] == ["false"] * 3
    assert [g.text for g in guids] == ids[1:]  # an item's guid is its Atom entry's id


def test_without_config_the_feeds_have_ids_and_no_empty_author() -> None:
    atom, _ = _feeds(dict(POSTS))
    assert all(re.fullmatch(URN, i) for i in _atom_ids(atom))
    assert atom.find(f"{ATOM}author") is None  # nothing names one: no empty name


def test_an_author_email_without_a_name_names_the_site() -> None:
    config = b"title: T\nauthor:\n  email: a@t.example.org\n"  # no url
    atom, _ = _feeds({"_config.yml": config, **POSTS})
    author = atom.find(f"{ATOM}author")
    assert author is not None
    assert [(c.tag, c.text) for c in author] == [
        (f"{ATOM}name", "T"),
        (f"{ATOM}email", "a@t.example.org"),
    ]


def test_with_url_an_empty_author_is_what_jekyll_writes() -> None:
    """The TVM site sets url and an empty author.name: its published atom.xml has an empty
    name and email, and so does ours (a site moving to deploybot sees no change there)."""
    config = b"title: T\nurl: https://t.example.org\nauthor:\n  name:\n"
    atom, rss = _feeds({"_config.yml": config, **POSTS})
    author = atom.find(f"{ATOM}author")
    assert author is not None
    assert [(c.tag, c.text) for c in author] == [(f"{ATOM}name", None), (f"{ATOM}email", None)]
    assert _atom_ids(atom)[:2] == [
        "https://t.example.org",
        "https://t.example.org/2020/01/03/p3.html",
    ]
    assert [g.get("isPermaLink") for g in rss.iter("guid")] == [None] * 3


def test_with_url_and_author_the_feeds_are_what_jekyll_writes() -> None:
    config = b"title: Blog\nurl: https://ex.org\nauthor:\n  name: Ann\n  email: a@ex.org\n"
    built = build_site(
        MemoryTree({"_config.yml": config, **POSTS}), RenderOptions(build_time=BUILD_TIME)
    )
    assert built.files["atom.xml"].startswith(
        b'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n\n'
        b" <title>Blog</title>\n"
        b' <link href="https://ex.org/atom.xml" rel="self"/>\n'
        b' <link href="https://ex.org"/>\n'
        b" <updated>2020-07-14T16:12:02+00:00</updated>\n"
        b" <id>https://ex.org</id>\n"
        b" <author>\n   <name>Ann</name>\n   <email>a@ex.org</email>\n </author>\n\n"
        b' <entry>\n   <title>P3</title>\n   <link href="https://ex.org/2020/01/03/p3.html"/>\n'
        b"   <updated>2020-01-03T00:00:00+00:00</updated>\n"
        b"   <id>https://ex.org/2020/01/03/p3.html</id>\n"
    )
    assert b"<guid>https://ex.org/2020/01/03/p3.html</guid>" in built.files["rss.xml"]
    assert b"<link>https://ex.org</link>" in built.files["rss.xml"]
