"""The Jekyll plugins (``deploybot.render.liquid.plugins``): the registry, and each plugin's
output against real Jekyll 4.3.1 with the Debian plugin gems (fixtures
``tests/fixtures/jekyll/plugins_*``, compared as :mod:`tests.test_render_jekyll_fixtures`
compares)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.liquid.plugins import registry
from deploybot.render.liquid.plugins.html_pipeline import LIMITS_WARNING
from deploybot.render.liquid.plugins.jekyll_github_metadata import (
    API_WARNING,
    NO_REPOSITORY,
    nwo_of_url,
)
from deploybot.render.liquid.plugins.jekyll_redirect_from import OWN_LAYOUT
from deploybot.render.liquid.plugins.jekyll_relative_links import EXCLUDE_WARNING
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.read.site import FRONTLESS_IN_COLLECTION
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.test_render_jekyll_fixtures import built, expected, normalise


def same_as_jekyll(case: str) -> SiteBuild:
    theirs, ours = expected(case), built(case)
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        ours_text = ours.files[path].decode("utf-8", "replace")
        assert normalise(ours_text) == normalise(data.decode("utf-8", "replace")), path
    return ours


def build(files: dict[str, bytes]) -> SiteBuild:
    return build_site(MemoryTree(files), RenderOptions())


LAYOUT = {"_layouts/default.html": b"<head>{% seo %}</head>{{ content }}"}


# the registry


def test_the_registry_finds_every_plugin_module() -> None:
    names = set(registry.known())
    assert {"jekyll-seo-tag", "jekyll-paginate", "jekyll-toc"} <= names
    assert all(p.name == n for n, p in registry.known().items())


def test_plugins_and_gems_are_read_once_each_in_order() -> None:
    data = {"plugins": ["jekyll-seo-tag", "jekyll-feed"], "gems": ["jekyll-feed", "jemoji"]}
    assert registry.named(data) == ("jekyll-seo-tag", "jekyll-feed", "jemoji")
    assert registry.named({"plugins": "jekyll-seo-tag"}) == ("jekyll-seo-tag",)
    assert registry.named({}) == ()


def test_an_unknown_plugin_gets_one_warning_naming_it() -> None:
    config = b"title: T\nplugins:\n  - jekyll-seo-tag\n  - jekyll-nonesuch\n"
    site = build({"_config.yml": config, **LAYOUT, "index.md": b"---\nlayout: default\n---\nx"})
    notes = [(w.path, w.line, w.message) for w in site.warnings]
    assert notes == [
        (
            "_config.yml",
            2,
            "plugin jekyll-nonesuch is not supported by deploybot: its output is left out",
        )
    ]


def test_a_plugin_tag_needs_the_plugin_switched_on() -> None:
    """Jekyll stops at an unknown tag: ``{% seo %}`` without jekyll-seo-tag in plugins."""
    page = {"index.md": b"---\nlayout: default\n---\nx"}
    with pytest.raises(SourceError, match="seo"):
        build({"_config.yml": b"title: T\n", **LAYOUT, **page})
    site = build({"_config.yml": b"title: T\ngems: [jekyll-seo-tag]\n", **LAYOUT, **page})
    assert b"<title>T</title>" in site.files["index.html"]
    assert [(w.line, w.message) for w in site.warnings] == [(2, registry.GEMS_RENAMED)]


# jekyll-seo-tag


def test_seo_tag_writes_what_jekyll_seo_tag_writes() -> None:
    """Titles with the tagline or the site title, descriptions from the front matter, the
    excerpt or the site (Markdown, HTML stripped), ``site.data.authors``, an author
    mapping of type Organization, images as a URL and as a mapping (height, width, alt),
    ``canonical_url``, ``locale``, ``seo.type``/``seo.name``, ``last_modified_at``, a
    paginated index (``Page 2 of 2 for``, prev/next links), ``title=false``, Twitter,
    Facebook and webmaster settings, the JSON-LD object."""
    site = same_as_jekyll("plugins_seo")
    assert site.warnings == ()
    assert b"<title>Page 2 of 2 for Seo &amp; Sample" in site.files["page2/index.html"]


def test_seo_tag_on_a_bare_site() -> None:
    """No url (no canonical link), ``name`` for the title, ``twitter`` as a string,
    ``google_site_verification``, ``authors``, an image with only ``facebook``/``twitter``,
    ``seo.date_modified``/``seo.links``, ``title=FALSE`` in a page, ``lang``."""
    site = same_as_jekyll("plugins_seo_bare")
    assert b"canonical" not in site.files["index.html"]


def test_seo_plain_text_is_formatted_as_its_markdown_would_be() -> None:
    """A plain title is not converted: the shortcut gives what the conversion gives, for
    texts of every character it lets through (list markers, colons, brackets, runs of
    spaces) and not for those it does not (quotes, dashes, emphasis)."""
    import random

    from deploybot.render.liquid.plugins.jekyll_seo_tag import _PLAIN, formatted
    from deploybot.render.markdown.renderer import make_markdown, markdown_to_html

    md = make_markdown()

    def convert(text: str) -> str:
        return markdown_to_html(text, md)

    def slow(text: str) -> str | None:
        from deploybot.render.liquid.plugins import jekyll_seo_tag as seo

        found = seo.escape_once(seo.normalize_whitespace(seo.strip_html(convert(text))))
        return found or None

    pieces = ["A", "b", "TVM", "1", "0)", " ", "  ", ",", ":", "(", ")", "?", "!", "IR", "x:y"]
    rng = random.Random(21)
    texts = ["TVM: An End to End IR Stack (0)", "Q1 (draft)", "Why? Because!", "A  b ", "a:b"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    plain = [t for t in texts if _PLAIN.fullmatch(t)]
    assert len(plain) > 1000
    for text in plain:
        assert formatted(convert, text) == slow(text), text
    for text in ("1. List", "It's", "A -- b", "*em*", "a & b", "x\ny", "- item", "# H"):
        assert not _PLAIN.fullmatch(text)


# jekyll-feed


def test_feed_writes_what_jekyll_feed_writes() -> None:
    """``/feed.xml`` of the newest ten posts but the ``draft: true`` one, with contents,
    summaries (``description``, the excerpt), ``site.data.authors``, an author mapping,
    categories and tags, images as a path and as ``image.path``, ``lang``,
    ``last_modified_at``, the site's author mapping; ``{% feed_meta %}``."""
    site = same_as_jekyll("plugins_feed")
    assert site.files["feed.xml"].count(b"<entry") == 10
    assert b"Not a draft really" not in site.files["feed.xml"]


