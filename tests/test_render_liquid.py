"""Liquid (python-liquid with Jekyll's tags and filters) in posts, pages, includes and the
site's own layouts: outputs, tags, includes, errors with file and line, and the limits."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.liquid import environment
from deploybot.render.liquid.settings import ErrorMode, LiquidSettings
from deploybot.render.liquid.tags import TAGS, register_tag
from deploybot.render.liquid.templates import Liquid, render_liquid
from deploybot.render.model import LiquidLimits, RenderOptions
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.pathological import HANG_S, LINEAR_LIMIT, render_body, run_in_child, work_growth

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
SITE_POSTS = (
    '{"path"=>"_posts/2020-07-14-hello.md", "url"=>"/2020/07/14/hello"}'
    '{"path"=>"news/_posts/2019-01-02-old.md", "url"=>"/news/2019/01/02/old"}'
)  # Liquid joins a list; Ruby's Hash#to_s is its inspect
PAGE: dict[str, Any] = {"title": 'Say "hi"', "date": datetime(2020, 7, 14, tzinfo=LA)}


def engine(files: dict[str, bytes] | None = None, **limits: int) -> Liquid:
    tree = MemoryTree(files or {})
    return Liquid(
        tree, url="https://example.org", baseurl="/blog", timezone=LA, limits=LiquidLimits(**limits)
    )


def run(
    text: str, include: dict[str, bytes] | None = None, liquid: Liquid | None = None
) -> tuple[str, list[tuple[int, str]]]:
    files = {f"_includes/{k}": v for k, v in (include or {}).items()}
    result = render_liquid(
        text,
        path="_posts/p.md",
        first_line=5,
        variables={"site": SITE, "page": PAGE},
        liquid=liquid or engine(files),
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
        ("{{ page.date }}", "2020-07-14 00:00:00 -0700"),
        ("{{ page.missing | default: 'x' }}", "x"),
        ("{{ site.posts.size }}", "2"),
        ("{{ 'a' | append: 'b' | upcase }}", "AB"),
        ("{{- site.title -}}", "T & Co"),
        ("{{ nope }}[{{ page.nope.deeper }}]", "[]"),
        ("{{ site.title | shout }}", "T & Co"),
    ],
)
def test_outputs_and_filters(source: str, expected: str) -> None:
    assert run(source) == (expected, [])


def test_assign_and_if_else_publish_one_branch() -> None:
    # The issue: ~950 release posts lost their download links ({% assign %} was dropped)
    # and if/else published both branches.
    source = (
        '{% assign base = "https://dl.example.org/v" | append: "1.2" %}'
        '{% if page.title contains "hi" %}<a href="{{ base }}/x.tgz">get</a>'
        "{% else %}none{% endif %}"
    )
    assert run(source) == ('<a href="https://dl.example.org/v1.2/x.tgz">get</a>', [])


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


def test_include_with_parameters_and_liquid_inside() -> None:
    files = {"note.html": b"<aside>{{ include.who }} {{ page.title | size }}</aside>\n"}
    text, warnings = run('{% include note.html who="you" %}', files)
    assert (text, warnings) == ("<aside>you 8</aside>\n", [])


def test_missing_include_renders_nothing_with_a_warning_on_its_line() -> None:
    text, warnings = run("a\n{% include JB/setup %}\n{% include b.html %}")
    assert text == "a\n\n"
    assert [line for line, _ in warnings] == [6, 7]
    assert "JB/setup" in warnings[0][1] and "no file _includes/b.html" in warnings[1][1]


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "a/../../x", "{{ page.x }}", "a\\b", ".GIT/x"]
)
def test_include_never_leaves_the_includes_folder(name: str) -> None:
    secret = {"_includes/../../etc/passwd": b"secret", "etc/passwd": b"secret"}
    with pytest.raises(SourceError) as info:
        run(f"x\n{{% include {name} %}}", liquid=engine(secret))
    assert (info.value.path, info.value.line) == ("_posts/p.md", 6)


def test_include_relative_reads_beside_the_page_only() -> None:
    liquid = engine({"_posts/part.txt": b"part {{ include.n }}", "secret.txt": b"no"})
    assert run('{% include_relative part.txt n="1" %}', liquid=liquid)[0] == "part 1"
    with pytest.raises(SourceError):
        run("{% include_relative ../secret.txt %}", liquid=liquid)


@pytest.mark.parametrize(
    ("source", "output"),
    [
        # An unknown property is nil in Liquid, printed as nothing (Jekyll 4.3.1 too).
        ("{{ page.__class__ }}", ""),
        ("{{ page.__dict__ }}", ""),
        ("{{ page['__class__'] }}", ""),
        ("{{ page.date.__class__ }}", ""),
        ("{{ page.title.__class__ }}", ""),
        ("{{ site.__dict__ }}", ""),
        ("{{ site.posts.__len__ }}", ""),
        ("{{ site.posts.first.__class__ }}", ""),
        ("{{ site.title.upper }}", ""),
        ("{{ self }}{{ cycler.__init__.__globals__ }}", ""),
        ("{% for k in page.__class__.__mro__ %}{{ k }}{% endfor %}", ""),
        # An unknown filter is skipped (Jekyll's default, liquid.strict_filters false): the
        # value itself is printed, a mapping as Ruby prints a Hash, never Python's repr.
        ("{{ site.title | __import__: 'os' }}", "T & Co"),
        (
            "{{ page | attr: '__class__' }}",
            '{"title"=>"Say \\"hi\\"", "date"=>2020-07-14 00:00:00 -0700}',
        ),
        ("{{ site.posts | attr: '__class__' }}", SITE_POSTS),
    ],
)
def test_hostile_expressions_reach_no_python_object(source: str, output: str) -> None:
    assert run(source)[0] == output


def test_a_python_expression_is_a_syntax_error() -> None:
    """An error with ``liquid.error_mode: strict``; in Jekyll's default ``warn`` mode
    (Jekyll 4.3.1, measured) a warning, and the lax parser's reading prints nothing."""
    strict = Liquid(None, settings=LiquidSettings(error_mode=ErrorMode.STRICT))
    with pytest.raises(SourceError) as info:
        run("{{ ''.__class__.__mro__ }}", liquid=strict)
    assert "Liquid syntax error: Expected end_of_string but found dot" in info.value.message
    text, warnings = run("x\n{{ ''.__class__.__mro__ }}")
    assert text == "x\n" and [line for line, _ in warnings] == [6]
    assert "Expected end_of_string but found dot" in warnings[0][1]


