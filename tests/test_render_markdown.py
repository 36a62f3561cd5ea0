"""Markdown (mistune 3 + kramdown-shaped code), highlighting and the Liquid subset."""

from __future__ import annotations

import pytest

from deploybot.render.highlight.highlighter import fenced_block, figure_block
from deploybot.render.liquid.templates import render_liquid, restore_fragments
from deploybot.render.markdown.renderer import make_markdown, markdown_to_html
from deploybot.support.errors import SourceError

ROUGE_OPEN = '<div class="highlight"><pre class="highlight"><code>'


def md(text: str) -> str:
    return markdown_to_html(text, make_markdown())


def test_fenced_python_is_highlighted_in_rouge_wrapper() -> None:
    html = md('```python\nx = "a"\n```\n')
    assert html.startswith(f'<div class="language-python highlighter-rouge">{ROUGE_OPEN}')
    assert '<span class="n">x</span>' in html
    assert html.endswith("</code></pre></div></div>\n")


def test_fence_without_language_is_plaintext() -> None:
    html = md("```\na < b\n```\n")
    assert html == (
        f'<div class="language-plaintext highlighter-rouge">{ROUGE_OPEN}a &lt; b\n'
        "</code></pre></div></div>\n"
    )


def test_unknown_language_falls_back_to_escaped_text() -> None:
    html = md("```nosuchlang\nif a<b & c\n```\n")
    assert f'<div class="language-nosuchlang highlighter-rouge">{ROUGE_OPEN}' in html
    assert "if a&lt;b &amp; c\n</code>" in html
    assert "<span" not in html


def test_info_string_extra_words_and_space() -> None:
    assert 'class="language-python highlighter-rouge"' in md("``` python {linenos}\nx\n```\n")


def test_inline_code_and_golang_backtick_line() -> None:
    html = md("```gotvm``` package is a thing\n")
    assert html == (
        '<p><code class="language-plaintext highlighter-rouge">gotvm</code>'
        " package is a thing</p>\n"
    )


def test_raw_html_tables_footnotes_strikethrough() -> None:
    html = md(
        "<center>Fig</center>\n\n| a | b |\n|---|---|\n| <sup>1</sup> | 2 |\n\n"
        "x[^n] ~~y~~\n\n[^n]: note\n"
    )
    assert "<center>Fig</center>" in html
    assert "<table>" in html and "<td><sup>1</sup></td>" in html
    assert "<del>y</del>" in html
    assert 'class="footnotes"' in html


def test_heading_ids_like_kramdown_gfm() -> None:
    html = md("# 1. Graph Annotation\n\n## Hello World\n\n## Hello World\n\n- # In list\n")
    assert '<h1 id="1-graph-annotation">' in html
    assert '<h2 id="hello-world">' in html and '<h2 id="hello-world-1">' in html
    assert '<h1 id="in-list">' in html
    # The id comes from the typographic text (’ is not a word character) and the code span.
    assert '<h3 id="whats-new">What’s <code' in md("### What's `new`?\n")


def test_figure_block_shape() -> None:
    html = figure_block("\nx = 1\n\n", "c++")
    assert html.startswith(
        '<figure class="highlight"><pre><code class="language-c--" data-lang="c++">'
    )
    assert html.endswith("</code></pre></figure>")
    assert "\n</code>" not in html


def test_fenced_block_keeps_source_ending() -> None:
    assert fenced_block("x", "python").count("\n") == 1  # only the wrapper's final newline


def liquid(text: str, first_line: int = 1) -> tuple[str, list[tuple[int | None, str]]]:
    result = render_liquid(
        text, path="p.md", first_line=first_line, variables={"site": {"title": "T"}}
    )
    html = restore_fragments(md(result.text), result.fragments)
    return html, [(w.line, w.message) for w in result.warnings]


def test_include_jb_setup_renders_nothing_with_warning() -> None:
    html, warnings = liquid("{% include JB/setup %}\n\nHello\n", first_line=7)
    assert html == "<p>Hello</p>\n"
    assert len(warnings) == 1 and warnings[0][0] == 7 and "JB/setup" in warnings[0][1]


def test_highlight_tag_becomes_figure_outside_paragraph() -> None:
    html, warnings = liquid(
        "Text\n\n{% highlight Plain Text %}\n$ run\n\nout <x>\n{% endhighlight %}\n\nEnd\n"
    )
    assert warnings == []
    assert (
        '<figure class="highlight"><pre><code class="language-plain" data-lang="plain">'
        "$ run\n\nout &lt;x&gt;</code></pre></figure>"
    ) in html
    assert "<p><figure" not in html
    assert html.endswith("<p>End</p>\n")


def test_highlight_python_has_pygments_spans() -> None:
    html, _ = liquid("{% highlight python %}\nimport tvm\n{% endhighlight %}\n")
    assert '<span class="kn">import</span>' in html


def test_raw_passes_content_through() -> None:
    html, warnings = liquid("{% raw %}{{ x }} {% if %}{% endraw %}\n")
    assert html == "<p>{{ x }} {% if %}</p>\n" and warnings == []


def test_assign_and_undefined_outputs_are_silent_as_in_jekyll() -> None:
    html, warnings = liquid(
        "a {% assign x = 1 %}{{ x }}\nb {{ site.title }} {{ page.x | upcase }}\n", first_line=10
    )
    assert html == "<p>a 1\nb T</p>\n"
    assert warnings == []


def test_whitespace_control() -> None:
    result = render_liquid("a  {%- include x -%}  b", path="p.md")
    assert result.text == "ab"


def test_unclosed_block_is_an_error_with_line() -> None:
    with pytest.raises(SourceError) as info:
        render_liquid("x\n{% highlight python %}\ny\n", path="p.md", first_line=5)
    assert (info.value.path, info.value.line) == ("p.md", 6)


def test_content_is_never_evaluated_as_jinja() -> None:
    html, _ = liquid("{{ site.__class__ }} {{ site.title.__class__ }}\n")
    assert "class" not in html
    # not Liquid at all: Jekyll's lax parser reads it with a warning (a syntax error under
    # error_mode: strict), and never as Python
    html, warnings = liquid("{{ ''.__class__ }}\n")
    assert "class" not in html
    assert [line for line, _ in warnings] == [1]
    assert warnings[0][1].startswith("Liquid syntax error: Expected end_of_string but found dot")
