"""Whole-site builds: reading rules, layouts and themes, the TVM corpus, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.read.site import RUBY_PLUGIN
from deploybot.render.read.source import DirTree, MemoryTree
from deploybot.render.theme.layouts import bundled_templates_dir
from deploybot.support.errors import ConfigError, SourceError

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
TVM = SHARED / "corpus" / "tvm-site"
BUILD_TIME = datetime(2020, 7, 14, 9, 12, 2, tzinfo=timezone(timedelta(hours=-7)))
TVM_OPTIONS = RenderOptions(timezone="America/Los_Angeles", build_time=BUILD_TIME)
needs_corpus = pytest.mark.skipif(not TVM.is_dir(), reason="tvm corpus not found at ../shared")

POST = b"---\nlayout: post\ntitle: Hello <World>\ndate: 2020-03-01\n---\nText with `code`.\n"


def build(files: dict[str, bytes], **options: object) -> SiteBuild:
    return build_site(MemoryTree(files), RenderOptions(**options))  # type: ignore[arg-type]


def test_publishing_rules() -> None:
    built = build(
        {
            "_config.yml": b"exclude: [README.md, scripts]\ninclude: [.well-known]\n",
            "README.md": b"# readme\n",
            "scripts/deploy.sh": b"#!/bin/sh\n",
            "_includes/x.html": b"x",
            "_drafts/2020-01-01-d.md": b"---\n---\nd\n",
            ".gitignore": b"*.pyc\n",
            "images/.hidden/x.png": b"x",
            ".well-known/security.txt": b"contact\n",
            ".htaccess": b"deny\n",
            "images/a.png": b"\x89PNG",
            "notes.md": b"no front matter\n",
            "about.md": b"---\ntitle: About\n---\nHi *there*\n",
            "raw.html": b"<p>static</p>\n",
            "feed-template.xml": b"---\n---\n{{ site.title }}\n",
        }
    )
    names = set(built.files)
    assert {"images/a.png", "notes.md", "raw.html", ".well-known/security.txt"} <= names
    assert {"about.html", "index.html", "atom.xml", "rss.xml", "assets/css/style.css"} <= names
    for hidden in [
        "README.md",
        "scripts/deploy.sh",
        "_includes/x.html",
        ".gitignore",
        "images/.hidden/x.png",
        ".htaccess",  # the site's include replaces Jekyll's default [.htaccess]
    ]:
        assert hidden not in names
    assert built.files["images/a.png"] == b"\x89PNG"
    assert b"<em>there</em>" in built.files["about.html"]
    # Any file with front matter is a page: Liquid only, its extension kept, no layout.
    assert built.files["feed-template.xml"] == b"\n"
    assert build({".htaccess": b"deny\n"}).files[".htaccess"] == b"deny\n"


def test_post_rendered_through_default_layout_with_escaped_title() -> None:
    built = build({"_posts/2020-03-01-hello.md": POST})
    html = built.files["2020/03/01/hello.html"].decode()
    assert '<h1 class="post-title">Hello &lt;World&gt;</h1>' in html
    assert '<code class="language-plaintext highlighter-rouge">code</code>' in html
    assert '<time datetime="2020-03-01T00:00:00+00:00">Mar 1, 2020</time>' in html
    assert built.timezone == "UTC"


def test_front_matter_date_overrides_file_name_and_title_defaults_to_slug() -> None:
    built = build({"_posts/2021-03-01-intro-auto-scheduler.md": b"---\ndate: 2021-03-03\n---\nx\n"})
    html = built.files["2021/03/03/intro-auto-scheduler.html"].decode()
    assert "Intro Auto Scheduler" in html


def test_timezone_option_overrides_config() -> None:
    files = {
        "_config.yml": b"timezone: Asia/Tokyo\n",
        "_posts/2019-04-30-q.md": b"---\ndate: 2019-04-30 00:00:00 +0800\n---\nx\n",
    }
    assert "2019/04/30/q.html" in build(files).files
    assert "2019/04/29/q.html" in build(files, timezone="America/Los_Angeles").files
    with pytest.raises(SourceError, match="timezone"):
        build(files, timezone="Mars/Olympus")


def test_unpublished_future_and_bad_names() -> None:
    files = {
        "_posts/2020-01-01-off.md": b"---\npublished: false\n---\nx\n",
        "_posts/2030-01-01-future.md": b"---\n---\nx\n",
        "_posts/notes.md": b"---\n---\nx\n",
        "_posts/2020-01-02-ok.md": b"---\n---\nx\n",
    }
    built = build(files, build_time=BUILD_TIME)
    posts = [p for p in built.files if p.startswith("20")]
    assert posts == ["2020/01/02/ok.html"]
    assert {w.path for w in built.warnings} >= {"_posts/2030-01-01-future.md", "_posts/notes.md"}
    # a post needs no front matter (Jekyll's Document reads it whole)
    plain = build({"_posts/2020-01-03-plain.md": b"Just *text*.\n"}).files
    assert "<em>text</em>" in plain["2020/01/03/plain.html"].decode()
    assert "2030/01/01/future.html" in build(files).files  # no build time: no cut-off


def test_index_lists_posts_newest_first() -> None:
    files = {
        f"_posts/2020-01-0{d}-p{d}.md": f"---\ntitle: Post {d}\n---\nx\n".encode()
        for d in (3, 1, 2)
    }
    index = build(files).files["index.html"].decode()
    assert index.index("Post 3") < index.index("Post 2") < index.index("Post 1")
    assert 'href="/2020/01/03/p3.html"' in index


def test_own_index_page_wins_over_theme_index() -> None:
    built = build({"index.html": b"---\nlayout: null\n---\n<p>mine</p>\n"})
    assert built.files["index.html"] == b"<p>mine</p>\n"
    assert not any("overwritten" in w.message for w in built.warnings)


def test_unknown_layout_warns_and_falls_back() -> None:
    built = build({"_posts/2020-01-01-x.md": b"---\nlayout: fancy\ntitle: X\n---\nx\n"})
    assert b'class="post-title"' in built.files["2020/01/01/x.html"]
    assert ("_posts/2020-01-01-x.md", "unknown layout 'fancy': using 'post'") in [
        (w.path, w.message) for w in built.warnings
    ]


def test_html_page_with_default_layout_name() -> None:
    built = build({"blog.html": b"---\nlayout: default\ntitle: Blog\n---\n<ul></ul>\n"})
    html = built.files["blog.html"].decode()
    assert html.startswith("<!DOCTYPE html>") and "<ul></ul>" in html


def test_theme_folder_in_the_source_tree() -> None:
    files = {
        "_theme/base.html": (
            b"<html><title>{{ page.title }}</title>{% block main %}{% endblock %}</html>\n"
        ),
        "_theme/post.html": (
            b'{% extends "base.html" %}'
            b"{% block main %}<b>{{ site.title }}</b>{{ content }}{% endblock %}"
        ),
        "_theme/page.html": b'{% extends "base.html" %}{% block main %}{{ content }}{% endblock %}',
        "_theme/assets/site.css": b"body{}",
        "_config.yml": b"title: A&B\n",
        "_posts/2020-01-01-x.md": b"---\ntitle: <X>\n---\n<i>raw</i>\n",
    }
    built = build(files, theme="_theme")
    assert (
        built.files["2020/01/01/x.html"]
        == b"<html><title>&lt;X&gt;</title><b>A&amp;B</b><p><i>raw</i></p>\n</html>\n"
    )
    assert built.files["assets/site.css"] == b"body{}"
    assert "index.html" not in built.files  # this theme has no index layout


def test_layouts_and_posts_share_jekyll_filters() -> None:
    """A layout's relative_url/absolute_url/date behave as the same filters in a post."""
    line = (
        b"{{ '/a' | relative_url }} {{ 'https://x.org/b' | relative_url }} "
        b"{{ '/c' | absolute_url }} {{ page.date | date: '%d %b %Y' }}|"
    )
    files = {
        "_theme/post.html": line.replace(b"date: '%d %b %Y'", b"date('%d %b %Y')")
        + b"{{ content }}",
        "_theme/page.html": b"{{ content }}",
        "_config.yml": b"url: https://site.org\nbaseurl: /blog\n",
        "_posts/2020-01-02-x.md": b"---\ntitle: X\n---\n" + line + b"\n",
    }
    page = build(files, theme="_theme").files["2020/01/02/x.html"].decode()
    layout, content = page.split("|", 1)
    expected = "/blog/a https://x.org/b https://site.org/blog/c 02 Jan 2020"
    assert layout == expected
    assert content.strip() == f"<p>{expected}|</p>"


