"""Permalinks: Jekyll's URL templates, placeholders, and the output path each URL writes.

Sources: Jekyll's docs ("Permalinks"), ``configuration.rb`` (built-in styles), ``url.rb``
(placeholder expansion, ``//`` collapsing), ``utils.rb#add_permalink_suffix`` (pages),
``document.rb``/``page.rb#destination`` (``slug`` -> ``slug.html``, ``dir/`` -> ``dir/index.html``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from posixpath import normpath
from urllib.parse import quote, unquote

from deploybot.git import path_rules
from deploybot.render.read.dates import DAYS, MONTHS
from deploybot.render.read.slugs import slugify

STYLES: Mapping[str, str] = {
    "date": "/:categories/:year/:month/:day/:title:output_ext",
    "pretty": "/:categories/:year/:month/:day/:title/",
    "ordinal": "/:categories/:year/:y_day/:title:output_ext",
    "weekdate": "/:categories/:year/W:week/:short_day/:title:output_ext",
    "none": "/:categories/:title:output_ext",
}

_PLACEHOLDER_RE = re.compile(
    r":(output_ext|slugified_categories|categories|collection|short_year|short_month|"
    r"long_month|short_day|long_day|i_month|i_day|y_day|w_year|w_day|year|month|day|hour|"
    r"minute|second|title|slug|week|path|basename|name)"
)
_URL_SAFE = "/:@!$&'()*+,;=-._~"


def post_template(permalink: str) -> str:
    """Return the URL template for a site or front-matter ``permalink`` (a style name or a
    template such as ``/:categories/:year/:month/:day/:title``)."""
    return STYLES.get(permalink, permalink)


def page_template(site_permalink: str, *, index: bool, html: bool = True) -> str:
    """Return the template for a page under site style ``site_permalink`` (Jekyll's
    ``Page#template``): ``/:path/:basename:output_ext`` for a page whose output is not
    HTML (``feed.xml``); ``/:path/`` for ``index``; else ``/:path/:basename`` plus the
    style's suffix (``/`` for ``pretty``, ``:output_ext`` for built-in styles, and for a custom
    template whatever it ends with)."""
    if not html:
        return "/:path/:basename:output_ext"
    if index:
        return "/:path/"
    return add_permalink_suffix("/:path/:basename", site_permalink)


def add_permalink_suffix(template: str, style: str) -> str:
    """``Utils.add_permalink_suffix``: end ``template`` as the site's permalink style
    ends (``/`` for ``pretty``, ``:output_ext`` for the other built-in styles)."""
    if style == "pretty":
        return template + "/"
    if style in STYLES:
        return template + ":output_ext"
    if style.endswith("/"):
        template += "/"
    if style.endswith(":output_ext"):
        template += ":output_ext"
    return template


def post_placeholders(
    date: datetime,
    slug: str,
    categories: tuple[str, ...],
    output_ext: str = ".html",
    *,
    name: str | None = None,
    collection: str = "posts",
    path: str = "",
) -> dict[str, str]:
    """Return Jekyll's document placeholders (``drops/url_drop.rb``): ``slug`` is the
    document's ``slug`` (front matter, else from the file name), ``name`` the file name
    without its extension (default ``slug``), ``path`` Jekyll's ``cleaned_relative_path``.
    ``:title`` is ``slug`` slugified in ``pretty`` mode keeping case, ``:slug`` and
    ``:name`` in the default mode (:mod:`.slugs`)."""
    iso = date.isocalendar()
    return {
        "year": f"{date.year:04d}",
        "short_year": f"{date.year % 100:02d}",
        "month": f"{date.month:02d}",
        "i_month": str(date.month),
        "short_month": MONTHS[date.month - 1][:3],
        "long_month": MONTHS[date.month - 1],
        "day": f"{date.day:02d}",
        "i_day": str(date.day),
        "y_day": f"{date.timetuple().tm_yday:03d}",
        "short_day": DAYS[date.weekday()][:3],
        "long_day": DAYS[date.weekday()],
        "week": f"{iso[1]:02d}",
        "w_year": f"{iso[0]:04d}",
        "w_day": str(iso[2]),
        "hour": f"{date.hour:02d}",
        "minute": f"{date.minute:02d}",
        "second": f"{date.second:02d}",
        "title": slugify(slug, "pretty", cased=True),
        "slug": slugify(slug),
        "name": slugify(slug if name is None else name),
        "categories": "/".join(dict.fromkeys(c.lower() for c in categories)),
        "slugified_categories": "/".join(dict.fromkeys(slugify(c) for c in categories)),
        "collection": collection,
        "path": path,
        "output_ext": output_ext,
    }


def expand(template: str, values: Mapping[str, str]) -> str:
    """Return the URL for ``template`` with ``values`` filled in.

    Values are percent-escaped (``/`` kept), ``//`` runs collapse (so an empty
    ``:categories`` vanishes) and the URL starts with ``/``; unknown placeholders stay as
    written. Raises ``ValueError`` when the URL would leave the site root (see
    :func:`output_path`).
    """
    filled = _PLACEHOLDER_RE.sub(
        lambda m: quote(values.get(m.group(1), m.group(0)), _URL_SAFE), template
    )
    url = "/" + re.sub(r"/{2,}", "/", filled).lstrip("/")
    output_path(url)  # validates
    return url


def output_path(url: str, output_ext: str = ".html", index_ext: str = ".html") -> str:
    """Return the relative POSIX file path a URL is written to (Jekyll's ``destination``).

    ``/a/b/`` -> ``a/b/index.html`` (``index`` + ``index_ext``: a page's own output
    extension, ``Page#destination``; always ``.html`` for a document,
    ``Document#destination``); ``/a/b`` -> ``a/b.html``; ``/a/b.html`` stays.
    Raises ``ValueError`` when the unescaped path contains ``..``, a backslash or NUL, is
    absolute after normalisation, or breaks a rule of :mod:`deploybot.git.path_rules` (a
    ``.git`` folder in any spelling, a control character…).
    """
    raw = unquote(url)
    if "\\" in raw or "\x00" in raw:
        raise ValueError(f"permalink {url!r} contains a backslash or NUL")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"permalink {url!r} leaves the site root")
    path = "/".join(parts)
    if raw.endswith("/") or not path:
        path = f"{path}/index{index_ext}" if path else f"index{index_ext}"
    elif not path.endswith(output_ext):
        path += output_ext
    normal = normpath(path)
    if normal.startswith(("/", "../")) or normal != path:
        raise ValueError(f"permalink {url!r} is not a plain relative path")
    problem = path_rules.path_problem(path)
    if problem is not None:
        raise ValueError(f"permalink {url!r} gives a refused output path: {problem}")
    return path