def test_feed_settings_as_jekyll_feed_reads_them() -> None:
    """``feed.path``, ``posts_limit``, ``excerpt_only`` (and a post's own
    ``feed.excerpt_only: false``), category feeds (``feed.collections.posts.categories``
    winning over ``feed.categories``), a collection's feed and its category feed, tag
    feeds (``except``, a tag with ``-`` left out), a feed path the source has,
    ``feed.xslt.xml``."""
    site = same_as_jekyll("plugins_feed_settings")
    assert site.files["feed/events.xml"] == b"own events feed\n"


# jekyll-sitemap


def test_sitemap_writes_what_jekyll_sitemap_writes() -> None:
    """Posts and written collections' documents (an undated one dated ``site.time``,
    ``sitemap: false`` ones left out, a collection not written left out), HTML pages
    (``last_modified_at``, ``/index.html`` -> ``/``, ``404.html`` and ``sitemap: false``
    left out), the pages jekyll-paginate adds, ``sitemap.xsl``, ``robots.txt``."""
    site = same_as_jekyll("plugins_sitemap")
    assert b"Sitemap: https://map.example.org/m/sitemap.xml" in site.files["robots.txt"]
    assert site.files["sitemap.xml"] == expected("plugins_sitemap")["sitemap.xml"]  # bytes


