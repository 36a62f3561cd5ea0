"""The broken-link check, kept up to date build by build in the build cache.

:class:`LinkRecorder` sits in front of the engine's output sink: every HTML page written (or
copied as a static file) is parsed once (:mod:`.extract`) and its links replace the page's rows
in the cache (:meth:`~deploybot.render.engine.cache.BuildCache.put_links`); a page deleted drops
them. An incremental build writes only what it re-rendered, so only those pages are parsed.

:meth:`LinkRecorder.expect` hands it a page's links found elsewhere: a full build's render
workers parse the pages they render (:mod:`deploybot.render.engine.parallel`), so the parent
only stores their links.

:func:`settle`, after the build, decides again only what can have changed: the targets of the
links just recorded, and the targets an output path written or deleted in this build can serve
(:func:`.resolve.targets_for`), looked up against the built tree (every output path of the
cache). Links elsewhere to a page deleted now are so found broken, and links to a page added
now found mended, with no page re-parsed. A full build records every page, so it decides every
target: the same list by construction, and the tests check it.

:func:`report` reads the list: the first broken links by page and line, how many in all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from deploybot.git.path_rules import is_kept
from deploybot.render.links.extract import PageLinks, page_links
from deploybot.render.links.report import LISTED, BrokenLink, LinkReport
from deploybot.render.links.resolve import (
    SiteAddress,
    candidates,
    is_page,
    targets_for,
)


class LinkStore(Protocol):
    """Where the links are kept: the build cache
    (:class:`deploybot.render.engine.cache.BuildCache`, its ``links`` and ``link_drops``)."""

    def put_links(
        self, page: str, links: Iterable[tuple[str, str, int | None]], dropped: int
    ) -> None: ...
    def drop_links(self, page: str) -> None: ...
    def mark_broken(self, marks: Iterable[tuple[str, bool]]) -> None: ...
    def output_paths(self) -> set[str]: ...
    def broken_links(self, limit: int) -> tuple[list[tuple[str, str, int | None]], int, int]: ...
    def link_drops(self) -> list[tuple[str, int]]: ...


class Sink(Protocol):
    """The output sink the recorder passes everything on to
    (:class:`deploybot.render.outputs.sinks.OutputSink`)."""

    def write(self, path: str, data: bytes) -> None: ...
    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None: ...
    def delete(self, path: str) -> None: ...


class LinkRecorder:
    """An output sink (:class:`Sink`) passing everything to ``inner``
    and recording the links of HTML pages in ``cache`` (see the module docstring); ``site``
    says which absolute URLs are the site's, ``kept`` the ``publish.keep`` prefixes (served:
    :func:`.resolve.is_kept`). ``touched``: the output paths written or deleted;
    ``pending``: the targets recorded since, not yet decided."""

    def __init__(
        self, inner: Sink, cache: LinkStore, site: SiteAddress, kept: tuple[str, ...] = ()
    ) -> None:
        self.inner, self.cache, self.site, self.kept = inner, cache, site, kept
        self.touched: set[str] = set()
        self.pending: set[str] = set()
        self.parsed: dict[str, PageLinks] = {}

    def expect(self, links: dict[str, PageLinks]) -> None:
        """Take ``links`` (output path -> the links of the page about to be written there,
        :func:`.extract.page_links` of the same bytes) instead of parsing those pages."""
        self.parsed.update(links)

    def write(self, path: str, data: bytes) -> None:
        """Pass ``write`` on; record ``path``'s links when it is a page."""
        self.inner.write(path, data)
        self._record(path, data)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Pass ``copy`` on; record ``path``'s links when it is a page (read for that)."""
        self.inner.copy(path, blob_id, read)
        self._record(path, read() if is_page(path) else b"")

    def delete(self, path: str) -> None:
        """Pass ``delete`` on; forget ``path``'s links."""
        self.inner.delete(path)
        self.touched.add(path)
        if is_page(path):
            self.cache.drop_links(path)

    def _record(self, path: str, data: bytes) -> None:
        self.touched.add(path)
        if not is_page(path):
            return
        found = self.parsed.pop(path, None) or page_links(data, path, self.site)
        self.cache.put_links(path, ((k.target, k.link, k.line) for k in found.links), found.dropped)
        self.pending.update(k.target for k in found.links)


def settle(cache: LinkStore, recorder: LinkRecorder) -> None:
    """Decide, in ``cache``, whether each link that can have changed in this build is broken
    (see the module docstring). Raises ``CacheError`` for an unreadable cache."""
    targets = set(recorder.pending)
    for path in recorder.touched:
        targets.update(targets_for(path))
    if not targets:
        return
    built, kept = cache.output_paths(), recorder.kept

    def served(target: str) -> bool:
        return any(c in built or is_kept(c, kept) for c in candidates(target))

    cache.mark_broken((t, not served(t)) for t in sorted(targets))
    recorder.pending.clear()
    recorder.touched.clear()


def report(cache: LinkStore, limit: int = LISTED) -> LinkReport:
    """The broken links ``cache`` holds (see :class:`LinkReport`). Raises ``CacheError``."""
    rows, total, pages = cache.broken_links(limit)
    listed = tuple(BrokenLink(page, link, line) for page, link, line in rows)
    return LinkReport(listed, total, pages, tuple(cache.link_drops()))