def test_theme_syntax_error_names_the_template_line() -> None:
    files = {"theme/post.html": b"ok\n{% if %}\n", "_posts/2020-01-01-x.md": b"---\n---\nx\n"}
    with pytest.raises(SourceError) as info:
        build(files, theme="theme")
    assert (info.value.path, info.value.line) == ("theme/post.html", 2)


def test_bundled_templates_found() -> None:
    assert bundled_templates_dir() == REPO / "templates"
    for name in ["base.html", "post.html", "page.html", "index.html", "assets/css/style.css"]:
        assert (REPO / "templates" / name).is_file()
    assert ".highlight .k " in (REPO / "templates/assets/css/style.css").read_text()


@pytest.fixture(scope="module")
def tvm_build() -> SiteBuild:
    return build_site(DirTree(TVM / "source"), TVM_OPTIONS)


@needs_corpus
def test_tvm_all_posts_build(tvm_build: SiteBuild) -> None:
    sources = sorted((TVM / "source" / "_posts").iterdir())
    posts = [p for p in tvm_build.files if p[:4].isdigit()]
    assert len(sources) == len(posts) == 21
    assert {w.line for w in tvm_build.warnings} == {7}  # only the two JB/setup includes
    assert len(tvm_build.warnings) == 2


@needs_corpus
def test_tvm_published_paths_exist(tvm_build: SiteBuild) -> None:
    published = TVM / "published"
    expected = sorted(p.relative_to(published).as_posix() for p in published.rglob("*.html"))
    assert len(expected) == 4 and "2019/04/29/opt-cuda-quantized.html" in expected
    for path in expected:
        assert path in tvm_build.files


