"""Heading ids as kramdown-parser-gfm generates them (Jekyll's default input)."""

from __future__ import annotations

import re

import mistune
import pytest

from deploybot.render.markdown.kramdown.headings import gfm_header_id, heading_ids, unique_id
from tests.kramdown_corpus import (
    PAGES,
    POSTS,
    feed_posts,
    post_markdown,
    published_content,
    render,
    require_corpus,
)
from tests.kramdown_corpus import heading_ids as ids_in


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. Graph Annotation", "1-graph-annotation"),
        ("Bio & Acknowledgement", "bio--acknowledgement"),
        ("What’s new?", "whats-new"),
        ("Über Café", "über-café"),
        ("tab\there", "tab-here"),
        ("snake_case and-dash", "snake_case-and-dash"),
        ("!!!", ""),
    ],
)
def test_gfm_header_id(text: str, expected: str) -> None:
    assert gfm_header_id(text) == expected


def test_unique_id_counts_exact_repeats() -> None:
    counter: dict[str, int] = {}
    got = [unique_id(b, counter) for b in ["intro", "intro", "intro-1", "intro"]]
    assert got == ["intro", "intro-1", "intro-1", "intro-2"]


def headings_only(text: str) -> str:
    md = mistune.create_markdown(escape=False, plugins=[heading_ids])
    html = md(text)
    assert isinstance(html, str)
    return html


def test_ids_on_all_levels_with_duplicates() -> None:
    html = headings_only("# Intro\n\n## Intro\n\nSetext\n------\n\n###### Intro\n")
    assert html == (
        '<h1 id="intro">Intro</h1>\n<h2 id="intro-1">Intro</h2>\n'
        '<h2 id="setext">Setext</h2>\n<h6 id="intro-2">Intro</h6>\n'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Using `tvm.build`", "using-tvmbuild"),
        ("# See [the docs](http://x.org/a-b)", "see-the-docs"),
        ("# Logo ![alt text](/l.png) here", "logo--here"),
        ("# Fish &amp; Chips", "fish--chips"),
        ("# *Bold* move", "bold-move"),
        ("# Nested <b>html</b> tags", "nested-html-tags"),
    ],
)
def test_id_comes_from_rendered_text(text: str, expected: str) -> None:
    assert ids_in(headings_only(text + "\n")) == [expected]


def test_typography_changes_the_text_ids_come_from() -> None:
    assert ids_in(render("# A -- B's\n")) == ["a--bs"]
    assert ids_in(render("# A -- B's\n", typography=False)) == ["a----bs"]


def test_explicit_ids_win_and_are_not_counted() -> None:
    html = render("# A\n{: #first}\n\n# A {#second}\n\n# A\n")
    assert ids_in(html) == ["first", "second", "a"]
    assert "{#" not in html


def test_ial_class_comes_before_the_auto_id() -> None:
    assert render("## Title\n{: .c}\n") == '<h2 class="c" id="title">Title</h2>\n'


def test_existing_token_id_is_kept() -> None:
    md = mistune.create_markdown(escape=False, plugins=[heading_ids])

    def preset(md: mistune.Markdown, state: mistune.BlockState) -> None:
        state.tokens[0]["attrs"]["id"] = "kept"

    md.before_render_hooks.insert(0, preset)
    assert md("# Title\n") == '<h1 id="kept">Title</h1>\n'


def test_counter_is_per_document() -> None:
    md = mistune.create_markdown(escape=False, plugins=[heading_ids])
    assert md("# A\n") == md("# A\n") == '<h1 id="a">A</h1>\n'


@pytest.mark.parametrize("source_name", sorted(PAGES))
def test_published_page_heading_ids(source_name: str) -> None:
    require_corpus()
    html = render(post_markdown(POSTS / source_name))
    expected = ids_in(published_content(source_name))
    assert expected, "the published page has headings"
    assert ids_in(html) == expected


def test_feed_posts_heading_ids() -> None:
    require_corpus()
    for path, published in feed_posts():
        assert ids_in(render(post_markdown(path))) == ids_in(published), path.name


def test_tvm_examples_from_the_research_notes() -> None:
    require_corpus()
    html = render(post_markdown(POSTS / "2020-07-14-bert-pytorch-tvm.md"))
    assert re.search(r'<h1 id="optimizing-bert-inference-with-tvm">', html)
