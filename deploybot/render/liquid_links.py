"""URL look-ups for Jekyll's ``{% post_url %}`` and ``{% link %}`` tags.

Both read the ``site`` mapping the templates see (``site.posts``, ``site.pages``,
``site.static_files``; each entry has the source ``path`` and the ``url``), so they need no
other access to the build. Sources: Jekyll's ``tags/post_url.rb`` (``PostComparer``: the name
is ``YYYY-MM-DD-slug``, optionally under category folders) and ``tags/link.rb`` (a source
path relative to the site root).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from posixpath import basename, splitext
from typing import Any


def _entries(site: Mapping[str, Any], key: str) -> Iterable[Mapping[str, Any]]:
    value = site.get(key) if isinstance(site, Mapping) else None
    if not isinstance(value, list | tuple):
        return ()
    return (entry for entry in value if isinstance(entry, Mapping))


def post_url(site: Mapping[str, Any], name: str) -> str | None:
    """Return the URL (``/2020/07/14/slug``, no ``baseurl``) of the post ``name``
    (``2020-07-14-slug`` or ``folder/2020-07-14-slug``), or ``None`` when there is none."""
    wanted = name.strip().strip("/")
    if not wanted:
        return None
    for post in _entries(site, "posts"):
        path = str(post.get("path", ""))
        stem = splitext(basename(path))[0]
        folder = path.split("/_posts/")[0] if "/_posts/" in path else ""
        tail = f"{folder}/{stem}" if folder else stem
        if wanted in (stem, tail, splitext(path)[0]):
            return str(post.get("url", ""))
    return None


def find_url(site: Mapping[str, Any], path: str) -> str | None:
    """Return the URL of the post, page or static file whose source path is ``path``
    (relative to the site root, e.g. ``about.md`` or ``_posts/2020-07-14-x.md``)."""
    wanted = path.strip().lstrip("/")
    if not wanted:
        return None
    for key in ("posts", "pages", "static_files"):
        for entry in _entries(site, key):
            if str(entry.get("path", "")).lstrip("/") == wanted:
                return str(entry.get("url", ""))
    return None
