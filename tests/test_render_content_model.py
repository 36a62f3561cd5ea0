"""Jekyll's content model beyond the fixtures: the site's own index is never replaced by
the bundled theme's (full and incremental builds), dates in file names read as Jekyll
reads them, ``site.time`` from ``_config.yml``, and the future cut-off apart from the
build time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.incremental_site import initial_site
from tests.test_render_incremental_model import _steps

THEME_INDEX = b"<a href='/2021/01/post-0'>"


@pytest.mark.parametrize(
    "own",
    [
        {"index.md": b"---\ntitle: Mine\n---\nmine\n"},
        {"index.html": b"<p>static, no front matter</p>\n"},
        {"home.md": b"---\npermalink: /\n---\nmine\n"},
    ],
)
def test_the_sites_own_index_is_never_replaced_by_the_themes(own: dict[str, bytes]) -> None:
    gone = dict.fromkeys(own)
    inc = _steps(own, gone, own)  # each build checked against a full build
    assert THEME_INDEX not in inc.outputs["index.html"]
    start = {**initial_site(), **own}
    assert THEME_INDEX in _steps(gone, start=start).outputs["index.html"]


def test_file_name_dates_are_read_as_jekyll_reads_them() -> None:
    files = {
        "_posts/2019-3-7-short.md": b"---\n---\nx\n",
        "_posts/19-03-07-two-digit.md": b"---\n---\nx\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert "2019/03/07/short.html" in built.files
    assert "2019/03/07/two-digit.html" in built.files  # Ruby's 19 -> 2019
    with pytest.raises(SourceError, match="bad date in the file name") as caught:
        build_site(MemoryTree({"_posts/2019-13-01-x.md": b"---\n---\nx\n"}), RenderOptions())
    assert caught.value.path == "_posts/2019-13-01-x.md"


def test_site_time_from_the_config_and_a_cut_off_apart_from_the_build_time() -> None:
    page = b"---\n---\n{{ site.time | date_to_xmlschema }}\n"
    files = {"t.md": page, "_posts/2024-03-05-soon.md": b"---\n---\nsoon\n"}
    when, cut = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 3, 6, tzinfo=UTC)
    built = build_site(MemoryTree(files), RenderOptions(build_time=when, cutoff=cut))
    assert b"2024-01-01T00:00:00+00:00" in built.files["t.html"]
    assert "2024/03/05/soon.html" in built.files
    fixed = {**files, "_config.yml": b"time: 5 Mar 2024 10:00 +0200\n"}
    built = build_site(MemoryTree(fixed), RenderOptions(build_time=when, cutoff=cut))
    assert b"2024-03-05T08:00:00+00:00" in built.files["t.html"]  # Ruby's Time.parse
    assert "2024/03/05/soon.html" in built.files  # dated midnight: before 08:00
    with pytest.raises(SourceError, match=r"^_config.yml: time: not a date"):
        build_site(MemoryTree({"_config.yml": b"time: someday\n"}), RenderOptions())
