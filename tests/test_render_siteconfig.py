"""_config.yml settings the build cannot use are reported, not dropped silently
(deploybot.render.read.siteconfig, collections, defaults): one warning naming _config.yml, the
line of the key when it is found, and what was done instead."""

from __future__ import annotations

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.source import MemoryTree

PAGE = b"---\n---\nx\n"


def _config_warnings(config: str) -> list[tuple[int | None, str]]:
    """Return the _config.yml warnings of a build (full and engine builds agree)."""
    files = {"_config.yml": config.encode(), "a.md": PAGE, "_r/d.md": PAGE}
    full = build_site(MemoryTree(files), RenderOptions()).warnings
    report = build_into(MemoryTree(files), RenderOptions(), open_cache(None), MemorySink(), None)
    assert report.warnings == full
    return [(w.line, w.message) for w in full if w.path == "_config.yml" and "url" not in w.message]


@pytest.mark.parametrize(
    ("config", "warnings"),
    [
        (
            "title: t\ncollections: 5\n",
            [(2, "'collections' is neither a list of labels nor a mapping: ignored")],
        ),
        (
            "collections:\n  r: 5\n",
            [(2, "collection 'r': its settings are not a mapping: ignored")],
        ),
        (
            "collections:\n  r:\n    output: true\n    order: 5\n",
            [(4, "collection 'r': 'order' is not a list of file names: ignored")],
        ),
        ("title: t\ndefaults: 5\n", [(2, "'defaults' is not a list of sets: ignored")]),
        (
            "defaults: [5]\n",
            [(1, "'defaults' set 1 is not a mapping with a 'values' mapping: skipped")],
        ),
        (
            "defaults:\n  - values: {layout: none}\n  - {scope: 3, values: {x: 1}}\n",
            [(1, "'defaults' set 2: 'scope' is not a mapping: the set applies to every file")],
        ),
        ("collections:\n  r:\n    order: [d.md]\ndefaults: []\n", []),
    ],
)
def test_unusable_settings_are_reported(config: str, warnings: list[tuple[int, str]]) -> None:
    assert _config_warnings(config) == warnings


def test_a_key_not_found_in_the_text_has_no_line() -> None:
    # the key search reads plain keys only: a quoted key or a flow mapping gives no line
    assert _config_warnings('"defaults": 5\n') == [
        (None, "'defaults' is not a list of sets: ignored")
    ]
    assert _config_warnings("{collections: {r: {order: 5}}}\n") == [
        (None, "collection 'r': 'order' is not a list of file names: ignored")
    ]