def test_sitemap_lists_html_and_pdf_static_files_dated_at_the_build() -> None:
    """Static files ending in .html/.htm/.xhtml/.pdf are listed at their source path,
    with ``site.time`` as their modification time (git keeps none), but ``404.html`` and
    those whose front matter defaults set ``sitemap: false``; a source ``robots.txt``
    stays the source's."""
    config = (
        b"url: https://s.example.org\ntime: 2022-05-01 12:00:00 +0000\n"
        b"plugins: [jekyll-sitemap]\n"
        b"defaults:\n  - scope: {path: private}\n    values: {sitemap: false}\n"
    )
    files = {
        "_config.yml": config,
        "docs/guide.pdf": b"%PDF",
        "docs/page.htm": b"<p>static</p>",
        "private/secret.pdf": b"%PDF",
        "img/logo.png": b"png",
        "robots.txt": b"User-agent: *\n",
    }
    site = build(files)
    text = site.files["sitemap.xml"].decode()
    assert text.count("<url>") == 2
    assert (
        "<url>\n<loc>https://s.example.org/docs/guide.pdf</loc>\n"
        "<lastmod>2022-05-01T12:00:00+00:00</lastmod>\n</url>"
    ) in text
    assert "https://s.example.org/docs/page.htm" in text
    assert site.files["robots.txt"] == b"User-agent: *\n"


# jekyll-redirect-from


def test_redirects_as_jekyll_redirect_from_writes_them() -> None:
    """``redirect_from`` (a string, a list; ``/x/``, ``/x``, ``/x.php``, without a leading
    slash) on a page, a post and a collection document; ``redirect_to`` (relative, absolute,
    a list) on pages and a post, whose feed content is then empty; ``redirects.json``; the
    sitemap leaves the redirected documents out."""
    site = same_as_jekyll("plugins_redirect")
    assert b'url=https://r.example.org/base/about.html"' in site.files["moved.html"]
    assert site.warnings == ()


def test_redirects_json_is_left_to_the_source_or_switched_off() -> None:
    page = {"a.md": b"---\nredirect_from: /b/\n---\nA"}
    config = b"url: https://x.example.org\nplugins: [jekyll-redirect-from]\n"
    site = build({"_config.yml": config, **page})
    assert site.files["redirects.json"] == b'{"/b/":"https://x.example.org/a.html"}'
    assert b"https://x.example.org/a.html" in site.files["b/index.html"]
    site = build({"_config.yml": config, **page, "redirects.json": b"[]"})
    assert site.files["redirects.json"] == b"[]"
    site = build({"_config.yml": config + b"redirect_from: {json: false}\n", **page})
    assert "redirects.json" not in site.files
    assert "b/index.html" in site.files


def test_a_sites_own_redirect_layout_is_named_in_a_warning() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-redirect-from]\n",
        "_layouts/redirect.html": b"<p>{{ page.redirect.to }}</p>",
        "_layouts/default.html": b"{{ content }}",
        "a.md": b"---\nredirect_from: /b/\n---\nA",
    }
    site = build(files)
    assert [(w.path, w.message) for w in site.warnings] == [("a.md", OWN_LAYOUT)]
    assert site.files["b/index.html"].startswith(b"<!DOCTYPE html>")


def test_a_redirect_out_of_the_site_is_refused_with_a_warning() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-redirect-from]\n",
        "a.md": b"---\nredirect_from: [/../../etc/x, /ok/]\n---\nA",
    }
    site = build(files)
    assert "ok/index.html" in site.files
    assert [w.path for w in site.warnings] == ["a.md"]
    assert "leaves the site root" in site.warnings[0].message


# jekyll-github-metadata


def test_site_github_as_jekyll_github_metadata_gives_it_offline() -> None:
    """``repository:`` in _config.yml: the repository's names and URLs, the page kind,
    the development environment's Pages URL, ``null`` for the API's fields, the title
    fallback; ``{% github_edit_link %}`` with and without a text, in a page of a folder;
    one warning naming the API's fields."""
    site = same_as_jekyll("plugins_github_metadata")
    assert [w.message for w in site.warnings] == [API_WARNING]


@pytest.mark.parametrize(
    ("url", "nwo"),
    [
        ("https://github.com/octo/site.git", "octo/site"),
        ("git@github.com:octo/my.site.git", "octo/my.site"),
        ("ssh://git@github.com/octo/site", "octo/site"),
        ("https://gitlab.com/octo/site.git", ""),
        ("/srv/git/site.git", ""),
    ],
)
def test_the_repository_of_a_source_url(url: str, nwo: str) -> None:
    assert nwo_of_url(url) == nwo


