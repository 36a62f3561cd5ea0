"""The Liquid subset in post and page content: tags, outputs, filters, includes, hostile input."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from deploybot.errors import SourceError
from deploybot.render import RenderOptions, build_site
from deploybot.render.liquid import MAX_WARNINGS, render_liquid
from deploybot.render.liquid_filters import ExpressionError, parse_expression
from deploybot.render.source import MemoryTree

LA = ZoneInfo("America/Los_Angeles")
SITE: dict[str, Any] = {
    "title": "T & Co",
    "url": "https://example.org",
    "baseurl": "/blog",
    "posts": [
        {"path": "_posts/2020-07-14-hello.md", "url": "/2020/07/14/hello"},
        {"path": "news/_posts/2019-01-02-old.md", "url": "/news/2019/01/02/old"},
    ],
    "pages": [{"path": "about.md", "url": "/about"}],
    "static_files": [{"path": "/images/a.png", "url": "/images/a.png"}],
}
PAGE: dict[str, Any] = {"title": 'Say "hi"', "date": datetime(2020, 7, 14, tzinfo=LA)}


def run(text: str, include: dict[str, bytes] | None = None) -> tuple[str, list[tuple[int, str]]]:
    files = include or {}
    result = render_liquid(
        text,
        path="_posts/p.md",
        first_line=5,
        variables={"site": SITE, "page": PAGE},
        include=files.get,
    )
    text_out = result.text
    for key, fragment in result.fragments.items():
        text_out = text_out.replace(key, fragment)
    return text_out, [(w.line or 0, w.message) for w in result.warnings]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ site.title }}", "T & Co"),
        ("{{ page.title | xml_escape }}", "Say &quot;hi&quot;"),
        ("{{ '/a.png' | relative_url }}", "/blog/a.png"),
        ('{{ "a.png" | absolute_url }}', "https://example.org/blog/a.png"),
        ('{{ page.date | date: "%b %-d, %Y" }}', "Jul 14, 2020"),
        ("{{ page.date | date_to_xmlschema }}", "2020-07-14T00:00:00-07:00"),
        ("{{ page.date | date_to_rfc822 }}", "Tue, 14 Jul 2020 00:00:00 -0700"),
        ("{{ page.missing | default: 'x' }}", ""),
        ("{{ site.posts.size }}", "2"),
        ("{{ 'a' | append: 'b' | upcase }}", "AB"),
        ("{{- site.title -}}", "T & Co"),
    ],
)
def test_outputs_and_filters(source: str, expected: str) -> None:
    assert run(source)[0] == expected


def test_undefined_variable_renders_empty_with_a_warning_on_its_line() -> None:
    text, warnings = run("a\n\nb {{ page.nope }} c")
    assert text == "a\n\nb  c"
    assert warnings == [
        (7, "Liquid output {{ page.nope }} rendered empty: page.nope is not defined")
    ]


def test_unknown_filter_keeps_the_value_and_warns() -> None:
    text, warnings = run("{{ site.title | shout }}")
    assert text == "T & Co" and "unknown Liquid filter 'shout'" in warnings[0][1]


def test_highlight_block_shapes() -> None:
    text, warnings = run("{% highlight c++ %}\nint x;\n{% endhighlight %}")
    assert warnings == []
    assert text.startswith(
        '<figure class="highlight"><pre><code class="language-c--" data-lang="c++">'
    )
    assert text.endswith("</code></pre></figure>")
    table, _ = run("{% highlight python linenos %}\na = 1\nb = 2\n{% endhighlight %}")
    assert '<table class="rouge-table"><tbody><tr><td class="gutter gl">' in table
    assert '<pre class="lineno">1\n2\n</pre>' in table


def test_liquid_inside_highlight_is_rendered_and_raw_protects() -> None:
    text, _ = run(
        "{% highlight text %}{{ site.title }} {% raw %}{{ x }}{% endraw %}{% endhighlight %}"
    )
    assert "T &amp; Co {{ x }}" in text


def test_raw_and_comment() -> None:
    assert run("{% raw %}{{ x }}{% if %}{% endraw %}")[0] == "{{ x }}{% if %}"
    assert run("a{% comment %} {{ secret }} {% endcomment %}b") == ("ab", [])


def test_post_url_and_link_include_baseurl() -> None:
    assert run("{% post_url 2020-07-14-hello %}")[0] == "/blog/2020/07/14/hello"
    assert run("{% post_url news/2019-01-02-old %}")[0] == "/blog/news/2019/01/02/old"
    assert run("{% link about.md %} {% link images/a.png %}")[0] == "/blog/about /blog/images/a.png"
    assert run("{% link _posts/2020-07-14-hello.md %}")[0] == "/blog/2020/07/14/hello"
    text, warnings = run("x\n{% post_url 1999-01-01-none %} {% link nope.md %}")
    assert text == "x\n "
    assert [line for line, _ in warnings] == [6, 6]


def test_include_plain_html_is_inserted() -> None:
    text, warnings = run("{% include note.html %}", {"note.html": b"<aside>Hi</aside>\n"})
    assert (text, warnings) == ("<aside>Hi</aside>\n", [])


def test_include_with_liquid_or_missing_warns_and_renders_nothing() -> None:
    text, warnings = run(
        "{% include a.html %}\n{% include JB/setup %}\n{% include b.html %}",
        {"a.html": b"{{ page.title }}"},
    )
    assert text == "\n\n"
    assert [line for line, _ in warnings] == [5, 6, 7]
    assert "uses Liquid" in warnings[0][1] and "JB/setup" in warnings[1][1]
    assert "no file _includes/b.html" in warnings[2][1]


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "a/../../x", "{{ page.x }}", "a\\b", ""]
)
def test_include_never_leaves_includes_folder(name: str) -> None:
    asked: list[str] = []

    def reader(path: str) -> bytes | None:
        asked.append(path)
        return b"secret"

    result = render_liquid(f"{{% include {name} %}}", path="p.md", include=reader)
    assert result.text == "" and asked == [] and len(result.warnings) == 1


def test_unknown_tags_warn_with_line_and_keep_block_bodies() -> None:
    text, warnings = run("{% for p in site.posts %}\nitem\n{% endfor %}{% assign x = 1 %}")
    assert text == "\nitem\n"
    assert [line for line, _ in warnings] == [5, 7, 7]
    assert all("unsupported Liquid tag" in message for _, message in warnings)


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ page.__class__ }}",
        "{{ site.posts.__len__ }}",
        "{{ site.title.upper }}",
        "{{ page | attr: '__class__' }}",
        "{{ site.title | __import__: 'os' }}",
        "{{ self }}{{ cycler.__init__.__globals__ }}",
    ],
)
def test_hostile_expressions_reach_no_python_object(source: str) -> None:
    text, warnings = run(source)
    assert "class" not in text and "module" not in text and "function" not in text
    assert warnings


def test_expression_parser_rejects_what_it_does_not_know() -> None:
    for bad in ("a |", "a | f:", "a + b", "(a)", "a[0]", "'x' 'y'"):
        with pytest.raises(ExpressionError):
            parse_expression(bad)


def test_deep_nesting_and_many_tags_stay_linear_and_capped() -> None:
    source = "{% if a %}" * 20000 + "x" + "{% endif %}" * 20000
    started = time.monotonic()
    result = render_liquid(source, path="p.md")
    assert time.monotonic() - started < 5
    assert "x" in result.text
    assert len(result.warnings) == MAX_WARNINGS + 1
    assert "39900 more Liquid warnings" in result.warnings[-1].message


def test_huge_input_with_unclosed_markup_is_fast() -> None:
    source = "{{ {% " * 200_000
    started = time.monotonic()
    result = render_liquid(source + "{{ site.title }}", path="p.md", variables={"site": SITE})
    unclosed = render_liquid(source, path="p.md")
    assert time.monotonic() - started < 5
    # Liquid reads "{{ … }}" up to the first "}}": one long expression, refused with a warning.
    assert result.text == "" and "expression too long" in result.warnings[0].message
    assert unclosed.text == source and unclosed.warnings == ()


def test_unclosed_highlight_is_an_error_naming_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        render_liquid("x\n{% highlight python %}\ny\n", path="p.md", first_line=5)
    assert (info.value.path, info.value.line) == ("p.md", 6)


def test_liquid_runs_before_markdown_in_a_build() -> None:
    tree = MemoryTree(
        {
            "_config.yml": b"title: Site\nurl: https://example.org\n",
            "_includes/cta.html": b'<div class="cta">Join</div>\n',
            "_posts/2020-01-02-a.md": (
                b"---\ntitle: A *post*\n---\n# {{ page.title }}\n\n{% include cta.html %}\n\n"
                b"Back to [B]({% post_url 2020-01-01-b %}).\n"
            ),
            "_posts/2020-01-01-b.md": b"---\ntitle: B\n---\nB\n",
        }
    )
    build = build_site(tree, RenderOptions())
    html = build.files["2020/01/02/a.html"].decode()
    assert '<h1 id="a-post">A <em>post</em></h1>' in html
    assert '<div class="cta">Join</div>' in html
    assert '<a href="/2020/01/01/b.html">B</a>' in html
    assert build.warnings == ()
