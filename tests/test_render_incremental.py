"""Incremental builds equal full builds, byte for byte; and they re-make only what a change
reaches (the oracle is :func:`deploybot.render.engine.build.build_site`)."""

from __future__ import annotations

import dataclasses
import sqlite3
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.links.extract import page_links
from deploybot.render.links.report import BrokenLink, LinkReport
from deploybot.render.links.resolve import SiteAddress, candidates, is_page
from deploybot.render.model import RenderOptions, SiteConfig
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import MemoryTree, SourceTree
from deploybot.support.errors import DeploybotError
from tests.incremental_site import (
    ARCHIVE_LAYOUTS,
    T0,
    THEME,
    THEME_MARK,
    Incremental,
    ThemeSplit,
    apply,
    change,
    initial_site,
    layered_of,
    liquid_change,
    liquid_initial_site,
    plugin_change,
    plugin_initial_site,
    post_text,
    tree_of,
)

OPTIONS = RenderOptions(theme=THEME, timezone="UTC", feed_limit=3, build_time=T0)


def _options(
    step: int, typography: bool = True, footnotes: str = "kramdown", cutoff: int | None = None
) -> RenderOptions:
    """``cutoff``: the future cut-off, in hours after the build time (``None``: at it)."""
    when = T0 + timedelta(days=step)
    return RenderOptions(
        theme=THEME,
        timezone="UTC",
        feed_limit=3,
        build_time=when,
        cutoff=None if cutoff is None else when + timedelta(hours=cutoff),
        typography=typography,
        footnotes=footnotes,
        check_links=True,
    )


def _check(inc: Incremental, files: dict[str, bytes], options: RenderOptions) -> None:
    _same_as_full(inc, files, tree_of(files), options)


def _same_as_full(
    inc: Incremental, files: dict[str, bytes], tree: SourceTree, options: RenderOptions
) -> None:
    """The incremental build of ``files`` gives the full build of ``tree``: the same files
    and warnings, or, where the full build stops (an include that includes itself through a
    symlink), the same error, with the incremental state left at the last build."""
    try:
        full = build_site(tree, options)
    except DeploybotError as stop:
        before = (dict(inc.outputs), inc.last)
        with pytest.raises(type(stop)) as stopped:
            inc.build(files, options)
        assert str(stopped.value) == str(stop)
        assert (inc.outputs, inc.last) == before
        return
    report = inc.build(files, options)
    assert inc.outputs == dict(full.files)
    assert report.warnings == full.warnings
    if options.check_links:
        assert report.links == broken_links_of(dict(full.files), load_config(tree, "UTC"))


def broken_links_of(files: dict[str, bytes], config: SiteConfig) -> LinkReport:
    """The oracle of the link check: every page of a full build's ``files`` parsed, each link
    looked up in ``files`` as a server would (no cache, no incremental bookkeeping)."""
    site = SiteAddress.of(config.url, config.baseurl)
    broken = []
    for page in sorted(files):
        if is_page(page):
            for link in page_links(files[page], page, site).links:
                if not any(c in files for c in candidates(link.target)):
                    broken.append(BrokenLink(page, link.link, link.line))
    broken.sort(key=lambda k: (k.page, -1 if k.line is None else k.line))
    return LinkReport(tuple(broken), len(broken), len({k.page for k in broken}))


@given(st.data())
def test_incremental_equals_full_for_random_commit_sequences(data: st.DataObject) -> None:
    files = initial_site() | {"hard-links.md": HARD_LINKS}
    typography = data.draw(st.booleans(), label="typography")
    footnotes = data.draw(st.sampled_from(["kramdown", "mistune", "none"]), label="footnotes")
    inc = Incremental(open_cache(None), OPTIONS, {})
    _check(inc, files, _options(0, typography, footnotes))
    steps = data.draw(st.integers(1, 12), label="commits")
    for step in range(1, steps + 1):
        files = apply(files, data.draw(change(files), label=f"commit {step}"))
        same_time = data.draw(st.integers(0, 4)) == 0
        when = step - 1 if same_time else step
        cutoff = data.draw(st.one_of(st.none(), st.integers(-100, 900)), label="cut-off")
        _check(inc, files, _options(when, typography, footnotes, cutoff))


HARD_LINKS = (
    b"---\ntitle: Links\n---\n[1](/2021/01/post-1) [0](2021/01/post-0.html) [3](/2021/01/post-3/)"
    b" [logo](/img/logo.png) [gone](/nope/) [about](/about) [tags](tags.html#a)\n"
)
"""A page linking by hand to posts, pages and a static file, which later commits may move or
delete: its links break and mend with no change of its own (the link check's part of the
harness)."""


# The rules, one by one


def _site() -> tuple[Incremental, dict[str, bytes]]:
    files = initial_site()
    inc = Incremental(open_cache(None), OPTIONS, {})
    inc.build(files, OPTIONS)
    return inc, files


POST = "_posts/2021-01-02-post-1.md"
POST_OUT = "2021/01/post-1.html"
OTHER = "_posts/2021-01-01-post-0.md"
OTHER_OUT = "2021/01/post-0.html"
POST3 = "news/_posts/2021-01-05-post-3.md"
POST3_OUT = "2021/01/post-3.html"


def test_body_edit_touches_the_post_and_the_feeds_only() -> None:
    inc, files = _site()
    files = apply(files, {POST3: files[POST3].replace(b"more", b"more, after the excerpt")})
    report = inc.build(files, OPTIONS)
    assert not report.full
    assert report.rendered == {POST3, ":feeds"}
    assert inc.written == {POST3_OUT, "atom.xml", "rss.xml"}


