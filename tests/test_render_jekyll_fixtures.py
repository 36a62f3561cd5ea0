"""deploybot's output against real Jekyll 4.3.1's, from committed fixtures
(``tests/fixtures/jekyll/<case>/{site,expected}``; ``python -m tests.make_jekyll_fixtures``
rebuilds ``expected/`` with Jekyll).

Whitespace normalisation (the only difference allowed): each line is stripped at both ends
and blank lines are dropped. Liquid's whitespace around tags differs in no case here; the
lines Jekyll and deploybot indent differently are those kramdown and mistune indent.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.read.source import DirTree, MemoryTree

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "jekyll"


def normalise(text: str) -> str:
    """Return ``text`` with each line stripped and blank lines dropped."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def expected(case: str) -> dict[str, bytes]:
    root = FIXTURES / case / "expected"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@cache
def built(case: str) -> SiteBuild:
    return build_site(DirTree(FIXTURES / case / "site"), RenderOptions())


def test_sample_site_with_its_own_theme_builds_as_jekyll_does() -> None:
    theirs, ours = expected("sample_site"), built("sample_site")
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        assert normalise(ours.files[path].decode()) == normalise(data.decode()), path
    assert ours.warnings == ()


def test_sample_site_paginates_the_index() -> None:
    files = built("sample_site").files
    assert b"Page 1 of 3 (5 notes)" in files["index.html"]
    assert b'<a href="/page2/">Older</a>' in files["index.html"]
    assert b'<a href="/">Newer</a>' in files["page2/index.html"]
    assert b"First note" in files["page3/index.html"]


AGREEMENT = sorted(p.name for p in (FIXTURES / "liquid_agreement" / "expected" / "cases").iterdir())


@pytest.mark.parametrize("name", AGREEMENT)
def test_liquid_agreement_with_jekyll(name: str) -> None:
    theirs = expected("liquid_agreement")[f"cases/{name}"].decode()
    ours = built("liquid_agreement").files[f"cases/{name}"].decode()
    assert normalise(ours) == normalise(theirs)


def test_the_agreement_set_is_at_least_forty_templates() -> None:
    assert len(AGREEMENT) >= 40
    assert built("liquid_agreement").warnings == ()


def test_front_matter_dates_read_as_jekyll_reads_them() -> None:
    """152 ``date`` values Jekyll 4.3.1 accepts (Ruby's ``Time.parse``: ``3-7-2019`` is 3
    July, a YAML timestamp without offset is UTC, ``2019-03-07 10:00`` is local time...),
    each printed by its post and listed in date order."""
    theirs, ours = expected("dates"), built("dates")
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        assert normalise(ours.files[path].decode()) == normalise(data.decode()), path


def test_unclosed_front_matter_renders_as_jekyll_does() -> None:
    theirs, ours = expected("leniency"), built("leniency")
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        assert normalise(ours.files[path].decode()) == normalise(data.decode()), path
    unclosed = sorted(w.path for w in ours.warnings if "not closed" in w.message)
    assert unclosed == ["_posts/2021-02-03-unclosed-post.md", "unclosed-html.html", "unclosed.md"]


def _same_as_jekyll(case: str) -> SiteBuild:
    theirs, ours = expected(case), built(case)
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        ours_text = ours.files[path].decode("utf-8", "replace")
        assert normalise(ours_text) == normalise(data.decode("utf-8", "replace")), path
    return ours


def test_content_model_builds_as_jekyll_does() -> None:
    """Collections (``output``, ``permalink``, ``sort_by``, ``site.<label>``,
    ``site.collections``, a collection's static file), ``feed.xml``/``.json``/``.css``/
    ``.rss``/``.txt`` pages with front matter, front matter ``defaults`` by path and type,
    ``slug:``, file names slugified as Jekyll does (``Ünïcödé Title, with Spaces!``), a
    post without front matter, ``excerpt_separator: ""``, ``3-7-2019``, ``time:`` as
    ``site.time`` and the future cut-off (a post a second before it written, one a second
    after it and a document after it not), the
    site's own ``index.html``, ``CNAME``, ``{% link %}`` to a collection document."""
    ours = _same_as_jekyll("content_model")
    future = "skipped: the post has a future date"
    assert [(w.path, w.message) for w in ours.warnings] == [
        ("_posts/2021-06-01-just-after.md", future),
        ("_posts/2021-07-01-future.md", future),
    ]


def test_future_true_publishes_every_date() -> None:
    _same_as_jekyll("future")


def test_reading_rules_as_jekyll() -> None:
    """``exclude`` (a prefix, a glob), ``include`` (a folder, a file inside an
    underscore folder, a dot file), Jekyll's default excludes (``Gemfile``,
    ``node_modules``, ``vendor/bundle``), ``_``/``.``/``#``/``~`` names, ``_posts`` in a
    folder and below it, a hidden folder inside ``_posts``."""
    ours = _same_as_jekyll("reading")
    assert [w.path for w in ours.warnings] == ["_posts/readme.md"]


