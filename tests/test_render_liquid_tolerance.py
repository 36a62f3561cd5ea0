"""Liquid as Jekyll 4.3.1 runs it: ``liquid.error_mode`` (warn by default: Ruby Liquid's lax
parser, one warning each), unknown tags, unknown filters and undefined values.

The pages of ``tests/fixtures/jekyll/liquid_tolerance`` are compared with real Jekyll's
output (``python -m tests.make_jekyll_fixtures liquid_tolerance``); the warnings expected
are those Jekyll printed for them (``jekyll build`` without ``--quiet``), at file lines
(Jekyll counts from the end of the front matter, 8 lines here).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.liquid.settings import ErrorMode, LiquidSettings, liquid_settings
from deploybot.render.liquid.templates import Liquid, render_liquid
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import DirTree, MemoryTree
from deploybot.support.errors import SourceError
from tests.test_render_jekyll_fixtures import FIXTURES, expected, normalise

CASE = FIXTURES / "liquid_tolerance"
LAYOUT = ("_layouts/default.html", 3, 'Expected id but found pipe in "{{ site.title | | upcase }}"')
JEKYLL_WARNINGS = {
    "hugo.md": [(11, '[:comparison, "<"] is not a valid expression in "{{< youtube abc123 >}}"')],
    "keywords.md": [(9, 'Expected id but found comparison in "{{ page.contains }}"')],
    "nbsp.md": [
        (9, 'Unexpected character \u00a0 in "{{\u00a0page.title\u00a0}}"'),
        (11, "Unexpected character \u00a0 in \"page.title\u00a0== 'X'\""),
    ],
    "pipes.md": [
        (9, 'Expected id but found pipe in "{{ page.title | | downcase }}"'),
        (11, "Expected id but found pipe in \"{{'a' | | upcase}}\""),
    ],
    "quote.md": [
        (9, 'Unexpected character " in "{{ page.title" }}"'),
        (9, "Unexpected character ' in \"{{ 'abc }}\""),
    ],
    "include.md": [],
    "lenient.md": [],
}


def test_each_page_renders_as_jekyll_renders_it() -> None:
    theirs = expected("liquid_tolerance")
    ours = build_site(DirTree(CASE / "site"), RenderOptions())
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        assert normalise(ours.files[path].decode()) == normalise(data.decode()), path


def test_each_markup_the_strict_parser_refuses_is_one_warning_at_its_file_and_line() -> None:
    ours = build_site(DirTree(CASE / "site"), RenderOptions())
    prefix, suffix = "Liquid syntax error: ", " (read by Jekyll's lax parser, as with "
    found: dict[str, list[tuple[int | None, str]]] = {page: [] for page in JEKYLL_WARNINGS}
    layout = []
    for w in ours.warnings:
        assert w.message.startswith(prefix) and w.message.endswith("liquid.error_mode: warn)")
        text = w.message[len(prefix) : w.message.index(suffix)]
        if w.path == LAYOUT[0]:
            layout.append((w.path, w.line, text))
        else:
            found[w.path].append((w.line, text))
    assert found == JEKYLL_WARNINGS
    assert layout == [LAYOUT] * len(JEKYLL_WARNINGS)  # once per page, as Jekyll prints it


def _strict_site() -> dict[str, bytes]:
    return {
        "_config.yml": b"liquid:\n  error_mode: strict\n",
        "ok.md": b"---\n---\nfine {{ page.reversed }}\n",
        "bad.md": b"---\ntitle: B\n---\nline 4\n{{ page.title | | upcase }}\n",
    }


def test_error_mode_strict_stops_at_the_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(_strict_site()), RenderOptions())
    assert (info.value.path, info.value.line) == ("bad.md", 5)
    assert info.value.message == (
        'Liquid syntax error: Expected id but found pipe in "{{ page.title | | upcase }}"'
    )


def test_error_mode_strict_exits_1_naming_the_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name, data in _strict_site().items():
        (source / name).write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "build", str(source), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "bad.md:5: Liquid syntax error: Expected id but found pipe" in done.stderr


def test_error_mode_lax_reads_the_same_without_a_warning() -> None:
    files = _strict_site()
    files["_config.yml"] = b"liquid:\n  error_mode: lax\n"
    build = build_site(MemoryTree(files), RenderOptions())
    assert b"<p>line 4\nB</p>" in build.files["bad.html"]
    assert build.warnings == ()


@pytest.mark.parametrize(
    ("source", "mode", "output"),
    [
        ("{{ page.reversed }}", ErrorMode.STRICT, "R"),  # Ruby's strict parser accepts it
        ("{% if page.limit == 'L' %}y{% endif %}", ErrorMode.STRICT, "y"),
        ("{% unless page.title\u00a0== 'X' %}y{% endunless %}", ErrorMode.LAX, ""),
        ("{% if a or b and c %}y{% endif %}", ErrorMode.WARN, "y"),
        ("{{ page.title | append: 'x', | upcase }}", ErrorMode.LAX, "TX"),
        ("{{ page['title'] }}{{ page[\"reversed\"] }}", ErrorMode.STRICT, "TR"),
    ],
)
def test_markups_read_as_ruby_reads_them(source: str, mode: ErrorMode, output: str) -> None:
    page = {"title": "T", "reversed": "R", "limit": "L"}
    liquid = Liquid(None, settings=LiquidSettings(error_mode=mode))
    variables = {"page": page, "a": True, "b": False, "c": False}
    assert render_liquid(source, path="p.md", variables=variables, liquid=liquid).text == output


@pytest.mark.parametrize(
    "source", ["{% youtube abc %}", "{% mytag x %}in{% endmytag %}", "{% endmytag %}"]
)
def test_an_unknown_tag_stops_with_jekylls_message(source: str) -> None:
    """Jekyll 4.3.1 stops on these in every mode (measured): ``Liquid syntax error (line 2):
    Unknown tag 'youtube'``."""
    for mode in ErrorMode:
        with pytest.raises(SourceError) as info:
            render_liquid(
                f"a\n{source}\n", path="p.md", liquid=Liquid(None, settings=LiquidSettings(mode))
            )
        name = source.split()[1]
        assert (info.value.line, info.value.message) == (
            2,
            f"Liquid syntax error: Unknown tag '{name}'",
        )


def test_strict_filters_and_strict_variables_stop_the_build() -> None:
    lenient = render_liquid("[{{ 'x' | nofilter }}][{{ nope.deep }}]", path="p.md")
    assert (lenient.text, lenient.warnings) == ("[x][]", ())
    for settings, source in (
        (LiquidSettings(strict_filters=True), "{{ 'x' | nofilter }}"),
        (LiquidSettings(strict_variables=True), "{{ nope }}"),
    ):
        with pytest.raises(SourceError):
            render_liquid(source, path="p.md", liquid=Liquid(None, settings=settings))


def test_liquid_settings_merge_over_jekylls_defaults() -> None:
    assert liquid_settings({}) == LiquidSettings(ErrorMode.WARN, False, False)
    assert liquid_settings({"liquid": {"error_mode": "strict"}}) == LiquidSettings(
        ErrorMode.STRICT, False, False
    )
    assert liquid_settings({"liquid": {"strict_filters": True}}).strict_filters
    assert liquid_settings({"liquid": {"error_mode": "Strict"}}).error_mode is ErrorMode.WARN
    assert liquid_settings({"liquid": "strict"}) == LiquidSettings()
