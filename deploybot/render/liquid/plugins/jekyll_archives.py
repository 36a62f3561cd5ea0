"""jekyll-archives 2.2: a page per tag, category, year, month and day of the posts
(``lib/jekyll-archives.rb``, ``lib/jekyll-archives/archive.rb``).

The ``jekyll-archives`` setting names the archives made (``enabled``: ``all``/``true`` or
a list of ``year``, ``month``, ``day``, ``categories``, ``tags``; none by default), the
``layout`` they render with (``archive``; ``layouts`` per type: ``year``, ``month``,
``day``, ``tag``, ``category``) and their ``permalinks`` per type (``/:year/``,
``/:year/:month/``, ``/:year/:month/:day/``, ``/tag/:name/``, ``/category/:name/``). Each
archive is a page with an empty body rendered through its layout and that layout's
parents, where ``page`` holds ``layout``, ``posts`` (its posts, newest first, as
``site.posts`` shows them), ``type``, ``title`` (the tag or category, ``nil`` for dates),
``date`` (the first day of a date archive, ``nil`` otherwise), ``name`` (``index`` for a
URL ending in ``/``), ``path`` (the file written, no leading ``/``), ``url`` and
``permalink`` (``nil``), under the site's front matter defaults for that path and type.
A tag or category is slugified as Jekyll's ``Utils.slugify`` in its default mode (2.2
reads no ``slug_mode``); ``:name`` is that slug, ``:year``/``:month``/``:day`` are
``%Y``/``%m``/``%d`` of the posts' dates, ``:type`` the type. Archives are made tags
first, then categories (in ``site.tags``/``site.categories`` order), then each year's
year, month and day archives; when two write the same file, the later one is kept, as
Jekyll writes them in that order.

A missing layout gets Jekyll's warning, the archive written empty as Jekyll writes it.
jekyll-sitemap lists the archives after the site's pages (:func:`listed`), as Jekyll adds
them at the end of ``site.pages``. Left out (Jekyll has them): the archives in the Liquid
``site.pages``/``site.html_pages`` and ``site.archives`` (a page listing ``site.pages``
does not see them), and Jekyll's ``Empty `slug` generated`` warning.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import quote, unquote

from deploybot.render.liquid.plugins.registry import Needs, Plugin, SiteView, is_enabled
from deploybot.render.model import Post, SiteConfig
from deploybot.render.read import dates
from deploybot.render.read.defaults import deep_merge, defaults_for
from deploybot.render.read.permalink import output_path
from deploybot.render.read.siteconfig import CONFIG_PATH
from deploybot.render.read.slugs import slugify
from deploybot.support.errors import SourceError

NAME = "jekyll-archives"
TYPES = ("year", "month", "day", "tag", "category")
"""The archive types, as ``layouts`` and ``permalinks`` name them."""
PERMALINKS: Mapping[str, str] = {
    "year": "/:year/",
    "month": "/:year/:month/",
    "day": "/:year/:month/:day/",
    "tag": "/tag/:name/",
    "category": "/category/:name/",
}
"""The default ``permalinks`` (``DEFAULTS``)."""
_ENABLED = {"year": "year", "month": "month", "day": "day", "tag": "tags", "category": "categories"}
_URL_SAFE = "/!$&'()*+,;=:@-._~"


@dataclass(frozen=True)
class Settings:
    """The ``jekyll-archives`` setting: the ``enabled`` types (:data:`TYPES`), the
    ``layout`` of each type and each type's ``permalink`` template."""

    enabled: frozenset[str]
    layouts: Mapping[str, Any]
    permalinks: Mapping[str, str]


@dataclass(frozen=True)
class Archive:
    """One archive page: its ``type``, ``title`` (tag or category; ``None`` for dates),
    ``date`` (date archives), ``url`` and the ``posts`` (``site.posts`` items)."""

    type: str
    title: str | None
    date: date | None
    url: str
    posts: tuple[Any, ...]


def settings(data: Mapping[str, Any]) -> Settings:
    """Return the ``jekyll-archives`` setting of ``_config.yml``'s ``data``, defaults merged
    in (``Utils.deep_merge_hashes(DEFAULTS, ...)``)."""
    given = data.get(NAME)
    config = given if isinstance(given, Mapping) else {}
    wanted = config.get("enabled")
    if wanted is True or wanted == "all":
        types = frozenset(TYPES)
    elif isinstance(wanted, list):
        names = {str(w) for w in wanted}
        types = frozenset(t for t in TYPES if _ENABLED[t] in names)
    else:
        types = frozenset()
    layout = config.get("layout", "archive")
    per_type = config.get("layouts")
    layouts = {
        t: per_type[t] if isinstance(per_type, Mapping) and per_type.get(t) else layout
        for t in TYPES
    }
    given_links = config.get("permalinks")
    links = deep_merge(PERMALINKS, given_links if isinstance(given_links, Mapping) else {})
    return Settings(types, layouts, {t: str(links.get(t) or "") for t in TYPES})


def archive_url(template: str, values: Mapping[str, str]) -> str:
    """Return the URL of an archive (Jekyll's ``URL#to_s``): each ``:key`` of ``values``
    replaced by its percent-escaped value (``/`` kept), then ``sanitize_url``: a leading
    ``/``, ``..`` made ``/``, ``./`` dropped, ``/`` runs squeezed. Raises ``SourceError``
    (at ``_config.yml``) when the file it writes is refused
    (:func:`~deploybot.render.read.permalink.output_path`)."""
    url = template
    for key, value in values.items():
        if ":" not in url:
            break
        url = url.replace(f":{key}", quote(value, _URL_SAFE))
    url = ("/" + url).replace("..", "/").replace("./", "")
    url = re.sub("/{2,}", "/", url)
    try:
        output_path(url)
    except ValueError as exc:
        raise SourceError(f"{NAME}: {exc}", CONFIG_PATH) from exc
    return url


