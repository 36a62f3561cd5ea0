"""The preview's builds: incremental on saves, the last good build kept through a failure,
and nothing of the preview's (the live-reload script) in the files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.livepreview.builder import PreviewBuilder, PreviewSettings
from deploybot.livepreview.inject import BANNER_ID
from tests.gitrepo import commit_files

LAYOUT = b"<!DOCTYPE html><html><body>{{ content }}</body></html>\n"
INDEX = b"---\nlayout: default\n---\n{% for p in site.posts %}<li>{{ p.title }}</li>{% endfor %}\n"


def post(title: str, body: str) -> str:
    return f"---\ntitle: {title}\nlayout: default\n---\n{body}\n"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    files = {
        "_config.yml": "title: T\nliquid:\n  error_mode: strict\n",
        "_layouts/default.html": LAYOUT.decode(),
        "index.html": INDEX.decode(),
        "_posts/2024-01-01-a.md": post("A", "Alpha."),
        "_posts/2024-01-02-b.md": post("B", "Beta."),
        "notes/_posts/2024-01-03-c.md": post("C", "Gamma."),
        "README.txt": "read me",
        "built.html": "---\n---\nbuilt at {{ site.time }}\n",
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


@pytest.fixture
def builder(source: Path, tmp_path: Path) -> PreviewBuilder:
    made = PreviewBuilder(source, tmp_path / "out", PreviewSettings())
    yield made  # type: ignore[misc]
    made.close()


def on_disk(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("*") if p.is_file()}


def test_a_save_rebuilds_only_what_shows_it(source: Path, builder: PreviewBuilder) -> None:
    first = builder.build(None)
    assert first.ok and first.full and first.reason == "the first build"
    assert "2024/01/01/a.html" in builder.outputs
    (source / "_posts/2024-01-01-a.md").write_text(post("A", "Alpha, edited."))
    again = builder.build({"_posts/2024-01-01-a.md"})
    assert again.ok and not again.full
    assert again.changed >= {"2024/01/01/a.html"}
    assert "index.html" not in again.changed and "2024/01/02/b.html" not in again.changed
    assert "built.html" not in again.changed  # site.time is the full build's
    files = on_disk(builder.site)
    assert "Alpha, edited." in files["2024/01/01/a.html"]
    assert not any("deploybot-livereload" in text or BANNER_ID in text for text in files.values())
    assert set(files) == builder.outputs


def test_a_failed_build_keeps_the_last_good_one_and_its_saves(
    source: Path, builder: PreviewBuilder
) -> None:
    builder.build(None)
    before = on_disk(builder.site)
    (source / "_posts/2024-01-01-a.md").write_text(post("A", "Alpha 2."))
    (source / "_posts/2024-01-02-b.md").write_text("---\ntitle: [B\n---\nBeta.\n")
    failed = builder.build({"_posts/2024-01-01-a.md", "_posts/2024-01-02-b.md"})
    assert not failed.ok and failed.error is not None
    assert failed.error.startswith("_posts/2024-01-02-b.md:2: ")
    assert on_disk(builder.site) == before
    (source / "_posts/2024-01-02-b.md").write_text(post("B", "Beta {% if %} x"))  # strict Liquid
    failed = builder.build({"_posts/2024-01-02-b.md"})
    assert not failed.ok and failed.error is not None and "_posts/2024-01-02-b.md" in failed.error
    assert on_disk(builder.site) == before
    (source / "_posts/2024-01-02-b.md").write_text(post("B", "Beta 2."))
    fixed = builder.build({"_posts/2024-01-02-b.md"})  # A's save of the failed build too
    assert fixed.ok and not fixed.full
    files = on_disk(builder.site)
    assert "Alpha 2." in files["2024/01/01/a.html"] and "Beta 2." in files["2024/01/02/b.html"]


def test_the_config_builds_fully_and_a_removed_folder_goes(
    source: Path, builder: PreviewBuilder
) -> None:
    builder.build(None)
    assert "notes/2024/01/03/c.html" in builder.outputs
    (source / "_config.yml").write_text("title: T2\nbaseurl: /blog/\n")
    redone = builder.build({"_config.yml"})
    assert redone.ok and redone.full and redone.reason == "the site config changed"
    assert builder.baseurl == "/blog"
    for path in (source / "notes/_posts").iterdir():
        path.unlink()
    (source / "notes/_posts").rmdir()
    (source / "notes").rmdir()
    gone = builder.build({"notes"})  # watchfiles names the folder only
    assert gone.ok and "notes/2024/01/03/c.html" in gone.changed
    assert not (builder.site / "notes").exists()
    assert set(on_disk(builder.site)) == builder.outputs


def test_a_preview_folder_inside_the_source_is_not_read(source: Path) -> None:
    inside = PreviewBuilder(source, source / "tmp/deploybot-preview-x", PreviewSettings())
    try:
        for _ in range(2):  # the second build would read the first's outputs as pages
            assert inside.build(None).ok
        assert not any(path.startswith("tmp/") for path in inside.outputs)
    finally:
        inside.close()


def test_a_save_the_build_does_not_read_builds_nothing(
    source: Path, builder: PreviewBuilder
) -> None:
    builder.build(None)
    (source / "Gemfile").write_text("source 'https://rubygems.org'\n")
    quiet = builder.build({"Gemfile"})
    assert quiet.ok and quiet.changed == frozenset() and quiet.reason


def test_a_git_theme_is_fetched_by_full_builds_only(tmp_path: Path) -> None:
    theme = tmp_path / "theme.git"
    Repo.init_bare(str(theme), mkdir=True).close()
    commit_files(theme, {"_layouts/default.html": b"<nav>one</nav>{{ content }}\n"}, "Theme")
    src = tmp_path / "themed"
    src.mkdir()
    (src / "_config.yml").write_text(f"remote_theme: {theme}@main\n")
    (src / "about.md").write_text("---\nlayout: default\n---\nAbout\n")
    made = PreviewBuilder(src, tmp_path / "out", PreviewSettings())
    try:
        assert made.build(None).ok
        commit_files(theme, {"_layouts/default.html": b"<nav>two</nav>{{ content }}\n"}, "Move")
        (src / "about.md").write_text("---\nlayout: default\n---\nAbout us\n")
        assert made.build({"about.md"}).ok  # kept at the commit the full build fetched
        assert (made.site / "about.html").read_text() == "<nav>one</nav><p>About us</p>\n\n"
        (src / "_config.yml").write_text(f"remote_theme: {theme}@main\ntitle: T\n")
        assert made.build({"_config.yml"}).full
        assert (made.site / "about.html").read_text() == "<nav>two</nav><p>About us</p>\n\n"
    finally:
        made.close()


def test_a_git_work_tree_is_read_as_it_is_on_disk(source: Path, tmp_path: Path) -> None:
    Repo.init(str(source)).close()  # nothing committed: the files on disk are the site
    made = PreviewBuilder(source, tmp_path / "out", PreviewSettings())
    try:
        assert made.build(None).ok
        assert "2024/01/01/a.html" in made.outputs
        assert not any(".git" in path for path in made.outputs)
    finally:
        made.close()