def test_symlinks_inside_the_tree_publish_their_targets() -> None:
    """A page, a post, a static file and a chain of symlinks are published as their
    targets under their own names (``jekyll build --safe``); the two pointing outside the
    source are left out, each with one warning naming it."""
    ours = _same_as_jekyll("symlinks")
    assert [(w.path, w.message) for w in ours.warnings] == [
        (
            "outside-abs.txt",
            "symlink not published: its target '/etc/hostname' is outside the source tree",
        ),
        (
            "outside-rel.txt",
            "symlink not published: its target '../outside.txt' is outside the source tree",
        ),
    ]


def _byte_for_byte(case: str) -> SiteBuild:
    """The case's stylesheets and source maps equal Jekyll's byte for byte (its HTML as
    everywhere, normalised)."""
    theirs, ours = expected(case), built(case)
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        if path.endswith(".html"):
            assert normalise(ours.files[path].decode()) == normalise(data.decode()), path
        else:
            assert ours.files[path] == data, path
    return ours


def test_sass_pages_compile_as_jekyll_does() -> None:
    """``assets/main.scss`` (front matter, Liquid, ``@charset``) importing partials of
    ``_sass/`` (a folder's partial importing its neighbour, an indented ``.sass`` one, an
    ``_index.scss``) and of a ``load_paths`` folder, CSS and URL imports kept, an indented
    ``css/indented.sass``, ``style: expanded``, a source map beside each stylesheet; a
    ``.scss`` without front matter copied as it is."""
    assert _byte_for_byte("sass").warnings == ()
    assert expected("sass")["assets/main.css"].endswith(b"/*# sourceMappingURL=main.css.map */")


def test_sass_options_as_jekyll() -> None:
    """``style: ":nested"``, ``sass_dir: _styles``, ``line_comments: true`` (the files named
    relative to the site folder), ``sourcemap: never`` (no map, no ``sourceMappingURL``),
    a partial at the root found from ``assets/css/`` (the stylesheet counts as a root
    file), ``@charset`` for non-ASCII output."""
    assert _byte_for_byte("sass_options").warnings == ()
    assert "assets/css/site.css.map" not in expected("sass_options")


def test_sass_documents_of_a_collection_compile_as_jekyll_does() -> None:
    """``.scss`` and ``.sass`` documents with front matter in ``_styles/`` (``output:
    true``) become ``.css`` at their collection URL, in no layout (a default ``layout:``
    ignored), named ``stdin`` in line comments and with no source map, while a page beside
    them has its map; ``site.styles`` shows their CSS as ``content``, a document of a
    collection not written too; a document without front matter is copied as it is; a
    ``.scss`` post (``posts`` is a collection) compiles the same way, its layout ignored."""
    assert _byte_for_byte("sass_collection").warnings == ()
    theirs = expected("sass_collection")
    assert theirs["styles/main.css"].startswith(b"/* Main */\n/* line 3, stdin */ .doc {")
    assert "styles/main.css.map" not in theirs and "assets/page.css.map" in theirs
    assert theirs["2024/01/02/colours.css"] == b"/* line 2, stdin */ .post { color: #c00; }\n"


def test_listed_contents_are_what_jekyll_had_rendered_by_then() -> None:
    """``post.content`` of ``site.posts``, ``site.<label>``, ``page.previous``/``next``
    and ``post.previous``/``next`` (Jekyll renders the posts oldest first, then the
    collections, then the pages; until a document is rendered its ``content`` is its raw
    body): a post sees the older posts rendered, itself raw in its body and rendered in its
    layout, the newer ones and the documents raw; a document the posts and the documents
    before it rendered; a page everything rendered."""
    ours = _same_as_jekyll("contents")
    assert ours.warnings == ()
    beta = ours.files["2021/03/02/beta.html"].decode()
    assert "Gamma [Gamma `three`, {{ page.url }}." in beta  # newer: raw
    assert "Alpha [&lt;p&gt;Alpha &lt;em&gt;one&lt;/em&gt;, Alpha.&lt;/p&gt;" in beta
    assert "prev=Alpha next=Gamma" in beta


def test_listed_outputs_and_page_contents_are_what_jekyll_had_made_by_then() -> None:
    """``output`` of ``site.posts``, ``site.<label>`` and ``page.previous``/``next``: the
    whole output, layouts included, once Jekyll has rendered the document (posts oldest
    first, then each collection, then the pages), ``nil`` before and for the reader itself;
    a collection with ``output: false`` is rendered too. ``content`` of ``site.pages``:
    converted for the pages before the reader by file name, raw for itself (in its body)
    and the pages after it and for every post and document; a page's ``output`` is its
    front matter's or ``nil``."""
    ours = _same_as_jekyll("listed_output")
    assert ours.warnings == ()
    alpha = normalise(ours.files["2021/04/01/alpha.html"].decode())
    assert "<li>Beta output=[]</li>" in alpha  # newer: not rendered yet
    assert "<li>Alpha output=[]</li>" in alpha  # itself
    gamma = normalise(ours.files["2021/04/03/gamma.html"].decode())
    assert "<li>Beta output=[&lt;html&gt;&lt;body&gt;" in gamma  # older: its whole output
    about = normalise(ours.files["about.html"].decode())
    assert "<li>about.md content=[&lt;p&gt;About &lt;em&gt;us&lt;/em&gt; on about.md" in about
    assert "<li>index.md content=[Docs *index*:" in about
    assert "output=[from front matter]" in about


