"""Permalink templates, page URLs and output paths (Jekyll's url.rb/document.rb/page.rb)."""

from __future__ import annotations

from datetime import datetime
from posixpath import normpath
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.permalink import (
    expand,
    output_path,
    page_template,
    post_placeholders,
    post_template,
)
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError

DATE = datetime(2020, 7, 14, 9, 5, 3, tzinfo=ZoneInfo("UTC"))


def post_url(permalink: str, categories: tuple[str, ...] = ()) -> str:
    return expand(post_template(permalink), post_placeholders(DATE, "My-Post", categories))


@pytest.mark.parametrize(
    ("permalink", "categories", "url", "path"),
    [
        (
            "/:categories/:year/:month/:day/:title",
            (),
            "/2020/07/14/My-Post",
            "2020/07/14/My-Post.html",
        ),
        (
            "/:categories/:year/:month/:day/:title",
            ("News", "x"),
            "/news/x/2020/07/14/My-Post",
            None,
        ),
        ("date", (), "/2020/07/14/My-Post.html", "2020/07/14/My-Post.html"),
        ("pretty", (), "/2020/07/14/My-Post/", "2020/07/14/My-Post/index.html"),
        ("ordinal", (), "/2020/196/My-Post.html", None),
        ("none", ("a",), "/a/My-Post.html", "a/My-Post.html"),
        ("weekdate", (), "/2020/W29/Tue/My-Post.html", None),
        ("/:title.html", (), "/My-Post.html", "My-Post.html"),
        ("/blog/:i_month/:i_day/:slug/", (), "/blog/7/14/my-post/", "blog/7/14/my-post/index.html"),
        ("/:year:unknown/:title", (), "/2020:unknown/My-Post", None),
    ],
)
def test_post_permalinks(
    permalink: str, categories: tuple[str, ...], url: str, path: str | None
) -> None:
    assert post_url(permalink, categories) == url
    if path is not None:
        assert output_path(url) == path


def test_values_are_escaped_and_paths_unescaped() -> None:
    url = expand("/:title", {"title": "a b%"})
    assert url == "/a%20b%25"
    assert output_path(url) == "a b%.html"


@pytest.mark.parametrize(
    ("style", "index", "template"),
    [
        ("date", False, "/:path/:basename:output_ext"),
        ("pretty", False, "/:path/:basename/"),
        ("/:categories/:year/:month/:day/:title", False, "/:path/:basename"),
        ("/:year/:title/", False, "/:path/:basename/"),
        ("/:year/:title:output_ext", False, "/:path/:basename:output_ext"),
        ("pretty", True, "/:path/"),
    ],
)
def test_page_templates(style: str, index: bool, template: str) -> None:
    assert page_template(style, index=index) == template


@pytest.mark.parametrize(
    "url", ["/../x", "/a/../../b", "/%2e%2e/etc/passwd", "/a\\b", "/a/..%2F..%2Fb"]
)
def test_unsafe_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        output_path(url)


@given(st.text(alphabet=st.sampled_from("ab./%2eE\\:"), max_size=20))
def test_output_path_never_escapes(url: str) -> None:
    try:
        path = output_path("/" + url)
    except ValueError:
        return
    assert not path.startswith("/")
    assert normpath(path) == path
    assert ".." not in path.split("/")


def test_front_matter_permalink_escaping_root_is_a_source_error() -> None:
    tree = MemoryTree(
        {"_posts/2020-01-01-x.md": b"---\ntitle: x\npermalink: /../../etc/x\n---\nhi\n"}
    )
    with pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions())
    assert (info.value.path, info.value.line) == ("_posts/2020-01-01-x.md", 3)


def test_page_permalink_escaping_root_is_a_source_error() -> None:
    tree = MemoryTree({"about.md": b"---\npermalink: ../about/\n---\nhi\n"})
    with pytest.raises(SourceError):
        build_site(tree, RenderOptions())


def test_site_permalinks_in_a_build() -> None:
    files = {
        "_config.yml": b"permalink: /:categories/:year/:month/:day/:title\n",
        "_posts/2020-01-02-plain.md": b"---\ntitle: P\n---\nx\n",
        "blog/_posts/2020-01-03-cat.md": b"---\ncategories: [Tech]\n---\nx\n",
        "_posts/2020-01-04-own.md": b"---\npermalink: /custom/:title/\n---\nx\n",
        "_posts/2020-01-05-feed.md": b"---\npermalink: /feeds/special.xml\n---\nx\n",
        "about.md": b"---\ntitle: About\n---\nx\n",
        "docs/index.md": b"---\n---\nx\n",
        "me.html": b"---\npermalink: /me/\n---\n<p>x</p>\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    for path in [
        "2020/01/02/plain.html",
        "blog/tech/2020/01/03/cat.html",
        "custom/own/index.html",
        "feeds/special.xml",
        "about.html",
        "docs/index.html",
        "me/index.html",
    ]:
        assert path in built.files, path