def test_site_github_from_the_source_url_merged_with_the_config() -> None:
    """The source's repository when _config.yml names none (a user page here: its
    ``master`` branch, no project path); a ``github`` mapping merged over it."""
    files = {
        "_config.yml": b"title: T\ngithub: {owner_name: Someone}\n"
        b"plugins: [jekyll-github-metadata]\n",
        "_layouts/default.html": b"{{ content }}",
        "index.html": b"---\n---\n{{ site.title }} {{ site.github.owner_name }} "
        b"{{ site.github.zip_url }} {{ site.github.is_user_page }}",
    }
    options = RenderOptions(repository="octo/octo.github.io")
    site = build_site(MemoryTree(files), options)
    assert site.files["index.html"] == (
        b"T Someone https://github.com/octo/octo.github.io/zipball/master true"
    )
    site = build(files)
    assert site.files["index.html"] == b"T Someone  "  # _config.yml's own github only
    assert [w.message for w in site.warnings] == [NO_REPOSITORY]


# jekyll-avatar


def test_avatar_tags_as_jekyll_avatar_writes_them() -> None:
    """A name, ``@name`` with ``size=48`` (no ``avatar-small``), ``user=page.author``,
    ``user=site.owner.login``, ``{{ page.author }}`` with ``lazy=true``."""
    site = same_as_jekyll("plugins_avatar")
    assert b"https://avatars3.githubusercontent.com/hubot?v=3&s=40" in site.files["index.html"]


# jekyll-include-cache


def test_include_cached_keeps_an_output_per_key_as_the_plugin_does() -> None:
    """``{% include_cached %}`` renders as ``include``; a second call with the same path
    and parameter values writes the first one's output again (the key leaves out the
    names: ``y="a"`` after ``x="a"`` writes ``x=a``), ``n=2`` is another key; the plain
    ``include`` is not cached."""
    site = same_as_jekyll("plugins_include_cache")
    index = site.files["index.html"].decode()
    assert index.count("<p>x=a y= n=</p>") == 2
    assert "<p>x=b y= n=2</p>" in index
    assert "<p>x= y=a n=</p>" in index
    assert '<nav class="all"><ul><li>About</li><li>Hidden</li><li>Home</li></ul>' in index
    assert site.warnings == ()


@pytest.mark.parametrize(
    ("body", "independent"),
    [
        ("{% for p in site.pages %}{{ p.title }}{% endfor %}", True),
        ("{% assign n = site.pages | where_exp: 'i', 'i.x != nil' | size %}{{ n }}", True),
        ("{% include a.html x=site.title %}{{ include.x }}", True),
        ("{% comment %}{% include {{ x }} y=page %}{% endcomment %}{{ site.title }}", True),
        ("{{ page.title }}", False),
        ("{{ outer }}", False),
        ("{% for p in site.posts %}{{ p.content }}{% endfor %}", False),
        ("{{ site.pages | where_exp: 'i', 'i.url == page.url' | size }}", False),
        ("{{ site.pages | where_exp: 'i', expr | size }}", False),
        ("{% include a.html x=page.title %}", False),
        ("{% include {{ site.name }} %}", False),
        ("{% include_relative a.html %}", False),
        ("{% highlight ruby %}x{% endhighlight %}", False),
        ("{% increment n %}", False),
        ("{% include b.html %}", False),  # b.html reads page
    ],
)
def test_an_include_is_kept_across_pages_only_when_it_reads_no_page(
    body: str, independent: bool
) -> None:
    from deploybot.render.liquid.plugins.include_scope import page_independent
    from deploybot.render.liquid.templates import Liquid

    files = {
        "_includes/x.html": body.encode(),
        "_includes/a.html": b"{{ site.title }}",
        "_includes/b.html": b"{{ page.url }}",
    }
    liquid = Liquid(MemoryTree(files), plugins=("jekyll-include-cache",))
    assert page_independent(liquid, "_includes/x.html") is independent


def test_include_cached_is_an_unknown_tag_without_the_plugin() -> None:
    files = {"index.html": b"---\n---\n{% include_cached x.html %}", "_includes/x.html": b"x"}
    with pytest.raises(SourceError, match="include_cached"):
        build(files)


# jekyll-titles-from-headings


def test_titles_from_headings_as_the_plugin_makes_them() -> None:
    """ATX and Setext headings, Markdown and a footnote mark stripped from the title,
    ``strip_title`` (the setting; a page's own ``strip_title: false``), a trailing ``##``
    kept, a page with a ``title``, an HTML page, a page without a heading, and with
    ``collections: true`` a post whose heading wins over its ``title``; ``site.pages``
    lists the titles."""
    site = same_as_jekyll("plugins_titles")
    assert site.files["setext.html"].startswith(b"<title>Setext Title</title>")


