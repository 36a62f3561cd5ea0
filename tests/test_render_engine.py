"""The engine's full build (deploybot.render.engine.full.Engine.full) against build_site."""

from __future__ import annotations

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.engine.cache import BuildCache, SourceRow
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.source import MemoryTree

CONFIG = b"collections:\n  recipes:\n    output: true\n  notes:\n    output: true\n"
BODY = "prev={{ page.previous.title }} next={{ page.next.title }}"


def _site(n: int) -> dict[str, bytes]:
    files = {"_config.yml": CONFIG}
    for label in ("recipes", "notes"):
        for i in range(n):
            text = f"---\ntitle: {label} {i}\n---\n{BODY}\n"
            files[f"_{label}/d{i:03d}.md"] = text.encode()
    return files


def _doc_row_scans(
    files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, bytes]]:
    """Return how often a full build read every document row of the cache, and its files."""
    cache = open_cache(None)
    scans = 0
    rows = BuildCache.rows

    def counted(self: BuildCache, kind: str) -> list[SourceRow]:
        nonlocal scans
        scans += kind == "doc"
        return rows(self, kind)

    monkeypatch.setattr(BuildCache, "rows", counted)
    sink = MemorySink()
    build_into(MemoryTree(files), RenderOptions(), cache, sink, None)
    monkeypatch.setattr(BuildCache, "rows", rows)
    return scans, sink.files


def test_full_build_reads_a_collection_once_not_once_per_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each document asked for its collection's order again (every row unpickled and sorted
    # once per document: quadratic); the scans now depend on the labels alone.
    few, _ = _doc_row_scans(_site(2), monkeypatch)
    many, files = _doc_row_scans(_site(12), monkeypatch)
    assert few == many
    assert files == dict(build_site(MemoryTree(_site(12)), RenderOptions()).files)
    assert b"<p>prev=recipes 4 next=recipes 6</p>" in files["recipes/d005.html"]
    assert b"<p>prev= next=notes 1</p>" in files["notes/d000.html"]
