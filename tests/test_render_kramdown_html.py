"""kramdown's HTML, end-of-block marker, TOC, links, math, extensions and abbreviations on
mistune: the rules one at a time (the Jekyll fixtures in test_render_kramdown_jekyll.py
check whole pages). Expected HTML is kramdown 2.4's (checked against Jekyll 4.3.1)."""

from __future__ import annotations

import pytest

from deploybot.render.markdown.kramdown.html_scan import escape_text, start_tag
from deploybot.render.markdown.kramdown.links import join_spaced_refs
from deploybot.render.markdown.renderer import make_markdown, markdown_to_html


def md(text: str) -> str:
    return markdown_to_html(text, make_markdown(typography=False))


# --- scanning ---------------------------------------------------------------------------


def test_start_tag_attributes_as_kramdown_reads_them() -> None:
    tag = start_tag("<DIV Class='a b' data-x=word hidden\nid=\"i\">", 0, {})
    assert tag is not None
    assert (tag.name, tag.attrs, tag.closed) == (
        "div",
        {"class": "a b", "data-x": "word", "hidden": "", "id": "i"},
        False,
    )
    custom = start_tag("<My-Widget Foo='1'/>", 0, {})
    assert custom is not None and (custom.name, custom.attrs, custom.closed) == (
        "My-Widget",
        {"Foo": "1"},
        True,
    )


@pytest.mark.parametrize("text", ['<div a="x>', "<div a=50%>", "<div a=>", "<1div>", "<div"])
def test_not_a_start_tag(text: str) -> None:
    assert start_tag(text, 0, {}) is None


def test_escape_text_keeps_entities() -> None:
    assert (
        escape_text("a & b &amp; &#8217; <x> &nope")
        == "a &amp; b &amp; &#8217; &lt;x&gt; &amp;nope"
    )


# --- block HTML -------------------------------------------------------------------------


def test_raw_block_html_is_rewritten() -> None:
    html = md("<div class='a' hidden>\n<br>\n<img src='x.png'>\nA & B *not md*\n</div>\n")
    assert (
        html
        == '<div class="a" hidden="">\n<br />\n<img src="x.png" />\nA &amp; B *not md*\n</div>\n'
    )
    # An unquoted value is one word: src=x.png is no tag for kramdown, so it is text.
    assert md("<div>\n<img src=x.png>\n</div>\n") == "<div>\n&lt;img src=x.png&gt;\n</div>\n"


def test_raw_block_html_runs_over_blank_lines_to_its_close_tag() -> None:
    assert md("<div>\na\n\n*b*\n</div>\n\n*c*\n") == "<div>\na\n\n*b*\n</div>\n<p><em>c</em></p>\n"


def test_unmatched_close_tag_inside_raw_html_is_text() -> None:
    assert md("<div><p>x</span></p></div>\n") == "<div><p>x&lt;/span&gt;</p></div>\n"


def test_markdown_attribute_content_models() -> None:
    assert md('<div markdown="1">\n*a*\n</div>\n') == "<div>\n<p><em>a</em></p>\n</div>\n"
    assert md('<div markdown="span">*a*</div>\n') == "<div><em>a</em></div>\n"
    assert md('<p markdown="1">*a*</p>\n') == "<p><em>a</em></p>\n"
    assert md('<div markdown="0">*a*</div>\n') == "<div>*a*</div>\n"


def test_markdown_block_ends_at_its_close_tag_at_a_line_start() -> None:
    html = md('<div markdown="1">\n* a\n* b\n</div>\n\nafter\n')
    assert html == "<div>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n</div>\n<p>after</p>\n"
    quoted = md('<div markdown="1">\n> q\n</div>\n')
    assert quoted == "<div>\n<blockquote>\n<p>q</p>\n</blockquote>\n</div>\n"


def test_deeply_nested_markdown_blocks_stay_bounded() -> None:
    html = md('<div markdown="1">\n' * 200 + "*x*\n")
    assert html.count("<div>") == 200 and "*x*" in html


def test_block_tag_ends_a_paragraph_but_a_span_tag_does_not() -> None:
    assert md("a\n<div>x</div>\n") == "<p>a</p>\n<div>x</div>\n"
    assert md("a\n<span>x</span>\n") == "<p>a\n<span>x</span></p>\n"


def test_a_line_of_spaces_after_html_is_blank() -> None:
    assert md("<div>x</div>\n        \ntext\n") == "<div>x</div>\n<p>text</p>\n"


def test_span_html_is_rewritten() -> None:
    assert md("a <img src=x.png> <img src='y'> <span class='c'>b</span> </div>\n") == (
        '<p>a &lt;img src=x.png&gt; <img src="y" /> <span class="c">b</span> &lt;/div&gt;</p>\n'
    )


# --- end of block -------------------------------------------------------------------------


def test_end_of_block_marker_separates_lists_and_keeps_a_pending_ial() -> None:
    assert md("* a\n^\n* b\n") == "<ul>\n<li>a</li>\n</ul>\n<ul>\n<li>b</li>\n</ul>\n"
    assert md("para\n^\n{: .x}\n") == "<p>para</p>\n"


# --- TOC --------------------------------------------------------------------------------


def test_toc_list_and_its_indentation() -> None:
    html = md("* x\n{:toc}\n\n# A\n\n## B *c*\n\n# D\n{: .no_toc}\n\n### E\n")
    assert html.startswith(
        '<ul id="markdown-toc">\n'
        '  <li><a href="#a" id="markdown-toc-a">A</a>    <ul>\n'
        '      <li><a href="#b-c" id="markdown-toc-b-c">B <em>c</em></a>        <ul>\n'
        '          <li><a href="#e" id="markdown-toc-e">E</a></li>\n'
        "        </ul>\n      </li>\n    </ul>\n  </li>\n</ul>\n"
    )


