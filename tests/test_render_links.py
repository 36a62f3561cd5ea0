"""The broken-link check of the render stage: resolving links as a web server serves the tree,
extracting them from pages, and keeping the list in the build cache, incrementally the same as
a full build."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploybot.git.path_rules import is_kept
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.links import check
from deploybot.render.links.extract import PageLinks, page_links, srcset_urls
from deploybot.render.links.report import BrokenLink, LinkReport
from deploybot.render.links.resolve import (
    OUTSIDE,
    SiteAddress,
    candidates,
    target_of,
    targets_for,
)
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink, NeedFullBuild
from deploybot.render.read.source import MemoryTree

ROOT = SiteAddress.of("https://example.org", "")
BLOG = SiteAddress.of("https://Example.org", "/blog/")


def test_targets_of_the_usual_links() -> None:
    page = "2021/01/02/post.html"
    assert target_of("/about/", page, ROOT) == "about/"
    assert target_of("/about", page, ROOT) == "about"
    assert target_of("other.html#part", page, ROOT) == "2021/01/02/other.html"
    assert target_of("../../img/a%20b.png?v=1", page, ROOT) == "2021/img/a b.png"
    assert target_of("../../../../../x.css", page, ROOT) == "x.css"  # clamped at the root
    assert target_of("/", page, ROOT) == ""
    assert target_of("https://example.org/feed.xml", page, ROOT) == "feed.xml"
    assert target_of("https://EXAMPLE.org", page, ROOT) == ""
    assert target_of("https://example.org/blog", page, BLOG) == ""
    assert target_of("//example.org/a//b/./c/", page, ROOT) == "a/b/c/"


def test_links_that_are_not_the_sites_are_left_out() -> None:
    for link in (
        "#top", "?q=1", "", "  ", "https://other.org/a", "mailto:a@example.org",
        "data:image/png;base64,AAAA", "javascript:void(0)", "tel:+1", "//other.org/x",
        "ftp://example.org/a",
    ):  # fmt: skip
        assert target_of(link, "index.html", ROOT) is None, link


def test_baseurl_is_stripped_and_links_outside_it_are_told_apart() -> None:
    assert SiteAddress("example.org", "/blog") == BLOG
    assert target_of("/blog/about/", "index.html", BLOG) == "about/"
    assert target_of("/blog", "index.html", BLOG) == ""
    assert target_of("https://example.org/blog/x.png", "a/b.html", BLOG) == "x.png"
    # another site of the same host: not checked; a root-relative link outside: broken
    assert target_of("https://example.org/other/", "index.html", BLOG) is None
    assert target_of("/blogger/", "index.html", BLOG) == OUTSIDE + "blogger/"
    assert target_of("/about/", "index.html", BLOG) == OUTSIDE + "about/"
    assert target_of("img/a.png", "2021/x.html", BLOG) == "2021/img/a.png"


def test_a_server_serves_folders_by_their_index_and_names_by_html_files() -> None:
    assert candidates("foo/") == ("foo/index.html",)
    assert candidates("") == ("index.html",)
    assert candidates("foo") == ("foo", "foo.html", "foo/index.html")
    assert targets_for("index.html") == ("index.html", "index", "")
    assert targets_for("a/index.html") == ("a/index.html", "a/index", "a/", "a")
    assert targets_for("a.html") == ("a.html", "a")
    assert targets_for("img/x.png") == ("img/x.png",)


segment = st.sampled_from(["a", "b", "index", "index.html", "a.html", "x.png", "b.html.html"])


@given(st.lists(segment, min_size=1, max_size=4), st.booleans(), st.lists(segment, max_size=3))
def test_targets_for_is_the_inverse_of_candidates(
    parts: list[str], folder: bool, other: list[str]
) -> None:
    target = "/".join(parts) + ("/" if folder else "")
    for path in candidates(target):
        assert target in targets_for(path)
    path = "/".join([*other, *parts])
    for served in targets_for(path):
        assert path in candidates(served)


def test_kept_prefixes_follow_the_publish_rule() -> None:
    assert is_kept("docs/a.html", ["docs/"])
    assert is_kept("docs", ["docs"]) and is_kept("docs/x", ["docs"])
    assert not is_kept("docsy/x", ["docs"]) and not is_kept("docs", ["docs/"])


def test_page_links_take_href_src_srcset_and_link_with_lines() -> None:
    html = (
        b"<!DOCTYPE html>\n<html><head>\n<link rel=stylesheet href='/css/main.css'>\n"
        b"<link rel=dns-prefetch href='//fonts.example.com'>\n</head><body>\n"
        b"<p><a href='/about/'>About</a> <a href='#x'>x</a> <a>none</a>\n"
        b"<img src='a.png' srcset='a-1x.png 1x, a-2x.png 2x'>\n"
        b"<script src='https://cdn.example.com/x.js'></script></p>\n</body></html>\n"
    )
    found = page_links(html, "sub/page.html", ROOT)
    rows = [(k.target, k.link, k.line) for k in found.links]
    assert rows == [
        ("css/main.css", "/css/main.css", 3),
        ("about/", "/about/", 6),
        ("sub/a.png", "a.png", 7),
        ("sub/a-1x.png", "a-1x.png", 7),
        ("sub/a-2x.png", "a-2x.png", 7),
    ]
    assert found.dropped == 0


def test_base_href_moves_relative_links_and_caps_bound_a_page() -> None:
    html = b"<html><head><base href='/docs/'></head><body><a href='x.html'>x</a></body></html>"
    assert [k.target for k in page_links(html, "a/b.html", ROOT).links] == ["docs/x.html"]
    many = b"<p>" + b"".join(b"<a href='/p%d'>p</a>" % i for i in range(50)) + b"</p>"
    capped = page_links(many, "index.html", ROOT, max_links=10)
    assert len(capped.links) == 10 and capped.dropped == 40
    assert page_links(b"\xff\xfe not html at all <<<", "x.html", ROOT).links == ()
    assert srcset_urls(" a.png 1x,b.png  2x , ") == ["a.png", "b.png"]


# The check in the engine, full and incremental

T0 = datetime(2022, 1, 1, tzinfo=UTC)
OPTIONS = RenderOptions(timezone="UTC", build_time=T0, check_links=True)
LAYOUT = b"<html><body>\n{{ content }}\n</body></html>\n"


def _site(config: bytes = b"title: T\n", **more: bytes) -> dict[str, bytes]:
    return {
        "_config.yml": config,
        "_layouts/default.html": LAYOUT,
        "_posts/2021-01-01-a.md": b"---\nlayout: default\n---\n"
        b"[b](/b/) [gone](/gone/) ![i](/img/none.png) [f](#top) [e](https://other.org/x) "
        b"[m](mailto:a@example.org) [c](/c) [logo](/img/x.png)\n",
        "b.md": b"---\nlayout: default\npermalink: /b/\n---\n[c](../c.html) [d](/d/)\n",
        "c.html": b"---\nlayout: default\n---\nc\n",
        "img/x.png": b"png",
        **{path.replace("__", "/"): data for path, data in more.items()},
    }


def _full(files: dict[str, bytes], options: RenderOptions = OPTIONS) -> LinkReport:
    report = build_into(MemoryTree(files), options, open_cache(None), MemorySink(), None)
    assert report.links is not None
    return report.links


def test_a_post_linking_to_a_missing_page_and_image_is_listed_exactly() -> None:
    report = _full(_site())
    assert report.listed == (
        BrokenLink("2021/01/01/a.html", "/gone/", 2),
        BrokenLink("2021/01/01/a.html", "/img/none.png", 2),
        BrokenLink("b/index.html", "/d/", 2),
    )
    assert (report.total, report.pages, report.capped) == (3, 2, ())


def test_a_baseurl_site_resolves_its_own_absolute_urls() -> None:
    config = b"title: T\nurl: https://example.org\nbaseurl: /blog\n"
    files = _site(config)
    files["_posts/2021-01-01-a.md"] = (
        b"---\nlayout: default\n---\n[b](/blog/b/) [abs](https://example.org/blog/c) "
        b"[forgot](/b/) [other](https://example.org/elsewhere/)\n"
    )
    assert [k.link for k in _full(files).listed] == ["/b/", "/d/"]


def test_off_parses_nothing_and_reports_nothing() -> None:
    options = RenderOptions(timezone="UTC", build_time=T0)
    report = build_into(MemoryTree(_site()), options, open_cache(None), MemorySink(), None)
    assert report.links is None


def test_kept_paths_are_served() -> None:
    options = RenderOptions(timezone="UTC", build_time=T0, check_links=True, kept=("gone/",))
    assert [k.link for k in _full(_site(), options).listed] == ["/img/none.png", "/d/"]


class _Builds:
    """Successive builds, incremental after the first (full when the engine asks), as the
    pipeline makes them."""

    def __init__(self) -> None:
        self.cache = open_cache(None)
        self.outputs: dict[str, bytes] = {}
        self.last: dict[str, bytes] | None = None
        self.parsed: set[str] = set()

    def build(self, files: dict[str, bytes]) -> LinkReport:
        changed = None
        if self.last is not None:
            changed = {p for p in set(files) | set(self.last) if files.get(p) != self.last.get(p)}
        sink = MemorySink(self.outputs)
        try:
            report = build_into(MemoryTree(files), OPTIONS, self.cache, sink, changed)
        except NeedFullBuild:
            self.cache.rollback()
            sink = MemorySink()
            report = build_into(MemoryTree(files), OPTIONS, self.cache, sink, None)
        self.cache.commit({})
        self.outputs, self.last = sink.files, dict(files)
        assert report.links is not None
        return report.links


def test_deleting_a_linked_page_reports_the_unchanged_page_that_links_to_it() -> None:
    builds = _Builds()
    files = _site()
    builds.build(files)
    del files["c.html"]  # a.html and b/index.html link to it, and neither changes
    report = builds.build(files)
    assert report == _full(files)
    assert BrokenLink("2021/01/01/a.html", "/c", 2) in report.listed
    assert BrokenLink("b/index.html", "../c.html", 2) in report.listed
    files["c.html"] = b"---\n---\nback\n"
    assert builds.build(files) == _full(files) and report.total - 2 == _full(files).total


def test_an_incremental_build_parses_only_the_pages_it_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    builds = _Builds()
    files = _site()
    builds.build(files)
    parsed: list[str] = []

    def counted(data: bytes, page: str, site: SiteAddress) -> PageLinks:
        parsed.append(page)
        return page_links(data, page, site)

    monkeypatch.setattr(check, "page_links", counted)
    files["c.html"] = b'---\nlayout: default\n---\n<a href="/gone/">new</a>\n'
    report = builds.build(files)
    assert parsed == ["c.html"]
    monkeypatch.undo()
    assert report == _full(files)
    assert BrokenLink("c.html", "/gone/", 2) in report.listed


def test_render_workers_parse_their_pages_and_the_report_is_the_serial_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = _site()
    for i in range(8):  # enough sources for the workers to share
        files[f"_posts/2021-02-0{i + 1}-p{i}.md"] = (
            f"---\nlayout: default\n---\n[a](/2021/01/01/a.html) [no](/none{i}/)\n".encode()
        )
    serial_cache, parallel_cache = open_cache(None), open_cache(None)
    serial = build_into(MemoryTree(files), OPTIONS, serial_cache, MemorySink(), None)
    parsed: list[str] = []  # in this process only: a worker's appends stay in the worker

    def counted(data: bytes, page: str, site: SiteAddress) -> PageLinks:
        parsed.append(page)
        return page_links(data, page, site)

    monkeypatch.setattr(check, "page_links", counted)
    options = RenderOptions(**{**OPTIONS.__dict__, "jobs": 2, "parallel_from": 1})
    parallel = build_into(MemoryTree(files), options, parallel_cache, MemorySink(), None)
    assert parsed == []  # every page here is a post or a page: rendered by the workers
    assert parallel.links == serial.links
    assert parallel.links is not None and parallel.links.total == 11
    query = "SELECT * FROM links ORDER BY page, target, link, line"
    rows = parallel_cache.conn.execute(query).fetchall()
    assert rows == serial_cache.conn.execute(query).fetchall()


pages = st.sampled_from(["a.md", "b/index.md", "c.html", "d.md", "e/f.md"])
targets = st.sampled_from(["/a.html", "/a", "/b/", "/b", "c.html", "/d", "/e/f.html", "/z/"])


@given(st.lists(st.tuples(pages, st.none() | st.lists(targets, max_size=3)), max_size=8))
def test_incremental_equals_full_as_pages_and_their_links_come_and_go(
    steps: list[tuple[str, list[str] | None]],
) -> None:
    builds = _Builds()
    files = {"_config.yml": b"title: T\n", "_layouts/default.html": LAYOUT}
    assert builds.build(files) == _full(files)
    for page, links in steps:
        if links is None:
            files.pop(page, None)
        else:
            body = " ".join(f"[x]({t})" for t in links)
            files[page] = f"---\nlayout: default\n---\n{body}\n".encode()
        assert builds.build(files) == _full(files)


def test_a_page_past_the_cap_is_reported_with_what_was_left_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def capped(data: bytes, page: str, site: SiteAddress) -> PageLinks:
        return page_links(data, page, site, max_links=2)

    monkeypatch.setattr(check, "page_links", capped)
    report = _full(_site())
    assert report.capped == (("2021/01/01/a.html", 3),)  # 5 site links, 2 kept
    assert report.listed == (
        BrokenLink("2021/01/01/a.html", "/gone/", 2),  # /img/none.png was past the cap
        BrokenLink("b/index.html", "/d/", 2),
    )
