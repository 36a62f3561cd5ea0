"""Compiled layouts are kept across builds (render/theme/compiled.py): a second build of the
same layouts compiles none, an edited layout is compiled again, and the sandbox's budget
still binds code taken from the cache."""

from __future__ import annotations

from typing import Any

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import LayoutLimits, RenderOptions
from deploybot.render.read.source import MemoryTree
from deploybot.render.theme.compiled import COMPILED, MemoryBytecodeCache
from deploybot.render.theme.sandbox import LayoutSandbox
from deploybot.support.errors import SourceError

PAGE = b"---\ntitle: Home\n---\nHi.\n"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates the sandbox compiles from source, in order."""
    names: list[str] = []
    real = LayoutSandbox.compile

    def counted(self: LayoutSandbox, source: Any, name: Any = None, *args: Any, **kw: Any) -> Any:
        names.append(name)
        return real(self, source, name, *args, **kw)

    monkeypatch.setattr(LayoutSandbox, "compile", counted)
    COMPILED.clear()
    return names


def _site(layout: bytes) -> MemoryTree:
    return MemoryTree({"theme/page.html": layout, "index.md": PAGE, "b.md": PAGE})


def test_a_second_build_compiles_no_layout(compiles: list[str]) -> None:
    layout = b"<h1>{{ page.title }}</h1>{{ content }}"
    first = build_site(_site(layout), RenderOptions(theme="theme"))
    assert compiles == ["page.html"]
    second = build_site(_site(layout), RenderOptions(theme="theme"))
    assert compiles == ["page.html"]
    assert second.files == first.files
    assert first.files["index.html"] == b"<h1>Home</h1><p>Hi.</p>\n"


def test_an_edited_layout_is_compiled_again(compiles: list[str]) -> None:
    build_site(_site(b"old {{ page.title }}"), RenderOptions(theme="theme"))
    built = build_site(_site(b"new {{ page.title }}"), RenderOptions(theme="theme"))
    assert compiles == ["page.html", "page.html"]
    assert built.files["index.html"] == b"new Home"


def test_the_budget_binds_a_layout_taken_from_the_cache(compiles: list[str]) -> None:
    layout = b"{% for i in range(600) %}{% endfor %}ok"
    loose = build_site(_site(layout), RenderOptions(theme="theme"))
    assert loose.files["index.html"] == b"ok"
    tight = RenderOptions(theme="theme", layout_limits=LayoutLimits(max_steps=500))
    with pytest.raises(SourceError, match="500 steps"):
        build_site(_site(layout), tight)
    assert compiles == ["page.html"]


def test_the_cache_keeps_the_most_recently_used() -> None:
    env = LayoutSandbox(LayoutLimits())
    cache = MemoryBytecodeCache(limit=2)
    for name in ("a", "b", "a", "c"):  # "a" used again before "c" comes: "b" goes
        bucket = cache.get_bucket(env, name, None, name)
        if bucket.code is None:
            bucket.code = env.compile(name, name)
            cache.set_bucket(bucket)
    assert len(cache) == 2
    assert cache.get_bucket(env, "a", None, "a").code is not None
    assert cache.get_bucket(env, "b", None, "b").code is None
    assert cache.get_bucket(env, "a", None, "changed").code is None  # another text
