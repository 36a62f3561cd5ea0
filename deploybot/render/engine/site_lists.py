"""The lists of ``site`` an :class:`~deploybot.render.engine.full.Engine` makes from the build
cache (:class:`~deploybot.render.engine.deps.SiteContent`: posts, pages, static files, each
collection's documents, ``site.collections``), the rendering of a collection document with
its neighbours in its collection's order, and the cache's date queries (documents between
two cut-offs, the next date the cut-off holds back).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from deploybot.render.engine import build
from deploybot.render.engine.cache import SourceRow
from deploybot.render.engine.deps import DocPage
from deploybot.render.engine.document import render_document
from deploybot.render.engine.theme_setup import ThemeSetup
from deploybot.render.model import EPOCH, Post
from deploybot.render.outputs.sinks import micros
from deploybot.render.read.collections import POSTS, ordered

Neighbours = tuple[Post | None, Post | None]

UNDATED_US = -2
"""``date_us`` of a collection document without a date (Jekyll dates it ``site.time``)."""
TIMED_US = -1
"""``date_us`` of such a document whose URL holds a part of that date."""


def doc_date_us(doc: Post) -> int:
    """The cache's ``date_us`` of a collection document: its date, or one of
    :data:`UNDATED_US`/:data:`TIMED_US`."""
    if doc.dated:
        return micros(doc.date)
    return TIMED_US if doc.timed_url else UNDATED_US


class SiteLists(ThemeSetup):
    """Mixin of :class:`~deploybot.render.engine.full.Engine`: ``site``'s lists from the cache.
    ``cut_us`` is the build's future cut-off (microseconds since the epoch) and
    ``clock_cutoff`` whether it follows the clock."""

    cut_us: int
    clock_cutoff: bool

    # the content lists of ``site`` (:class:`~deploybot.render.engine.deps.SiteContent`)

    def site_posts(self) -> list[tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]]:
        """Return ``(post mapping, categories, tags)`` of every visible post, newest first."""
        return [
            (build.post_variables(r.model, self.md), r.model.categories, r.model.tags)
            for r in self.cache.posts(self.cut_us)
        ]

    def site_pages(self) -> list[dict[str, Any]]:
        """Return the ``page`` mapping of every page, in ``site.pages`` order
        (:func:`~.build.by_name`)."""
        pages = build.by_name(row.model for row in self.cache.rows("page"))
        return [build.page_variables(page) for page in pages]

    def site_static_files(self) -> list[dict[str, Any]]:
        """Return the ``site.static_files`` entries, in source-path order."""
        return [build.static_file_variables(row.model) for row in self.cache.rows("static")]

    def collection_docs(self, label: str) -> list[Post]:
        """Return the documents of collection ``label`` in its order (an undated one dated
        ``site.time``, as Jekyll dates it)."""
        collection = self.config.collections[label]
        rows = [r for r in self.cache.rows("doc") if r.model.collection == label]
        docs = {r.path: self._dated(r.model) for r in rows}
        keyed = [(p, d.date, d.doc.front_matter) for p, d in docs.items()]
        return [docs[path] for path, _, _ in ordered(collection, keyed)]

    def _dated(self, doc: Post) -> Post:
        return doc if doc.dated else dataclasses.replace(doc, date=self.time)

    def site_collection(self, label: str) -> tuple[list[dict[str, Any]], bool]:
        """Return ``site.<label>``: the document mappings of a collection in its order, and
        whether one is undated (its date is ``site.time``)."""
        docs = self.collection_docs(label)
        undated = any(not d.dated for d in docs)
        return [build.post_variables(d, self.md) for d in docs], undated

    def site_collections(self) -> tuple[list[dict[str, Any]], bool]:
        """Return ``site.collections`` (:func:`~.build.collection_lists`), and whether a
        document in it is undated."""
        labels = [label for label in self.config.collections if label != POSTS]
        found = {label: self.site_collection(label) for label in labels}
        docs = {label: items for label, (items, _) in found.items()}
        posts = [p for p, _, _ in self.site_posts()][::-1]
        static = [row.model for row in self.cache.rows("static")]
        undated = any(flag for _, flag in found.values())
        return build.collection_lists(self.config, docs, posts, static), undated

    def neighbours(self, row: SourceRow) -> Neighbours:
        """Return the ``(previous, next)`` post models of the post ``row`` (older, newer)."""
        older, newer = self.cache.neighbours(row.date_us, row.path, self.cut_us)
        return (
            None if older is None else older.model,
            None if newer is None else newer.model,
        )

    def post_page(self, row: SourceRow) -> dict[str, Any]:
        """Return the ``page`` mapping the post ``row`` is rendered with now."""
        return build.post_variables(row.model, self.md, *self.neighbours(row))

    def doc_neighbours(self, labels: Iterable[str]) -> dict[str, Neighbours]:
        """Return ``(previous, next)`` of every document of the collections ``labels`` in
        its collection's order, by source path: each collection read and sorted once."""
        pairs: dict[str, Neighbours] = {}
        for label in labels:
            docs = self.collection_docs(label)
            for i, doc in enumerate(docs):
                pairs[doc.doc.path] = build.in_order_neighbours(docs, i)
        return pairs

    def _render_doc(self, doc: Post, pair: Neighbours | None) -> build.RenderedDocument:
        """Render a collection document with ``pair`` as its neighbours (``page.previous``/
        ``next``; ``None``: found in its collection's order). Reading them records
        ``c:<label>``, and an undated document's ``page.date`` (``site.time``) records
        ``s:time``."""
        if pair is None:
            pair = self.doc_neighbours([doc.collection]).get(doc.doc.path, (None, None))
        doc = self._dated(doc)
        page = build.post_variables(doc, self.md, *pair)
        tracked = DocPage(page, self.recorder, doc.collection, doc.dated)
        return render_document(doc.doc, doc.output_path, "page", tracked, self.ctx)

    def docs_between(self, lo_us: int, hi_us: int) -> list[SourceRow]:
        """Return the dated documents dated in ``(lo_us, hi_us]``."""
        return [r for r in self.cache.rows("doc") if lo_us < r.date_us <= hi_us]

    def waiting(self) -> datetime | None:
        """Return the earliest date held back by a clock cut-off (UTC), or ``None``
        (:attr:`~deploybot.render.outputs.sinks.BuildReport.waiting`)."""
        found = self.cache.next_after(self.cut_us) if self.clock_cutoff else None
        return None if found is None else EPOCH + timedelta(microseconds=found)