@needs_corpus
def test_tvm_bert_post(tvm_build: SiteBuild) -> None:
    html = tvm_build.files["2020/07/14/bert-pytorch-tvm.html"].decode()
    assert "Bridging PyTorch and TVM" in html
    assert (
        '<div class="language-python highlighter-rouge"><div class="highlight">'
        '<pre class="highlight"><code><span class="n">' in html
    )
    assert '<span class="kn">import</span>' in html
    assert "{% include" not in html


@needs_corpus
def test_tvm_rocm_highlight_tags(tvm_build: SiteBuild) -> None:
    html = tvm_build.files[
        "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html"
    ].decode()
    assert html.count('<figure class="highlight">') == 8
    assert '<code class="language-llvm" data-lang="llvm">' in html
    assert '<code class="language-plain" data-lang="plain">' in html


DIGEST_SCRIPT = """
import hashlib, json, sys
from datetime import datetime
from pathlib import Path
from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import DirTree
when = datetime.fromisoformat(sys.argv[2])
options = RenderOptions(timezone="America/Los_Angeles", build_time=when)
built = build_site(DirTree(Path(sys.argv[1])), options)
sums = {p: hashlib.sha256(d).hexdigest() for p, d in built.files.items()}
print(json.dumps(sums, sort_keys=True))
"""


def digests(built: SiteBuild) -> dict[str, str]:
    return {p: hashlib.sha256(d).hexdigest() for p, d in built.files.items()}