def test_syntax_error_names_the_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        run("a\nb\n{% for x in %}{% endfor %}")
    assert (info.value.path, info.value.line) == ("_posts/p.md", 7)
    assert "Liquid syntax error" in info.value.message


def test_error_inside_an_include_names_the_include() -> None:
    files = {"bad.html": b"ok\n{% if %}\n"}
    with pytest.raises(SourceError) as info:
        run("{% include bad.html %}", files)
    assert (info.value.path, info.value.line) == ("_includes/bad.html", 2)


def test_unclosed_highlight_is_an_error_naming_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        render_liquid("x\n{% highlight python %}\ny\n", path="p.md", first_line=5)
    assert info.value.path == "p.md" and info.value.line is not None


def test_deep_nesting_is_refused_in_linear_work() -> None:
    def nesting(depth: int) -> str:
        return "{% if a %}" * depth + "x" + "{% endif %}" * depth

    with pytest.raises(SourceError) as info:
        render_liquid(nesting(20_000), path="p.md")
    assert "render.liquid_max_depth" in info.value.message
    # Refused at the limit's depth: the work grows with the text (lexed once), no faster.
    growth = run_in_child(HANG_S, work_growth, render_body, (nesting(2_500),), (nesting(20_000),))
    assert growth < LINEAR_LIMIT


