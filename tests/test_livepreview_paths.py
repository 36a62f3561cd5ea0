"""The preview's request paths, as ``jekyll serve`` maps them, confined to the build folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deploybot.livepreview.paths import NOT_FOUND, Kind, Resolution, normal_baseurl, resolve


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    for rel in ("index.html", "about.html", "blog/index.html", "feed.xml", "css/main.css",
                "docs/index.htm", "a b/ü.html", "404.html"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (tmp_path / "secret.txt").write_text("secret")
    return root


def file(path: Path) -> Resolution:
    return Resolution(Kind.FILE, path)


def test_jekylls_mapping(site: Path) -> None:
    assert resolve(site, "", "/") == file(site / "index.html")
    assert resolve(site, "", "/blog/") == file(site / "blog/index.html")
    assert resolve(site, "", "/docs/") == file(site / "docs/index.htm")
    assert resolve(site, "", "/about") == file(site / "about.html")  # permalink: /about
    assert resolve(site, "", "/about.html") == file(site / "about.html")
    assert resolve(site, "", "/feed.xml") == file(site / "feed.xml")
    assert resolve(site, "", "/a b/ü.html") == file(site / "a b/ü.html")  # decoded by aiohttp
    assert resolve(site, "", "/blog") == Resolution(
        Kind.REDIRECT, location="/blog/", permanent=True
    )
    assert resolve(site, "", "/css/") is NOT_FOUND  # no index: Jekyll lists no folder
    assert resolve(site, "", "/nothing") is NOT_FOUND
    assert resolve(site, "", "/about/") is NOT_FOUND


def test_baseurl_is_where_the_site_is_served(site: Path) -> None:
    assert normal_baseurl("/blog/") == normal_baseurl("blog") == "/blog"
    assert normal_baseurl("") == normal_baseurl("/") == ""
    assert resolve(site, "/b", "/") == Resolution(Kind.REDIRECT, location="/b/")
    assert resolve(site, "/b", "/b") == Resolution(Kind.REDIRECT, location="/b/")
    assert resolve(site, "/b", "/b/") == file(site / "index.html")
    assert resolve(site, "/b", "/b/about") == file(site / "about.html")
    assert resolve(site, "/b", "/b/blog") == Resolution(
        Kind.REDIRECT, location="/b/blog/", permanent=True
    )
    assert resolve(site, "/b", "/about.html") is NOT_FOUND  # outside the baseurl
    assert resolve(site, "/b", "/bother/index.html") is NOT_FOUND


@pytest.mark.parametrize(
    "path",
    ["/../secret.txt", "/blog/../../secret.txt", "/./index.html", "//secret.txt",
     "/blog//index.html", "/..\\secret.txt", "/index.html\0", "secret.txt", "/.."],
)  # fmt: skip
def test_no_path_leaves_the_folder(site: Path, path: str) -> None:
    assert resolve(site, "", path) is NOT_FOUND


def test_a_symlink_out_of_the_folder_is_not_followed(site: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", site / "leak.html")
    os.symlink(tmp_path, site / "up")
    os.symlink(site / "about.html", site / "inside.html")
    assert resolve(site, "", "/leak.html") is NOT_FOUND
    assert resolve(site, "", "/leak") is NOT_FOUND
    assert resolve(site, "", "/up/secret.txt") is NOT_FOUND
    assert resolve(site, "", "/up") is NOT_FOUND  # not even a redirect into it
    assert resolve(site, "", "/inside.html") == file(site / "inside.html")
