"""Read a source tree into a :class:`~deploybot.render.model.SiteModel` (Jekyll's reading rules).

- Publishable paths: Jekyll's ``EntryFilter`` -- a path component starting with ``_ . # ~``, or
  ending in ``~``, or matching ``exclude``, hides the path unless ``include`` names it.
- Posts: ``[dir/]_posts/[sub/]YYYY-MM-DD-slug.ext`` (``document.rb`` ``DATE_FILENAME_MATCHER``),
  ``ext`` one of ``.md .markdown .html``; folders before ``_posts`` are categories; front
  matter ``date`` overrides the file name's; ``published: false`` and (with a build time)
  future posts are skipped (``publisher.rb``).
- Pages: publishable Markdown/``.html`` files with front matter (``published: false`` skips
  them); a root ``404.html``/``404.md`` is written to ``404.html`` unless it has its own
  permalink (what GitHub Pages and most hosts serve); everything else publishable is a
  static file. ``_drafts/`` is never published (Jekyll's ``--drafts`` is not supported).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from posixpath import basename, dirname, splitext
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.errors import SourceError
from deploybot.render.dates import front_matter_date
from deploybot.render.frontmatter import FrontMatter, key_line, parse_front_matter
from deploybot.render.model import (
    EPOCH,
    MAX_YAML_SIZE,
    Document,
    Page,
    Post,
    RenderWarning,
    SiteConfig,
    SiteModel,
)
from deploybot.render.permalink import (
    expand,
    output_path,
    page_template,
    post_placeholders,
    post_template,
)
from deploybot.render.source import SourceTree

POST_NAME_RE = re.compile(r"^(\d{2,4})-(\d{1,2})-(\d{1,2})-(.+)(\.[^.]+)$")
# Jekyll's default ``markdown_ext``: "markdown,mkdown,mkdn,mkd,md".
MARKDOWN_EXTS = frozenset({".md", ".markdown", ".mkdown", ".mkdn", ".mkd"})
PAGE_EXTS = MARKDOWN_EXTS | {".html"}
DEFAULT_EXCLUDE = ("Gemfile", "Gemfile.lock", "node_modules", "vendor", ".jekyll-cache")
DEFAULT_INCLUDE = (".htaccess",)
NOT_FOUND_PAGES = frozenset({"404.html", "404.md", "404.markdown"})


def _matches(patterns: Iterable[str], path: str) -> bool:
    for pattern in patterns:
        pat = pattern.strip("/")
        if path == pat or fnmatch.fnmatchcase(path, pat):
            return True
        if fnmatch.fnmatchcase(basename(path), pat) and "/" not in pat:
            return True
    return False


def is_published(path: str, config: SiteConfig, hidden: tuple[str, ...] = ()) -> bool:
    """Return whether source ``path`` may be published (Jekyll's ``EntryFilter#filter``
    applied to each of its components). ``hidden`` lists extra excluded folders (a theme)."""
    include = tuple(p for p in (*config.include, *DEFAULT_INCLUDE) if p not in config.exclude)
    exclude = (*config.exclude, *DEFAULT_EXCLUDE, *hidden)
    parts = path.split("/")
    for i, name in enumerate(parts):
        prefix = "/".join(parts[: i + 1])
        included = _matches(include, prefix)
        if _matches(exclude, prefix) and not included:
            return False
        if not included and (name.startswith(("_", ".", "#", "~")) or name.endswith("~")):
            return False
    return True


def load_site(
    tree: SourceTree,
    config: SiteConfig,
    build_time: datetime | None,
    hidden: tuple[str, ...] = (),
    *,
    max_yaml_size: int = MAX_YAML_SIZE,
) -> tuple[SiteModel, list[RenderWarning]]:
    """Read posts, pages and static files of ``tree`` under ``config``.

    ``build_time`` (aware) is ``site.time``; posts dated after it are skipped unless
    ``future: true`` (no cut-off when ``None``). Returns the model and the warnings.
    Raises ``SourceError`` (path, line) for broken front matter (or front matter over
    ``max_yaml_size`` with its aliases expanded), dates or permalinks.
    """
    tz = ZoneInfo(config.timezone)
    warnings: list[RenderWarning] = []
    posts: list[Post] = []
    pages: list[Page] = []
    static: list[str] = []
    for path in tree.paths():
        parts = path.split("/")
        if "_posts" in parts[:-1]:
            prefix = path.split("/_posts/")[0] if "/_posts/" in path else ""
            if prefix and not is_published(prefix, config, hidden):
                continue
            post = _read_post(tree, path, config, tz, warnings, max_yaml_size)
            if post is not None and _keep_post(post, config, build_time, warnings):
                posts.append(post)
        elif is_published(path, config, hidden):
            _read_public(tree, path, config, tz, pages, static, warnings, max_yaml_size)
    posts.sort(key=lambda p: (p.date, p.doc.path), reverse=True)
    time = (build_time or EPOCH).astimezone(tz)
    return SiteModel(config, tuple(posts), tuple(pages), tuple(static), time), warnings


def _keep_post(
    post: Post, config: SiteConfig, build_time: datetime | None, warnings: list[RenderWarning]
) -> bool:
    if not _published(post.doc.front_matter):
        return False
    if build_time is not None and not config.future and post.date > build_time:
        warnings.append(RenderWarning(post.doc.path, None, "skipped: the post has a future date"))
        return False
    return True


def _read_public(
    tree: SourceTree,
    path: str,
    config: SiteConfig,
    tz: ZoneInfo,
    pages: list[Page],
    static: list[str],
    warnings: list[RenderWarning],
    max_yaml: int,
) -> None:
    ext = splitext(path)[1].lower()
    data = tree.read(path)
    front = parse_front_matter(data, path, max_yaml) if ext in PAGE_EXTS else None
    if front is not None:
        if _published(front.data):
            pages.append(_make_page(path, front, config, tz))
    elif (
        ext not in PAGE_EXTS
        and data.startswith(b"---")
        and parse_front_matter(data, path, max_yaml)
    ):
        message = "has front matter but is not Markdown or HTML: not published (no Liquid)"
        warnings.append(RenderWarning(path, 1, message))
    else:
        static.append(path)


def _document(path: str, front: FrontMatter) -> Document:
    markdown = splitext(path)[1].lower() in MARKDOWN_EXTS
    return Document(path, front.data, front.body, front.body_line, markdown)


def _date(front: FrontMatter, path: str, tz: ZoneInfo) -> datetime | None:
    value = front.data.get("date")
    if value is None:
        return None
    try:
        return front_matter_date(value, tz)
    except ValueError as exc:
        raise SourceError(str(exc), path, key_line(front, "date")) from exc


def _words(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value if v is not None)
    return tuple(str(value).split())


def _read_post(
    tree: SourceTree,
    path: str,
    config: SiteConfig,
    tz: ZoneInfo,
    warnings: list[RenderWarning],
    max_yaml: int,
) -> Post | None:
    name = basename(path)
    m = POST_NAME_RE.match(name)
    ext = m.group(5).lower() if m else ""
    if m is None or ext not in PAGE_EXTS:
        if not name.startswith("."):
            warnings.append(RenderWarning(path, None, "not a post name (YYYY-MM-DD-slug.md)"))
        return None
    front = parse_front_matter(tree.read(path), path, max_yaml)
    if front is None:
        warnings.append(RenderWarning(path, 1, "post without front matter: skipped"))
        return None
    try:
        file_date = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=tz)
    except ValueError as exc:
        raise SourceError(f"bad date in the file name: {exc}", path) from exc
    date = _date(front, path, tz) or file_date
    slug = m.group(4)
    folder_cats = tuple(path.split("/_posts/")[0].split("/")) if "/_posts/" in path else ()
    fm = front.data
    categories = folder_cats + _words(fm.get("categories", fm.get("category")))
    tags = _words(fm.get("tags", fm.get("tag")))
    permalink = str(fm.get("permalink") or "") or config.permalink
    values = post_placeholders(date, slug, categories)
    url, out = _url(post_template(permalink), values, front, path, bool(fm.get("permalink")))
    title = str(fm["title"]) if fm.get("title") is not None else _titleize(slug)
    separator = fm.get("excerpt_separator", config.data.get("excerpt_separator", "\n\n"))
    doc = _document(path, front)
    return Post(doc, slug, date, title, categories, tags, url, out, str(separator or ""))


def _published(front_matter: Mapping[str, Any]) -> bool:
    # Jekyll: ``data.fetch("published", true)``; only a YAML false hides (a quoted 'false'
    # is a true-ish string in Ruby too).
    return front_matter.get("published", True) is not False


def _titleize(slug: str) -> str:
    return " ".join(word.capitalize() for word in slug.split("-"))


def _url(
    template: str, values: dict[str, str], front: FrontMatter, path: str, from_front: bool
) -> tuple[str, str]:
    ext = ".html"
    if from_front and not template.endswith("/"):
        ext = splitext(template)[1] or ".html"
    try:
        url = expand(template, values)
        return url, output_path(url, ext)
    except ValueError as exc:
        line = key_line(front, "permalink") if from_front else None
        where = path if from_front else "_config.yml"
        raise SourceError(str(exc), where, line) from exc


def _make_page(path: str, front: FrontMatter, config: SiteConfig, tz: ZoneInfo) -> Page:
    stem = splitext(basename(path))[0]
    values = {"path": dirname(path), "basename": stem, "output_ext": ".html", "name": stem}
    permalink = front.data.get("permalink")
    if permalink:
        template = str(permalink)
    elif path in NOT_FOUND_PAGES:
        template = "/404.html"
    else:
        template = page_template(config.permalink, index=stem == "index")
    url, out = _url(template, values, front, path, bool(permalink))
    title = front.data.get("title")
    return Page(
        _document(path, front),
        "" if title is None else str(title),
        url,
        out,
        _date(front, path, tz),
    )
