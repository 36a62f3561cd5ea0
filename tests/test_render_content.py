"""Jekyll's content model: publishing rules, categories, excerpts, neighbours, sitemap, 404."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from deploybot.render.engine.build import build_site, site_variables
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.liquid.excerpt import excerpt_source
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.site import load_site
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import MemoryTree

NOW = datetime(2021, 6, 1, 12, 0, tzinfo=UTC)
# A theme in the source that prints what layouts can read.
THEME = {
    "theme/post.html": (
        b"<article>{{ content }}</article>\n"
        b"excerpt=[{{ page.excerpt }}]\n"
        b"prev={{ page.previous.url if page.previous else '-' }} "
        b"next={{ page.next.url if page.next else '-' }}\n"
        b"cats={{ page.categories | join(',') }} tags={{ page.tags | join(',') }}\n"
    ),
    "theme/page.html": (
        b"{{ content }}\n"
        b"{% for name, posts in site.categories | dictsort %}{{ name }}:{{ posts | length }} "
        b"{% endfor %}\n"
        b"{% for p in site.posts %}[{{ p.excerpt }}]{% endfor %}\n"
        b"pages={% for p in site.pages %}{{ p.url }} {% endfor %}\n"
    ),
}


def build(files: dict[str, bytes], **options: object) -> dict[str, str]:
    tree = MemoryTree({**THEME, **files})
    opts = RenderOptions(theme="theme", build_time=NOW, **options)  # type: ignore[arg-type]
    return {path: data.decode() for path, data in build_site(tree, opts).files.items()}


def post(title: str, extra: str = "", body: str = "Body.\n") -> bytes:
    return f"---\ntitle: {title}\n{extra}---\n{body}".encode()


def test_unpublished_posts_and_pages_are_skipped() -> None:
    out = build(
        {
            "_posts/2020-01-01-a.md": post("A", "published: false\n"),
            "_posts/2020-01-02-b.md": post("B", "published: 'false'\n"),  # a string: shown
            "hidden.md": post("H", "published: false\n"),
            "shown.md": post("S"),
        }
    )
    assert "2020/01/01/a.html" not in out and "2020/01/02/b.html" in out
    assert "hidden.html" not in out and "shown.html" in out
    assert "/2020/01/01/a" not in out["atom.xml"]


def test_future_posts_wait_unless_future_is_true() -> None:
    files = {"_posts/2030-01-01-later.md": post("Later"), "_posts/2020-01-01-now.md": post("Now")}
    assert "2030/01/01/later.html" not in build(files)
    files["_config.yml"] = b"future: true\n"
    assert "2030/01/01/later.html" in build(files)


def test_drafts_are_not_published() -> None:
    out = build({"_drafts/idea.md": post("Idea"), "_posts/2020-01-01-a.md": post("A")})
    assert not any("idea" in path for path in out)
    assert "Idea" not in out["atom.xml"]


def test_folder_and_front_matter_categories_in_permalinks_and_site() -> None:
    out = build(
        {
            "blog/_posts/2020-01-01-a.md": post("A", "tags: [x, y]\n"),
            "_posts/2020-01-02-b.markdown": post("B", "categories: News Tech\n", "*hi*\n"),
            "index.md": post("Home"),
        }
    )
    assert "cats=blog tags=x,y" in out["blog/2020/01/01/a.html"]
    b = out["news/tech/2020/01/02/b.html"]
    assert "<em>hi</em>" in b and "cats=News,Tech" in b
    assert "blog:1 News:1 Tech:1" in out["index.html"]


def test_excerpt_is_the_first_paragraph_or_up_to_the_separator() -> None:
    out = build(
        {
            "_config.yml": b"excerpt_separator: <!--more-->\n",
            "_posts/2020-01-01-a.md": post("A", "", "\nFirst *para*.\n\nMore<!--more-->rest\n"),
            "_posts/2020-01-02-b.md": post("B", 'excerpt_separator: "\\n\\n"\n', "One.\n\nTwo.\n"),
            "_posts/2020-01-03-c.md": post("C", "excerpt: Given <b>text</b>\n"),
            "index.md": post("Home"),
        }
    )
    assert "excerpt=[<p>First <em>para</em>.</p>\n<p>More</p>\n]" in out["2020/01/01/a.html"]
    assert "excerpt=[<p>One.</p>\n]" in out["2020/01/02/b.html"]
    # A front-matter excerpt is data: autoescaped like any other string.
    assert "excerpt=[Given &lt;b&gt;text&lt;/b&gt;]" in out["2020/01/03/c.html"]
    assert "[<p>One.</p>\n]" in out["index.html"]


def test_excerpt_source_keeps_link_definitions() -> None:
    body = "See [a][x].\n\nMore.\n\n[x]: https://example.org\n"
    assert excerpt_source(body) == "See [a][x].\n\n[x]: https://example.org"
    assert excerpt_source("No separator", "<!--more-->") == "No separator"


def test_previous_and_next_are_the_older_and_newer_posts() -> None:
    out = build(
        {
            "_posts/2020-01-01-a.md": post("A"),
            "_posts/2020-01-02-b.md": post("B"),
            "_posts/2020-01-03-c.md": post("C"),
        }
    )
    assert "prev=- next=/2020/01/02/b.html" in out["2020/01/01/a.html"]
    assert "prev=/2020/01/01/a.html next=/2020/01/03/c.html" in out["2020/01/02/b.html"]
    assert "prev=/2020/01/02/b.html next=-" in out["2020/01/03/c.html"]


def test_site_variables_list_pages_static_files_and_tags() -> None:
    tree = MemoryTree(
        {
            "about.md": post("About"),
            "images/a.png": b"png",
            "_posts/2020-01-01-a.md": post("A", "tags: t\n"),
        }
    )
    config = load_config(tree)
    model, _ = load_site(tree, config, None)
    site = site_variables(model)
    assert [p["url"] for p in site["pages"]] == ["/about.html"]
    assert site["static_files"][0]["path"] == "/images/a.png"
    assert [p["title"] for p in site["tags"]["t"]] == ["A"]


def test_sitemap_with_the_jekyll_sitemap_plugin() -> None:
    files = {
        "_config.yml": b"url: https://example.org\nplugins: [jekyll-sitemap]\n",
        "_posts/2020-01-01-a.md": post("A"),
        "_posts/2020-01-02-b.md": post("B", "sitemap: false\n"),
        "about.md": post("About", "last_modified_at: 2021-02-03\n"),
        "404.html": post("Not found"),
        "style.css": b"body {}",
    }
    out = build(files)
    root = ET.fromstring(out["sitemap.xml"])
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [u.findtext("s:loc", namespaces=ns) for u in root.findall("s:url", ns)]
    assert locs == ["https://example.org/2020/01/01/a.html", "https://example.org/about.html"]
    lastmods = [u.findtext("s:lastmod", namespaces=ns) for u in root.findall("s:url", ns)]
    assert lastmods == ["2020-01-01T00:00:00+00:00", "2021-02-03T00:00:00+00:00"]
    del files["_config.yml"]
    assert "sitemap.xml" not in build(files)  # Jekyll writes none without the plugin


def test_sitemap_reads_last_modified_at_as_date_to_xmlschema_does() -> None:
    # jekyll-sitemap prints ``last_modified_at | date_to_xmlschema``: Ruby's Time.parse in
    # the site's zone (values from Jekyll 4.3.1: liquid_agreement's 58-date-parsing.html).
    files = {
        "_config.yml": b"plugins: [jekyll-sitemap]\ntimezone: America/New_York\n",
        "a.md": post("A", "last_modified_at: 3-7-2019\n"),
        "b.md": post("B", "last_modified_at: March 7, 2019\n"),
        "c.md": post("C", "last_modified_at: 2019-03-07 10:00\n"),
        "d.md": post("D", "last_modified_at: 2019-03-07 10:00:00\n"),
        "e.md": post("E", "last_modified_at: someday\n"),
    }
    root = ET.fromstring(build(files)["sitemap.xml"])
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    lastmods = [u.findtext("s:lastmod", namespaces=ns) for u in root.findall("s:url", ns)]
    assert lastmods == [
        "2019-07-03T00:00:00-04:00",
        "2019-03-07T00:00:00-05:00",
        "2019-03-07T10:00:00-05:00",
        "2019-03-07T05:00:00-05:00",  # a YAML timestamp without offset is UTC
        None,  # no date: no <lastmod> (Jekyll stops the build)
    ]


def test_a_source_sitemap_wins() -> None:
    files = {
        "_config.yml": b"plugins: [jekyll-sitemap]\n",
        "sitemap.xml": b"<mine/>",
        "_posts/2020-01-01-a.md": post("A"),
    }
    assert build(files)["sitemap.xml"] == "<mine/>"


def test_404_page_is_written_at_the_root_under_any_permalink_style() -> None:
    out = build({"_config.yml": b"permalink: pretty\n", "404.md": post("Lost", "", "*Gone*\n")})
    assert "<em>Gone</em>" in out["404.html"]
    assert "404/index.html" not in out
    assert "404.html" not in build({"_posts/2020-01-01-a.md": post("A")})


def test_a_highlight_tag_without_a_highlighter_is_warned_about() -> None:
    """``highlighter: none``: kramdown writes code plain (the ``gaps`` fixture); the
    ``{% highlight %}`` tag, which Jekyll then writes plain too, still is highlighted, so
    each page using it gets one warning naming it."""
    files = {
        "_config.yml": b"highlighter: none\n",
        "_layouts/default.html": b"{{ content }}",
        "tag.md": b"---\nlayout: default\n---\n{% highlight ruby %}\nx = 1\n{% endhighlight %}\n",
        "fence.md": b"---\nlayout: default\n---\n```ruby\nx = 1\n```\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert built.files["fence.html"] == b'<pre><code class="language-ruby">x = 1\n</code></pre>\n'
    message = "{% highlight %} without a highlighter is not supported: it is highlighted"
    assert [(w.path, w.message) for w in built.warnings] == [("tag.md", message)]
    rouge = build_site(MemoryTree({**files, "_config.yml": b"highlighter:\n"}), RenderOptions())
    assert rouge.warnings == ()
    assert b'<div class="language-ruby highlighter-rouge">' in rouge.files["fence.html"]


def test_listed_outputs_and_page_contents_are_what_jekyll_had_made_by_then() -> None:
    """A listed post's ``output`` (its whole output: Jekyll renders the posts before the
    pages) and a ``site.pages`` page's ``content`` (converted once rendered, raw before: a
    page reads itself raw in its body); a page's ``output`` is ``nil`` (``Page#to_liquid``
    has none). Values from ``jekyll build`` of this site; no warning; the engine's build
    is the same."""
    files = {
        "_layouts/default.html": b"{{ content }}",
        "_posts/2021-01-01-a.md": b"---\nlayout: default\n---\nHello *a*\n",
        "list.html": b"---\nlayout: default\n---\n{% for p in site.posts %}[{{ p.output }}]"
        b"[{{ p.content }}]{% endfor %}{% for p in site.pages %}({{ p.content }}|"
        b"{{ p.output }}){% endfor %}\n",
        "about.md": b"---\nlayout: default\n---\nAbout\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert built.files["list.html"] == (
        b"[<p>Hello <em>a</em></p>\n][<p>Hello <em>a</em></p>\n](<p>About</p>\n|)"
        b"({% for p in site.posts %}[{{ p.output }}][{{ p.content }}]{% endfor %}"
        b"{% for p in site.pages %}({{ p.content }}|{{ p.output }}){% endfor %}\n|)\n"
    )
    assert built.warnings == ()
    sink = MemorySink()
    report = build_into(MemoryTree(files), RenderOptions(), open_cache(None), sink, None)
    assert sink.files == built.files
    assert report.warnings == ()


def test_a_redirect_to_document_is_listed_as_the_engine_writes_it() -> None:
    """jekyll-redirect-from's ``redirect_to`` (the plugin's document hook): a listed post's
    ``output`` is the redirect page Jekyll writes (``jekyll build`` of this site), and the
    full build lists the same ``content`` as the engine (the hooked one)."""
    files = {
        "_config.yml": b"plugins: [jekyll-redirect-from]\n",
        "_layouts/default.html": b"<html>{{ content }}</html>",
        "_posts/2021-01-01-a.md": b"---\nlayout: default\nredirect_to: https://x.example/\n"
        b"---\nHello *a*\n",
        "moved.md": b"---\nlayout: default\nredirect_to: https://y.example/\n---\nMoved\n",
        "zlist.html": b"---\nlayout: default\n---\n{% for p in site.posts %}{{ p.output }}"
        b"{% endfor %}{% for p in site.pages %}({{ p.name }}:{{ p.content | size }})"
        b"{% endfor %}\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert built.files["zlist.html"].startswith(
        b'<html><!DOCTYPE html>\n<html lang="en-US">\n  <meta charset="utf-8">\n'
        b"  <title>Redirecting&hellip;</title>\n"
        b'  <link rel="canonical" href="https://x.example/">\n'
    )
    sink = MemorySink()
    build_into(MemoryTree(files), RenderOptions(), open_cache(None), sink, None)
    assert sink.files == built.files
