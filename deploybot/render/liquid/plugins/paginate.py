"""jekyll-paginate 1.1: ``paginator`` for a site's ``index.html`` (``pager.rb``,
``pagination.rb``).

Pagination is on when ``_config.yml`` sets ``paginate`` (posts per page) and lists
``jekyll-paginate`` in ``plugins`` (or the older ``gems``), and the site has pages. The
template is the ``index.html`` page nearest to ``paginate_path``'s folder (Jekyll's default
``/page:num``): the longest source path among the ``index.html`` pages in that folder or
one above it. Page 1 is the template's own URL; page N is ``paginate_path`` with ``:num``
= N (``/page2/``), rendered from the same file. Posts with ``hidden: true`` are left out.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deploybot.render.liquid.plugins.registry import Plugin, is_enabled

NAME = "jekyll-paginate"
PLUGIN = Plugin(NAME, "paginator for the index.html nearest to paginate_path")


@dataclass(frozen=True)
class Pagination:
    """The settings: ``per_page`` posts and the ``path`` pattern (with ``:num``)."""

    per_page: int
    path: str


def pagination(config: Mapping[str, Any]) -> Pagination | None:
    """Return the site's pagination settings, or ``None`` when it is off."""
    if not is_enabled(config, NAME):
        return None
    per_page = config.get("paginate")
    if per_page is None:
        return None
    try:
        count = int(str(per_page).strip())
    except ValueError:
        return None
    path = str(config.get("paginate_path") or "/page:num")
    return Pagination(count, path) if count > 0 else None


def _folder(path: str) -> str:
    return posixpath.dirname("/" + path.lstrip("/")).rstrip("/")


def template_page(settings: Pagination, page_paths: Iterable[str]) -> str | None:
    """Return the source path of the page paginated (``pagination_candidate?``)."""
    target = _folder(settings.path)
    chains: set[str] = set()
    while True:  # the folder of paginate_path and every folder above it
        chains.add(target)
        if not target:
            break
        target = _folder(target)
    found = [
        p for p in page_paths if posixpath.basename(p) == "index.html" and _folder(p) in chains
    ]
    found.sort(key=len, reverse=True)  # Ruby's sort is not stable; longest path first
    return found[0] if found else None


def page_url(settings: Pagination, number: int, first_url: str) -> str:
    """Return the URL of page ``number`` (page 1: ``first_url``)."""
    if number <= 1:
        return first_url
    path = settings.path.replace(":num", str(number), 1)
    return path if path.startswith("/") else "/" + path


def own_url(settings: Pagination, number: int, first_url: str) -> str:
    """Return ``page.url`` of page ``number`` (page 1: ``first_url``): jekyll-paginate
    makes page N the ``index.html`` of the folder ``paginate_path`` names, so its URL ends
    in ``/`` (``/page2/``) where :func:`page_url` (``paginator.next_page_path``) does not."""
    if number <= 1:
        return first_url
    return page_url(settings, number, first_url).rstrip("/") + "/"


def page_count(settings: Pagination, posts: int) -> int:
    """Return how many pages ``posts`` posts fill."""
    return math.ceil(posts / settings.per_page)


def paginator(
    settings: Pagination, number: int, posts: Sequence[Any], first_url: str
) -> dict[str, Any]:
    """Return the ``paginator`` of page ``number`` over the visible ``posts``."""
    total = page_count(settings, len(posts))
    start = (number - 1) * settings.per_page
    previous = number - 1 if number != 1 else None
    following = number + 1 if number != total else None
    return {
        "page": number,
        "per_page": settings.per_page,
        "posts": list(posts[start : start + settings.per_page]),
        "total_posts": len(posts),
        "total_pages": total,
        "previous_page": previous,
        "previous_page_path": None if previous is None else page_url(settings, previous, first_url),
        "next_page": following,
        "next_page_path": None if following is None else page_url(settings, following, first_url),
    }


def output_path(url: str) -> str:
    """Return the file a paginated page's ``url`` (``/page2/``) is written to."""
    return url.strip("/") + "/index.html" if url.strip("/") else "index.html"
