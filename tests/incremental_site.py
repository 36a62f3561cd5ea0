"""Test helper: a small generated Jekyll site and random commits over it (hypothesis), plus
the incremental-vs-full oracle used by the render and pipeline tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from deploybot.render import (
    BuildCache,
    BuildReport,
    MemorySink,
    NeedFullBuild,
    RenderOptions,
    build_into,
)
from deploybot.render.source import MemoryTree

THEME = "_theme"
T0 = datetime(2021, 1, 10, tzinfo=UTC)

LAYOUTS: dict[str, bytes] = {
    f"{THEME}/base.html": b"<html><title>{{ page.title }} | {{ site.title }}</title>"
    b"{% include 'nav.html' %}{% block main %}{{ content }}{% endblock %}</html>\n",
    f"{THEME}/nav.html": b"<nav>{{ site.title }}</nav>\n",
    f"{THEME}/post.html": b"{% extends 'base.html' %}{% block main %}<h1>{{ page.title }}</h1>"
    b"{{ page.date | date_to_xmlschema }} {{ page.tags | join(',') }}{{ content }}{% endblock %}\n",
    f"{THEME}/page.html": b"{% extends 'base.html' %}\n",
    f"{THEME}/index.html": b"{% extends 'base.html' %}{% block main %}"
    b"{% for p in site.posts %}<a href='{{ p.url }}'>{{ p.title }}</a>{% endfor %}"
    b"{% endblock %}\n",
    f"{THEME}/plain.html": b"<div>{{ content }}</div>\n",
    f"{THEME}/assets/site.css": b"body { color: black }\n",
}
CONFIG = b"title: Gen\nurl: https://gen.example.org\npermalink: /:year/:month/:title\n"

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "tvm", "code", "x"])
slugs = st.sampled_from([f"post-{i}" for i in range(8)])


def post_text(title: str, body: str, extra: str = "") -> bytes:
    """Return a post file with front matter ``title`` plus ``extra`` lines."""
    return f"---\nlayout: post\ntitle: {title}\n{extra}---\n{body}\n".encode()


@st.composite
def front_extra(draw: st.DrawFn) -> str:
    """Random extra front matter: date, tags, permalink, published."""
    lines = []
    if draw(st.booleans()):
        days = draw(st.integers(-30, 30))
        lines.append(f"date: {(T0 + timedelta(days=days)).strftime('%Y-%m-%d %H:%M:%S')}")
    if draw(st.booleans()):
        lines.append(f"tags: [{', '.join(draw(st.lists(words, max_size=3)))}]")
    if draw(st.integers(0, 5)) == 0:
        lines.append(f"permalink: {draw(st.sampled_from(['/fixed.html', '/p/:title/']))}")
    if draw(st.integers(0, 6)) == 0:
        lines.append("published: false")
    if draw(st.integers(0, 6)) == 0:
        lines.append("layout: plain")
    return "".join(line + "\n" for line in lines)


@st.composite
def change(draw: st.DrawFn, files: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """Return one commit's changes ({path: bytes or None}) over ``files``."""
    posts = sorted(p for p in files if p.startswith("_posts/"))
    kind = draw(
        st.sampled_from(
            ["add", "body", "front", "rename", "delete", "layout", "config", "static", "page"]
        )
    )
    title = " ".join(draw(st.lists(words, min_size=1, max_size=3)))
    body = " ".join(draw(st.lists(words, max_size=6)))
    if kind == "add" or not posts:
        day = draw(st.integers(1, 28))
        path = f"_posts/2021-01-{day:02d}-{draw(slugs)}.md"
        return {path: post_text(title, body, draw(front_extra()))}
    path = draw(st.sampled_from(posts))
    if kind == "body":
        head, _, _ = files[path].decode().rpartition("---\n")
        return {path: (head + "---\n" + body + "\n").encode()}
    if kind == "front":
        return {path: post_text(title, body, draw(front_extra()))}
    if kind == "rename":
        day = draw(st.integers(1, 28))
        return {path: None, f"_posts/2021-01-{day:02d}-{draw(slugs)}.md": files[path]}
    if kind == "delete":
        return {path: None}
    if kind == "layout":
        name = draw(st.sampled_from(sorted(LAYOUTS)))
        return {name: LAYOUTS[name] + f"<!-- {body} -->\n".encode()}
    if kind == "config":
        return {"_config.yml": CONFIG + f"description: {title}\n".encode()}
    if kind == "static":
        name = f"img/{draw(words)}.png"
        return {name: None if name in files and draw(st.booleans()) else body.encode()}
    name = f"{draw(words)}.md"
    page = f"---\ntitle: {title}\n---\n{body} {{{{ site.title }}}}\n".encode()
    return {name: None if name in files and draw(st.booleans()) else page}


def initial_site() -> dict[str, bytes]:
    """Return the starting source files: config, theme, two posts, a page, a static file."""
    return {
        "_config.yml": CONFIG,
        **LAYOUTS,
        "_posts/2021-01-01-post-0.md": post_text("First", "Hello **world**"),
        "_posts/2021-01-02-post-1.md": post_text("Second", "```python\nx = 1\n```", "tags: [a]\n"),
        "about.md": b"---\ntitle: About\n---\nAbout {{ site.title }}\n",
        "img/logo.png": b"\x89PNG fake",
    }


def apply(files: Mapping[str, bytes], changes: Mapping[str, bytes | None]) -> dict[str, bytes]:
    """Return ``files`` with ``changes`` applied."""
    out = dict(files)
    for path, data in changes.items():
        if data is None:
            out.pop(path, None)
        else:
            out[path] = data
    return out


def diff_paths(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> set[str]:
    """Return the paths added, deleted or edited from ``old`` to ``new``."""
    return {p for p in set(old) | set(new) if old.get(p) != new.get(p)}


@dataclass
class Incremental:
    """Builds successive source states incrementally, as the pipeline does."""

    cache: BuildCache
    options: RenderOptions
    outputs: dict[str, bytes]
    last: dict[str, bytes] | None = None
    report: BuildReport | None = None
    written: frozenset[str] = frozenset()

    def build(self, files: Mapping[str, bytes], options: RenderOptions) -> BuildReport:
        """Build ``files``; fall back to a full build as the pipeline does."""
        tree = MemoryTree(files)
        changed = None if self.last is None else diff_paths(self.last, files)
        sink = MemorySink(self.outputs)
        try:
            report = build_into(tree, options, self.cache, sink, changed)
        except NeedFullBuild:
            self.cache.rollback()
            sink = MemorySink()
            report = build_into(tree, options, self.cache, sink, None)
        self.cache.commit({})
        self.written = frozenset(
            p
            for p in set(sink.files) | set(self.outputs)
            if sink.files.get(p) != self.outputs.get(p)
        )
        self.outputs, self.last, self.report = sink.files, dict(files), report
        return report