@needs_corpus
@pytest.mark.parametrize(
    "env",
    [{"TZ": "Asia/Tokyo"}, {"LC_ALL": "C"}, {"TZ": "Pacific/Kiritimati", "LANG": "de_DE.UTF-8"}],
)
def test_tvm_build_is_deterministic_across_tz_and_locale(
    tvm_build: SiteBuild, env: dict[str, str]
) -> None:
    args = [sys.executable, "-c", DIGEST_SCRIPT, str(TVM / "source"), BUILD_TIME.isoformat()]
    run_env = {**os.environ, "PYTHONHASHSEED": "random", **env}
    result = subprocess.run(args, env=run_env, cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == digests(tvm_build)


def test_unknown_theme_folder_is_a_config_error() -> None:
    tree = MemoryTree({"_posts/2024-01-02-a.md": b"---\ntitle: A\n---\nhi\n"})
    with pytest.raises(ConfigError, match=r"^render\.theme: no folder 'fancy'"):
        build_site(tree, RenderOptions(theme="fancy"))


@pytest.mark.parametrize(
    ("front", "path", "line"),
    [
        # Jekyll 4.3: "Error: could not read file …: no implicit conversion of Hash into
        # Array", and the post goes on half read (at the build's date, the file's name)
        ("categories:\n  a: 1\n  b: x\n", "2024/01/05/map.html", 3),
        # Jekyll: the mapping's Ruby to_s in the URL ({"a"=>1}/2024/...)
        ("category: {a: 1}\n", "2024/01/05/map.html", 3),
        ("categories: [x, {a: 1}]\n", "x/2024/01/05/map.html", 3),
        # Jekyll: no tags; here a warning too, not a silence
        ("tags: {a: 1}\n", "2024/01/05/map.html", 3),
    ],
)
def test_a_mapping_for_categories_or_tags_is_one_warning_naming_the_line(
    front: str, path: str, line: int
) -> None:
    post = f"---\ntitle: Map\n{front}---\nhi\n".encode()
    built = build({"_posts/2024-01-05-map.md": post})
    key = front.split(":", 1)[0]
    assert path in built.files, sorted(built.files)
    assert [(w.path, w.line, w.message) for w in built.warnings if w.path.startswith("_posts")] == [
        (
            "_posts/2024-01-05-map.md",
            line,
            f"{key}: a mapping is no category or tag name: left out",
        )
    ]


def test_a_ruby_plugin_of_the_site_is_warned_about_once() -> None:
    files = {
        "_plugins/tags.rb": b"module Jekyll; end\n",
        "_plugins/README.md": b"notes\n",
        "lib/x.rb": b"puts 1\n",
        "index.md": b"---\n---\nHi\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert [(w.path, w.message) for w in built.warnings if w.path.endswith(".rb")] == [
        ("_plugins/tags.rb", RUBY_PLUGIN)
    ]
    assert "lib/x.rb" in built.files  # a .rb elsewhere is a static file, as in Jekyll


def test_a_false_title_is_false_on_a_page_and_the_slug_s_title_on_a_post() -> None:
    """YAML's ``Off``/``No`` are false (YAML 1.1, as Psych reads them). Jekyll 4.3.1 (run on
    these files) prints ``false`` for a page's and gives a post the title of its slug
    (``data["title"] ||= titleize(slug)``); deploybot printed ``False`` and took it as true."""
    files = {
        "_config.yml": b"title: S\n",
        "_layouts/p.html": b"[{{ page.title }}]{{ content }}",
        "index.md": b"---\ntitle: Off\n---\n"
        b"{{ page.title }} {{ page.title | upcase }} {% if page.title %}t{% else %}f{% endif %}\n",
        "_posts/2024-01-02-my-post.md": b"---\ntitle: No\nlayout: p\n---\nx\n",
        "_posts/2024-01-03-num.md": b"---\ntitle: 2024\nlayout: p\n---\ny\n",
    }
    out = build_site(MemoryTree(files), RenderOptions()).files
    assert out["index.html"] == b"<p>false FALSE f</p>\n"
    assert out["2024/01/02/my-post.html"] == b"[My Post]<p>x</p>\n"
    assert out["2024/01/03/num.html"] == b"[2024]<p>y</p>\n"
