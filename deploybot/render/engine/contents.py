"""What ``content`` and ``output`` show of a post, a collection document or a page listed
in another's render (``site.posts``, ``site.<label>``, ``site.collections``,
``site.pages``, ``page.previous``/``page.next``, ``post.previous``/``post.next``).

Jekyll 4.3.1 renders documents one after another (``Site#render``: every collection's
documents in its order, ``posts`` first and oldest first, then the pages in ``site.pages``
order), and a document's ``content`` is its raw body (front matter cut off, Liquid not run)
until it has been rendered, then the converted body without its layout
(``Renderer#render_document`` sets ``document.content`` before placing it in the layouts);
a post's or document's ``output`` is ``nil`` until ``Site#render_regenerated`` sets it to
the whole output, layouts included (a collection with ``output: false`` is rendered too).
A page's ``output`` is never listed: ``Page#to_liquid`` gives ``content``, ``dir``,
``excerpt``, ``name``, ``path``, ``url`` and the front matter, so ``p.output`` is the front
matter's ``output`` or ``nil`` (:func:`~.build.listed_page`).

So what a listing shows depends on the reader: a post sees the older posts rendered, itself
raw in its body and rendered in its layouts (its own ``output`` ``nil``), the newer ones
raw, and every collection document and page raw; a document sees the posts and the
documents before it rendered; a page sees every post and document rendered and the pages
before it by name (checked with ``jekyll build``: the ``content_model``, ``contents`` and
``listed_output`` fixtures).

:class:`Contents` gives that answer whatever order the build renders in: each source has
a :data:`Rank` (its place in Jekyll's order), the reader is the source whose render is open
(:meth:`Contents.reading`), and a render not made yet is made on the spot (once per build
and process). Each answer is recorded as ``n:PATH`` (content) or ``r:PATH`` (output) with a
fingerprint of what was shown, so an incremental build re-renders a reader only when what
it would see now differs (:mod:`.incremental`).
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from deploybot.render.engine.deps import Part, Recorder, fingerprint

Rank = tuple[int | str, ...]
"""A place in Jekyll's render order: ``(0, ...)`` a post, ``(1, ...)`` a collection
document, ``(2, NAME, PATH)`` a page (:func:`page_rank`); compared as tuples."""
POST_GROUP, DOC_GROUP, PAGE_GROUP = 0, 1, 2
LAST: Rank = (3,)
"""The rank of a reader outside Jekyll's documents (the bundled theme's index): after all."""


def page_rank(path: str) -> Rank:
    """Return the place of the page ``path`` in Jekyll's render order, which is
    ``site.pages``' order: by file name, then path (Jekyll's ``Reader#sort_files!`` sorts
    by name alone, in an unstable sort; :func:`~.build.by_name` sorts by this)."""
    return (PAGE_GROUP, posixpath.basename(path), path)


@dataclass(frozen=True)
class Made:
    """A source's render as a listing shows it: its ``content`` (converted, no layout) and
    its ``output`` (the whole output, layouts included)."""

    content: str
    output: str


class Contents:
    """Resolves ``content`` and ``output`` for the reader whose render is open.

    Subclasses give :meth:`rank`, :meth:`raw` (the body) and :meth:`render` (the render,
    made now); :meth:`keeps_output` says which outputs :meth:`finished` keeps. With a
    ``recorder``, every answer records ``n:PATH`` or ``r:PATH`` with the fingerprint of
    what was shown.
    """

    def __init__(self, recorder: Recorder | None = None) -> None:
        self.recorder = recorder
        self.done: dict[str, str] = {}
        self.made: dict[str, str] = {}
        self._readers: list[_Reader] = []

    @contextlib.contextmanager
    def reading(self, path: str | None) -> Iterator[None]:
        """Within: ``path`` (``None``: a reader after every document) is the reader."""
        rank = LAST if path is None else self.rank(path)
        self._readers.append(_Reader(path, rank))
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

    def _sees_rendered(self, path: str, part: Part) -> bool:
        top = self._readers[-1] if self._readers else None
        if top is not None and top.path == path:
            # its own content is converted before its layouts; its output is set after
            return part is Part.CONTENT and top.converted
        return self.rank(path) < self.reader()

    def content_of(self, path: str) -> str:
        """Return what the open reader sees as ``content`` of the post, document or page
        ``path``: its rendered content when Jekyll renders ``path`` first, else its raw
        body. Raises ``SourceError`` as rendering ``path`` does."""
        value = self.rendered(path) if self._sees_rendered(path, Part.CONTENT) else self.raw(path)
        self._record(Part.CONTENT, path, value)
        return value

    def output_of(self, path: str) -> str | None:
        """Return what the open reader sees as ``output`` of the post or document ``path``:
        its whole output when Jekyll renders ``path`` first, else ``None`` (``nil``).
        Raises ``SourceError`` as rendering ``path`` does."""
        value = self.output(path) if self._sees_rendered(path, Part.OUTPUT) else None
        self._record(Part.OUTPUT, path, value)
        return value

    def _record(self, part: Part, path: str, value: str | None) -> None:
        if self.recorder is not None:
            self.recorder.add(part.key(path), fingerprint(value))

    def seen_by(self, reader: str, path: str, part: Part) -> str | None:
        """Return what ``reader`` (a source path, or ``:...`` for a producer after every
        document) would see of ``path``'s ``part`` now, without recording it."""
        rank = LAST if reader.startswith(":") else self.rank(reader)
        if self.rank(path) < rank:
            return self.rendered(path) if part is Part.CONTENT else self.output(path)
        return self.before(path, part)

    def before(self, path: str, part: Part) -> str | None:
        """Return what a reader before ``path`` in Jekyll's order sees of its ``part``: its
        raw body, or ``None`` for its output."""
        return self.raw(path) if part is Part.CONTENT else None

    def rendered(self, path: str) -> str:
        """Return the rendered content of ``path``, rendering it now if need be."""
        if path not in self.done:
            self._render_now(path)
        return self.done[path]

    def output(self, path: str) -> str:
        """Return the whole output of ``path``, rendering it now if need be."""
        if path not in self.made:
            self._render_now(path)
        return self.made[path]

    def _render_now(self, path: str) -> None:
        with self.reading(path):
            made = self.render(path)
        self.done[path] = made.content
        self.made[path] = made.output

    def finished(self, path: str, content: str, output: bytes | None = None) -> None:
        """Note the render of ``path`` (its own render just made it): its content, and its
        output when given and :meth:`keeps_output`."""
        self.done[path] = content
        if output is not None and self.keeps_output(path):
            self.made[path] = output.decode("utf-8", "surrogatepass")

    def done_with(self, path: str, made: Made) -> None:
        """Note the render of ``path`` as a listing shows it (its own render just made it)."""
        self.done[path] = made.content
        self.made[path] = made.output

    def keeps_output(self, path: str) -> bool:
        """Whether :meth:`finished` keeps the output of ``path`` (else a reader of it has
        it rendered again): every output, by default."""
        return True

    def rank(self, path: str) -> Rank:
        """Return the place of ``path`` in Jekyll's render order."""
        raise NotImplementedError  # pragma: no cover

    def raw(self, path: str) -> str:
        """Return the body of ``path`` (after its front matter)."""
        raise NotImplementedError  # pragma: no cover

    def render(self, path: str) -> Made:
        """Render ``path`` now and return its content and output."""
        raise NotImplementedError  # pragma: no cover


class _Reader:
    """An open render: its source path (``None``: not a document), rank, and whether its
    content is converted yet."""

    __slots__ = ("converted", "path", "rank")

    def __init__(self, path: str | None, rank: Rank) -> None:
        self.path = path
        self.rank = rank
        self.converted = False
