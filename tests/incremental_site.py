"""Test helper: a small generated Jekyll site and random commits over it (hypothesis), plus
the incremental-vs-full oracle used by the render and pipeline tests.

The site exercises every part of the content model a full build supports, so that an
incremental build that misses a dependency shows up as a difference: layouts reading
``page.previous``/``page.next``, ``page.excerpt`` and ``site.tags``/``site.categories``/
``site.pages``/``site.static_files``; Jinja2 includes in layouts and Liquid includes from
``_includes/`` in posts; ``{% post_url %}``/``{% link %}``; ``{{ site.title }}`` and
``{{ page.title }}`` in bodies; ``published: false``, future dates, drafts, category folders
and ``:categories`` permalinks, ``excerpt_separator``; the ``jekyll-sitemap`` plugin; the
jekyll-toc ``{% toc %}`` tag (``page.toc``, the ``toc`` setting) and kramdown's ``{:toc}``;
the typography/footnotes render options; collections (a written one with a permalink,
``site.<label>``, ``site.collections``, documents dated after the cut-off, a static file of
a collection, one not written); front matter ``defaults`` by path and type; pages of other
extensions with front matter (``feed.xml``, ``data.json``, ``style.css``); a future cut-off
apart from the build time; and symlinks (:data:`LINKS`: to a page, a post, a static file,
an include, another symlink, outside the tree, in a loop, to nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from deploybot.render.engine.cache import BuildCache
from deploybot.render.engine.incremental import build_into
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import BuildReport, MemorySink, NeedFullBuild
from deploybot.render.read.layered import THEME_FOLDERS, LayeredTree, Theme
from deploybot.render.read.source import MemoryTree, SourceTree
from deploybot.support.errors import DeploybotError

THEME = "_theme"
T0 = datetime(2021, 1, 10, tzinfo=UTC)

LAYOUTS: dict[str, bytes] = {
    f"{THEME}/base.html": b"<html><title>{{ page.title }} | {{ site.title }}</title>"
    b"{% include 'nav.html' %}{% block main %}{{ content }}{% endblock %}</html>\n",
    f"{THEME}/nav.html": b"<nav>{{ site.title }}</nav>\n",
    f"{THEME}/post.html": b"{% extends 'base.html' %}{% block main %}<h1>{{ page.title }}</h1>"
    b"{{ page.date | date_to_xmlschema }} {{ page.tags | join(',') }}{{ content }}"
    b"{% if page.previous %}<a rel=prev href='{{ page.previous.url }}'>prev</a>{% endif %}"
    b"{% if page.next %}<a rel=next>{{ page.next.title }}</a>{% endif %}{% endblock %}\n",
    f"{THEME}/page.html": b"{% extends 'base.html' %}\n",
    f"{THEME}/index.html": b"{% extends 'base.html' %}{% block main %}"
    b"{% for p in site.posts %}<a href='{{ p.url }}'>{{ p.title }}</a>{{ p.excerpt }}"
    b"{% endfor %}{% endblock %}\n",
    f"{THEME}/plain.html": b"<div>{{ content }}</div>\n",
    f"{THEME}/teaser.html": b"<p>{{ page.excerpt }}</p><div>{{ content }}</div>\n",
    f"{THEME}/tags.html": b"{% extends 'base.html' %}{% block main %}"
    b"{% for name, posts in site.tags | dictsort %}<h2>{{ name }}</h2>"
    b"{% for p in posts %}<a href='{{ p.url }}'>{{ p.title }}</a>{% endfor %}{% endfor %}"
    b"{% for name in site.categories %}<h3>{{ name }} {{ site.categories[name] | length }}"
    b"</h3>{% endfor %}{% endblock %}\n",
    f"{THEME}/pages.html": b"{% extends 'base.html' %}{% block main %}"
    b"{% for p in site.pages %}<a href='{{ p.url }}'>{{ p.title }}</a>{% endfor %}"
    b"{% for f in site.static_files %}<img src='{{ f.path }}'>{% endfor %}{% endblock %}\n",
    f"{THEME}/collections.html": b"{% extends 'base.html' %}{% block main %}{{ page.section }}"
    b"{% for r in site.recipes %}<a href='{{ r.url }}'>{{ r.title }} {{ r.kind }}</a>{% endfor %}"
    b"{% for c in site.collections %}{{ c.label }}={{ c.docs | length }}/{{ c.files | length }};"
    b"{% endfor %}{% for n in site.notes %}{{ n.title }}{% endfor %}{{ content }}{% endblock %}\n",
    f"{THEME}/assets/site.css": b"body { color: black }\n",
}
INCLUDES: dict[str, bytes] = {
    "_includes/note.html": b"<aside>note</aside>\n",
    "_includes/liquid.html": b"<aside>{{ page.title }}</aside>\n",
}
CONFIG = (
    b"title: Gen\nurl: https://gen.example.org\npermalink: /:year/:month/:title\n"
    b"collections:\n  recipes:\n    output: true\n    permalink: /r/:path/\n  notes: {}\n"
    b"defaults:\n  - scope: {path: '', type: recipes}\n    values: {layout: teaser, kind: dish}\n"
    b"  - scope: {path: docs}\n    values: {layout: collections, section: Docs}\n"
)
LINKS = frozenset(
    {
        "linked.md",
        "img/link.png",
        "_posts/2021-01-06-linked.md",
        "_recipes/linked.md",
        "_includes/linked.html",
        "docs/chain.md",
    }
)
"""Paths that are symlinks whenever the generated site has them (their bytes: the target)."""
LINK_TARGETS = [
    "about.md",
    "../about.md",
    "img/logo.png",
    "logo.png",
    "../img/logo.png",
    "_posts/2021-01-01-post-0.md",
    "../_posts/2021-01-02-post-1.md",
    "note.html",
    "../linked.md",
    "linked.md",
    "chain.md",
    "../../outside.md",
    "/etc/passwd",
    "missing.md",
    "docs",
    ".",
]
SITEMAP = b"plugins: [jekyll-sitemap]\n"
TOC_CONFIG = b"toc:\n  list_id: contents\n  min_level: 2\n"
FUTURE = b"future: true\n"

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "tvm", "code", "x"])
slugs = st.sampled_from([f"post-{i}" for i in range(8)])
folders = st.sampled_from(["", "", "", "news/", "news/tech/"])
SNIPPETS = [
    "{{ site.title }}",
    "{{ page.title }}",
    "{{ page.url }}",
    "{% include note.html %}",
    "{% include liquid.html %}",
    "{% include missing.html %}",
    "{% post_url 2021-01-03-post-2 %}",
    "{% post_url news/2021-01-05-post-3 %}",
    "{% link about.md %}",
    "{% link img/logo.png %}",
    "{% link img/alpha.png %}",
    "{% link _recipes/cake.md %}",
    "{% include linked.html %}",
    "{% for r in site.recipes %}{{ r.title }},{% endfor %}",
    "{% for p in site.posts %}{{ p.content | size }}/{{ p.next.title }},{% endfor %}",
    "{% for r in site.recipes %}{{ r.content | strip_html }};{% endfor %}",
    "{% for p in site.posts %}{{ p.output | size }};{% endfor %}{{ page.previous.output | size }}",
    "{% for r in site.recipes %}{{ r.output | size }};{% endfor %}",
    "{% for n in site.notes %}{{ n.output | strip_html | truncate: 30 }};{% endfor %}",
    "{% for p in site.pages %}{{ p.name }}={{ p.content | strip_html | truncate: 9 }};{% endfor %}",
    '"Quoted" -- and...',
    "note[^1]\n\n[^1]: the footnote",
    "{% toc %}\n\n<h2>Raw heading</h2>\n",
    "\n\n* TOC\n{:toc}\n\n## Heading\n",
    "<!--more-->",
    "\n\n",
]


def post_text(title: str, body: str, extra: str = "") -> bytes:
    """Return a post file with front matter ``title`` plus ``extra`` lines."""
    return f"---\nlayout: post\ntitle: {title}\n{extra}---\n{body}\n".encode()


@st.composite
def body_text(draw: st.DrawFn) -> str:
    """Random body: words, Liquid snippets and paragraph breaks."""
    parts = draw(st.lists(st.one_of(words, st.sampled_from(SNIPPETS)), max_size=8))
    return " ".join(parts)


@st.composite
def front_extra(draw: st.DrawFn) -> str:
    """Random extra front matter: date, tags, categories, permalink, published, layout,
    excerpt separator."""
    lines = []
    if draw(st.booleans()):
        days = draw(st.integers(-30, 30))
        lines.append(f"date: {(T0 + timedelta(days=days)).strftime('%Y-%m-%d %H:%M:%S')}")
    if draw(st.booleans()):
        lines.append(f"tags: [{', '.join(draw(st.lists(words, max_size=3)))}]")
    if draw(st.integers(0, 3)) == 0:
        lines.append(f"categories: [{', '.join(draw(st.lists(words, max_size=2)))}]")
    if draw(st.integers(0, 5)) == 0:
        permalinks = ["/fixed.html", "/p/:title/", "/:categories/:title.html"]
        lines.append(f"permalink: {draw(st.sampled_from(permalinks))}")
    if draw(st.integers(0, 6)) == 0:
        lines.append("published: false")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f"layout: {draw(st.sampled_from(['plain', 'teaser', 'none', 'nope']))}")
    if draw(st.integers(0, 4)) == 0:
        lines.append("excerpt_separator: <!--more-->")
    if draw(st.integers(0, 2)) == 0:
        lines.append("toc: true")
    return "".join(line + "\n" for line in lines)


def _post_path(draw: st.DrawFn) -> str:
    day = draw(st.integers(1, 28))
    return f"{draw(folders)}_posts/2021-01-{day:02d}-{draw(slugs)}.md"


@st.composite
def change(draw: st.DrawFn, files: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """Return one commit's changes ({path: bytes or None}) over ``files``."""
    posts = sorted(p for p in files if "_posts/" in p)
    kinds = ["add", "body", "front", "rename", "delete", "layout", "config", "static", "page"]
    more = ["include", "draft", "add", "body", "front", "doc", "other-page", "symlink"]
    kind = draw(st.sampled_from([*kinds, *more]))
    title = " ".join(draw(st.lists(words, min_size=1, max_size=3)))
    body = draw(body_text())
    if kind in ("doc", "other-page", "symlink"):
        return draw(_content_change(files, kind, title, body))
    if kind == "add" or not posts:
        return {_post_path(draw): post_text(title, body, draw(front_extra()))}
    path = draw(st.sampled_from(posts))
    if kind == "body":
        head, _, _ = files[path].decode().rpartition("---\n")
        return {path: (head + "---\n" + body + "\n").encode()}
    if kind == "front":
        return {path: post_text(title, body, draw(front_extra()))}
    if kind == "rename":
        return {path: None, _post_path(draw): files[path]}
    if kind == "delete":
        return {path: None}
    if kind == "layout":
        name = draw(st.sampled_from(sorted(LAYOUTS)))
        return {name: LAYOUTS[name] + f"<!-- {title} -->\n".encode()}
    if kind == "include":
        name = draw(st.sampled_from([*sorted(INCLUDES), "_includes/missing.html"]))
        if name in files and draw(st.booleans()):
            return {name: None}
        return {name: draw(st.sampled_from([b"<b>", b"{{ site.title }}"])) + title.encode()}
    if kind == "draft":
        return {f"_drafts/{draw(slugs)}.md": post_text(title, body)}
    if kind == "config":
        extras = [b"", SITEMAP, b"excerpt_separator: <!--more-->\n", TOC_CONFIG, FUTURE]
        extra = draw(st.sampled_from(extras))
        return {"_config.yml": CONFIG + f"description: {title}\n".encode() + extra}
    if kind == "static":
        name = f"img/{draw(words)}.png"
        return {name: None if name in files and draw(st.booleans()) else body.encode()}
    name = f"{draw(st.sampled_from(['', '', 'docs/']))}{draw(words)}.md"
    layout = draw(st.sampled_from(["page", "tags", "pages", "collections"]))
    extra = "published: false\n" if draw(st.integers(0, 5)) == 0 else ""
    page = f"---\ntitle: {title}\nlayout: {layout}\n{extra}---\n{body}\n".encode()
    return {name: None if name in files and draw(st.booleans()) else page}