# jekyll-default-layout


def test_default_layouts_as_jekyll_default_layout_sets_them() -> None:
    """``home`` for ``/``, ``page`` for a page (``page.layout`` shows it), ``default`` for
    a post without a ``post`` layout; an explicit layout, a ``layout: null`` default, an
    HTML page and a collection document left alone."""
    site = same_as_jekyll("plugins_default_layout")
    assert site.files["about.html"].startswith(b'<page layout="page">')


def test_the_docs_name_every_plugin_the_registry_has() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "jekyll.md").read_text()
    assert [n for n in registry.known() if f"**{n}**" not in text] == []


# jekyll-relative-links


def test_relative_links_as_jekyll_relative_links_rewrites_them() -> None:
    """Inline links (with a fragment and a title), references (one indented), links from
    a folder (``../``, ``sub/``), from the root (``/docs/...``), to a static file, a post,
    a collection document, a ``%20`` path; a missing file, an absolute URL, a fragment, a
    path above the root and an HTML page left alone; posts and documents too with
    ``collections: true``; ``baseurl``."""
    site = same_as_jekyll("plugins_relative_links")
    assert b'<a href="/b/about.html">About</a>' in site.files["index.html"]


def test_relative_links_exclude_is_named_in_a_warning() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-relative-links]\nrelative_links:\n  exclude: [x]\n",
        "a.md": b"---\n---\n[b](b.md)",
        "b.md": b"---\n---\nb",
    }
    site = build(files)
    assert b'<a href="/b.html">b</a>' in site.files["a.html"]
    assert [(w.line, w.message) for w in site.warnings] == [(3, EXCLUDE_WARNING)]


# jekyll-mentions


def test_mentions_as_jekyll_mentions_links_them() -> None:
    """Mentions in text (``-``, ``_``, a capital, before dots) linked; an e-mail address,
    ``@mention``, ``@dan/x``, code, ``pre`` and a link's text left alone; the body written
    as libxml2 writes it (``<br>``, ``©``, newlines after list items), the head kept; a
    front matter ``base_url``; ``jekyll-mentions: false``; a page without layout (no
    ``<body``); an XML page and a post."""
    site = same_as_jekyll("plugins_mentions")
    assert site.warnings == ()
    assert b"by @footer-team<br/>" in site.files["off.html"]
    assert site.files["feed.xml"] == b"<feed><title>@ivan</title></feed>\n"


def test_a_mention_setting_of_another_kind_stops_the_build() -> None:
    files = {"_config.yml": b"plugins: [jekyll-mentions]\njekyll-mentions: 3\n"}
    with pytest.raises(SourceError, match="It's a Integer right now"):
        build({**files, "a.md": b"---\n---\n@x"})


# jemoji (Debian has no package: the expected bytes of the next three tests follow jemoji
# 0.13.0's lib/jemoji.rb, html-pipeline 2.14.3's emoji_filter.rb and gemoji 4.1.0's
# db/emoji.json, written as libxml2 writes them; the fixture after them is real Jekyll
# running jemoji and gemoji from their sources)

EMOJI = 'class="emoji" title=":{0}:" alt=":{0}:" src="{1}{2}.png" height="20" width="20"'
GITHUB_EMOJI = "https://github.githubassets.com/images/icons/emoji/unicode/"


def emoji_img(name: str, file: str, root: str = GITHUB_EMOJI) -> str:
    return "<img " + EMOJI.format(name, root, file) + ">"