def test_huge_input_with_unclosed_markup_is_refused_in_linear_work() -> None:
    with pytest.raises(SourceError):
        render_liquid("{{ {% " * 200_000, path="p.md")
    small, large = ("{{ {% " * 25_000,), ("{{ {% " * 200_000,)
    assert run_in_child(HANG_S, work_growth, render_body, small, large) < LINEAR_LIMIT


def test_loop_bomb_stops_before_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[int] = []  # the lengths each loop asked the iteration budget for
    budget_check = environment._BudgetContext.raise_for_loop_limit

    def counted(context: environment._BudgetContext, length: int = 1) -> None:
        checked.append(length)
        budget_check(context, length)

    monkeypatch.setattr(environment._BudgetContext, "raise_for_loop_limit", counted)
    bomb = "{% for a in (1..100000) %}{% for b in (1..100000) %}x{% endfor %}{% endfor %}"
    with pytest.raises(SourceError) as info:
        run("\n" + bomb)
    assert checked == [100_000, 100_000]  # refused as the inner loop starts: no iteration
    assert (info.value.path, info.value.line) == ("_posts/p.md", 6)
    assert "render.liquid_max_loop_iterations" in info.value.message


def test_sequential_loops_count_together() -> None:
    loops = "{% for a in (1..600) %}{% endfor %}" * 2
    assert run(loops, liquid=engine(max_loop_iterations=1200))[0] == ""
    with pytest.raises(SourceError, match="liquid_max_loop_iterations"):
        run(loops, liquid=engine(max_loop_iterations=1000))


def test_output_and_filters_stop_at_the_page_limit() -> None:
    small = Liquid(MemoryTree({}), max_output=1000)
    with pytest.raises(SourceError, match="max_page_bytes"):
        run("{% for a in (1..2000) %}x{% endfor %}", liquid=small)
    doubling = '{% assign s = "xxxxxxxxxx" %}' + "{% assign s = s | append: s %}" * 60
    with pytest.raises(SourceError, match=r"max_page_bytes|liquid_max_local_bytes"):
        run(doubling, liquid=small)
    with pytest.raises(SourceError, match="max_page_bytes"):
        run(
            '{{ "aaaaaaaaaaaaaaaaaaaa" | replace: "a", "' + "b" * 60 + '" }}',
            liquid=small,
        )


def test_include_recursion_stops_at_the_depth_limit() -> None:
    files = {"loop.html": b"{% include loop.html %}"}
    with pytest.raises(SourceError) as info:
        run("{% include loop.html %}", files)
    assert "render.liquid_max_depth" in info.value.message


def test_tag_registry_adds_a_tag_to_new_environments() -> None:
    from liquid.builtin.tags.echo_tag import EchoTag

    class Shout(EchoTag):  # a stand-in for jekyll-toc's {% toc %}
        name = "shout"

    register_tag(Shout)
    try:
        assert run("{% shout 'hi' | upcase %}")[0] == "HI"
    finally:
        del TAGS["shout"]