@st.composite
def _content_change(
    draw: st.DrawFn, files: Mapping[str, bytes], kind: str, title: str, body: str
) -> dict[str, bytes | None]:
    """A collection document, a page of another extension, or a symlink, added, edited or
    removed."""
    if kind == "doc":
        folder = draw(st.sampled_from(["_recipes/", "_recipes/", "_recipes/sub/", "_notes/"]))
        name = folder + draw(st.sampled_from(["cake.md", "bread.md", "photo.png"]))
        if name in files and draw(st.integers(0, 3)) == 0:
            return {name: None}
        if name.endswith(".png"):
            return {name: body.encode()}
        days = draw(st.integers(-5, 40))
        date = (T0 + timedelta(days=days)).strftime("%Y-%m-%d")
        extra = draw(st.sampled_from(["", f"date: {date}\n", "layout: plain\n", "kind: side\n"]))
        return {name: f"---\ntitle: {title}\n{extra}---\n{body}\n".encode()}
    if kind == "other-page":
        name = draw(st.sampled_from(["feed.xml", "data.json", "assets/style.css", "robots.txt"]))
        if name in files and draw(st.integers(0, 3)) == 0:
            return {name: None}
        text = draw(
            st.sampled_from(
                [
                    "{% for p in site.posts %}<t>{{ p.title | xml_escape }}</t>{% endfor %}",
                    "{% for p in site.posts %}<c>{{ p.content | xml_escape }}</c>{% endfor %}",
                    "{{ site.recipes | map: 'title' | jsonify }}",
                    "body { color: {{ page.color }} } /* {{ site.title }} */",
                    f"{title} {{{{ site.time | date_to_xmlschema }}}}",
                ]
            )
        )
        layout = draw(st.sampled_from(["", "", "layout: plain\n"]))
        return {name: f"---\ncolor: red\n{layout}---\n{text}\n".encode()}
    name = draw(st.sampled_from(sorted(LINKS)))
    if name in files and draw(st.integers(0, 3)) == 0:
        return {name: None}
    return {name: draw(st.sampled_from(LINK_TARGETS)).encode()}