def test_emoji_codes_as_jemoji_writes_them() -> None:
    """``:+1:``, a sequence without its ``fe0f``/``200d`` (``:heart:``, a family), a code
    that is no name (its closing colon starts the next: ``:nope:smile:``), codes in ``code``
    and ``pre`` left alone, the head untouched, the body written as libxml2 writes it."""
    layout = b"<html><head><title>:smile:</title></head><body>\n{{ content }}<br/></body></html>"
    page = b"---\nlayout: default\n---\n:+1: :heart: :family_man_woman_boy: :nope:smile: `:x:`\n"
    files = {"_config.yml": b"plugins: [jemoji]\n", "_layouts/default.html": layout}
    site = build({**files, "index.md": page, "b.md": b"---\nlayout: default\n---\n:x:\n"})
    body = (
        f"<p>{emoji_img('+1', '1f44d')} {emoji_img('heart', '2764')} "
        f"{emoji_img('family_man_woman_boy', '1f468-1f469-1f466')} :nope"
        f"{emoji_img('smile', '1f604')} "
        '<code class="language-plaintext highlighter-rouge">:x:</code></p>\n<br>'
    )
    assert site.files["index.html"].decode() == (
        f"<html><head><title>:smile:</title></head><body>\n{body}</body></html>"
    )
    assert (
        site.files["b.html"]
        .decode()
        .endswith(f"<p>{emoji_img('x', '274c')}</p>\n<br></body></html>")
    )
    assert site.warnings == ()


def test_emoji_src_and_what_jemoji_leaves_alone() -> None:
    """``emoji.src`` (no trailing slash: joined with one), a page without a layout (no
    ``<body``: all of it filtered), an XML
    page untouched, ``tt`` left alone, a text's ``&lt;b&gt;`` read as markup again."""
    config = b"plugins: [jemoji]\nemoji:\n  src: https://cdn.example.org/e\n"
    site = build(
        {
            "_config.yml": config,
            "_layouts/default.html": b"<body>{{ content }}</body>",
            "a.html": b"---\n---\n<p>:tada: <tt>:tada:</tt> &lt;b&gt;bold:tada:</p>\n",
            "f.xml": b"---\n---\n<x>:tada:</x>\n",
        }
    )
    img = emoji_img("tada", "1f389", "https://cdn.example.org/e/emoji/unicode/")
    assert site.files["a.html"].decode() == f"<p>{img} <tt>:tada:</tt> <b>bold{img}</b></p>\n"
    assert site.files["f.xml"] == b"<x>:tada:</x>\n"


def test_an_emoji_setting_that_is_no_mapping_stops_the_build() -> None:
    files = {"_config.yml": b"plugins: [jemoji]\nemoji: big\n", "a.md": b"---\n---\n:x:\n"}
    with pytest.raises(SourceError, match="emoji must be a mapping"):
        build(files)


# jekyll-optional-front-matter


def test_optional_front_matter_as_the_plugin_reads_it() -> None:
    """Markdown files without front matter (``.md``, ``.markdown``, an upper-case ``.MD``)
    are pages, rendered with Liquid, under the defaults, their originals copied too;
    ``README``/``license`` stay static files, ``CONTRIBUTING.md`` is a page as ``include``
    names it; a text file, a page with front matter; ``site.pages`` lists them after the
    pages read, ``site.static_files`` lists the originals."""
    site = same_as_jekyll("plugins_optional_front_matter")
    assert site.warnings == ()
    assert site.files["about.md"].startswith(b"# About")


def test_a_collections_file_without_front_matter_is_only_copied_with_a_warning() -> None:
    """Jekyll's plugin also makes a page of it, at ``/_talks/plain.html`` (seen in a real
    ``jekyll build``); deploybot only copies it, and says so."""
    config = b"plugins: [jekyll-optional-front-matter]\ncollections:\n  talks:\n    output: true\n"
    files = {"_config.yml": config, "_layouts/default.html": b"{{ content }}"}
    site = build({**files, "_talks/plain.md": b"A talk.\n"})
    assert sorted(site.files) == ["talks/plain.md"]
    assert [(w.path, w.message) for w in site.warnings] == [
        ("_talks/plain.md", FRONTLESS_IN_COLLECTION)
    ]


def test_optional_front_matter_settings() -> None:
    """``remove_originals: true`` writes only the page; ``enabled: false`` and
    ``require_front_matter: true`` leave the file static."""
    page = {"a.md": b"# A\n", "_layouts/default.html": b"{{ content }}"}
    settings = b"plugins: [jekyll-optional-front-matter]\noptional_front_matter:\n"
    site = build({"_config.yml": settings + b"  remove_originals: true\n", **page})
    assert sorted(site.files) == ["a.html"]
    assert site.files["a.html"] == b'<h1 id="a">A</h1>\n'
    for off in (
        settings + b"  enabled: false\n",
        settings + b"  x: 1\nrequire_front_matter: true\n",
    ):
        assert sorted(build({"_config.yml": off, **page}).files) == ["a.md"]


