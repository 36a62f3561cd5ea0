"""What the preview's watcher reports: the site's source paths, not tools' and editors' files."""

from __future__ import annotations

from pathlib import Path

import pytest
from watchfiles import Change

from deploybot.livepreview.server import content_type
from deploybot.livepreview.watch import SourceFilter, relative_paths


@pytest.mark.parametrize(
    "rel",
    [".git/index", "_site/index.html", "sub/_site/a.html", ".jekyll-cache/x", ".sass-cache/y",
     "node_modules/p/index.js", "_posts/.a.md.swp", "_posts/4913", "_posts/a.md~",
     "_posts/.#a.md", "_posts/#a.md#", "a.md.___jb_tmp___", ".jekyll-metadata",
     "tmp/deploybot-preview-x/site/index.html"],
)  # fmt: skip
def test_tools_and_editors_files_are_left_out(tmp_path: Path, rel: str) -> None:
    keep = SourceFilter(skip=[tmp_path / "tmp/deploybot-preview-x"])
    assert not keep(Change.modified, str(tmp_path / rel))


@pytest.mark.parametrize("rel", ["_posts/2024-01-01-a.md", "_config.yml", "about.md", "a~b.md"])
def test_the_sites_files_are_reported(tmp_path: Path, rel: str) -> None:
    assert SourceFilter()(Change.modified, str(tmp_path / rel))


def test_paths_are_the_sources_own(tmp_path: Path) -> None:
    (tmp_path / "src/_posts").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "src")
    changed = [str(tmp_path / "src/_posts/a.md"), str(tmp_path / "other/b.md"),
               str(tmp_path / "src/gone/c.md")]  # fmt: skip
    assert relative_paths(tmp_path / "link", changed) == {"_posts/a.md", "gone/c.md"}


def test_content_types_are_the_webs() -> None:
    assert content_type(Path("a/index.html")) == "text/html; charset=utf-8"
    assert content_type(Path("feed.xml")) == "application/xml; charset=utf-8"
    assert content_type(Path("atom.ATOM")) == "application/atom+xml; charset=utf-8"
    assert content_type(Path("m.js")) == "text/javascript; charset=utf-8"
    assert content_type(Path("i.svg")) == "image/svg+xml; charset=utf-8"
    assert content_type(Path("p.png")) == "image/png"
    assert content_type(Path("f.woff2")) == "font/woff2"
    assert content_type(Path("CNAME")) == "application/octet-stream"