def tree_of(files: Mapping[str, bytes]) -> MemoryTree:
    """Return the source tree of the generated ``files`` (:data:`LINKS` are symlinks)."""
    return MemoryTree(files, symlinks=LINKS)


def initial_site() -> dict[str, bytes]:
    """Return the starting source files: config, theme, includes, posts, pages, a static file."""
    return {
        "_config.yml": CONFIG,
        **LAYOUTS,
        **INCLUDES,
        "_posts/2021-01-01-post-0.md": post_text("First", "Hello **world**"),
        "_posts/2021-01-02-post-1.md": post_text("Second", "```python\nx = 1\n```", "tags: [a]\n"),
        "news/_posts/2021-01-05-post-3.md": post_text(
            "Third", "See {% post_url 2021-01-02-post-1 %}\n\nmore", "tags: [a, b]\n"
        ),
        "about.md": b"---\ntitle: About\n---\nAbout {{ site.title }}\n",
        "tags.md": b"---\ntitle: Tags\nlayout: tags\n---\n",
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


@dataclass(frozen=True)
class ThemeSplit:
    """Which generated files a Jekyll theme holds (:func:`layered_of`): a file of the
    theme's folders goes to the theme when ``to_theme`` says so (with ``THEME_MARK`` after
    it, but for data files), and stays in the site unless ``site_drops`` says so; so some
    are the theme's alone, some the site's alone, and some both (the site's winning)."""

    to_theme: Callable[[str], bool]
    site_drops: Callable[[str], bool]

    def site(self, files: Mapping[str, bytes]) -> dict[str, bytes]:
        return {p: b for p, b in files.items() if not (_theme_folder(p) and self.site_drops(p))}

    def theme(self, files: Mapping[str, bytes]) -> dict[str, bytes]:
        return {
            p: b if p.startswith("_data/") else b + THEME_MARK
            for p, b in files.items()
            if _theme_folder(p) and self.to_theme(p)
        }


THEME_MARK = b"<!-- from the theme -->"


def _theme_folder(path: str) -> bool:
    return path.startswith(THEME_FOLDERS)


def layered_of(files: Mapping[str, bytes], split: ThemeSplit) -> SourceTree:
    """Return the generated ``files`` as a site with a Jekyll theme under it (``split``)."""
    theme = MemoryTree(split.theme(files))
    return LayeredTree(tree_of(split.site(files)), Theme("generated", theme, "pin"))


@dataclass
class Incremental:
    """Builds successive source states incrementally, as the pipeline does (with a Jekyll
    theme under the site when ``split`` is given: the changed paths are the site's only,
    as a source diff gives them)."""

    cache: BuildCache
    options: RenderOptions
    outputs: dict[str, bytes]
    last: dict[str, bytes] | None = None
    report: BuildReport | None = None
    written: frozenset[str] = frozenset()
    split: ThemeSplit | None = None

    def build(self, files: Mapping[str, bytes], options: RenderOptions) -> BuildReport:
        """Build ``files``; fall back to a full build as the pipeline does."""
        if self.split is None:
            tree: SourceTree = tree_of(files)
        else:
            tree = layered_of(files, self.split)
            files = self.split.site(files)
        changed = None if self.last is None else diff_paths(self.last, files)
        try:
            sink, report = self._build_into(tree, options, changed)
        except DeploybotError:
            self.cache.rollback()  # a build that stops publishes nothing, as in the pipeline
            raise
        self.cache.commit({})
        self.written = frozenset(
            p
            for p in set(sink.files) | set(self.outputs)
            if sink.files.get(p) != self.outputs.get(p)
        )
        self.outputs, self.last, self.report = sink.files, dict(files), report
        return report

    def _build_into(
        self, tree: SourceTree, options: RenderOptions, changed: set[str] | None
    ) -> tuple[MemorySink, BuildReport]:
        sink = MemorySink(self.outputs)
        try:
            return sink, build_into(tree, options, self.cache, sink, changed)
        except NeedFullBuild:
            self.cache.rollback()
            sink = MemorySink()
            return sink, build_into(tree, options, self.cache, sink, None)


# The site's own Liquid theme: layouts with ``layout:`` chains, includes with parameters,
# ``_data/`` files (YAML, JSON, CSV, a nested folder) and a paginated index.

LIQUID_LAYOUTS: dict[str, bytes] = {
    "_layouts/default.html": b"---\nlang: en\n---\n<html lang='{{ layout.lang }}'>"
    b"<title>{{ page.title }} | {{ site.title }}</title>"
    b"{% include nav.html current=page.url %}{{ content }}</html>\n",
    "_layouts/post.html": b"---\nlayout: default\nkind: post\n---\n<h1>{{ page.title }}</h1>"
    b"{{ page.date | date_to_xmlschema }} {{ layout.kind }}{{ content }}"
    b"{% if page.previous %}<a href='{{ page.previous.url | relative_url }}'>prev</a>{% endif %}"
    b"{% if page.next %}{{ page.next.title }}{% endif %}\n",
    "_layouts/page.html": b"---\nlayout: default\n---\n<main>{{ content }}</main>"
    b"{% for p in site.pages %}{% if p.title %}{{ p.title }};{% endif %}{% endfor %}\n",
    "_layouts/home.html": b"---\nlayout: default\n---\n{{ content }}"
    b"{% for post in paginator.posts %}<a href='{{ post.url }}'>{{ post.title }}</a>"
    b"{{ post.excerpt }}{% endfor %}{{ paginator.page }}/{{ paginator.total_pages }}"
    b"{% if paginator.next_page %}<a href='{{ paginator.next_page_path }}'>next</a>{% endif %}\n",
    "_layouts/bare.html": b"{{ content }}{{ site.data.team | map: 'name' | join: ',' }}\n",
}
LIQUID_INCLUDES: dict[str, bytes] = {
    "_includes/nav.html": b"<nav>{% for l in site.data.nav.links %}"
    b"<a href='{{ l.url }}'{% if l.url == include.current %} class=on{% endif %}>"
    b"{{ l.title }}</a>{% endfor %}</nav>\n",
    "_includes/note.html": b"<aside>{{ include.text | default: 'note' }}</aside>\n",
}
LIQUID_DATA: dict[str, bytes] = {
    "_data/team.yml": b"- name: ada\n- name: bob\n",
    "_data/nav/links.json": b'[{"title": "Home", "url": "/"}, '
    b'{"title": "About", "url": "/about.html"}]',
    "_data/prices.csv": b"item,price\napple,1\n",
}
LIQUID_CONFIG = (
    b"title: Gen\nurl: https://gen.example.org\npermalink: /:year/:month/:title\n"
    b"paginate: 2\nplugins: [jekyll-paginate]\n"
)
LIQUID_SNIPPETS = [
    "{% include note.html text=page.title %}",
    "{% include note.html %}",
    "{{ site.data.prices[0].price }}",
    "{% for m in site.data.team %}{{ m.name }}{% endfor %}",
    "{% assign n = site.posts.size %}{{ n }}",
    "{% post_url 2021-01-03-post-2 %}",
    "{{ page.title | slugify }}",
    "{% for p in site.posts %}<c>{{ p.content | strip_html }}</c>{{ p.previous.url }}{% endfor %}",
    "{% for p in site.posts %}<o>{{ p.output | strip_html | truncate: 40 }}</o>{% endfor %}",
    "{% for p in site.pages %}<c>{{ p.name }} {{ p.content | strip_html | truncate: 30 }}</c>"
    "{{ p.output }}{% endfor %}",
]


def liquid_initial_site() -> dict[str, bytes]:
    """Return a site rendered with its own Liquid layouts, includes, data and pagination."""
    return {
        "_config.yml": LIQUID_CONFIG,
        **LIQUID_LAYOUTS,
        **LIQUID_INCLUDES,
        **LIQUID_DATA,
        "index.html": b"---\nlayout: home\ntitle: Home\n---\n<p>{{ site.title }}</p>\n",
        "about.md": b"---\ntitle: About\nlayout: page\n---\nAbout {% include note.html %}\n",
        "_posts/2021-01-01-post-0.md": post_text("First", "Hello **world**"),
        "_posts/2021-01-02-post-1.md": post_text("Second", "{{ site.data.team[0].name }}"),
        "_posts/2021-01-05-post-3.md": post_text("Third", "See it\n\nmore"),
        "img/logo.png": b"\x89PNG fake",
    }


@st.composite
def liquid_change(draw: st.DrawFn, files: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """Return one commit's changes over a Liquid-theme site: posts as :func:`change`, and
    layouts, includes, data files, pages and the pagination settings."""
    kind = draw(st.sampled_from(["post", "post", "layout", "include", "data", "page", "config"]))
    title = " ".join(draw(st.lists(words, min_size=1, max_size=3)))
    if kind == "post":
        found = draw(change(files))
        snippet = draw(st.sampled_from(LIQUID_SNIPPETS)).encode()
        posts = {p: None if v is None else v + snippet for p, v in found.items() if "_posts/" in p}
        return posts or {"_posts/2021-01-09-post-5.md": post_text(title, snippet.decode())}
    if kind == "layout":
        name = draw(st.sampled_from([*sorted(LIQUID_LAYOUTS), "_layouts/extra.html"]))
        if name in files and draw(st.integers(0, 3)) == 0:
            return {name: None}
        body = LIQUID_LAYOUTS.get(name, b"---\nlayout: default\n---\n<div>{{ content }}</div>\n")
        return {name: body + f"<!-- {title} -->\n".encode()}
    if kind == "include":
        name = draw(st.sampled_from([*sorted(LIQUID_INCLUDES), "_includes/extra.html"]))
        if name in files and draw(st.booleans()):
            return {name: None}
        text = draw(st.sampled_from([b"<b>{{ include.text }}</b>", b"{{ site.title }}"]))
        return {name: text + title.encode()}
    if kind == "data":
        name = draw(st.sampled_from([*sorted(LIQUID_DATA), "_data/more/extra.yml"]))
        if name in files and draw(st.integers(0, 2)) == 0:
            return {name: None}
        if name.endswith(".csv"):
            return {name: f"item,price\n{title},2\n".encode()}
        if name.endswith(".json"):
            return {name: f'[{{"title": "{title}", "url": "/x.html"}}]'.encode()}
        return {name: f"- name: {title}\n".encode()}
    if kind == "page":
        name = draw(st.sampled_from(["about.md", "index.html", "more.md", "zz.md"]))
        layout = draw(st.sampled_from(["page", "home", "bare", "extra", "nope"]))
        body = draw(st.sampled_from(LIQUID_SNIPPETS))
        page = f"---\ntitle: {title}\nlayout: {layout}\n---\n{body}\n".encode()
        return {name: None if name in files and draw(st.integers(0, 4)) == 0 else page}
    per_page = draw(st.integers(1, 3))
    return {"_config.yml": LIQUID_CONFIG.replace(b"paginate: 2", f"paginate: {per_page}".encode())}


# Jekyll plugins: jekyll-seo-tag in the layout, jekyll-feed (its settings varied),
# jekyll-sitemap (HTML/PDF static files, a source robots.txt or feed.xml), jekyll-paginate,
# jekyll-redirect-from (redirect_from, redirect_to, the site's own redirect layout),
# jekyll-archives (every type; its layout changing, going and coming), a written collection
# and site.data.authors.

PLUGIN_CONFIG = (
    b"title: Gen\nurl: https://gen.example.org\npermalink: /:year/:month/:title\n"
    b"author: ada\npaginate: 2\n"
    b"collections:\n  talks:\n    output: true\n"
    b"plugins: [jekyll-seo-tag, jekyll-feed, jekyll-sitemap, jekyll-paginate,"
    b" jekyll-redirect-from, jekyll-archives]\n"
    b"jekyll-archives: {enabled: all, layouts: {day: default}}\n"
)
ARCHIVE_LAYOUTS = [
    b"---\nlayout: default\n---\n{{ page.type }} {{ page.title }} {{ page.date | date: '%Y' }}"
    b"{% for post in page.posts %} {{ post.title }} {{ post.url }}{% endfor %}\n",
    b"{{ page.url }}{% for post in page.posts %} {{ post.content }}{% endfor %}\n",
    None,
]
PLUGIN_FEED_SETTINGS = [
    b"",
    b"feed: {posts_limit: 2}\n",
    b"feed: {tags: true, categories: [news]}\n",
    b"feed: {excerpt_only: true, collections: [talks]}\n",
    b"feed: {path: /atom.xml}\n",
]
PLUGIN_FRONT = [
    "description: A described post\n",
    "author: grace\n",
    "author: {name: Bob, uri: 'https://bob.example.org'}\n",
    "image: /img/pic.png\n",
    "last_modified_at: 2021-02-01\n",
    "sitemap: false\n",
    "draft: true\n",
    "categories: [news]\n",
    "tags: [alpha, beta]\n",
    "lang: fr\n",
    "published: false\n",
    "seo: {type: CreativeWork}\n",
    "redirect_from: [/old/, /older.html]\n",
    "redirect_to: /about.html\n",
]


def plugin_initial_site() -> dict[str, bytes]:
    """Return a site with its own layouts using jekyll-seo-tag, jekyll-feed,
    jekyll-sitemap, jekyll-paginate, jekyll-redirect-from and jekyll-archives."""
    return {
        "_config.yml": PLUGIN_CONFIG,
        "_layouts/default.html": b"<head>{% seo %}{% feed_meta %}</head>{{ content }}\n",
        "_layouts/home.html": b"---\nlayout: default\n---\n{{ content }}"
        b"{% for post in paginator.posts %}{{ post.title }}{% endfor %}\n",
        "_data/authors.yml": b"grace:\n  name: Grace Hopper\n  email: g@example.org\n",
        "_layouts/archive.html": ARCHIVE_LAYOUTS[0],
        "index.html": b"---\nlayout: home\n---\nHome\n",
        "about.md": b"---\ntitle: About\nlayout: default\n---\nAbout us\n",
        "_posts/2021-01-01-post-0.md": post_text("First", "Hello **world**").replace(
            b"layout: post", b"layout: default"
        ),
        "_posts/2021-01-02-post-1.md": post_text(
            "Second", "Two\n\nmore", "tags: [alpha]\n"
        ).replace(b"layout: post", b"layout: default"),
        "_talks/keynote.md": b"---\ntitle: Keynote\nlayout: default\ndate: 2021-01-03\n---\nK\n",
        "img/logo.png": b"\x89PNG fake",
    }


@st.composite
def plugin_change(draw: st.DrawFn, files: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """Return one commit's changes over :func:`plugin_initial_site`."""
    kinds = ["post", "post", "front", "delete", "page", "talk", "data", "config", "static"]
    kinds += ["layout", "archive"]
    kind = draw(st.sampled_from(kinds))
    title = " ".join(draw(st.lists(words, min_size=1, max_size=3)))
    posts = sorted(p for p in files if p.startswith("_posts/"))
    body = draw(st.sampled_from(["Body text", "Lead.\n\nRest", "{{ site.title }} x", ""]))
    if kind == "post" or (kind in ("front", "delete") and not posts):
        day = draw(st.integers(1, 28))
        extra = "".join(draw(st.lists(st.sampled_from(PLUGIN_FRONT), max_size=3)))
        path = f"_posts/2021-01-{day:02d}-{draw(slugs)}.md"
        text = post_text(title, body, extra).replace(b"layout: post", b"layout: default")
        return {path: text}
    if kind == "front":
        extra = "".join(draw(st.lists(st.sampled_from(PLUGIN_FRONT), min_size=1, max_size=3)))
        path = draw(st.sampled_from(posts))
        return {path: post_text(title, body, extra).replace(b"layout: post", b"layout: default")}
    if kind == "delete":
        return {draw(st.sampled_from(posts)): None}
    if kind == "page":
        name = draw(st.sampled_from(["about.md", "more.md", "robots.txt", "feed.xml", "x.html"]))
        if name in files and draw(st.integers(0, 2)) == 0:
            return {name: None}
        extras = [
            "",
            "sitemap: false\n",
            "last_modified_at: 2021-03-01\n",
            "redirect_from: /old/\n",
        ]
        extra = draw(st.sampled_from([*extras, "redirect_to: https://x.example.org/\n"]))
        return {name: f"---\ntitle: {title}\nlayout: default\n{extra}---\n{body}\n".encode()}
    if kind == "talk":
        name = draw(st.sampled_from(["_talks/keynote.md", "_talks/panel.md"]))
        if name in files and draw(st.integers(0, 2)) == 0:
            return {name: None}
        extra = draw(st.sampled_from(["", "date: 2021-01-20\n", "sitemap: false\n"]))
        return {name: f"---\ntitle: {title}\nlayout: default\n{extra}---\n{body}\n".encode()}
    if kind == "data":
        return {"_data/authors.yml": f"grace:\n  name: {title}\n".encode()}
    if kind == "archive":  # jekyll-archives' layout changes, goes (a warning) or comes back
        return {"_layouts/archive.html": draw(st.sampled_from(ARCHIVE_LAYOUTS))}
    if kind == "layout":  # the site's own redirect layout (named in a warning) comes or goes
        name = "_layouts/redirect.html"
        return {name: None if name in files else b"<p>{{ page.redirect.to }}</p>\n"}
    if kind == "static":
        name = draw(st.sampled_from(["docs/guide.pdf", "docs/page.html", "img/pic.png"]))
        return {name: None if name in files and draw(st.booleans()) else title.encode()}
    return {"_config.yml": PLUGIN_CONFIG + draw(st.sampled_from(PLUGIN_FEED_SETTINGS))}
