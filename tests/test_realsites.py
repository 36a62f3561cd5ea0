"""The comparison functions of the real-sites tool (:mod:`tests.realsites`), on two tiny
made-up output folders: what Jekyll wrote and what we wrote."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.realsites import (
    JEKYLL_RUN,
    BuildRun,
    SiteReport,
    body_text,
    build_with_jekyll,
    by_feature,
    compare,
    jekyll_run,
    ours_run,
    similarity,
    table_row,
)

HEAD = (
    "<head><title>My  site</title>"
    '<link rel="canonical" href="https://example.org/">'
    '<meta property="og:title" content="{og}">'
    '<script type="application/ld+json">{{"name": "x"}}</script></head>'
)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    theirs, ours = tmp_path / "jekyll", tmp_path / "ours"
    _write(
        theirs,
        {
            "index.html": HEAD.format(og="My site") + "<body><p>one two three four</p></body>",
            "about/index.html": "<body><h1>About</h1> <p>a b c d</p></body>",
            "assets/main.css": "body{}",
            "assets/print.css": "p{}",
            "feed.xml": "<feed><entry>1</entry><entry>2</entry></feed>",
            "img.png": "x",
        },
    )
    _write(
        ours,
        {
            "index.html": (
                "<head><title>My site</title>"
                '<meta property="og:title" content="Other"></head>'
                "<body><p>one two three four</p></body>"
            ),
            "about/index.html": "<body><h1>About</h1><p>a b x d</p></body>",
            "assets/main.css": "",
            "assets/print.css": "p{}",
            "feed.xml": "<feed><entry>1</entry></feed>",
            "extra.html": "<p>only ours</p>",
            ".deploybot-build": "index.html\n",
        },
    )
    return theirs, ours


def test_compare_counts_files_pages_css_feeds_and_head_tags(tmp_path: Path) -> None:
    c = compare(*_folders(tmp_path))
    assert (c.jekyll_files, c.same_path) == (6, 5)
    assert (c.jekyll_html, c.same_path_html) == (2, 2)
    assert c.extra == ("extra.html",)  # our manifest is not an output
    assert c.missing == ("img.png",)
    assert c.similarity == {"about/index.html": 0.8, "index.html": 1.0}
    assert c.worst(1) == [("about/index.html", 0.8)]
    assert (c.css_total, c.css_missing) == (2, ("assets/main.css",))  # empty counts as missing
    assert c.feeds == {"feed.xml": "1 entries, Jekyll 2"}
    # the title's whitespace is collapsed before comparing: "My  site" == "My site"
    assert c.head == {
        "title": "ok",
        "canonical": "missing",
        "og:title": "differs",
        "ld+json": "missing",
    }


def test_compare_with_nothing_built_finds_nothing(tmp_path: Path) -> None:
    theirs, _ = _folders(tmp_path)
    c = compare(theirs, tmp_path / "absent")
    assert (c.same_path, c.extra, c.similarity, c.feeds["feed.xml"]) == (0, (), {}, "missing")
    assert set(c.head.values()) == {"missing"}


def test_body_text_leaves_out_tags_scripts_styles_and_extra_space() -> None:
    html = (
        "<html><head><title>T</title></head><body>\n<p>Tom &amp; <b>Jerry</b></p>"
        "<script>var x = 1;</script><style>p{}</style>\n\n  <p>end</p><div>a<br>b</div>"
        '<pre><span class="s">"x</span><span>"</span></pre></body></html>'
    )
    # block edges separate words, inline ones (highlighted code's spans) do not
    assert body_text(html) == 'Tom & Jerry end a b "x"'
    assert body_text("<p>no  body</p>") == "no body"


def test_similarity_is_by_word() -> None:
    assert similarity("a b c d", "a b c d") == 1.0
    assert similarity("a b c d", "a b x d") == 0.75
    assert similarity("one", "two") == 0.0


def test_jekyll_run_names_the_missing_gem_and_the_error_line() -> None:
    output = (
        "Configuration file: /s/_config.yml\n"
        "\x1b[31m  Dependency Error: Yikes! It looks like you don't have jemoji or one of "
        "its dependencies installed.\x1b[0m\n"
        "             from /usr/bin/jekyll:25:in `<main>'\n"
        "       Deprecation: You appear to have pagination turned on\n"
    )
    run = jekyll_run(1, 0.5, output)
    assert run.missing_gem == "jemoji"
    assert run.first_error is not None and run.first_error.startswith("Dependency Error: Yikes!")
    assert run.warnings == ("Deprecation: You appear to have pagination turned on",)
    assert jekyll_run(0, 0.5, "done in 0.1 seconds.\n").first_error is None


def test_ours_run_and_warnings_grouped_by_feature() -> None:
    output = (
        "warning: _layouts/a.html:3: unknown tag 'seo'\n"
        "warning: _layouts/b.html:9: unknown tag 'seo'\n"
        "warning: index.md: unknown filter 'jsonify'\n"
        "deploybot: error: _includes/head.html:5: Liquid syntax error: unexpected tag 'seo'\n"
    )
    run = ours_run(1, 2.0, output)
    assert len(run.warnings) == 3
    assert run.first_error == (
        "deploybot: error: _includes/head.html:5: Liquid syntax error: unexpected tag 'seo'"
    )
    assert by_feature(run.warnings) == {"unknown tag 'seo'": 2, "unknown filter 'jsonify'": 1}


def test_table_row_shows_the_shares_and_an_out_of_target_site(tmp_path: Path) -> None:
    ok = BuildRun(0, 1.0, None, ())
    row = table_row(SiteReport("demo", ok, ok, compare(*_folders(tmp_path))))
    assert "| 5/6 (83%) | 2/2 (100%) | 1 | 0.900 / 0.800 | 1/2 |" in row
    failed = BuildRun(1, 0.4, "Dependency Error", (), "jemoji")
    row = table_row(SiteReport("elixir", failed, ok, None))
    assert "out of target: gem jemoji not installed" in row
    row = table_row(SiteReport("brew", BuildRun(1, 0.4, "Psych::DisallowedClass", ()), ok, None))
    assert "out of target: Jekyll fails (see below)" in row


def test_a_kept_jekyll_run_is_reused(tmp_path: Path) -> None:
    kept = BuildRun(0, 12.5, None, ("Deprecation: x",))
    (tmp_path / "jekyll").mkdir()
    (tmp_path / JEKYLL_RUN).write_text(json.dumps(asdict(kept)), "utf-8")
    assert build_with_jekyll(tmp_path / "no-site", tmp_path, reuse=True) == kept


@pytest.mark.skipif(shutil.which("jekyll") is None, reason="needs jekyll on the PATH")
def test_a_kept_jekyll_run_that_timed_out_is_built_again(tmp_path: Path) -> None:
    (tmp_path / JEKYLL_RUN).write_text(json.dumps(asdict(BuildRun(-1, 60.0, "timed out", ()))))
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>hi</p>", "utf-8")
    run = build_with_jekyll(site, tmp_path, reuse=True, timeout=600)
    assert run.status == 0 and (tmp_path / "jekyll" / "index.html").is_file()
    assert json.loads((tmp_path / JEKYLL_RUN).read_text())["status"] == 0