# jekyll-readme-index


def test_readme_index_as_the_plugin_makes_them() -> None:
    """A README (``.md``, ``.markdown``, ``ReadMe``) becomes its folder's index, rendered
    with Liquid and the defaults, its original copied too (the root's permalink ``//``);
    not where the folder has an index (a static ``index.html`` or ``INDEX.HTM``, a page's
    ``index.md``, a page's ``permalink: /perm/``), nor for the second README of a folder;
    ``myreadme.md`` is no README; ``with_frontmatter``: a README with front matter becomes
    its folder's index, and one just made the index of ``/deep/er/`` moves to ``/deep/``,
    which has none, as the plugin moves it."""
    site = same_as_jekyll("plugins_readme_index")
    assert site.warnings == ()
    assert site.files["index.html"].startswith(b"<title></title><url>/</url><permalink>//")


def test_readme_index_settings_and_optional_front_matter() -> None:
    """``remove_originals: true`` drops the README's copy; an ``index.md`` without front
    matter that jekyll-optional-front-matter makes a page is the folder's index; without
    ``with_frontmatter`` a README with front matter stays ``README.html`` (the file list
    of real Jekyll's build of this site); ``enabled: false`` turns it off."""
    config = b"plugins: [jekyll-readme-index, jekyll-optional-front-matter]\nreadme_index:\n"
    files = {
        "_layouts/default.html": b"{{ content }}",
        "a/README.md": b"x\n",
        "b/README.md": b"y\n",
        "b/index.md": b"idx\n",
        "README.md": b"---\n---\nfm\n",
    }
    site = build({"_config.yml": config + b"  remove_originals: true\n", **files})
    assert sorted(site.files) == [
        "README.html",
        "a/index.html",
        "b/README.md",
        "b/index.html",
        "b/index.md",
    ]
    assert site.files["a/index.html"] == b"<p>x</p>\n"
    site = build({"_config.yml": config + b"  enabled: false\n", **files})
    assert "a/index.html" not in site.files


def test_emoji_as_jemoji_writes_them_in_real_jekyll() -> None:
    """The fixture's expected output is real Jekyll 4.3.1 running jemoji 0.13.0 and
    gemoji 4.1.0 from their GitHub sources (``make_jekyll_fixtures``' ``FROM_SOURCE``):
    names with ``+``/``-``, sequences, flags, keycaps, a code that is no name, two codes
    back to back, times, ``code``/``pre``/``tt`` left alone but ``kbd`` and a link's text
    not, ``&lt;b&gt;`` read as markup again, the head left alone, a body rewritten for
    a code only in the head, a page without layout, an XML page, a post."""
    site = same_as_jekyll("plugins_jemoji")
    assert site.warnings == ()
    assert b"<br /> kept" in site.files["none.html"]  # no code: left as kramdown wrote it


def test_html_past_libxml2s_limits_is_written_whole_with_a_warning() -> None:
    """Nokogiri (libxml2 2.9.14 without its huge option) stops reading at an element 256
    deep below ``<body>`` and drops the rest of the page (seen with html-pipeline's
    parse); deploybot writes the page whole and says so. 255 deep is read whole by both."""
    deep = b"<div>" * 256 + b"@ann" + b"</div>" * 256
    fits = b"<div>" * 254 + b"<span>in</span>" + b"</div>" * 254 + b" @bob"
    files = {"_config.yml": b"plugins: [jekyll-mentions]\n", "_layouts/x.html": b""}
    site = build({**files, "a.html": b"---\n---\n" + deep, "b.html": b"---\n---\n" + fits})
    assert [(w.path, w.message) for w in site.warnings] == [
        ("a.html", f"jekyll-mentions: {LIMITS_WARNING}")
    ]
    assert site.files["a.html"].count(b"<div>") == 256
    assert site.files["b.html"].endswith(
        b'</div> <a href="https://github.com/bob" class="user-mention">@bob</a>'
    )


