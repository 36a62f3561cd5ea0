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
from typing import Any, Protocol

from deploybot.render.engine import build
from deploybot.render.engine.cache import SourceRow
from deploybot.render.engine.contents import (
    DOC_GROUP,
    LAST,
    POST_GROUP,
    Contents,
    Made,
    Rank,
    page_rank,
)
from deploybot.render.engine.deps import DocPage, Kind, Recorder, fingerprint, linked
from deploybot.render.engine.theme_setup import ThemeSetup
from deploybot.render.model import EPOCH, Post, listed_static
from deploybot.render.outputs.sinks import RenderedSource, micros
from deploybot.render.read.collections import POSTS, ordered
from deploybot.render.read.site import SourceFile

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
    contents: EngineContents

    # the content lists of ``site`` (:class:`~deploybot.render.engine.deps.SiteContent`)

    def site_posts(self) -> list[tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]]:
        """Return ``(post mapping, categories, tags)`` of every visible post, newest first."""
        contents = self.contents
        return [
            (
                build.listed(build.post_variables(r.model, self.md), r.model, contents),
                r.model.categories,
                r.model.tags,
            )
            for r in self.cache.iter_posts(self.cut_us)
        ]

    def site_pages(self) -> list[dict[str, Any]]:
        """Return the ``page`` mapping of every page, in ``site.pages`` order
        (:func:`~.build.by_name`)."""
        pages = build.by_name(row.model for row in self.cache.rows("page"))
        return [build.listed_page(page, self.contents) for page in pages]

    def site_html_pages(self, pages: list[Any]) -> list[Any]:
        """Return ``site.html_pages``: those of ``pages`` (what :meth:`site_pages`
        returned) that :func:`~.build.html_pages` keeps."""
        return build.html_pages(build.by_name(row.model for row in self.cache.rows("page")), pages)

    def site_static_files(self) -> list[dict[str, Any]]:
        """Return the ``site.static_files`` entries, in source-path order."""
        static = [row.model for row in self.cache.rows("static")]
        pages = [row.model for row in self.cache.rows("page")]
        return [build.static_file_variables(s) for s in listed_static(static, pages)]

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
        shown = [build.listed(build.post_variables(d, self.md), d, self.contents) for d in docs]
        return list(linked(shown, False)), undated

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
        return build.post_variables(row.model, self.md, *self.neighbours(row), self.contents)

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
        page = build.post_variables(doc, self.md, *pair, self.contents)
        tracked = DocPage(page, self.recorder, doc.collection, doc.dated)
        return build.render_doc_output(doc, tracked, self.ctx)

    def docs_between(self, lo_us: int, hi_us: int) -> list[SourceRow]:
        """Return the dated documents dated in ``(lo_us, hi_us]``."""
        return [r for r in self.cache.rows("doc") if lo_us < r.date_us <= hi_us]

    def waiting(self) -> datetime | None:
        """Return the earliest date held back by a clock cut-off (UTC), or ``None``
        (:attr:`~deploybot.render.outputs.sinks.BuildReport.waiting`)."""
        found = self.cache.next_after(self.cut_us) if self.clock_cutoff else None
        return None if found is None else EPOCH + timedelta(microseconds=found)


class ContentEngine(Protocol):
    """What :class:`EngineContents` uses of the engine."""

    recorder: Recorder
    cut_us: int

    @property
    def cache(self) -> Any:
        """The build cache."""
        ...

    @property
    def config(self) -> Any:
        """The site config."""
        ...

    def collection_docs(self, label: str) -> list[Post]:
        """The documents of collection ``label`` in its order."""
        ...

    def visible(self, row: SourceRow | None, cut_us: int) -> bool:
        """Whether ``row`` publishes outputs."""
        ...

    def render_row(self, row: SourceRow, neighbours: Neighbours | None = None) -> RenderedSource:
        """The render of ``row``, written nowhere."""
        ...

    def load_source(self, path: str) -> SourceFile:
        """The source file ``path``, read again."""
        ...


_NIL = fingerprint(None)
"""The fingerprint an ``r:`` key records for an output shown as ``nil``."""


def _shown_output(key: str, fp: str) -> bool:
    return key.startswith(Kind.OUTPUT) and fp != _NIL