def test_toc_without_headings_is_empty_and_only_the_first_list_is_replaced() -> None:
    assert md("* x\n{:toc}\n") == ""
    assert md("* x\n{:toc}\n\n* y\n{:toc}\n\n# A\n").count("markdown-toc") == 2


# --- links ------------------------------------------------------------------------------


def test_spaced_reference_links_outside_code() -> None:
    refs = {"R": {"url": "/r"}}
    assert join_spaced_refs("[a] [r] `[b] [r]` [c] [nope]", refs) == "[a][r] `[b] [r]` [c] [nope]"
    assert md("[a]\n[r]\n\n[r]: /r\n") == '<p><a href="/r">a</a></p>\n'


def test_url_schemes_are_kept_and_autolinks_are_kramdowns() -> None:
    assert md("[a](news:x) <rsync://h/m> <mailto:a@b.c> <a@b.c>\n") == (
        '<p><a href="news:x">a</a> &lt;rsync://h/m&gt; <a href="mailto:a@b.c">a@b.c</a> '
        '<a href="mailto:a@b.c">a@b.c</a></p>\n'
    )


# --- math, extensions, abbreviations, tables, lists --------------------------------------


def test_math_block_and_inline() -> None:
    assert md("$$\na<b\n$$\n\nx $$y_1$$ z\n") == "\\[a&lt;b\\]\n<p>x \\(y_1\\) z</p>\n"
    assert md("$$a$$ b\n") == "<p>\\(a\\) b</p>\n"


def test_extensions() -> None:
    assert md("{::comment}\nhidden\n{:/comment}\n") == "<!-- hidden -->\n"
    assert md("a {::nomarkdown}*b*{:/} c\n") == "<p>a *b* c</p>\n"
    assert md('{::options auto_ids="false" /}\n# T\n') == "<h1>T</h1>\n"
    assert md("a\\\\\nb\n") == "<p>a<br />\nb</p>\n"


def test_abbreviations() -> None:
    assert md("HTML and HTMLX.\n\n*[HTML]: Markup\n") == (
        '<p><abbr title="Markup">HTML</abbr> and HTMLX.</p>\n'
    )


def test_headerless_table_and_no_table_inside_a_paragraph() -> None:
    assert md("| a |\n| b |\n").count("<td>") == 2
    assert md("text\n| a |\n") == "<p>text\n| a |</p>\n"


def test_task_lists_and_ordered_list_start() -> None:
    html = md("- a\n- [ ] b\n- [x] c\n")
    assert html == (
        '<ul class="task-list">\n<li>a</li>\n<li class="task-list-item"><input type="checkbox" '
        'class="task-list-item-checkbox" disabled="disabled" />b</li>\n'
        '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" '
        'disabled="disabled" checked="checked" />c</li>\n</ul>\n'
    )
    assert md("3. x\n").startswith("<ol>\n")


def test_code_block_language_from_an_ial() -> None:
    html = md("    x\n{: .language-ruby .keep}\n")
    assert html.startswith('<div class="language-ruby highlighter-rouge keep">')


def test_list_paragraphs_are_decided_per_item() -> None:
    # kramdown: c, the last item, is bare because an earlier item (a) is.
    assert md("- a\n- b\n\n- c\n") == "<ul>\n<li>a</li>\n<li>\n<p>b</p>\n</li>\n<li>c</li>\n</ul>\n"
    assert md("- a\n\n- b\n") == "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>\n"
    nested = md("- a\n  - n\n\n- b\n")
    assert nested == "<ul>\n<li>a\n<ul>\n<li>n</li>\n</ul>\n</li>\n<li>b</li>\n</ul>\n"


def test_definition_lists() -> None:
    assert md("T\n: a\n: b\n") == "<dl>\n<dt>T</dt>\n<dd>a</dd>\n<dd>b</dd>\n</dl>\n"
    assert md("T\n\n: a\n") == "<dl>\n<dt>T</dt>\n<dd>\n<p>a</p>\n</dd>\n</dl>\n"
    assert md("T\n\n\n: a\n") == "<p>T</p>\n<p>: a</p>\n"  # two empty lines: no list


def test_strong_emphasis_nests_as_kramdown() -> None:
    assert md("***a*** b\n") == "<p><strong><em>a</em></strong> b</p>\n"


def test_rest_of_a_line_after_block_html_is_read_as_a_line() -> None:
    assert md("<center>c</center> <p></p>\n") == "<center>c</center>\n<p></p>\n"


def test_image_alt_is_the_text_as_written() -> None:
    assert (
        md('![A `b` *c* "q"](a.png)\n')
        == '<p><img src="a.png" alt="A `b` *c* &quot;q&quot;" /></p>\n'
    )


def test_ial_after_a_list_and_blank_lines_applies_to_the_next_block() -> None:
    assert md("- a\n\n{: .y}\npara\n") == '<ul>\n<li>a</li>\n</ul>\n<p class="y">para</p>\n'


def test_a_blank_text_is_one_newline_as_kramdown_writes_it() -> None:
    # kramdown 2.4: "" and "   \n\n" -> "\n" (minima's home layout shows it between tags),
    # while a text whose only element renders empty (a toc without headings) stays "".
    assert [md(""), md("   \n\n"), md("* x\n{:toc}\n")] == ["\n", "\n", ""]
