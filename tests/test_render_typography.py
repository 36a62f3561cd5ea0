"""kramdown typography: smart quotes and symbols, as characters, only in Markdown text."""

from __future__ import annotations

import re
from collections import Counter

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.render.markdown.kramdown.typography import make_typography, smarten, typography
from tests.kramdown_corpus import (
    PAGES,
    POSTS,
    post_markdown,
    published_content,
    render,
    require_corpus,
)

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('He said "hi".', "He said “hi”."),
        ("it's", "it’s"),
        ("'single' quotes", "‘single’ quotes"),
        ("the '80s", "the ’80s"),
        ("\"'Nested' quote\"", "“‘Nested’ quote”"),
        ("a -- b --- c", "a – b — c"),
        ("wait...", "wait…"),
        ("<<a>> and << b >>", f"«a» and «{NBSP}b{NBSP}»"),
        ("('quoted')", "(‘quoted’)"),
        ("'", "’"),
        ("", ""),
    ],
)
def test_smarten(text: str, expected: str) -> None:
    assert smarten(text) == expected


def typo(text: str) -> str:
    md = mistune.create_markdown(escape=False, plugins=[typography])
    html = md(text)
    assert isinstance(html, str)
    return html


def test_quotes_around_emphasis_and_links() -> None:
    assert typo('"*word*" and *"w"* and ["l"](u)\n') == (
        '<p>“<em>word</em>” and <em>“w”</em> and <a href="u">“l”</a></p>\n'
    )


def test_apostrophe_after_code_span() -> None:
    assert typo("`x`'s value\n") == "<p><code>x</code>’s value</p>\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('`"a" -- b`\n', "<p><code>&quot;a&quot; -- b</code></p>\n"),
        ('```\n"a" -- b...\n```\n', "<pre><code>&quot;a&quot; -- b...\n</code></pre>\n"),
        ('<a title="it\'s -- x">t</a>\n', '<p><a title="it\'s -- x">t</a></p>\n'),
        ("x <span title='a--b'>y</span>\n", "<p>x <span title='a--b'>y</span></p>\n"),
        ("[t](http://a--b.org/it's)\n", '<p><a href="http://a--b.org/it%27s">t</a></p>\n'),
        ("<http://a--b.org>\n", '<p><a href="http://a--b.org">http://a--b.org</a></p>\n'),
        ("![it's -- x](/i.png)\n", '<p><img src="/i.png" alt="it\'s -- x" /></p>\n'),
        ('\\"a\\" \\-- b\n', "<p>&quot;a&quot; -- b</p>\n"),
    ],
)
def test_left_alone(text: str, expected: str) -> None:
    assert typo(text) == expected


def test_switch_off() -> None:
    md = mistune.create_markdown(escape=False, plugins=[make_typography(enabled=False)])
    assert md("it's -- x\n") == "<p>it's -- x</p>\n"
    assert render("it's -- x\n", typography=False) == "<p>it's -- x</p>\n"


def test_text_inside_inline_html_is_typographic() -> None:
    assert typo("<b>it's</b>\n") == "<p><b>it’s</b></p>\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("'\"-.<> ab*_`[]()!\\\n")), max_size=60))
def test_never_crashes_and_keeps_other_characters(text: str) -> None:
    # Only quotes, dashes, dots, angle brackets and spaces next to them ever change.
    touched = re.compile(r"['\"\-.<>\s’‘“”–—…«»]")
    assert touched.sub("", smarten(text)) == touched.sub("", text)
    assert isinstance(typo(text), str)


# The published pages hold the typographic characters themselves (no &#8217; entities).
_QUOTES = "’‘“”…"


@pytest.mark.parametrize("source_name", sorted(PAGES))
def test_published_pages_typographic_characters(source_name: str) -> None:
    require_corpus()
    # {% highlight %} blocks are the Liquid stage's; leave them out on both sides.
    html = render(post_markdown(POSTS / source_name, drop_highlight=True))
    published = re.sub(
        r'<figure class="highlight">.*?</figure>', "", published_content(source_name), flags=re.S
    )
    assert "&#8217;" not in published and "&rsquo;" not in published
    mine = Counter(c for c in html if c in _QUOTES)
    assert mine == Counter(c for c in published if c in _QUOTES)
