"""What ``content`` shows of a post or collection document listed in another's render
(``site.posts``, ``site.<label>``, ``site.collections``, ``page.previous``/``page.next``,
``post.previous``/``post.next``).

Jekyll 4.3.1 renders documents one after another (``Site#render``: every collection's
documents in its order, ``posts`` first and oldest first, then the pages), and a document's
``content`` is its raw body (front matter cut off, Liquid not run) until it has been rendered,
then the converted body without its layout (``Renderer#render_document`` sets
``document.content`` before placing it in the layouts). So what ``post.content`` holds
depends on the reader: a post sees the older posts rendered, itself raw in its body and
rendered in its layouts, the newer ones raw,
and every collection document raw; a document sees the posts and the documents before it
rendered; a page sees all of them rendered (checked with ``jekyll build``: the
``content_model`` fixture).

:class:`Contents` gives that answer whatever order the build renders in: each document has
a :data:`Rank` (its place in Jekyll's order), the reader is the document whose render is
open (:meth:`Contents.reading`), and a rendered content not made yet is rendered on the spot
(once per build and process). Each answer is recorded as ``n:PATH`` with a fingerprint of
the text shown, so an incremental build re-renders a reader only when what it would see now
differs (:mod:`.incremental`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from deploybot.render.engine.deps import Kind, Recorder, fingerprint
from deploybot.render.model import RenderWarning

Rank = tuple[int | str, ...]
"""A place in Jekyll's render order: ``(0, ...)`` a post, ``(1, ...)`` a collection
document, ``(2,)`` a page; compared as tuples."""
POST_GROUP, DOC_GROUP, PAGE_GROUP = 0, 1, 2
PAGE: Rank = (PAGE_GROUP,)
LAST: Rank = (3,)
"""The rank of a reader outside Jekyll's documents (the bundled theme's index): after all."""


class Contents:
    """Resolves ``content`` for the reader whose render is open.

    Subclasses give :meth:`rank`, :meth:`raw` (the body) and :meth:`render` (the rendered
    content, made now). With a ``recorder``, every answer records ``n:PATH`` with the
    fingerprint of the text shown.
    """

    def __init__(self, recorder: Recorder | None = None) -> None:
        self.recorder = recorder
        self.done: dict[str, str] = {}
        self._readers: list[_Reader] = []
        self._notes: dict[str, dict[str, None]] = {}

    @contextlib.contextmanager
    def reading(self, path: str | None) -> Iterator[None]:
        """Within: ``path`` (``None``: a reader after every document) is the reader."""
        rank = LAST if path is None else self.rank(path)
        self._readers.append(_Reader(path, rank))
        if path is not None:
            self._notes.pop(path, None)
        try:
            yield
        finally:
            self._readers.pop()

    def converted(self, path: str, content: str) -> None:
        """Note that the reader ``path`` has its content converted (its layouts come next,
        and see it rendered)."""
        if self._readers and self._readers[-1].path == path:
            self._readers[-1].converted = True
            self.done.setdefault(path, content)

    def reader(self) -> Rank:
        """Return the rank of the reader whose render is open (:data:`LAST` when none)."""
        return self._readers[-1].rank if self._readers else LAST

    def _sees_rendered(self, path: str) -> bool:
        top = self._readers[-1] if self._readers else None
        if top is not None and top.path == path:
            return top.converted
        return self.rank(path) < self.reader()

    def content_of(self, path: str) -> str:
        """Return what the open reader sees as ``content`` of the post or document
        ``path``: its rendered content when Jekyll renders ``path`` first, else its raw
        body. Raises ``SourceError`` as rendering ``path`` does."""
        value = self.rendered(path) if self._sees_rendered(path) else self.raw(path)
        if self.recorder is not None:
            self.recorder.add(Kind.CONTENT + path, fingerprint(value))
        return value

    def unsupported(self, feature: str) -> None:
        """Note that the open reader read ``feature`` (:meth:`warnings_of` tells it)."""
        top = self._readers[-1] if self._readers else None
        if top is not None and top.path is not None:
            self._notes.setdefault(top.path, {})[feature] = None

    def warnings_of(self, path: str) -> tuple[RenderWarning, ...]:
        """Return (and forget) one warning per unsupported feature ``path``'s render read."""
        found = self._notes.pop(path, {})
        return tuple(RenderWarning(path, None, f"{f} is not supported: it is empty") for f in found)

    def seen_by(self, reader: str, path: str) -> str:
        """Return what ``reader`` (a source path, or ``:...`` for a producer after every
        document) would see of ``path`` now, without recording it."""
        rank = LAST if reader.startswith(":") else self.rank(reader)
        return self.rendered(path) if self.rank(path) < rank else self.raw(path)

    def rendered(self, path: str) -> str:
        """Return the rendered content of ``path``, rendering it now if need be."""
        if path not in self.done:
            with self.reading(path):
                self.done[path] = self.render(path)
        return self.done[path]

    def finished(self, path: str, content: str) -> None:
        """Note the rendered content of ``path`` (its own render just made it)."""
        self.done[path] = content

    def rank(self, path: str) -> Rank:
        """Return the place of ``path`` in Jekyll's render order."""
        raise NotImplementedError  # pragma: no cover

    def raw(self, path: str) -> str:
        """Return the body of ``path`` (after its front matter)."""
        raise NotImplementedError  # pragma: no cover

    def render(self, path: str) -> str:
        """Render ``path`` now and return its content."""
        raise NotImplementedError  # pragma: no cover


class _Reader:
    """An open render: its source path (``None``: not a document), rank, and whether its
    content is converted yet."""

    __slots__ = ("converted", "path", "rank")

    def __init__(self, path: str | None, rank: Rank) -> None:
        self.path = path
        self.rank = rank
        self.converted = False
