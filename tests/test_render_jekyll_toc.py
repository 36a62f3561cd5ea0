"""jekyll-toc's ``{% toc %}``: the list it builds from HTML, its options, the Liquid tag.

Expected strings were printed by jekyll-toc 0.18.0 itself
(``Jekyll::TableOfContents::Parser.new(html, options).build_toc``).
"""

from __future__ import annotations

from deploybot.render.liquid.plugins.jekyll_toc import build_toc, generate_toc_id, toc_tag
from deploybot.render.liquid.templates import render_liquid, restore_fragments

HTML = (
    '<div class="skip"><h2>In skip</h2></div><h2 class="no_toc">No</h2>'
    '<h2>Two &amp; <em>em</em></h2><h3 id="x&amp;y">Three</h3><h4>Four</h4>'
    "<h2>Two &amp; <em>em</em></h2><h1>One</h1><h5>Five</h5>"
)


def test_options_ordered_list_names_levels_and_skipped_sections() -> None:
    options = {
        "no_toc_section_class": ["skip", "other"],
        "ordered_list": True,
        "list_id": "c",
        "list_class": "k",
        "item_class": "i",
        "item_prefix": "p-",
        "max_level": 4,
    }
    assert build_toc(HTML, options) == (
        '<ol id="c" class="k">\n'
        '<li class="i p-h2"><a href="#two--em">Two &amp; em</a>\n<ol>\n'
        '<li class="i p-h3"><a href="#x&y">Three</a>\n<ol>\n'
        '<li class="i p-h4"><a href="#four">Four</a></li>\n</ol>\n</li>\n</ol>\n</li>\n'
        '<li class="i p-h2"><a href="#two--em-1">Two &amp; em</a></li>\n'
        '<li class="i p-h1"><a href="#one">One</a></li>\n</ol>'
    )


def test_min_level_and_sublist_class() -> None:
    assert build_toc(HTML, {"min_level": 2, "sublist_class": "sub"}) == (
        '<ul id="toc" class="section-nav">\n'
        '<li class="toc-entry toc-h2"><a href="#in-skip">In skip</a></li>\n'
        '<li class="toc-entry toc-h2"><a href="#two--em">Two &amp; em</a>\n<ul class="sub">\n'
        '<li class="toc-entry toc-h3"><a href="#x&y">Three</a>\n<ul class="sub">\n'
        '<li class="toc-entry toc-h4"><a href="#four">Four</a></li>\n</ul>\n</li>\n</ul>\n'
        "</li>\n"
        '<li class="toc-entry toc-h2"><a href="#two--em-1">Two &amp; em</a>\n'
        '<ul class="sub">\n<li class="toc-entry toc-h5"><a href="#five">Five</a></li>\n'
        "</ul>\n</li>\n</ul>"
    )


def test_no_headings_and_a_setting_that_is_not_a_mapping() -> None:
    assert build_toc("<p>x</p>", "yes") == '<ul id="toc" class="section-nav">\n</ul>'


def test_generated_ids_escape_as_cgi_escape() -> None:
    assert generate_toc_id("Déjà vu, it's 2 o'clock!") == "d%C3%A9j%C3%A0-vu-its-2-oclock"


def test_tag_renders_only_when_the_page_sets_toc() -> None:
    content = "<h2>A</h2>"
    assert toc_tag({"content": content}, None) == ""
    assert toc_tag({"content": content, "toc": False}, None) == ""
    listed = '<ul id="toc" class="section-nav">\n<li class="toc-entry toc-h2"><a href="#a">A'
    assert toc_tag({"content": content, "toc": "yes"}, None).startswith(listed)


def test_liquid_tag_lists_the_page_source_headings() -> None:
    text = "{% toc %}\n\n<h2 id='x'>Raw</h2>\n\n## Markdown\n"
    variables = {"page": {"toc": True}, "site": {"toc": {"list_id": "contents"}}}
    result = render_liquid(text, path="a.md", variables=variables)
    html = restore_fragments(result.text, result.fragments)
    assert html.startswith(
        '<ul id="contents" class="section-nav">\n'
        '<li class="toc-entry toc-h2"><a href="#x">Raw</a></li>\n</ul>\n'
    )
    off = render_liquid(text, path="a.md", variables={"page": {}, "site": {}})
    assert off.text.startswith("\n\n<h2 id='x'>")