class EngineContents(Contents):
    """:class:`~.contents.Contents` of an :class:`~deploybot.render.engine.full.Engine`:
    ranks from the cache rows, bodies read again from the source, rendered contents and
    outputs from this process's renders, else from the cache (for a source not rendered
    again in this build: ``pending`` holds those that are), else rendered now apart from
    the reader's dependencies (a document that is not written is rendered inside the
    reader's, which then depends on what it read; each later reader is given the same
    dependencies, the render made once).

    The cache keeps a post's or document's whole output only while a listing reads it
    (:meth:`watched`): a site whose templates read no ``output`` stores none, and renders
    nothing twice for it."""

    def __init__(self, engine: ContentEngine) -> None:
        super().__init__(engine.recorder)
        self.engine = engine
        self.pending: set[str] = set()
        self._bodies: dict[str, str] = {}
        self._places: dict[str, dict[str, int]] = {}
        self._watched: set[str] | None = None
        self._unwritten: dict[str, dict[str, str]] = {}  # what each one's render read

    def rank(self, path: str) -> Rank:
        """Return the place of ``path`` in Jekyll's render order (by its cache row)."""
        row = self.engine.cache.source(path)
        if row is None:
            return LAST
        if row.kind == "post":
            return (POST_GROUP, row.date_us, path)
        if row.kind == "page":
            return page_rank(path)
        if row.kind != "doc":
            return LAST
        labels = [label for label in self.engine.config.collections if label != POSTS]
        label = row.model.collection
        if label not in self._places:
            docs = self.engine.collection_docs(label)
            self._places[label] = {d.doc.path: i for i, d in enumerate(docs)}
        place = self._places[label].get(path, -1)
        return (DOC_GROUP, labels.index(label) if label in labels else -1, place)

    def moved(self) -> None:
        """Forget the collections' orders (their documents changed)."""
        self._places.clear()

    def raw(self, path: str) -> str:
        """Return the body of ``path``, read again from the source."""
        if path not in self._bodies:
            found = self.engine.load_source(path)
            doc = found.post or found.page
            self._bodies[path] = "" if doc is None else doc.doc.body
        return self._bodies[path]

    def rendered(self, path: str) -> str:
        """Return the rendered content of ``path``: made in this process, cached, or now."""
        if path not in self.done and path not in self.pending:
            cached = self.engine.cache.content(path)
            if cached is not None:
                self.done[path] = cached
        content = super().rendered(path)
        self._inside(path)
        return content

    def output(self, path: str) -> str:
        """Return the whole output of ``path``: made in this process, cached, or now (then
        kept in the cache for the builds after, when ``path`` is written)."""
        if path not in self.made and path not in self.pending and path not in self._unwritten:
            cached = self.engine.cache.listed_output(path)
            if cached is not None:
                self.made[path] = cached
        if path in self.made:
            self._inside(path)
            return self.made[path]
        made = super().output(path)
        if path not in self._unwritten:
            self.watched().add(path)
            self.engine.cache.put_listed_output(path, made)
        return made

    def _inside(self, path: str) -> None:
        """Record, for the reader, what rendering the unwritten ``path`` read (its render
        is the reader's: made once, it is shown again to each reader)."""
        for key, fp in self._unwritten.get(path, {}).items():
            self.engine.recorder.add(key, fp)

    def render(self, path: str) -> Made:
        """Render ``path`` now (not into the sink); return its content and output."""
        row = self.engine.cache.source(path)
        if row is None:
            return Made("", "")
        if not self.engine.visible(row, self.engine.cut_us):
            done = self.engine.render_row(row)
            self._unwritten[path] = done.deps
        else:
            with self.engine.recorder.apart():
                done = self.engine.render_row(row)
        output = done.outputs[0][1].decode("utf-8", "surrogatepass") if done.outputs else ""
        return Made(done.content or "", output)

    def watched(self) -> set[str]:
        """Return the posts and documents whose output a listing showed (not ``nil``: in
        the last build, as the cache's ``r:`` keys say, or in this one) or the cache keeps:
        their output is kept (:meth:`keeps_output`) and stored in the cache when they are
        rendered."""
        if self._watched is None:
            cache = self.engine.cache
            keys = cache.keys_under(Kind.OUTPUT, but=_NIL)
            self._watched = {key[len(Kind.OUTPUT) :] for key in keys}
            self._watched |= cache.listed_output_paths()
        return self._watched

    def clear_watched(self) -> None:
        """Start from no watched output (a full build, on an emptied cache)."""
        self._watched = set()

    def note_readers(self, deps: dict[str, str]) -> None:
        """Watch the outputs the dependencies ``deps`` of a render showed (not ``nil``)."""
        shown = [k[len(Kind.OUTPUT) :] for k, fp in deps.items() if _shown_output(k, fp)]
        if shown:
            self.watched().update(shown)

    def keeps_output(self, path: str) -> bool:
        """Whether :meth:`finished` keeps the output of ``path``: when it is watched."""
        return path in self.watched()
