"""Dependency recording: what each output was made from, captured as the render reads it.

Nothing here is a hand-kept list. The objects the templates and the Liquid layer see record
every read into the current :class:`Recorder` frame:

- :class:`~.tracking_loader.TrackingLoader` wraps the Jinja2 loader: every ``get_template``
  (layouts, and what they ``extends``/``include``/``import``, also on Jinja2's cache hits) records
  ``t:NAME`` with a fingerprint of the template source ('' when it does not exist).
- :class:`TrackedDict` is a ``dict`` whose reads record ``PREFIX+KEY``: ``page`` (``p:``),
  ``site`` (``s:``) and each post of ``site.posts`` (``k:``, a key read on *some* post).
  Whole-mapping reads (iteration, ``repr``) record ``PREFIX*``. A post's neighbours
  (``page.previous``/``page.next``) are tracked mappings of their own (``p:previous.KEY``),
  so a post depends only on what it shows of its neighbours.
- :class:`TrackedList` is a list of the ``site`` mapping: any use (iteration, length, index)
  records its key: ``o`` for ``site.posts`` (the post order and membership), ``g`` for
  ``site.pages`` (the pages and their fields), ``f`` for ``site.static_files``.
- :class:`LazySite` makes ``posts``, ``pages``, ``static_files``, ``categories``, ``tags``
  and ``data`` on first read; reading ``data`` records ``D`` (the ``_data/`` files: any
  change to one dirties it); reading ``categories``/``tags`` also records ``o`` and
  ``k:categories``/``k:tags`` (they group the posts by those fields).
- :class:`TrackingTree` wraps the source tree: ``read``/``blob_id`` record ``b:PATH`` and
  ``paths()`` records ``L`` (the list of paths).

Dependency keys are :class:`Key` members and :class:`Kind` prefixes plus a name, plain strings
underneath, so the cache can index them; each maps to a fingerprint
(:func:`fingerprint`) of the value read, or ``""`` when only the fact of the read matters.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Sequence
from enum import StrEnum
from typing import Any, Protocol

from deploybot.render.engine.related import RELATED_POSTS, related_posts
from deploybot.render.liquid.documents import document_identity
from deploybot.render.read.source import SourceTree


class Key(StrEnum):
    """A dependency key naming one whole thing an output read (its fingerprint: ``""``, only
    the fact of the read matters)."""

    ORDER = "o"
    """The visible posts, their order (``site.posts``)."""
    PATHS = "L"
    """The list of paths in the source tree."""
    PAGES = "g"
    """The pages and their ``page`` fields (``site.pages``)."""
    STATIC = "f"
    """The static files (``site.static_files``)."""
    DATA = "D"
    """The list of ``_data/`` files (``site.data``; each file read records its ``b:``)."""
    COLLECTIONS = "C"
    """``site.collections`` (every collection's documents and files, the posts)."""
    TIME = "s:time"
    """``site.time`` (the build time; also the date of a collection document without one)."""
    ASSETS = "a"
    """The theme's ``assets/`` folder (any file in it changed)."""


class Kind(StrEnum):
    """The prefix of a dependency key naming one part of a thing read: ``Kind.BLOB + path``
    is the key of a source file's bytes. The key is a plain string (``"b:_posts/x.md"``), so
    the build cache can index it."""

    BLOB = "b:"
    """A source file's bytes, by path (its fingerprint: the blob id)."""
    PAGE = "p:"
    """A key of the ``page`` being rendered (``p:title``; ``p:previous.url`` for a neighbour)."""
    SITE = "s:"
    """A key of ``site``."""
    POST = "k:"
    """A key read on *some* post of ``site.posts``."""
    COLLECTION = "c:"
    """A collection, by label."""
    TEMPLATE = "t:"
    """A Jinja2 template, by name (its fingerprint: of its source, ``''`` when absent)."""
    LAYOUT = "y:"
    """A Liquid layout, by name (its fingerprint: its path)."""
    CONTENT = "n:"
    """The ``content`` of a post, document or page, by source path, as a listing showed it
    (its raw body, or its rendered HTML once Jekyll has rendered it: :mod:`.contents`; its
    fingerprint: of the text shown)."""
    OUTPUT = "r:"
    """The ``output`` of a post or document, by source path, as a listing showed it
    (``nil``, or its whole output once Jekyll has rendered it: :mod:`.contents`; its
    fingerprint: of the value shown)."""


class Part(StrEnum):
    """What a listing shows of a rendered source: its ``content`` or its ``output``."""

    CONTENT = "content"
    OUTPUT = "output"

    def key(self, path: str) -> str:
        """Return the dependency key of this part of the source ``path`` (``n:``/``r:``)."""
        return (Kind.CONTENT if self is Part.CONTENT else Kind.OUTPUT) + path


NEIGHBOURS = frozenset({"previous", "next"})
"""``page`` keys holding a post's neighbours, tracked as mappings of their own."""
PRESENT = "{}"
"""Fingerprint recorded when a nested tracked mapping is read (its keys are tracked apart)."""
WHOLE = "*"
"""Suffix of a key naming a whole mapping (iteration, ``repr``)."""


def fingerprint(value: object) -> str:
    """Return a short, stable digest (16 hex) of ``repr(value)``."""
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class Recorder:
    """Collects ``{dependency key: fingerprint}`` for the output being rendered.

    Frames nest (:meth:`push`/:meth:`pop`); a read is recorded in every open frame, so an
    output's frame also holds what its content render read. With no frame open, reads are
    not recorded.
    """

    def __init__(self) -> None:
        self._frames: list[dict[str, str]] = []

    def push(self) -> None:
        """Open a new frame."""
        self._frames.append({})

    def pop(self) -> dict[str, str]:
        """Close the innermost frame and return its ``{key: fingerprint}``."""
        return self._frames.pop()

    def add(self, key: str, fp: str = "") -> None:
        """Record ``key`` (with ``fp``) in every open frame."""
        for frame in self._frames:
            frame.setdefault(key, fp)

    @contextlib.contextmanager
    def apart(self) -> Iterator[None]:
        """Within: reads go to the frames opened inside only, not to those open now (a
        render made for another's sake records what it read for itself)."""
        saved, self._frames = self._frames, []
        try:
            yield
        finally:
            self._frames = saved


class ContentSource(Protocol):
    """Gives the ``content`` and ``output`` a listing shows of a source (:mod:`.contents`)."""

    def content_of(self, path: str) -> str:
        """Return the ``content`` of the post, document or page ``path`` as the source
        being rendered sees it now. Raises ``SourceError`` as rendering it does."""
        ...

    def output_of(self, path: str) -> str | None:
        """Return the ``output`` of the post or document ``path`` as the source being
        rendered sees it now (``None``: not rendered yet). Raises ``SourceError`` as
        rendering it does."""
        ...


class LazyContent:
    """The value of ``content`` (or ``output``: ``part``) in a listed source's mapping:
    resolved by :class:`DocMapping` on each read, since what it shows depends on who reads
    it."""

    __slots__ = ("part", "path", "source")

    def __init__(self, path: str, source: ContentSource, part: Part = Part.CONTENT) -> None:
        self.path = path
        self.source = source
        self.part = part

    def __repr__(self) -> str:  # stable: the fingerprints of whole mappings use it
        return f"<{self.part} of {self.path}>"

    def resolve(self) -> str | None:
        """Return the content (or output) the reader sees now."""
        if self.part is Part.CONTENT:
            return self.source.content_of(self.path)
        return self.source.output_of(self.path)


def _resolved(value: Any) -> Any:
    return value.resolve() if isinstance(value, LazyContent) else value


class DocMapping(dict[str, Any]):
    """A ``dict`` whose :class:`LazyContent` values are resolved when read (by key, or by
    ``values``/``items``, which return lists). Liquid's ``==`` compares two of documents by
    which document they are (:meth:`__liquid__`)."""

    def __liquid__(self) -> Any:
        """What python-liquid's ``==`` (and truthiness, ``default``) sees: a post's or
        document's ``(collection, path)`` (:func:`document_identity`), else the mapping."""
        identity = document_identity(self)
        return self if identity is None else identity

    def __getitem__(self, key: str) -> Any:
        return _resolved(super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        return _resolved(super().get(key, default))

    def values(self) -> Any:
        return [_resolved(v) for v in super().values()]

    def items(self) -> Any:
        return [(k, _resolved(v)) for k, v in super().items()]


_ABSENT = object()


class TrackedDict(DocMapping):
    """A ``dict`` recording ``prefix + key`` on reads. Same ``repr`` and equality as a dict.

    ``page`` values are recorded with a fingerprint (so a changed neighbour can be checked
    by value); other prefixes record keys only. A mapping value under a key in ``nested`` is
    handed out as a :class:`TrackedDict` with prefix ``prefix + key + "."`` and records
    :data:`PRESENT` itself (:func:`read_fingerprint` recomputes the same). ``bool()`` records
    nothing: the mappings tracked here (``page``, ``site``, posts) are never empty.
    """

    def __init__(
        self,
        data: dict[str, Any],
        recorder: Recorder,
        prefix: str,
        with_value: bool,
        nested: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(data)
        self._recorder = recorder
        self._prefix = prefix
        self._with_value = with_value
        self._nested = nested

    def _note(self, key: object) -> None:
        if isinstance(key, str):
            value = dict.get(self, key, _ABSENT)
            fp = ""
            if self._with_value and value is not _ABSENT:
                fp = PRESENT if self._is_nested(key, value) else fingerprint(value)
            self._recorder.add(self._prefix + key, fp)

    def _is_nested(self, key: str, value: Any) -> bool:
        return key in self._nested and isinstance(value, dict)

    def _wrap(self, key: str, value: Any) -> Any:
        if self._is_nested(key, value) and not isinstance(value, TrackedDict):
            value = TrackedDict(value, self._recorder, f"{self._prefix}{key}.", self._with_value)
            dict.__setitem__(self, key, value)
        return value

    def _note_all(self) -> None:
        fp = fingerprint(list(dict.items(self))) if self._with_value else ""
        self._recorder.add(self._prefix + WHOLE, fp)

    def __bool__(self) -> bool:
        return dict.__len__(self) > 0

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return self._wrap(key, super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return self._wrap(key, super().get(key, default))

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        self._note_all()
        return super().__iter__()

    def keys(self) -> Any:
        self._note_all()
        return super().keys()

    def values(self) -> Any:
        self._note_all()
        return super().values()

    def items(self) -> Any:
        self._note_all()
        return super().items()

    def __len__(self) -> int:
        self._note_all()
        return super().__len__()

    def __repr__(self) -> str:
        self._note_all()
        return super().__repr__()


def linked(
    items: Sequence[dict[str, Any]],
    newest_first: bool,
    wrap: Callable[[dict[str, Any]], DocMapping] = DocMapping,
) -> list[DocMapping]:
    """Return ``items`` (posts newest first, or a collection's documents in its order),
    each wrapped and given ``previous`` and ``next``: its older and newer neighbour (for
    documents: the one before and after), wrapped too, without neighbours of their own
    (Jekyll's ``DocumentDrop#previous``/``next``; absent at either end)."""
    bases = [wrap(item) for item in items]
    out: list[DocMapping] = []
    for i, item in enumerate(items):
        before = bases[i - 1] if i > 0 else None
        after = bases[i + 1] if i + 1 < len(bases) else None
        previous, following = (after, before) if newest_first else (before, after)
        pair = (("previous", previous), ("next", following))
        out.append(wrap({**item, **{name: value for name, value in pair if value is not None}}))
    return out


def read_fingerprint(page: dict[str, Any], name: str, nested: frozenset[str] = NEIGHBOURS) -> str:
    """Return the fingerprint a :class:`TrackedDict` (``with_value``, ``nested``) over
    ``page`` records for the key ``name`` (the recorded key without its prefix: ``title``,
    ``*``, ``previous``, ``previous.url``, ``previous.*``); ``""`` when absent."""
    head, dot, rest = name.partition(".")
    if dot and head in nested and isinstance(page.get(head), dict):
        return read_fingerprint(page[head], rest, frozenset())
    if name == WHOLE:
        return fingerprint(list(page.items()))
    if name not in page:
        return ""
    value = page[name]
    return PRESENT if name in nested and isinstance(value, dict) else fingerprint(value)


def collection_key(label: str) -> str:
    """Key: the documents of collection ``label``, their order and fields."""
    return Kind.COLLECTION + label


class TrackedList(list[Any]):
    """A list of the ``site`` mapping whose every use records ``key`` (see the module
    docstring: ``o``, ``g``, ``f``, ``c:LABEL`` or ``C``) and the ``extra`` keys."""

    def __init__(
        self, items: list[Any], recorder: Recorder, key: str, extra: tuple[str, ...] = ()
    ) -> None:
        super().__init__(items)
        self._recorder = recorder
        self._keys = (key, *extra)

    def _note(self) -> None:
        for key in self._keys:
            self._recorder.add(key)

    def __iter__(self) -> Iterator[Any]:
        self._note()
        return super().__iter__()

    def __len__(self) -> int:
        self._note()
        return super().__len__()

    def __getitem__(self, index: Any) -> Any:
        self._note()
        return super().__getitem__(index)

    def __repr__(self) -> str:
        self._note()
        return super().__repr__()


class DocPage(TrackedDict):
    """The ``page`` of a collection document (``p:`` keys, with values): reading its
    neighbours (``previous``/``next``, from the collection's order) records
    ``c:<label>``, and reading the date of an undated document (``site.time``) records
    ``s:time``."""

    def __init__(self, data: dict[str, Any], recorder: Recorder, label: str, dated: bool) -> None:
        super().__init__(data, recorder, Kind.PAGE, True)
        self._label = label
        self._dated = dated

    def _note(self, key: object) -> None:
        super()._note(key)
        if key in NEIGHBOURS or key == WHOLE:
            self._recorder.add(collection_key(self._label))
        if not self._dated and key in ("date", WHOLE):
            self._recorder.add(Key.TIME)

    def _note_all(self) -> None:
        super()._note_all()
        self._recorder.add(collection_key(self._label))
        if not self._dated:
            self._recorder.add(Key.TIME)


class SiteContent(Protocol):
    """Where :class:`LazySite` gets the content lists from (the engine, over the cache)."""

    def site_posts(self) -> list[tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]]:
        """Return ``(post mapping, categories, tags)`` of every visible post, newest first."""
        ...

    def site_pages(self) -> list[dict[str, Any]]:
        """Return the ``page`` mapping of every page, in source-path order."""
        ...

    def site_html_pages(self, pages: list[Any]) -> list[Any]:
        """Return ``site.html_pages``: those of ``pages`` (what :meth:`site_pages`
        returned) whose output is HTML, the same objects."""
        ...

    def site_static_files(self) -> list[dict[str, Any]]:
        """Return the ``site.static_files`` entries, in source-path order."""
        ...

    def site_data(self) -> dict[str, Any]:
        """Return ``site.data`` (the ``_data/`` files), recording what it reads."""
        ...

    def site_collection(self, label: str) -> tuple[list[dict[str, Any]], bool]:
        """Return the document mappings of collection ``label`` in its order, and whether
        one of them is undated (dated ``site.time``)."""
        ...

    def site_collections(self) -> tuple[list[dict[str, Any]], bool]:
        """Return ``site.collections``, and whether a document in it is undated."""
        ...


_LAZY = ("posts", "pages", "html_pages", "static_files", "categories", "tags", "data")
_LAZY_LISTS = (*_LAZY, "collections")
_GROUPS = {"categories": (Kind.POST + "categories",), "tags": (Kind.POST + "tags",)}


class LazySite(TrackedDict):
    """The ``site`` mapping (``s:`` keys); ``posts``, ``pages``, ``html_pages``, ``static_files``,
    ``categories``, ``tags``, ``data``, ``collections`` and each collection's documents
    (``labels``) are made from ``content`` on first read, so a build that renders no
    listing never loads every post. ``related_posts`` is made on each read for
    ``current_document`` (the source path of the post or document being rendered; ``None``
    for a page: ``nil``), from ``posts``: it records what reading those records (``o``,
    the fields read)."""

    current_document: str | None = None

    def __init__(
        self,
        data: dict[str, Any],
        recorder: Recorder,
        content: SiteContent,
        labels: tuple[str, ...] = (),
    ) -> None:
        lazy = (*_LAZY_LISTS, *labels)
        placeholders = dict.fromkeys((*lazy, RELATED_POSTS), _ABSENT)
        super().__init__({**data, **placeholders}, recorder, Kind.SITE, False)
        self._content = content
        self._lazy = frozenset(lazy)
        self._labels = frozenset(labels)

    def _load(self, key: str) -> None:
        if key not in self._lazy or dict.get(self, key) is not _ABSENT:
            return
        recorder = self._recorder
        if key in self._labels:
            docs, undated = self._content.site_collection(key)
            extra = (Key.TIME,) if undated else ()
            dict.__setitem__(self, key, TrackedList(docs, recorder, collection_key(key), extra))
            return
        if key == "collections":
            lists, undated = self._content.site_collections()
            extra = (Key.TIME,) if undated else ()
            dict.__setitem__(self, key, TrackedList(lists, recorder, Key.COLLECTIONS, extra))
            return
        if key in ("posts", "categories", "tags"):
            rows = self._content.site_posts()

            def track(post: dict[str, Any]) -> TrackedDict:
                return TrackedDict(post, recorder, Kind.POST, False)

            # a neighbour's fields are a post's fields: ``post.previous.title`` is ``k:title``
            posts = linked([p for p, _, _ in rows], True, track)
            categories: dict[str, list[DocMapping]] = {}
            tags: dict[str, list[DocMapping]] = {}
            # Jekyll's post_attr_hash: names in oldest-first order, posts newest first.
            for post, (_, cats, names) in reversed(list(zip(posts, rows, strict=True))):
                for name in dict.fromkeys(cats):
                    categories.setdefault(name, []).insert(0, post)
                for name in dict.fromkeys(names):
                    tags.setdefault(name, []).insert(0, post)
            dict.__setitem__(self, "posts", TrackedList(posts, recorder, Key.ORDER))
            dict.__setitem__(self, "categories", categories)
            dict.__setitem__(self, "tags", tags)
        elif key == "data":
            dict.__setitem__(self, "data", self._content.site_data())
        elif key in ("pages", "html_pages"):
            pages = self._content.site_pages()
            html = self._content.site_html_pages(pages)
            dict.__setitem__(self, "pages", TrackedList(pages, recorder, Key.PAGES))
            dict.__setitem__(self, "html_pages", TrackedList(html, recorder, Key.PAGES))
        else:
            static = self._content.site_static_files()
            dict.__setitem__(self, "static_files", TrackedList(static, recorder, Key.STATIC))

    def _note(self, key: object) -> None:
        super()._note(key)
        if key == "data":  # made once per build: every reader records the data files
            self._recorder.add(Key.DATA)
        if isinstance(key, str) and key in _GROUPS:
            self._recorder.add(Key.ORDER)
            for extra in _GROUPS[key]:
                self._recorder.add(extra)

    def _related(self) -> list[Any] | None:
        if self.current_document is None:
            return None
        return related_posts(self["posts"], self.current_document)

    def __getitem__(self, key: str) -> Any:
        if key == RELATED_POSTS:
            self._note(key)
            return self._related()
        self._load(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == RELATED_POSTS:
            return self[key]
        self._load(key)
        return super().get(key, default)

    def _note_all(self) -> None:
        for key in self._lazy:
            self._load(key)
        dict.__setitem__(self, RELATED_POSTS, self._related())
        super()._note_all()


class TrackingTree:
    """A :class:`SourceTree` recording ``b:PATH`` (blob id) on reads and ``L`` on listings."""

    def __init__(self, inner: SourceTree, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def paths(self) -> Iterator[str]:
        """Yield the inner tree's paths, recording ``L``."""
        self.recorder.add(Key.PATHS)
        return self.inner.paths()

    def read(self, path: str) -> bytes:
        """Return the file's bytes, recording ``b:PATH``. Raises ``KeyError`` when absent."""
        self._note(path)
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the blob id, recording ``b:PATH``. Raises ``KeyError`` when absent."""
        self._note(path)
        return self.inner.blob_id(path)

    def size(self, path: str) -> int:
        """Return the file size, recording ``b:PATH``. Raises ``KeyError`` when absent."""
        self._note(path)
        return self.inner.size(path)

    def _note(self, path: str) -> None:
        try:
            blob = self.inner.blob_id(path)
        except KeyError:
            blob = ""
        self.recorder.add(Kind.BLOB + path, blob)