def archives(setting: Settings, site: Mapping[str, Any]) -> list[Archive]:
    """Return the archives of the Liquid ``site`` (its ``tags``, ``categories``, ``posts``)
    in the plugin's order. Raises ``SourceError`` as :func:`archive_url` does."""
    found: list[Archive] = []
    for kind, key in (("tag", "tags"), ("category", "categories")):
        if kind not in setting.enabled:
            continue
        for title, posts in (site.get(key) or {}).items():
            values = {"name": slugify(str(title)), "type": kind}
            url = archive_url(setting.permalinks[kind], values)
            found.append(Archive(kind, str(title), None, url, tuple(posts)))
    found.extend(_dated(setting, list(site.get("posts") or [])))
    return found


def _grouped(posts: Sequence[Any], form: str) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for post in posts:
        when = post.get("date") if isinstance(post, Mapping) else None
        if isinstance(when, date):
            moment = when if isinstance(when, datetime) else datetime(*when.timetuple()[:3])
            # Ruby's strftime: %Y of the year 99 is 0099, where Python's gives 99
            groups.setdefault(dates.strftime(moment, form), []).append(post)
    return groups


def _dated(setting: Settings, posts: Sequence[Any]) -> Iterator[Archive]:
    """The year, month and day archives; posts in ``site.posts`` order (newest first), the
    years in the order of their oldest post (Jekyll walks ``site.posts.docs``), months and
    days newest first (it walks each year's posts, newest first)."""
    chosen = setting.enabled

    def made(kind: str, parts: dict[str, str], items: list[Any]) -> Archive:
        url = archive_url(setting.permalinks[kind], {**parts, "type": kind})
        numbers = [int(v) for v in parts.values()]
        when = date(*numbers, *[1] * (3 - len(numbers)))  # Ruby's Date.new(2024): Jan 1
        return Archive(kind, None, when, url, tuple(items))

    for year, in_year in reversed(_grouped(posts, "%Y").items()):
        if "year" in chosen:
            yield made("year", {"year": year}, in_year)
        for month, in_month in _grouped(in_year, "%m").items():
            if "month" in chosen:
                yield made("month", {"year": year, "month": month}, in_month)
            for day, in_day in _grouped(in_month, "%d").items():
                if "day" in chosen:
                    yield made("day", {"year": year, "month": month, "day": day}, in_day)


def page_of(archive: Archive, setting: Settings, defaults: Sequence[Any]) -> dict[str, Any]:
    """Return the ``page`` mapping of ``archive`` (``Convertible#to_liquid``: the front
    matter defaults of its path and type, its ``layout``, then ``ATTRIBUTES_FOR_LIQUID``)."""
    path = _relative_path(archive.url)
    own = {
        "layout": setting.layouts[archive.type],
        "posts": list(archive.posts),
        "type": archive.type,
        "title": archive.title,
        "date": archive.date,
        "name": posixpath.splitext(posixpath.basename(path))[0],
        "path": path,
        "url": archive.url,
        "permalink": None,
    }
    return deep_merge(defaults_for(defaults, path, archive.type), own)


def _relative_path(url: str) -> str:
    path = unquote(url).lstrip("/")
    return posixpath.join(path, "index.html") if url.endswith("/") else path


def listed(config: SiteConfig, posts: Sequence[Post]) -> list[tuple[str, dict[str, Any]]]:
    """Return ``(url, front matter)`` of each archive as ``site.pages`` ends with it (all of
    them, two of one URL both), given the settings and the visible ``posts``
    (newest first), for jekyll-sitemap: ``[]`` unless the plugin is on. The front matter is
    the archive's ``layout`` over the defaults of its path and type. Raises ``SourceError``
    as :func:`archive_url` does."""
    if not is_enabled(config.data, NAME):
        return []
    setting = settings(config.data)
    if not setting.enabled:
        return []
    tags: dict[str, list[Any]] = {}
    categories: dict[str, list[Any]] = {}
    for post in reversed(posts):  # post_attr_hash walks the posts oldest first
        for tag in post.tags:
            tags.setdefault(tag, []).append(post)
        for category in post.categories:
            categories.setdefault(category, []).append(post)
    site = {"tags": tags, "categories": categories, "posts": [{"date": p.date} for p in posts]}
    found = []
    for archive in archives(setting, site):
        path = _relative_path(archive.url)
        defaults = defaults_for(config.defaults, path, archive.type)
        found.append((archive.url, {**defaults, "layout": setting.layouts[archive.type]}))
    return found


def generate(view: SiteView) -> list[tuple[str, bytes]]:
    """Write every archive the settings enable, rendered through its layout. Raises
    ``SourceError`` for a refused permalink (:func:`archive_url`) or a failed render."""
    setting = settings(view.config.data)
    if not setting.enabled:
        return []
    site = view.site()
    written: dict[str, bytes] = {}
    for archive in archives(setting, site):
        page = page_of(archive, setting, view.config.defaults)
        out = output_path(archive.url)
        written[out] = view.render(out, {"layout": page["layout"]}, page)
    return list(written.items())


PLUGIN = Plugin(
    NAME,
    "a page per tag, category, year, month and day, rendered with the archive layouts",
    generate=generate,
    # Archives render through layouts and list the posts' contents: nothing less than
    # every build re-runs them exactly when needed.
    needs=frozenset({Needs.EVERY_BUILD}),
)
