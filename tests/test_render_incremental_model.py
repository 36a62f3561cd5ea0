"""Regression tests for the incremental build over the whole content model: each is the
smallest commit sequence the extended generator (:mod:`tests.incremental_site`) found where an
incremental build differed from a full one (the oracle is
:func:`deploybot.render.engine.build.build_site`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from tests.incremental_site import (
    CONFIG,
    SITEMAP,
    T0,
    THEME,
    Incremental,
    apply,
    initial_site,
    post_text,
    tree_of,
)

OPTIONS = RenderOptions(theme=THEME, timezone="UTC", feed_limit=3, build_time=T0)
P0, P1, P3 = (
    "_posts/2021-01-01-post-0.md",
    "_posts/2021-01-02-post-1.md",
    "news/_posts/2021-01-05-post-3.md",
)


def _steps(
    *changes: Mapping[str, bytes | None],
    options: RenderOptions = OPTIONS,
    start: Mapping[str, bytes] | None = None,
) -> Incremental:
    """Build ``start`` (default: the generator's initial site), then each change in turn;
    after every build the outputs and warnings must equal a full build's."""
    files = dict(initial_site() if start is None else start)
    inc = Incremental(open_cache(None), options, {})
    for step in [{}, *changes]:
        files = apply(files, step)
        report = inc.build(files, options)
        full = build_site(tree_of(files), options)
        assert inc.outputs == dict(full.files)
        assert report.warnings == full.warnings
    return inc


def test_first_build_passes_neighbours() -> None:
    inc = _steps()
    assert b"rel=next" in inc.outputs["2021/01/post-0.html"]


def test_neighbour_title_edit_remakes_the_neighbour() -> None:
    inc = _steps({P1: post_text("Deux", "```python\nx = 1\n```", "tags: [a]\n")})
    assert b"<a rel=next>Deux</a>" in inc.outputs["2021/01/post-0.html"]


def test_inserted_post_changes_both_neighbours() -> None:
    _steps({"_posts/2021-01-03-post-5.md": post_text("Mid", "m")}, {P1: None})


def test_future_post_crossing_the_cut_off_updates_its_neighbours() -> None:
    later = "_posts/2021-01-20-post-7.md"
    options = RenderOptions(theme=THEME, timezone="UTC", feed_limit=3, build_time=T0)
    files = apply(initial_site(), {later: post_text("Later", "soon")})
    inc = Incremental(open_cache(None), options, {})
    inc.build(files, options)
    for days in (20, 0):
        options = RenderOptions(
            theme=THEME, timezone="UTC", feed_limit=3, build_time=T0 + timedelta(days=days)
        )
        inc.build(files, options)
        assert inc.outputs == dict(build_site(MemoryTree(files), options).files)


def test_listing_shows_excerpts_of_cached_posts() -> None:
    inc = _steps({P0: post_text("First", "Hello **again**\n\nsecond paragraph")})
    assert b"<strong>again</strong>" in inc.outputs["index.html"]


def test_excerpt_separator_in_front_matter() -> None:
    extra = "excerpt_separator: <!--more-->\n"
    _steps({P0: post_text("First", "one\n\ntwo <!--more--> three", extra)})


def test_site_tags_and_categories_follow_post_tags() -> None:
    _steps({P0: post_text("First", "x", "tags: [new]\ncategories: [c]\n")}, {P3: None})


def test_site_pages_and_static_files_follow_adds_and_deletes() -> None:
    pages = b"---\ntitle: Pages\nlayout: pages\n---\n"
    _steps(
        {"pages.md": pages},
        {"img/alpha.png": b"png", "new.md": b"---\ntitle: New\n---\n"},
        {"new.md": b"---\ntitle: Renamed\n---\n"},
        {"img/alpha.png": None, "new.md": None},
    )


def test_liquid_include_in_a_post_is_a_dependency() -> None:
    body = "{% include note.html %} {% include missing.html %}"
    inc = _steps(
        {P0: post_text("First", body)},
        {"_includes/note.html": b"<b>changed</b>"},
        {"_includes/missing.html": b"<i>now here</i>"},
    )
    assert b"<b>changed</b>" in inc.outputs["2021/01/post-0.html"]


def test_post_url_depends_on_the_other_posts_url() -> None:
    moved = post_text("Second", "x", "permalink: /p/:title/\n")
    inc = _steps({P1: moved}, {P1: None})
    assert b"/p/post-1/" not in inc.outputs["2021/01/post-3.html"]


def test_link_tag_depends_on_pages_and_static_files() -> None:
    body = "{% link about.md %} {% link img/alpha.png %}"
    _steps(
        {P0: post_text("First", body)},
        {"img/alpha.png": b"png"},
        {"about.md": b"---\ntitle: About\npermalink: /who/\n---\n"},
    )


def test_site_and_page_title_in_bodies() -> None:
    _steps(
        {P0: post_text("First", "{{ site.title }} {{ page.title }}")},
        {P0: post_text("Premier", "{{ site.title }} {{ page.title }}")},
    )


def test_unpublished_future_and_draft_posts() -> None:
    _steps(
        {P0: post_text("First", "x", "published: false\n")},
        {"_drafts/post-9.md": post_text("Draft", "d")},
        {P1: post_text("Second", "x", "date: 2021-02-01 00:00:00\n")},
        {P0: post_text("First", "x")},
    )


def test_categories_in_folders_and_permalinks() -> None:
    extra = "permalink: /:categories/:title.html\ncategories: [a]\n"
    _steps(
        {"news/tech/_posts/2021-01-04-post-4.md": post_text("Four", "x", extra)},
        {"news/tech/_posts/2021-01-04-post-4.md": None},
    )


def test_sitemap_is_written_and_follows_posts() -> None:
    start = apply(initial_site(), {"_config.yml": CONFIG + SITEMAP})
    inc = _steps(
        {"_posts/2021-01-06-post-6.md": post_text("Six", "x")},
        {P0: None},
        {"page.md": b"---\ntitle: P\nsitemap: false\n---\n"},
        start=start,
    )
    assert b"post-6" in inc.outputs["sitemap.xml"]


@pytest.mark.parametrize(
    ("typography", "footnotes"), [(False, "kramdown"), (True, "mistune"), (True, "none")]
)
def test_render_options_reach_the_incremental_path(typography: bool, footnotes: str) -> None:
    options = RenderOptions(
        theme=THEME,
        timezone="UTC",
        feed_limit=3,
        build_time=T0,
        typography=typography,
        footnotes=footnotes,
    )
    body = '"Quoted" -- note[^1]\n\n[^1]: the footnote'
    _steps({P0: post_text("First", body)}, options=options)


def test_changing_render_options_is_a_full_build() -> None:
    files = initial_site()
    inc = Incremental(open_cache(None), OPTIONS, {})
    inc.build(files, OPTIONS)
    other = RenderOptions(
        theme=THEME, timezone="UTC", feed_limit=3, build_time=T0, typography=False
    )
    files = apply(files, {P0: post_text("First", '"q"')})
    assert inc.build(files, other).full
    assert inc.outputs == dict(build_site(MemoryTree(files), other).files)