def test_liquid_runs_before_markdown_in_a_build() -> None:
    tree = MemoryTree(
        {
            "_config.yml": b"title: Site\nurl: https://example.org\n",
            "_includes/cta.html": b'<div class="cta">Join {{ site.title }}</div>\n',
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
    assert '<div class="cta">Join Site</div>' in html
    assert '<a href="/2020/01/01/b.html">B</a>' in html
    assert build.warnings == ()


def test_inspect_writes_a_mapping_as_ruby_does_as_printing_it_does() -> None:
    """Jekyll's ``inspect`` is ``xml_escape(input.inspect)``: a Hash as Ruby writes it
    (``{"a"=>1}``), the same text ``{{ mapping }}`` prints, not JSON's ``{"a": 1}``."""
    from deploybot.render.liquid.jekyll_filters import inspect, ruby_inspect

    value = {"a": 1, "b": [1, "y"], "c": None}
    assert (
        inspect(value)
        == "{&quot;a&quot;=&gt;1, &quot;b&quot;=&gt;[1, &quot;y&quot;], &quot;c&quot;=&gt;nil}"
    )
    assert inspect(value) == ruby_inspect(value).replace('"', "&quot;").replace(">", "&gt;")
    assert (inspect("x"), inspect(5), inspect(None)) == ("&quot;x&quot;", "5", "nil")


def test_builds_with_the_same_limits_share_one_environment() -> None:
    # Each document made its own environment (every tag registered, every filter wrapped):
    # a few milliseconds per document, most of a small incremental build's Liquid time.
    small = LiquidLimits(max_loop_iterations=7)
    first, second = Liquid(None, limits=small), Liquid(MemoryTree({}), limits=small)
    assert first.env is second.env
    assert Liquid(None).env is not first.env
    assert Liquid(None, limits=small, max_output=10).env is not first.env
    assert first.env.loop_iteration_limit == 7


@pytest.mark.parametrize(
    ("source", "expected"),
    [  # each expected value is what Jekyll 4.3.1's Liquid (Ruby Liquid 4.0.4) renders
        ("a\n  {%- if false -%}\n  y\n  {%- endif -%}\nb\n", "ab\n"),
        ("a{%- if true -%}\nb{% endif -%}\nc\n", "abc\n"),
        ("{{ 1 }}\n\n", "1\n\n"),
        ("{{ 1 -}}\n", "1"),
    ],
)
def test_the_newline_after_the_last_tag_stays(source: str, expected: str) -> None:
    # python-liquid's text rule ended at `$`, which matches before a final newline: the
    # newline became a text of its own, stripped by the `-%}` before it (minima's head.html
    # lost its last newline in every page).
    assert Liquid(None).env.from_string(source).render() == expected


@pytest.mark.parametrize(
    ("value", "args", "output"),
    [
        ("a b c d e", ": 5", "a b c d e"),  # exactly as many words: not cut
        ("a b c d e", ": 0", "a..."),
        ("  a\nb  c d", ": 2", "a b..."),
        ("a b c d", ": 3, 1", "a b c1"),
        (None, "", ""),
        ("a b c\n", ": 5", "a b c\n"),  # under the limit: the input as it is
        ("a\u00a0b c", ": 1", "a\u00a0b..."),  # a no-break space breaks no word in Ruby
        ("a b ", ": 2", "a b..."),  # Ruby's split keeps the empty field after a space
    ],
)
def test_truncatewords_as_ruby_liquid_5_4(value: str | None, args: str, output: str) -> None:
    """What Ruby Liquid 5.4.0 (Debian's, Jekyll's here) printed for each (``ruby -e``)."""
    source = "{{ v | truncatewords" + args + " }}"
    text = render_liquid(source, path="p.md", variables={"v": value})
    assert text.text == output


def test_escape_reads_its_input_as_ruby_to_s() -> None:
    """What Ruby Liquid 5.4.0 printed (``ruby -e``) for ``escape``/``escape_once`` of a
    mapping (minima's footer escapes ``site.author``), ``true``, ``nil``, a float, a list."""
    source = (
        "{{ v | escape }}|{{ t | escape }}|{{ n | escape }}|{{ f | escape_once }}|"
        "{{ l | escape }}|{{ x | escape_once }}"
    )
    values = {
        "v": {"name": None, "a": [1, "<b>"]},
        "t": True,
        "n": None,
        "f": 1.0,
        "l": ["a", "<"],
        "x": {"k": "&amp;"},
    }
    text = render_liquid(source, path="p.md", variables=values).text
    assert text == (
        "{&quot;name&quot;=&gt;nil, &quot;a&quot;=&gt;[1, &quot;&lt;b&gt;&quot;]}|true||1.0|"
        "[&quot;a&quot;, &quot;&lt;&quot;]|{&quot;k&quot;=&gt;&quot;&amp;&quot;}"
    )