def test_mentions_rewrite_redirect_pages_as_jekyll_does() -> None:
    """A document's ``redirect_to`` page is its output, so jekyll-mentions rewrites it when
    its URL holds a mention (no ``<body``: all of it, the doctype and ``<html>`` dropped,
    ``&hellip;`` as a character: the bytes of a real ``jekyll build`` of these files); a
    ``redirect_from`` page without one is left alone."""
    files = {
        "_config.yml": b"plugins: [jekyll-redirect-from, jekyll-mentions]\n",
        "_layouts/x.html": b"",
        "a.md": b"---\nredirect_from: /old/@x/\n---\nHi @ann\n",
        "b.md": b"---\nredirect_to: https://medium.com/@bob\n---\nB\n",
    }
    site = build(files)
    url = "https://medium.com/@bob"
    assert site.files["b.html"].decode() == (
        '\n\n  <meta charset="utf-8">\n  <title>Redirecting\u2026</title>\n'
        f'  <link rel="canonical" href="{url}">\n  <script>location="{url}"</script>\n'
        f'  <meta http-equiv="refresh" content="0; url={url}">\n'
        '  <meta name="robots" content="noindex">\n  <h1>Redirecting\u2026</h1>\n'
        f'  <a href="{url}">Click here if you are not redirected.</a>\n\n'
    )
    assert site.files["old/@x/index.html"].startswith(b"<!DOCTYPE html>")


# jekyll-archives


def test_archives_write_what_jekyll_archives_writes() -> None:
    """Year, month, category and tag archives (days not enabled) with the ``archive``
    layout and its parent, a ``layouts`` override for years, custom month and tag
    permalinks, a tag with a space and capitals slugified, ``page.date`` of a date archive
    and ``nil`` for the others, ``page.name``/``path``/``url``, front matter defaults of
    the archive's type, and two categories of one slug (``News``, ``news``): the later
    wins, as in Jekyll."""
    site = same_as_jekyll("plugins_archives")
    assert b"<h1>tag: Open Source</h1>" in site.files["topics/open-source/index.html"]
    assert b"Summer" in site.files["category/news/index.html"]


def test_archives_all_a_missing_layout_and_odd_tags_as_jekyll_writes_them() -> None:
    """``enabled: all`` with a missing ``day`` layout: the day archive is written empty,
    with Jekyll's warning; tags of non-ASCII letters (kept, percent-escaped in the URL),
    ``C++`` and ``!!!`` (an empty slug: ``/tag/``). The outputs are those Jekyll 4.3.1
    with jekyll-archives 2.2.1 wrote for this site."""
    config = b"plugins: [jekyll-archives]\njekyll-archives:\n  enabled: all\n"
    site = build(
        {
            "_config.yml": config + b"  layouts:\n    day: nowhere\n",
            "_layouts/archive.html": b"---\nlayout: default\n---\n[{{ content }}]"
            b"{{ page.title }}|{{ page.url }}|{{ page.posts | size }}\n",
            "_layouts/default.html": b"<d>{{ content }}</d>",
            "_posts/2024-02-03-a.md": '---\ntitle: A\ntags: ["Über Straße", "!!!", "C++"]'
            "\n---\nA\n".encode(),
        }
    )
    assert site.files["2024/02/03/index.html"] == b""
    assert site.files["tag/index.html"] == b"<d>[]!!!|/tag/|1\n</d>"
    assert site.files["tag/c/index.html"] == b"<d>[]C++|/tag/c/|1\n</d>"
    tag = "tag/über-straße/index.html"
    assert site.files[tag] == "<d>[]Über Straße|/tag/%C3%BCber-stra%C3%9Fe/|1\n</d>".encode()
    dated = ["2024/02/03/a.html", "2024/02/03/index.html", "2024/02/index.html", "2024/index.html"]
    assert sorted(site.files) == sorted([*dated, "tag/c/index.html", "tag/index.html", tag])
    missing = "Layout 'nowhere' requested in 2024/02/03/index.html does not exist"
    assert [w.message for w in site.warnings] == [missing]


def test_archives_need_the_plugin_and_an_enabled_type() -> None:
    post = {"_posts/2024-02-03-a.md": b"---\ntitle: A\ntags: [x]\n---\nA\n"}
    on = b"jekyll-archives: {enabled: [tags]}\n"
    assert not any(p.startswith("tag/") for p in build({"_config.yml": on, **post}).files)
    plugin = b"plugins: [jekyll-archives]\n"
    assert "tag/x/index.html" not in build({"_config.yml": plugin, **post}).files
    assert "tag/x/index.html" in build({"_config.yml": plugin + on, **post}).files
