"""Front matter defaults from _config.yml (deploybot.render.read.defaults): how scopes apply, and
what a build reports about a ``defaults`` it cannot use."""

from __future__ import annotations

import re

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read import defaults
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError

GLOB_CONFIG = b"defaults:\n  - scope: {path: 'docs/*'}\n    values: {layout: none, kind: glob}\n"


def test_a_glob_scope_is_compiled_once_per_build_not_per_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[str] = []
    glob_regex = defaults._glob_regex

    def counted(pattern: str) -> re.Pattern[str]:
        compiled.append(pattern)
        return glob_regex(pattern)

    monkeypatch.setattr(defaults, "_glob_regex", counted)
    files = {"_config.yml": GLOB_CONFIG, "top.md": b"---\n---\n{{ page.kind }}\n"}
    files.update({f"docs/p{i}.md": b"---\n---\n{{ page.kind }}\n" for i in range(6)})
    built = build_site(MemoryTree(files), RenderOptions())
    assert compiled == ["docs/*"]
    assert built.files["docs/p5.html"] == b"<p>glob</p>\n"
    assert b"glob" not in built.files["top.html"]


BAD_DATE = b"title: t\ndefaults:\n  - scope: {path: ''}\n    values: {date: 'not a date'}\n"


@pytest.mark.parametrize("path", ["_posts/2020-01-01-a.md", "a.md"])
def test_a_bad_date_from_defaults_names_the_config_line(path: str) -> None:
    tree = MemoryTree({"_config.yml": BAD_DATE, path: b"---\ntitle: x\n---\nx\n"})
    with pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions())
    assert (info.value.path, info.value.line) == (path, None)
    assert info.value.message == (
        "not a date: 'not a date' (no time information) (from _config.yml defaults, line 4)"
    )


def test_a_bad_date_in_the_front_matter_names_its_own_line() -> None:
    front = b"---\ntitle: x\ndate: someday\n---\nx\n"
    tree = MemoryTree({"_config.yml": BAD_DATE, "_posts/2020-01-01-a.md": front})
    with pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions())
    assert (info.value.line, info.value.message) == (
        3,
        "not a date: 'someday' (no time information)",
    )
