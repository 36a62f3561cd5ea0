"""kramdown attribute lists (IALs, ALDs) and footnotes on mistune 3.

Expected HTML follows kramdown's syntax docs and converter; the corpus tests compare with
what Jekyll published for the TVM site.
"""

from __future__ import annotations

import re

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.render.markdown.kramdown.attrs import (
    AttributeList,
    escape_attribute,
    inject_attributes,
    parse_attribute_list,
    resolve_attributes,
)
from deploybot.render.markdown.kramdown.footnotes import make_kramdown_footnotes
from deploybot.render.markdown.kramdown.plugins import kramdown_attributes
from tests.kramdown_corpus import (
    PAGES,
    POSTS,
    feed_posts,
    post_markdown,
    post_sources,
    published_content,
    render,
    require_corpus,
    sized_images,
)


def attrs_only(text: str) -> str:
    """Render with only mistune's table plugin and the attribute plugin."""
    md = mistune.create_markdown(escape=False, plugins=["table", kramdown_attributes])
    html = md(text)
    assert isinstance(html, str)
    return html


# --- parsing and merging -------------------------------------------------------------------


def test_parse_id_classes_and_pairs() -> None:
    ial = parse_attribute_list(""".a #x key="v" other='w' .b""")
    assert ial.attrs == {"class": "a b", "id": "x", "key": "v", "other": "w"}
    assert ial.refs == []


def test_parse_later_id_replaces_and_compact_form() -> None:
    assert parse_attribute_list("#one.c1#two.c2").attrs == {"id": "two", "class": "c1 c2"}


def test_parse_references_and_escapes() -> None:
    ial = parse_attribute_list(r"""center title="a \} b" q='it\'s' wide""")
    assert ial.refs == ["center", "wide"]
    assert ial.attrs == {"title": "a } b", "q": "it's"}


@pytest.mark.parametrize("body", ["", " ", ":", "=broken", "width=50%"])
def test_parse_ignores_what_kramdown_ignores(body: str) -> None:
    assert parse_attribute_list(body) == AttributeList()


def test_resolve_applies_references_first_then_own_attributes() -> None:
    alds = {"c": parse_attribute_list('.x style="a"'), "d": parse_attribute_list(".y")}
    resolved = resolve_attributes(parse_attribute_list('c d .z style="b" missing'), alds)
    assert resolved == {"class": "x y z", "style": "b"}


def test_resolve_survives_reference_cycles() -> None:
    alds = {"a": parse_attribute_list("b .a"), "b": parse_attribute_list("a .b")}
    assert resolve_attributes(parse_attribute_list("a"), alds) == {"class": "b a"}


def test_inject_appends_replaces_and_merges_class() -> None:
    html = '<img src="a.png" alt="x" class="k" />'
    got = inject_attributes(html, {"width": "50%", "alt": "y", "class": "m"})
    assert got == '<img src="a.png" alt="y" class="k m" width="50%" />'


def test_inject_leaves_non_tags_alone() -> None:
    assert inject_attributes("plain text", {"a": "b"}) == "plain text"
    assert inject_attributes("<!-- c -->", {"a": "b"}) == "<!-- c -->"


def test_escape_attribute_keeps_entities() -> None:
    assert escape_attribute('a<b>"c" & d &amp; &#8217;') == (
        "a&lt;b&gt;&quot;c&quot; &amp; d &amp; &#8217;"
    )


# --- block IALs ----------------------------------------------------------------------------


def test_corpus_pattern_centered_image() -> None:
    text = (
        '{:center: style="text-align: center"}\n'
        '![image](/images/autotune-all/overview.png){: width="35%"}\n'
        "{:center}\n"
        "<center> Figure 1. System Overview </center> <p></p>\n"
    )
    assert attrs_only(text).startswith(
        '<p style="text-align: center"><img src="/images/autotune-all/overview.png" '
        'alt="image" width="35%" /></p>\n<center> Figure 1. System Overview </center>'
    )


def test_ial_before_and_after_a_paragraph_then_text_continues() -> None:
    text = '{:a: class="k"}\n\n{:a}\nPara\n{: #p}\nNext line\n'
    assert attrs_only(text) == '<p class="k" id="p">Para</p>\n<p>Next line</p>\n'


def test_ial_before_a_block_is_dropped_by_a_blank_line() -> None:
    assert attrs_only("{: .x}\n\nPara\n") == "<p>Para</p>\n"


def test_stacked_ials_apply_to_the_same_block() -> None:
    assert attrs_only("Para\n{: .a}\n{: .b #i}\n") == '<p class="a b" id="i">Para</p>\n'


def test_ald_defined_after_use() -> None:
    assert attrs_only('Para\n{:later}\n\n{:later: title="t"}\n') == '<p title="t">Para</p>\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Title\n{: .c}\n", '<h1 class="c">Title</h1>\n'),
        ("> quote\n{: .q}\n", '<blockquote class="q">\n<p>quote</p>\n</blockquote>\n'),
        ("```\ncode\n```\n{: .c}\n", '<pre class="c"><code>code\n</code></pre>\n'),
        ("***\n{: .r}\n", '<hr class="r" />\n'),
        ("| a |\n|---|\n| 1 |\n{: .t}\n", '<table class="t">'),
    ],
)
def test_block_ial_lands_on_the_block(text: str, expected: str) -> None:
    assert attrs_only(text).startswith(expected)


def test_values_are_escaped_and_handlers_pass_through() -> None:
    html = attrs_only("""Para\n{: title='a "b" <c>' onclick="go()"}\n""")
    assert html == '<p title="a &quot;b&quot; &lt;c&gt;" onclick="go()">Para</p>\n'