def test_content_gaps_found_on_real_sites_render_as_jekyll() -> None:
    """``sort`` on a hash (Ruby's ``Hash#sort``: ``[key, value]`` pairs by key, printed
    joined); ``sort`` of posts without a property, or with an undefined one (``sort: url``
    on blog.pwkf.org's tags page), as Jekyll's ``Document#<=>``: by date, then path;
    ``nil`` and ``true`` arguments of ``prepend``/``append``/``remove``/``replace`` as
    Ruby's ``to_s`` (``"/feed.xml" | prepend: site.url`` in a layout, without a ``url``:
    documentation-theme-jekyll's head); ``site.related_posts`` (the 10 newest posts but
    the one rendered, for a post or a collection document; nil for a page: lanyon's and
    mojombo.github.io's posts); ``post == page`` true for the document rendered (one
    ``DocumentDrop`` a document; ``site.posts contains page`` stays false: blog.pwkf.org's
    related posts skip the post itself); ``highlighter: none`` (kramdown highlights
    nothing: ``<pre><code class="language-X">``, a bare ``<code>``; an empty
    ``highlighter:`` is Rouge)."""
    ours = _same_as_jekyll("gaps")
    assert ours.warnings == ()
    by_tag = ours.files["sort-docs.html"].decode()
    assert "<h3>a</h3>\n<p>Beta;Alpha;Zed;Moved;</p>" in by_tag  # reversed: Alpha, Beta same day
    nil_args = ours.files["nil-args.html"].decode()
    assert "<p>[/feed.xml] [a] [atrue] [-a] [ab] [atrueb] [a-b]</p>" in nil_args
    assert "<p>page related=[] []</p>" in nil_args
    newest = "Beta;Alpha;Zed;Moved;Old 8;Old 7;Old 6;Old 5;Old 4;"
    assert f"related={newest}Old 3; size=10" in ours.files["2021/06/01/related.html"].decode()
    assert f"related=Related;{newest}</p>" in ours.files["notes/a.html"].decode()
    equality = "self=Related; contains=no first=yes ne=yes notes="
    assert equality in ours.files["2021/06/01/related.html"].decode()
    assert "self=A note" in ours.files["notes/a.html"].decode()


def test_site_lists_found_on_real_sites_render_as_jekyll() -> None:
    """``site.html_pages`` (the pages whose output is HTML or whose URL ends in ``/``, in
    ``site.pages`` order: just-the-docs' navigation); ``group_by_exp`` names as the
    expression gives them (``1``, ``1.0``, ``"1"`` and ``nil`` four groups, ``1 == 1.0``),
    ``group_by``'s as text; ``scssify``/``sassify`` (the site's converter, ``_sass`` on the
    load path, no source map: just-the-docs' ``head-nav.css``); a page whose permalink
    ends in ``/`` written as ``index`` + its own extension (``data/index.json``)."""
    ours = _same_as_jekyll("site_lists")
    assert ours.warnings == ()
    index = ours.files["index.html"].decode()
    assert "<li>data.json /data/</li><li>guide.html /docs/guide.html</li>" in index
    assert "<p>5 of 8</p>" in index
    assert '<li>1 1 one</li><li>2 1</li><li>1.0 1 one</li><li>"1" 1 text</li>' in index
    assert "<style>a { color: #336699; }" in index
    assert "<style>p { border: 2px solid red; }" in index
    assert ours.files["data/index.json"] == b'{"a": 1}\n'


def test_kramdown_line_numbers_as_rouge_writes_them() -> None:
    """``kramdown.syntax_highlighter_opts.block.line_numbers`` (mediumish-theme-jekyll) puts
    fenced and indented code blocks in Rouge's table (``rouge-gutter gl``, ``rouge-code``),
    numbered from ``start_line``; inline code and ``{% highlight %}`` are left alone."""
    ours = _same_as_jekyll("line_numbers")
    assert ours.warnings == ()
    index = ours.files["index.html"].decode()
    assert '<td class="rouge-gutter gl"><pre class="lineno">3\n4\n5\n</pre>' in index
    assert '<td class="gutter gl"><pre class="lineno">1\n</pre>' in index


def test_kramdown_highlighter_options_not_followed_are_warned_about() -> None:
    config = (
        b"kramdown:\n  syntax_highlighter_opts:\n    css_class: x\n"
        b"    block: {line_numbers: true, wrap: true}\n    span: {disable: true}\n"
    )
    site = build_site(MemoryTree({"_config.yml": config}), RenderOptions())
    messages = [w.message for w in site.warnings]
    assert "kramdown.syntax_highlighter_opts.css_class is not supported: ignored" in messages
    assert "kramdown.syntax_highlighter_opts.block.wrap is not supported: ignored" in messages
    assert "kramdown.syntax_highlighter_opts.span is not supported: ignored" in messages