def test_excerpt_edit_remakes_the_listing_that_shows_it() -> None:
    inc, files = _site()
    files = apply(files, {POST: files[POST].replace(b"x = 1", b"x = 2")})
    report = inc.build(files, OPTIONS)
    assert report.rendered == {POST, ":feeds", ":theme-index"}
    assert inc.written == {POST_OUT, "atom.xml", "rss.xml", "index.html"}


def test_title_edit_also_remakes_the_listing() -> None:
    inc, files = _site()
    files = apply(files, {POST: files[POST].replace(b"title: Second", b"title: Deux")})
    report = inc.build(files, OPTIONS)
    # the index and the tags page list titles; post-0 shows its next post's title, while
    # post-3 shows only its previous post's URL, which did not change
    assert report.rendered == {POST, ":feeds", ":theme-index", "tags.md", OTHER}
    assert inc.written == {POST_OUT, OTHER_OUT, "atom.xml", "rss.xml", "index.html", "tags.html"}


def test_include_edit_remakes_exactly_its_users() -> None:
    inc, files = _site()
    nav = f"{THEME}/nav.html"
    files = apply(files, {nav: b"<nav>new</nav>\n"})
    report = inc.build(files, OPTIONS)
    assert not report.full
    users = {POST, OTHER, POST3, "about.md", "tags.md", ":theme-index", ":feeds"}
    assert report.rendered == users
    outputs = {POST_OUT, OTHER_OUT, POST3_OUT, "about.html", "tags.html", "index.html"}
    assert inc.written == outputs


def test_unused_layout_edit_remakes_nothing_but_feeds() -> None:
    inc, files = _site()
    files = apply(files, {f"{THEME}/plain.html": b"<section>{{ content }}</section>\n"})
    report = inc.build(files, OPTIONS)
    assert report.rendered == {":feeds"}
    assert inc.written == frozenset()


def test_deleted_post_disappears_from_everything_that_listed_it() -> None:
    inc, files = _site()
    files = apply(files, {POST: None})
    report = inc.build(files, OPTIONS)
    assert not report.full
    assert POST_OUT not in inc.outputs
    assert b"post-1" not in inc.outputs["index.html"]
    assert b"Second" not in inc.outputs["atom.xml"]
    assert inc.outputs == dict(build_site(MemoryTree(files), OPTIONS).files)


def test_config_change_is_a_full_build() -> None:
    inc, files = _site()
    files = apply(files, {"_config.yml": files["_config.yml"] + b"description: d\n"})
    assert inc.build(files, OPTIONS).full


def test_future_post_appears_when_its_date_passes() -> None:
    inc, files = _site()
    later = "_posts/2021-01-20-post-7.md"
    files = apply(files, {later: b"---\ntitle: Later\n---\nsoon\n"})
    inc.build(files, OPTIONS)
    assert "2021/01/post-7.html" not in inc.outputs
    options = RenderOptions(
        theme=THEME, timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=20)
    )
    report = inc.build(files, options)
    assert not report.full
    assert "2021/01/post-7.html" in inc.outputs
    assert inc.outputs == dict(build_site(MemoryTree(files), options).files)


def test_corrupt_cache_gives_the_same_result(tmp_path: Path) -> None:
    files = initial_site()
    cache = open_cache(tmp_path)
    inc = Incremental(cache, OPTIONS, {})
    inc.build(files, OPTIONS)
    cache.close()
    with sqlite3.connect(tmp_path / "build.sqlite") as conn:
        conn.execute("UPDATE sources SET model = x'00ff'")
        conn.execute("UPDATE contents SET content = x'0102'")
    inc.cache = open_cache(tmp_path)
    files = apply(files, {POST: files[POST] + b"more\n"})
    report = inc.build(files, OPTIONS)
    assert report.full
    assert inc.outputs == dict(build_site(MemoryTree(files), OPTIONS).files)
    inc.cache.close()
    (tmp_path / "build.sqlite").write_bytes(b"not a database at all" * 100)
    cache = open_cache(tmp_path)
    assert cache.meta("options") is None
    cache.close()


def test_cache_from_another_version_is_ignored(tmp_path: Path) -> None:
    files = initial_site()
    inc = Incremental(open_cache(tmp_path), OPTIONS, {})
    inc.build(files, OPTIONS)
    inc.cache.close()
    with sqlite3.connect(tmp_path / "build.sqlite") as conn:
        conn.execute("UPDATE meta SET value = 'other' WHERE key = 'version'")
    cache = open_cache(tmp_path)
    assert cache.meta("options") is None
    cache.close()


def test_changed_paths_may_be_any_iterable() -> None:
    # ``changed`` was read twice (the config check, then the plan); an iterator was used up
    # by the first read and the edit went unbuilt.
    inc, files = _site()
    files = apply(files, {POST3: files[POST3].replace(b"more", b"more, edited")})
    sink = MemorySink(inc.outputs)
    tree = MemoryTree(files)
    report = build_into(tree, OPTIONS, inc.cache, sink, iter([POST3]))
    assert not report.full
    assert POST3 in report.rendered
    assert sink.files == dict(build_site(tree, OPTIONS).files)


LIQUID_OPTIONS = RenderOptions(timezone="UTC", feed_limit=3, build_time=T0)


@given(st.data())
def test_incremental_equals_full_with_the_sites_own_liquid_theme(data: st.DataObject) -> None:
    files = liquid_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    _check(inc, files, LIQUID_OPTIONS)
    steps = data.draw(st.integers(1, 10), label="commits")
    for step in range(1, steps + 1):
        files = apply(files, data.draw(liquid_change(files), label=f"commit {step}"))
        options = RenderOptions(timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=step))
        _check(inc, files, options)


