"""URL look-ups for Jekyll's ``{% post_url %}`` and ``{% link %}`` tags.

Both read the ``site`` mapping the templates see (``site.posts``, ``site.pages``,
``site.static_files``; each entry has the source ``path`` and the ``url``), so they need no
other access to the build. Sources: Jekyll's ``tags/post_url.rb`` (``PostComparer``: the name
is ``YYYY-MM-DD-slug``, optionally under category folders) and ``tags/link.rb`` (a source
path relative to the site root).

A :class:`LinkIndex` (one per build, held by the build's Liquid) maps names to entries for
each list once, so a look-up is a dict access, not a scan of every post, page and static
file (20,000 ``{% link %}`` on a site of 5,000 static files: 47 s before, see docs/performance.md).
Each look-up still reads the lists as a scan would (their length, an entry's ``path``, the
found entry's ``url``), so the dependency recording of an incremental build
(:mod:`deploybot.render.engine.deps`) sees the same keys as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from posixpath import basename, splitext
from typing import Any

Entry = Mapping[str, Any]
KeysFn = Callable[[Entry], Iterable[str]]


def _entries(site: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = site.get(key) if isinstance(site, Mapping) else None
    return value if isinstance(value, list | tuple) else ()


def _post_keys(post: Entry) -> Iterable[str]:
    """The names ``{% post_url %}`` finds ``post`` by: ``2020-07-14-slug``,
    ``folder/2020-07-14-slug`` (the folders before ``_posts``) and its path without the
    extension."""
    path = str(post.get("path", ""))
    stem = splitext(basename(path))[0]
    folder = path.split("/_posts/")[0] if "/_posts/" in path else ""
    return (stem, f"{folder}/{stem}" if folder else stem, splitext(path)[0])


def _path_keys(entry: Entry) -> Iterable[str]:
    """The name ``{% link %}`` finds ``entry`` by: its source path, no leading ``/``."""
    return (str(entry.get("path", "")).lstrip("/"),)


class LinkIndex:
    """Name -> entry maps of the ``site`` lists, each made once per list object.

    Args:
        collections: the labels of the written collections other than ``posts``: their
            documents (``site.<label>``) are found by ``{% link %}`` after the posts, pages
            and static files (Jekyll's ``each_site_file``).

    Attributes:
        builds: how many lists were indexed (each list once, however many look-ups).
    """

    def __init__(self, collections: tuple[str, ...] = ()) -> None:
        self.collections = collections
        # (id(list), names) -> (the list, kept so the id stays its own; its length; the map)
        self._maps: dict[tuple[int, KeysFn], tuple[Sequence[Any], int, dict[str, Entry]]] = {}
        self.builds = 0

    def _map(self, items: Sequence[Any], keys: KeysFn) -> dict[str, Entry]:
        found = self._maps.get((id(items), keys))
        if found is not None and found[0] is items and found[1] == len(items):
            return found[2]
        table: dict[str, Entry] = {}
        for entry in items:
            if isinstance(entry, Mapping):
                for key in keys(entry):
                    table.setdefault(key, entry)  # the first in list order wins, as a scan
        self._maps[id(items), keys] = (items, len(items), table)
        self.builds += 1
        return table

    def find(
        self, site: Mapping[str, Any], lists: Sequence[str], wanted: str, keys: KeysFn
    ) -> str | None:
        """Return the ``url`` of the first entry of ``site``'s ``lists`` (in order) that
        ``keys`` names ``wanted``, or ``None``."""
        for name in lists:
            items = _entries(site, name)
            if len(items) and isinstance(items[0], Mapping):
                items[0].get("path")  # what a scan reads of every entry (dependencies)
            entry = self._map(items, keys).get(wanted)
            if entry is not None:
                return str(entry.get("url", ""))
        return None


def post_url(site: Mapping[str, Any], name: str, index: LinkIndex | None = None) -> str | None:
    """Return the URL (``/2020/07/14/slug``, no ``baseurl``) of the post ``name``
    (``2020-07-14-slug`` or ``folder/2020-07-14-slug``), or ``None`` when there is none.
    ``index``: the build's (a fresh one when ``None``)."""
    wanted = name.strip().strip("/")
    if not wanted:
        return None
    return (index or LinkIndex()).find(site, ("posts",), wanted, _post_keys)


def find_url(site: Mapping[str, Any], path: str, index: LinkIndex | None = None) -> str | None:
    """Return the URL of the post, page, static file or written collection document whose
    source path is ``path`` (relative to the site root, e.g. ``about.md`` or
    ``_posts/2020-07-14-x.md``).
    ``index``: the build's (a fresh one when ``None``)."""
    wanted = path.strip().lstrip("/")
    if not wanted:
        return None
    index = index or LinkIndex()
    lists = ("posts", "pages", "static_files", *index.collections)
    return index.find(site, lists, wanted, _path_keys)
