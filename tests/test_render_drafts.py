"""Jekyll's ``--drafts`` and ``--future`` as config overrides (``RenderOptions.config_overrides``):
``_drafts/`` read as posts with ``show_drafts``, posts after the cut-off kept with ``future``."""

from __future__ import annotations

from datetime import UTC, datetime

from deploybot.render.engine.build import build_site
from deploybot.render.engine.full import options_key
from deploybot.render.model import RenderOptions
from deploybot.render.read.entries import classify
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import MemoryTree

NOW = datetime(2021, 6, 1, 12, 0, 30, 123456, tzinfo=UTC)
LAYOUT = {"_layouts/post.html": b"<p>{{ page.title }} draft={{ page.draft }} {{ page.date }}</p>"}
DRAFTS = (("show_drafts", True),)
FUTURE = (("future", True),)


def build(files: dict[str, bytes], overrides: tuple[tuple[str, bool], ...] = ()) -> dict[str, str]:
    tree = MemoryTree({**LAYOUT, **files})
    options = RenderOptions(build_time=NOW, config_overrides=overrides, jobs=1)
    return {path: data.decode() for path, data in build_site(tree, options).files.items()}


def post(title: str, extra: str = "") -> bytes:
    return f"---\ntitle: {title}\nlayout: post\n{extra}---\nBody.\n".encode()


def test_drafts_are_posts_dated_at_the_build_only_with_show_drafts() -> None:
    files = {"_drafts/idea.md": post("Idea"), "_posts/2020-01-01-a.md": post("A")}
    assert not any("idea" in path for path in build(files))
    out = build(files, DRAFTS)
    # the build time, in whole seconds (the future cut-off's), as the file's mtime would be
    assert out["2021/06/01/idea.html"] == "<p>Idea draft=true 2021-06-01 12:00:30 +0000</p>"
    assert out["2020/01/01/a.html"] == "<p>A draft= 2020-01-01 00:00:00 +0000</p>"


def test_a_draft_with_a_front_matter_date_keeps_it_and_folders_are_categories() -> None:
    files = {"news/_drafts/soon.md": post("Soon", "date: 2019-05-04 10:00:00 +0000\n")}
    out = build(files, DRAFTS)
    assert out["news/2019/05/04/soon.html"].startswith("<p>Soon draft=true 2019-05-04 10:00:00")


def test_show_drafts_in_the_config_is_jekylls_too() -> None:
    out = build({"_config.yml": b"show_drafts: true\n", "_drafts/idea.md": post("Idea")})
    assert "2021/06/01/idea.html" in out


def test_a_name_without_extension_in_drafts_is_no_draft() -> None:
    tree = MemoryTree({"_drafts/notes": b"x"})
    config = load_config(tree, overrides=DRAFTS)
    assert classify("_drafts/notes", config).kind == "not-a-post"
    assert classify("_drafts/idea.md", config).draft
    assert classify("_drafts/idea.md", load_config(tree)).kind == ""


def test_future_override_keeps_posts_after_the_cut_off_over_the_config() -> None:
    files = {"_config.yml": b"future: false\n", "_posts/2030-01-01-later.md": post("Later")}
    assert "2030/01/01/later.html" not in build(files)
    assert "2030/01/01/later.html" in build(files, FUTURE)


def test_overrides_key_the_cache_only_when_given() -> None:
    plain = options_key(RenderOptions())
    assert plain == options_key(RenderOptions(config_overrides=()))
    assert plain != options_key(RenderOptions(config_overrides=DRAFTS))