@given(st.data())
def test_incremental_equals_full_with_a_jekyll_theme_under_the_site(data: st.DataObject) -> None:
    """The Liquid site with its layouts, includes, data and assets split between the site
    and a Jekyll theme (some in both, the site's winning); each commit may also move the
    theme (a layout, include or data file edited, added or removed there), which the
    changed paths (the site's) do not name."""
    salt = data.draw(st.integers(0, 5), label="split")
    split = ThemeSplit(
        to_theme=lambda p: (zlib.crc32(p.encode()) + salt) % 3 != 0,
        site_drops=lambda p: (zlib.crc32(p.encode()) + salt) % 2 == 0,
    )
    files = liquid_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {}, split=split)
    _check_layered(inc, files, LIQUID_OPTIONS)
    steps = data.draw(st.integers(1, 8), label="commits")
    for step in range(1, steps + 1):
        files = apply(files, data.draw(liquid_change(files), label=f"commit {step}"))
        options = RenderOptions(timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=step))
        _check_layered(inc, files, options)


def _check_layered(inc: Incremental, files: dict[str, bytes], options: RenderOptions) -> None:
    assert inc.split is not None
    _same_as_full(inc, files, layered_of(files, inc.split), options)


def test_a_theme_include_edit_remakes_exactly_its_users_incrementally() -> None:
    theme = ("_includes/", "_layouts/")
    split = ThemeSplit(to_theme=lambda p: p.startswith(theme), site_drops=lambda p: True)
    files = liquid_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {}, split=split)
    inc.build(files, LIQUID_OPTIONS)
    assert THEME_MARK in inc.outputs["about.html"]
    files = apply(files, {"_includes/note.html": b"<aside>moved</aside>"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert b"moved" in inc.outputs["about.html"]
    assert "about.md" in report.rendered
    assert "_posts/2021-01-01-post-0.md" not in report.rendered
    assert inc.outputs == dict(build_site(layered_of(files, split), LIQUID_OPTIONS).files)


def test_data_edit_remakes_the_readers_of_site_data() -> None:
    files = liquid_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    files = apply(files, {"_data/team.yml": b"- name: cy\n- name: bob\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert b"<p>cy</p>" in inc.outputs["2021/01/post-1.html"]
    # the nav include shows site.data on every page: all are re-made, and only
    # post-1's output changed
    assert "_posts/2021-01-01-post-0.md" in report.rendered
    assert inc.written == {"2021/01/post-1.html"}
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_new_layout_file_remakes_the_pages_that_asked_for_it() -> None:
    files = apply(liquid_initial_site(), {"about.md": b"---\ntitle: A\nlayout: extra\n---\nx\n"})
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["about.html"] == b"<p>x</p>\n"
    files = apply(files, {"_layouts/extra.html": b"<div>{{ content }}</div>\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert report.rendered == {"about.md", ":feeds"}
    assert inc.outputs["about.html"] == b"<div><p>x</p>\n</div>\n"


SASS_FILES = {
    "_sass/_colors.scss": b"$link: #036;\n",
    "_sass/_base.scss": b"body { margin: 0; }\n",
    "assets/main.scss": b'---\n---\n@import "colors", "base";\na { color: $link; }\n',
    "assets/other.scss": b'---\n---\n@import "base";\n.other { x: y; }\n',
}


def _sass_site() -> tuple[Incremental, dict[str, bytes]]:
    files = {**initial_site(), **SASS_FILES}
    inc = Incremental(open_cache(None), OPTIONS, {})
    inc.build(files, OPTIONS)
    return inc, files


def test_partial_edit_remakes_exactly_the_stylesheets_that_import_it() -> None:
    inc, files = _sass_site()
    files = apply(files, {"_sass/_colors.scss": b"$link: #c00;\n"})
    report = inc.build(files, OPTIONS)
    assert not report.full
    assert report.rendered == {"assets/main.scss", ":feeds"}  # the feeds: every build
    assert inc.written == {"assets/main.css", "assets/main.css.map"}
    assert b"color: #c00;" in inc.outputs["assets/main.css"]
    _check(inc, files, OPTIONS)


def test_partial_edit_remakes_the_collection_documents_that_import_it() -> None:
    """A Sass document of a collection records its imports as a page does: an edited
    partial remakes the page and the documents importing it, and no other."""
    docs = {
        "_config.yml": b"collections:\n  styles:\n    output: true\n",
        "_styles/a.scss": b'---\n---\n@import "colors";\n.a { color: $link; }\n',
        "_styles/b.sass": b'---\n---\n@import "colors"\n.b\n  color: $link\n',
        "_styles/c.scss": b'---\n---\n@import "base";\n',
    }
    files = {**initial_site(), **SASS_FILES, **docs}
    inc = Incremental(open_cache(None), OPTIONS, {})
    inc.build(files, OPTIONS)
    assert inc.outputs["styles/b.css"] == b".b { color: #036; }\n"
    files = apply(files, {"_sass/_colors.scss": b"$link: #c00;\n"})
    report = inc.build(files, OPTIONS)
    assert not report.full
    assert report.rendered == {"assets/main.scss", "_styles/a.scss", "_styles/b.sass", ":feeds"}
    assert inc.outputs["styles/a.css"] == b".a { color: #c00; }\n"
    assert inc.outputs["styles/b.css"] == b".b { color: #c00; }\n"
    _check(inc, files, OPTIONS)


def test_partial_edit_remakes_a_sass_post_as_a_full_build_makes_it() -> None:
    post = "_posts/2021-01-03-colours.scss"
    files = {
        **initial_site(),
        **SASS_FILES,
        post: b'---\n---\n@import "colors";\n.p { c: $link; }\n',
    }
    inc = Incremental(open_cache(None), OPTIONS, {})
    inc.build(files, OPTIONS)
    assert inc.outputs["2021/01/colours.css"] == b".p { c: #036; }\n"
    files = apply(files, {"_sass/_colors.scss": b"$link: #c00;\n"})
    report = inc.build(files, OPTIONS)
    assert not report.full and {post, "assets/main.scss"} <= report.rendered
    assert inc.outputs["2021/01/colours.css"] == b".p { c: #c00; }\n"
    _check(inc, files, OPTIONS)


def test_a_new_file_that_an_import_would_find_first_remakes_the_stylesheet() -> None:
    """LibSass looks in the stylesheet's folder (the root, for Jekyll's converter) before
    the load path: a ``_base.scss`` added there is what ``@import "base"`` reads now."""
    inc, files = _sass_site()
    files = apply(files, {"_base.scss": b"body { margin: 1px; }\n"})
    report = inc.build(files, OPTIONS)
    assert report.rendered == {"assets/main.scss", "assets/other.scss", ":feeds"}
    assert b"margin: 1px;" in inc.outputs["assets/other.css"]
    _check(inc, files, OPTIONS)


CONTENT_FEED = (
    b"---\n---\n{% for p in site.posts %}<d>{{ p.content | xml_escape }}</d>{% endfor %}\n"
)
SIZES = b"{% for p in site.posts %}[{{ p.content | size }}]{% endfor %}"


def _content_site() -> tuple[Incremental, dict[str, bytes]]:
    """The Liquid site with a feed printing every post's rendered content, and post-0
    printing the size of each post's content (the newer ones' raw bodies, its own too)."""
    files = liquid_initial_site()
    post0 = "_posts/2021-01-01-post-0.md"
    files = apply(files, {"feed.xml": CONTENT_FEED, post0: files[post0] + SIZES + b"\n"})
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    return inc, files


def test_a_content_reader_is_remade_when_that_body_changes() -> None:
    inc, files = _content_site()
    post3 = "_posts/2021-01-05-post-3.md"
    files = apply(files, {post3: files[post3].replace(b"more", b"more *and more*")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    # the feed shows post-3 rendered, post-0 shows the size of its raw body
    assert report.rendered == {post3, "feed.xml", "_posts/2021-01-01-post-0.md", ":feeds"}
    assert b"&lt;em&gt;and more&lt;/em&gt;" in inc.outputs["feed.xml"]
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_content_reader_follows_what_the_content_was_made_from() -> None:
    # post-1 prints site.data.team; the feed prints post-1's content, not site.data
    inc, files = _content_site()
    files = apply(files, {"_data/team.yml": b"- name: cy\n- name: bob\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert "feed.xml" in report.rendered
    assert b"&lt;p&gt;cy&lt;/p&gt;" in inc.outputs["feed.xml"]
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_content_reader_is_not_remade_for_what_it_does_not_show() -> None:
    inc, files = _content_site()
    post3 = "_posts/2021-01-05-post-3.md"
    files = apply(files, {post3: files[post3].replace(b"title: Third", b"title: Trois")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    # post-1 shows its next post's title, the paginated index the titles; the feed and
    # post-0 show no title of post-3
    assert report.rendered == {post3, "_posts/2021-01-02-post-1.md", "index.html", ":feeds"}
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


OUTPUTS = (
    b"{% for p in site.posts %}<o>{{ p.output | strip_html | strip_newlines }}</o>{% endfor %}"
)
PAGE_CONTENTS = (
    b"{% for p in site.pages %}<c>{{ p.name }}: {{ p.content | strip_html }}</c>{% endfor %}"
)
LIQUID_POST0, LIQUID_POST1, LIQUID_POST3 = (
    "_posts/2021-01-01-post-0.md",
    "_posts/2021-01-02-post-1.md",
    "_posts/2021-01-05-post-3.md",
)


def _listed_output_rows(inc: Incremental) -> list[str]:
    rows = inc.cache.conn.execute("SELECT path FROM listed_outputs ORDER BY path").fetchall()
    return [str(path) for (path,) in rows]


def _output_site() -> tuple[Incremental, dict[str, bytes]]:
    """The Liquid site with post-1 printing the text of every post's output (post-0's
    whole output, nil for itself and post-3), and ``more.md`` every page's content (those
    before it by name rendered, itself and ``zz.md`` raw)."""
    files = liquid_initial_site()
    files = apply(
        files,
        {
            LIQUID_POST1: files[LIQUID_POST1] + OUTPUTS + b"\n",
            "more.md": b"---\nlayout: bare\n---\n" + PAGE_CONTENTS + b"\n",
            "zz.md": b"---\n---\nLast *page*\n",
        },
    )
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    _check(inc, files, LIQUID_OPTIONS)
    return inc, files


def test_a_site_that_reads_no_output_keeps_none_in_the_cache() -> None:
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    _check(inc, liquid_initial_site(), LIQUID_OPTIONS)
    assert _listed_output_rows(inc) == []


def test_an_output_reader_follows_the_output_it_shows() -> None:
    inc, files = _output_site()
    assert _listed_output_rows(inc) == [LIQUID_POST0]  # the only output post-1 sees rendered
    assert b"<o>First | Gen" in inc.outputs["2021/01/post-1.html"]
    # post-0's output changes with its title: post-1 is re-made; post-3 (after post-1)
    # shows post-1's content, not its output, so it is not
    files = apply(
        files, {LIQUID_POST0: files[LIQUID_POST0].replace(b"title: First", b"title: Premier")}
    )
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert LIQUID_POST1 in report.rendered
    assert b"<o>Premier | Gen" in inc.outputs["2021/01/post-1.html"]
    _check(inc, files, LIQUID_OPTIONS)


def test_an_output_reader_remade_alone_reads_the_cached_output() -> None:
    inc, files = _output_site()
    # a marked copy of post-0's output in the cache: post-1, re-made alone, shows it (so
    # post-0 was not rendered again for it)
    marked = zlib.compress(b"<p>from the cache</p>")
    inc.cache.conn.execute("UPDATE listed_outputs SET output = ?", (marked,))
    files = apply(files, {LIQUID_POST1: files[LIQUID_POST1].replace(b"<o>", b"<o class=x>")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert report.rendered == {LIQUID_POST1, "index.html", ":feeds"}  # the index: its excerpt
    assert b'<o class="x">from the cache</o>' in inc.outputs["2021/01/post-1.html"]


def test_a_post_moving_before_its_reader_shows_it_its_output() -> None:
    inc, files = _output_site()
    moved = files[LIQUID_POST3].replace(b"title: Third", b"title: Third\ndate: 2020-12-31")
    _check(inc, apply(files, {LIQUID_POST3: moved}), LIQUID_OPTIONS)
    assert b"<o>Third | Gen" in inc.outputs["2021/01/post-1.html"]
    _check(inc, files, LIQUID_OPTIONS)  # and back after it: nil again
    assert b"<o>Third | Gen" not in inc.outputs["2021/01/post-1.html"]


def test_a_page_content_reader_follows_the_pages_before_and_after_it() -> None:
    inc, files = _output_site()
    assert b"<c>about.md: About" in inc.outputs["more.html"]  # before more.md: rendered
    assert b"<c>zz.md: Last *page*" in inc.outputs["more.html"]  # after it: raw
    files = apply(files, {"about.md": files["about.md"].replace(b"About ", b"Over ")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert "more.md" in report.rendered
    assert b"<c>about.md: Over" in inc.outputs["more.html"]
    _check(inc, files, LIQUID_OPTIONS)
    files = apply(files, {"zz.md": files["zz.md"].replace(b"Last", b"Final")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert "more.md" in report.rendered
    assert b"<c>zz.md: Final *page*" in inc.outputs["more.html"]
    _check(inc, files, LIQUID_OPTIONS)


def test_every_reader_of_an_unwritten_document_depends_on_what_its_render_read() -> None:
    """A document of an ``output: false`` collection is rendered inside its reader's render
    (once per build): the second reader, shown the same render, depends on the include and
    the layout it read too (it kept the old text)."""
    files = {
        "_config.yml": b"collections:\n  notes: {}\n",
        "_layouts/default.html": b"<html>{{ content }}</html>",
        "_layouts/note.html": b"<note>{{ content }}</note>",
        "_includes/bit.html": b"<b>one</b>",
        "_notes/x.md": b"---\nlayout: note\n---\nX {% include bit.html %}\n",
        "a.md": b"---\nlayout: default\n---\n{% for n in site.notes %}[{{ n.content }}|"
        b"{{ n.output }}]{% endfor %}\n",
    }
    files["b.md"] = files["a.md"]
    options = RenderOptions(timezone="UTC", build_time=T0)
    inc = Incremental(open_cache(None), options, {})
    _check(inc, files, options)
    for step in (
        {"_includes/bit.html": b"<b>two</b>"},
        {"_layouts/note.html": b"<n2>{{ content }}</n2>"},
    ):
        files = apply(files, step)
        _check(inc, files, options)
        assert inc.report is not None and {"a.md", "b.md"} <= inc.report.rendered
    assert b"<n2>&lt;p&gt;X <b>two</b>" in inc.outputs["b.html"]


@given(st.data())
def test_incremental_equals_full_with_plugins(data: st.DataObject) -> None:
    """jekyll-seo-tag, jekyll-feed (with its settings), jekyll-sitemap and jekyll-paginate:
    posts, pages, collection documents, ``site.data.authors``, static files and source
    files at the generated paths changing (the build time moving with each commit)."""
    files = plugin_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    _check(inc, files, LIQUID_OPTIONS)
    steps = data.draw(st.integers(1, 10), label="commits")
    for step in range(1, steps + 1):
        files = apply(files, data.draw(plugin_change(files), label=f"commit {step}"))
        options = RenderOptions(timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=step))
        _check(inc, files, options)


def test_a_post_edit_reaches_the_plugin_feed_and_its_own_seo_tags() -> None:
    files = plugin_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    post = "_posts/2021-01-02-post-1.md"
    text = post_text("Second", "Deux", "description: Described\n")
    files = apply(files, {post: text.replace(b"layout: post", b"layout: default")})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert b"<![CDATA[<p>Deux</p>]]>" in inc.outputs["feed.xml"]
    assert b'<meta name="description" content="Described" />' in inc.outputs["2021/01/post-1.html"]
    assert ":plugin:jekyll-feed" in report.rendered
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_the_sitemap_follows_a_new_page_and_leaves_a_source_robots_txt() -> None:
    files = plugin_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["robots.txt"] == b"Sitemap: https://gen.example.org/sitemap.xml\n"
    files = apply(files, {"more.md": b"---\ntitle: More\n---\nx\n", "robots.txt": b"mine\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert b"<loc>https://gen.example.org/more</loc>" in inc.outputs["sitemap.xml"]
    assert inc.outputs["robots.txt"] == b"mine\n"
    files = apply(files, {"robots.txt": None})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["robots.txt"] == b"Sitemap: https://gen.example.org/sitemap.xml\n"
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_archives_follow_posts_and_their_layout() -> None:
    """jekyll-archives: a new post's tag gets its archive, listed in the sitemap, and its
    year's archive lists it; a tag added to a post reaches the sitemap; the archive layout
    going leaves the archives empty with Jekyll's warning, and coming
    back remakes them; each build as the full one."""
    files = plugin_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    _check(inc, files, LIQUID_OPTIONS)
    assert inc.outputs["tag/alpha/index.html"].count(b"Second") == 1
    post = post_text("Third", "Three", "tags: [Gamma Ray]\n").replace(
        b"layout: post", b"layout: default"
    )
    files = apply(files, {"_posts/2021-01-05-post-2.md": post})
    _check(inc, files, LIQUID_OPTIONS)
    assert b"Third /2021/01/post-2" in inc.outputs["tag/gamma-ray/index.html"]
    assert b"Third" in inc.outputs["2021/index.html"]
    assert b"<loc>https://gen.example.org/tag/gamma-ray/</loc>" in inc.outputs["sitemap.xml"]
    first = post_text("First", "Hello", "tags: [delta]\n").replace(
        b"layout: post", b"layout: default"
    )
    files = apply(files, {"_posts/2021-01-01-post-0.md": first})  # a tag added: the sitemap
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full and ":plugin:jekyll-sitemap" in report.rendered
    assert b"<loc>https://gen.example.org/tag/delta/</loc>" in inc.outputs["sitemap.xml"]
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)
    files = apply(files, {"_layouts/archive.html": None})
    _check(inc, files, LIQUID_OPTIONS)
    assert inc.outputs["tag/gamma-ray/index.html"] == b""
    files = apply(files, {"_layouts/archive.html": ARCHIVE_LAYOUTS[0]})
    _check(inc, files, LIQUID_OPTIONS)
    assert b"tag Gamma Ray" in inc.outputs["tag/gamma-ray/index.html"]


def test_redirects_follow_their_documents() -> None:
    files = plugin_initial_site()
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["redirects.json"] == b"{}"
    about = b"---\ntitle: About\nlayout: default\nredirect_from: /old/\n---\nAbout us\n"
    files = apply(files, {"about.md": about})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    target = b"https://gen.example.org/about"
    assert target in inc.outputs["old/index.html"]
    assert inc.outputs["redirects.json"] == b'{"/old/":"' + target + b'"}'
    files = apply(files, {"_layouts/redirect.html": b"<p>{{ page.redirect.to }}</p>\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert [w.path for w in report.warnings] == ["about.md"]
    files = apply(files, {"about.md": about.replace(b"redirect_from: /old/\n", b"")})
    inc.build(files, LIQUID_OPTIONS)
    assert "old/index.html" not in inc.outputs
    assert inc.outputs["redirects.json"] == b"{}"
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_title_from_a_heading_reaches_the_listings_of_site_pages() -> None:
    config = b"plugins: [jekyll-titles-from-headings]\n"
    layout = b"<title>{{ page.title }}</title>{% for p in site.pages %}[{{ p.title }}]{% endfor %}"
    files = {
        "_config.yml": config,
        "_layouts/default.html": layout,
        "a.md": b"---\nlayout: default\n---\n# Alpha\n",
        "b.md": b"---\nlayout: default\n---\nb\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["b.html"] == b"<title></title>[Alpha][]"
    files = apply(files, {"a.md": b"---\nlayout: default\n---\n# Beta\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert inc.outputs["b.html"] == b"<title></title>[Beta][]"
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_new_post_layout_reaches_the_posts_without_a_layout() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-default-layout]\n",
        "_layouts/default.html": b"<default>{{ content }}</default>",
        "_posts/2021-01-01-a.md": b"---\ntitle: A\n---\nA\n",
        "b.md": b"---\ntitle: B\n---\nB\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["2021/01/01/a.html"] == b"<default><p>A</p>\n</default>"
    files = apply(files, {"_layouts/post.html": b"<post>{{ content }}</post>"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert inc.outputs["2021/01/01/a.html"] == b"<post><p>A</p>\n</post>"
    assert "b.md" not in report.rendered
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_related_posts_follow_the_newest_posts() -> None:
    """``site.related_posts`` (the newest posts but the one rendered) records the post
    order: a new post reaches the posts that show it, not the pages; a page reads nil."""
    related = b"{% for p in site.related_posts %}{{ p.title }};{% endfor %}"
    files = {
        "_config.yml": b"title: T\n",
        "_layouts/unused.html": b"{{ content }}",
        "_posts/2021-01-01-a.md": b"---\ntitle: A\n---\n" + related,
        "_posts/2021-01-02-b.md": b"---\ntitle: B\n---\n" + related,
        "page.md": b"---\n---\n[" + related + b"]",
        "plain.md": b"---\n---\nplain",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["2021/01/01/a.html"] == b"<p>B;</p>\n"
    assert inc.outputs["page.html"] == b"<p>[]</p>\n"
    files = apply(files, {"_posts/2021-01-03-c.md": b"---\ntitle: C\n---\nC\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert inc.outputs["2021/01/01/a.html"] == b"<p>C;B;</p>\n"
    assert inc.outputs["2021/01/02/b.html"] == b"<p>C;A;</p>\n"
    assert "plain.md" not in report.rendered
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_relative_link_follows_its_targets_url() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-relative-links]\n",
        "_layouts/default.html": b"{{ content }}",
        "a.md": b"---\nlayout: default\n---\n[b](b.md)\n",
        "b.md": b"---\nlayout: default\n---\nb\n",
        "c.md": b"---\nlayout: default\n---\nc\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["a.html"] == b'<p><a href="/b.html">b</a></p>\n'
    files = apply(files, {"b.md": b"---\nlayout: default\npermalink: /bee/\n---\nb\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert inc.outputs["a.html"] == b'<p><a href="/bee/">b</a></p>\n'
    assert "c.md" not in report.rendered
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_document_crossing_the_cut_off_enters_the_sitemap() -> None:
    talk = b"---\ntitle: Panel\nlayout: default\ndate: 2021-01-20\n---\nP\n"
    files = {**plugin_initial_site(), "_talks/panel.md": talk}
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b"talks/panel" not in inc.outputs["sitemap.xml"]
    later = RenderOptions(timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=10))
    report = inc.build(files, later)
    assert not report.full
    assert b"<loc>https://gen.example.org/talks/panel</loc>" in inc.outputs["sitemap.xml"]
    assert inc.outputs == dict(build_site(MemoryTree(files), later).files)


def test_an_include_that_includes_its_own_post_stops_both_builds_alike() -> None:
    """A symlinked include whose target is the post that includes it nests without end:
    the full build stops (as Jekyll's "Nesting too deep"), the incremental one stops with
    the same error and publishes nothing, and the next commit, which breaks the loop,
    builds as a full build does (found by the random commit sequences)."""
    inc, files = _site()
    looped = dict(files)
    looped["_includes/linked.html"] = f"../{POST}".encode()
    looped[POST] = files[POST] + b"\n{% include linked.html %}\n"
    with pytest.raises(DeploybotError, match="nest deeper than 50"):
        build_site(tree_of(looped), OPTIONS)
    _check(inc, looped, OPTIONS)
    del looped["_includes/linked.html"]
    _check(inc, looped, OPTIONS)


def test_pages_without_front_matter_mentions_and_emoji_follow_their_sources() -> None:
    """jekyll-optional-front-matter's pages (and their copied originals) come, change and
    go with their files; jekyll-mentions' and jemoji's rewriting follows the outputs."""
    files = {
        "_config.yml": b"plugins: [jekyll-optional-front-matter, jekyll-mentions, jemoji]\n",
        "_layouts/default.html": b"<body>{{ content }}</body>",
        "a.md": b"Hi @alice :+1:\n",
        "b.md": b"---\nlayout: default\n---\nb\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b'class="user-mention">@alice</a>' in inc.outputs["a.html"]
    assert inc.outputs["a.md"] == files["a.md"]
    for commit in (
        {"a.md": b"Bye @bob :tada:\n", "c.markdown": b"New @carol\n"},
        {"a.md": b"---\nlayout: default\n---\nnow with front matter @dan\n"},
        {"c.markdown": None},
    ):
        files = apply(files, commit)
        report = inc.build(files, LIQUID_OPTIONS)
        assert not report.full
        assert "b.md" not in report.rendered
        assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)
    assert "a.md" not in inc.outputs and "c.html" not in inc.outputs


def test_a_readme_index_follows_the_indexes_of_its_folder() -> None:
    """jekyll-readme-index: a README is its folder's index until the folder gets one (a
    page, a static file, another page's permalink), and again once that goes; with
    ``with_frontmatter``, one made the index of ``/deep/er/`` moves to ``/deep/`` while that
    has none; a README gaining front matter."""
    files = {
        "_config.yml": b"plugins: [jekyll-readme-index]\nreadme_index:\n  with_frontmatter: true\n",
        "_layouts/default.html": b"{{ content }}",
        "docs/README.md": b"Readme\n",
        "deep/er/README.md": b"Deep\n",
        "other.md": b"---\n---\nother\n",
        "index.md": b"---\n---\nhome\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert inc.outputs["docs/index.html"] == b"<p>Readme</p>\n"
    assert "deep/index.html" in inc.outputs
    for commit in (
        {"docs/README.md": b"Edited\n"},
        {"docs/index.html": b"<p>own</p>\n"},
        {"docs/index.html": None, "other.md": b"---\npermalink: /docs/\n---\nother\n"},
        {"other.md": b"---\n---\nother\n", "deep/index.md": b"---\n---\ndeep index\n"},
        {"deep/index.md": None, "docs/README.md": b"---\ntitle: T\n---\nfm\n"},
        {"docs/README.md": None},
    ):
        files = apply(files, commit)
        report = inc.build(files, LIQUID_OPTIONS)
        assert not report.full
        assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files), commit
    assert inc.outputs["deep/index.html"] == b"<p>Deep</p>\n"


_README_PLUGINS = (
    b"plugins: [jekyll-optional-front-matter, jekyll-readme-index, jekyll-mentions, jemoji]\n"
    b"defaults: [{scope: {path: ''}, values: {layout: default}}]\n"
)
_README_SETTINGS = [b"", b"readme_index:\n  with_frontmatter: true\n"]
_README_BODIES = [b"Hi @ann :tada:\n", b"plain\n", b"---\ntitle: T\n---\nfm @bo\n", b"<p>x</p>\n"]
_README_PATHS = [
    "README.md",
    "a/README.md",
    "a/b/README.md",
    "a/index.md",
    "a/b/index.html",
    "a/readme.markdown",
    "note.md",
    "x.md",
]


@st.composite
def _readme_change(draw: st.DrawFn, files: dict[str, bytes]) -> dict[str, bytes | None]:
    """One commit over the site of :func:`test_incremental_equals_full_with_readmes`: a
    README, an index or a page without front matter coming, changing or going, or a page
    taking a folder's permalink."""
    path = draw(st.sampled_from(_README_PATHS))
    if path in files and draw(st.booleans()):
        return {path: None}
    if path == "x.md" and draw(st.booleans()):
        folder = draw(st.sampled_from(["/", "/a/", "/a/b/"]))
        return {path: f"---\npermalink: {folder}\n---\nx\n".encode()}
    return {path: draw(st.sampled_from(_README_BODIES))}


@given(st.data())
def test_incremental_equals_full_with_readmes(data: st.DataObject) -> None:
    """jekyll-readme-index (with and without ``with_frontmatter``),
    jekyll-optional-front-matter, jekyll-mentions and jemoji: READMEs, indexes, pages
    without front matter and folder permalinks coming, changing and going."""
    config = _README_PLUGINS + data.draw(st.sampled_from(_README_SETTINGS), label="settings")
    layout = b"<body>{{ content }}{% for p in site.pages %}[{{ p.url }}]{% endfor %}</body>"
    files = {"_config.yml": config, "_layouts/default.html": layout, "a/README.md": b"R @x\n"}
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    for step in range(data.draw(st.integers(1, 6), label="commits")):
        files = apply(files, data.draw(_readme_change(files), label=f"commit {step}"))
        report = inc.build(files, LIQUID_OPTIONS)
        full = build_site(MemoryTree(files), LIQUID_OPTIONS)
        assert inc.outputs == dict(full.files)
        assert report.warnings == full.warnings


def test_mentions_reach_a_paginated_indexs_copies() -> None:
    """Jekyll's post_render hooks run on every page, jekyll-paginate's copies too: their
    mentions are linked in the full build and in the incremental one."""
    files = {
        "_config.yml": b"plugins: [jekyll-paginate, jekyll-mentions]\npaginate: 1\n",
        "_layouts/default.html": b"<body>{{ content }}</body>",
        "index.html": b"---\nlayout: default\n---\n"
        b"{% for post in paginator.posts %}{{ post.title }} by @ann{% endfor %}\n",
        "_posts/2021-01-01-a.md": b"---\ntitle: A\n---\nA\n",
        "_posts/2021-01-02-b.md": b"---\ntitle: B\n---\nB\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b'A by <a href="https://github.com/ann"' in inc.outputs["page2/index.html"]
    files = apply(files, {"_posts/2021-01-03-c.md": b"---\ntitle: C\n---\nC\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)
    assert b'A by <a href="https://github.com/ann"' in inc.outputs["page3/index.html"]


def test_mentions_on_redirect_pages_follow_their_documents() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-redirect-from, jekyll-mentions]\n",
        "_layouts/x.html": b"",
        "b.md": b"---\nredirect_to: https://medium.com/@bob\n---\nB\n",
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b'"https://medium.com/@bob"' in inc.outputs["b.html"]
    assert b"<!DOCTYPE" not in inc.outputs["b.html"]
    for commit in (
        {"b.md": b"---\nredirect_to: https://medium.com/@carol\nredirect_from: /@d/\n---\nB\n"},
        {"b.md": b"---\nredirect_to: https://example.org/\n---\nB\n"},
    ):
        files = apply(files, commit)
        assert not inc.build(files, LIQUID_OPTIONS).full
        assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)


def test_a_cached_navigation_follows_every_page_incrementally() -> None:
    """An ``include_cached`` navigation that reads only ``site`` is kept across pages (one
    render per build): a page's new title, a new page and a removed one reach every page's
    navigation as in a full build, an include reading ``page`` stays per page."""
    nav = b"{% for p in site.html_pages %}[{{ p.title }}]{% endfor %}"
    files = {
        "_config.yml": b"plugins: [jekyll-include-cache]\n",
        "_layouts/default.html": b"<nav>{% include_cached nav.html %}</nav>"
        b"<b>{% include_cached own.html %}</b>{{ content }}",
        "_includes/nav.html": b"{% include_cached list.html %}",
        "_includes/list.html": nav,
        "_includes/own.html": b"{{ page.title }}",
        **{
            f"{n}.md": f"---\nlayout: default\ntitle: {n.upper()}\n---\n{n}\n".encode()
            for n in "abc"
        },
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b"<nav>[A][B][C]</nav><b>B</b>" in inc.outputs["b.html"]
    for commit in (
        {"b.md": b"---\nlayout: default\ntitle: Bee\n---\nb\n"},
        {"d.md": b"---\nlayout: default\ntitle: D\n---\nd\n"},
        {"a.md": None},
        {"_includes/list.html": nav.replace(b"[", b"(")},
    ):
        files = apply(files, commit)
        assert not inc.build(files, LIQUID_OPTIONS).full
        assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)
    assert b"<nav>(Bee](C](D]</nav><b>C</b>" in inc.outputs["c.html"]


def test_now_in_a_date_filter_is_the_build_time_and_follows_it() -> None:
    """``{{ "now" | date: "%Y" }}`` (just-the-docs' copyright line) is ``site.time``'s
    year, as Liquid's ``Time.now`` gives it; a later build re-renders it."""
    files = {
        "_layouts/x.html": b"{{ content }}",
        "a.md": b'---\nlayout: x\n---\n(c) {{ "now" | date: "%Y" }} {{ "Today" | date: "%m" }}\n',
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    inc.build(files, LIQUID_OPTIONS)
    assert b"(c) 2021 01" in inc.outputs["a.html"]
    later = dataclasses.replace(LIQUID_OPTIONS, build_time=T0 + timedelta(days=400))
    inc.build(files, later)
    assert b"(c) 2022 02" in inc.outputs["a.html"]
    assert inc.outputs == dict(build_site(MemoryTree(files), later).files)


def test_a_cached_include_that_warns_warns_alike_incrementally() -> None:
    """A page-independent cached include whose render warns (Liquid the lax parser reads)
    is rendered on each page, so an incremental build that re-renders one page only gives
    the full build's warnings."""
    files = {
        "_config.yml": b"plugins: [jekyll-include-cache]\n",
        "_layouts/default.html": b"{% include_cached nav.html %}{{ content }}",
        "_includes/nav.html": b"{{ site.title | | upcase }}",
        **{f"{n}.md": f"---\nlayout: default\n---\n{n}\n".encode() for n in "ab"},
    }
    inc = Incremental(open_cache(None), LIQUID_OPTIONS, {})
    first = inc.build(files, LIQUID_OPTIONS)
    assert first.warnings == build_site(MemoryTree(files), LIQUID_OPTIONS).warnings
    files = apply(files, {"b.md": b"---\nlayout: default\n---\nbee\n"})
    report = inc.build(files, LIQUID_OPTIONS)
    assert not report.full
    assert report.warnings == build_site(MemoryTree(files), LIQUID_OPTIONS).warnings
    assert inc.outputs == dict(build_site(MemoryTree(files), LIQUID_OPTIONS).files)