def test_extension_tags_are_not_ials() -> None:
    assert "{::comment}" in attrs_only("{::comment}\n")


# --- span IALs -----------------------------------------------------------------------------


def test_span_ials_on_link_image_and_emphasis() -> None:
    html = attrs_only(
        "[a](http://x.org){:target='_blank'} ![i](/i.png){: width=\"50%\" } *e*{: .red}\n"
    )
    assert html == (
        '<p><a href="http://x.org" target="_blank">a</a> '
        '<img src="/i.png" alt="i" width="50%" /> <em class="red">e</em></p>\n'
    )


def test_span_ial_after_plain_text_stays_text() -> None:
    # mistune's text renderer writes " as &quot; (kramdown would keep it).
    assert attrs_only("text {: .x}\n") == "<p>text {: .x}</p>\n"


def test_span_ial_uses_alds() -> None:
    html = attrs_only('{:big: width="90%"}\n![i](/i.png){:big .x}\n')
    assert html == '<p><img src="/i.png" alt="i" width="90%" class="x" /></p>\n'


# --- footnotes -----------------------------------------------------------------------------


FOOTNOTE_TEXT = "A[^ieee] B[^ieee] C[^n2]\n\n[^ieee]: IEEE note\n[^n2]: Second\n"


def test_footnotes_kramdown2_markup() -> None:
    html = render(FOOTNOTE_TEXT, typography=False)
    assert html == (
        '<p>A<sup id="fnref:ieee" role="doc-noteref"><a href="#fn:ieee" class="footnote" '
        'rel="footnote">1</a></sup> B<sup id="fnref:ieee:1" role="doc-noteref"><a '
        'href="#fn:ieee" class="footnote" rel="footnote">1</a></sup> C<sup id="fnref:n2" '
        'role="doc-noteref"><a href="#fn:n2" class="footnote" rel="footnote">2</a></sup></p>\n'
        '<div class="footnotes" role="doc-endnotes">\n  <ol>\n'
        '    <li id="fn:ieee" role="doc-endnote">\n      <p>IEEE note\u00a0<a href="#fnref:ieee" '
        'class="reversefootnote" role="doc-backlink">&#8617;</a>\u00a0<a href="#fnref:ieee:1" '
        'class="reversefootnote" role="doc-backlink">&#8617;<sup>2</sup></a></p>\n    </li>\n'
        '    <li id="fn:n2" role="doc-endnote">\n      <p>Second\u00a0<a href="#fnref:n2" '
        'class="reversefootnote" role="doc-backlink">&#8617;</a></p>\n    </li>\n  </ol>\n'
        "</div>\n"
    )


def test_footnotes_legacy_markup_matches_tvm_feed() -> None:
    md = mistune.create_markdown(
        escape=False, plugins=["footnotes", make_kramdown_footnotes(legacy=True)]
    )
    html = md("x[^ieee]\n\n[^ieee]: Note\n")
    assert html == (
        '<p>x<sup id="fnref:ieee"><a href="#fn:ieee" class="footnote">1</a></sup></p>\n'
        '<div class="footnotes">\n  <ol>\n    <li id="fn:ieee">\n'
        '      <p>Note\u00a0<a href="#fnref:ieee" class="reversefootnote">&#8617;</a></p>\n'
        "    </li>\n  </ol>\n</div>\n"
    )


def test_footnotes_plugin_registers_mistune_footnotes_itself() -> None:
    md = mistune.create_markdown(escape=False, plugins=[make_kramdown_footnotes()])
    html = md("x[^a]\n\n[^a]: Note\n")
    assert isinstance(html, str)
    assert html.count('<div class="footnotes" role="doc-endnotes">') == 1


# --- properties ----------------------------------------------------------------------------

_IAL_LINES = ["{: .c}", "{:#i}", '{: width="5%"}', "{:n}", '{:n: title="t"}', "  {: .d }"]
_OTHER_LINES = ["", "Text", "# Head", "- item", "> quote", "| a |", "|---|", "***", "1. one"]
_ALONE_IAL = re.compile(r"^(?:<p>)?\s*\{:(?![:/])[^}\n]+\}\s*(?:</p>)?$", re.M)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_IAL_LINES + _OTHER_LINES), max_size=12))
def test_ial_lines_never_survive(lines: list[str]) -> None:
    html = render("\n".join(lines) + "\n")
    assert not _ALONE_IAL.search(html)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}:.#='\"ab -*_`[]()!<>\n\\|^")), max_size=80))
def test_arbitrary_text_never_crashes(text: str) -> None:
    assert isinstance(render(text), str)


# --- corpus --------------------------------------------------------------------------------


def test_corpus_posts_leave_no_attribute_lists() -> None:
    require_corpus()
    sources = post_sources()
    assert len(sources) == 21
    for path in sources:
        html = render(post_markdown(path))
        assert "{:" not in html, path.name


@pytest.mark.parametrize("source_name", sorted(PAGES))
def test_published_pages_image_widths(source_name: str) -> None:
    require_corpus()
    html = render(post_markdown(POSTS / source_name))
    assert sized_images(html) == sized_images(published_content(source_name))


def test_feed_posts_images_and_centering() -> None:
    require_corpus()
    centered = '<p style="text-align: center">'
    for path, published in feed_posts():
        html = render(post_markdown(path))
        assert sized_images(html) == sized_images(published), path.name
        assert html.count(centered) == published.count(centered), path.name
