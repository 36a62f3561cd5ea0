"""Dependency recording: what each output was made from, captured as the render reads it.

Nothing here is a hand-kept list. The objects the templates and the Liquid layer see record
every read into the current :class:`Recorder` frame:

- :class:`TrackingLoader` wraps the Jinja2 loader: every ``get_template`` (layouts, and what
  they ``extends``/``include``/``import``, also on Jinja2's cache hits) records
  ``t:NAME`` with a fingerprint of the template source ('' when it does not exist).
- :class:`TrackedDict` is a ``dict`` whose reads record ``PREFIX+KEY``: ``page`` (``p:``),
  ``site`` (``s:``) and each post of ``site.posts`` (``k:``, a key read on *some* post).
  Whole-mapping reads (iteration, ``repr``) record ``PREFIX*``.
- :class:`TrackedPosts` is ``site.posts``: any use of the list (iteration, length, index)
  records ``o`` (the post order and membership).
- :class:`TrackingTree` wraps the source tree: ``read``/``blob_id`` record ``b:PATH`` and
  ``paths()`` records ``L`` (the list of paths).

Dependency keys are plain strings, so the cache can index them; each maps to a fingerprint
(:func:`fingerprint`) of the value read, or ``""`` when only the fact of the read matters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import jinja2

from deploybot.render.source import SourceTree

ORDER = "o"
"""Key: the visible posts, their order (``site.posts``)."""
PATHS = "L"
"""Key: the list of paths in the source tree."""
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


_ABSENT = object()


class TrackedDict(dict[str, Any]):
    """A ``dict`` recording ``prefix + key`` on reads. Same ``repr`` and equality as a dict.

    ``page`` values are recorded with a fingerprint (so a changed neighbour can be checked
    by value); other prefixes record keys only.
    """

    def __init__(
        self, data: dict[str, Any], recorder: Recorder, prefix: str, with_value: bool
    ) -> None:
        super().__init__(data)
        self._recorder = recorder
        self._prefix = prefix
        self._with_value = with_value

    def _note(self, key: object) -> None:
        if isinstance(key, str):
            value = dict.get(self, key, _ABSENT)
            fp = fingerprint(value) if self._with_value and value is not _ABSENT else ""
            self._recorder.add(self._prefix + key, fp)

    def _note_all(self) -> None:
        fp = fingerprint(list(dict.items(self))) if self._with_value else ""
        self._recorder.add(self._prefix + WHOLE, fp)

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

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


class TrackedPosts(list[TrackedDict]):
    """``site.posts``: a list of post mappings (``k:`` keys) whose use records ``o``."""

    def __init__(self, posts: list[TrackedDict], recorder: Recorder) -> None:
        super().__init__(posts)
        self._recorder = recorder

    def __iter__(self) -> Iterator[TrackedDict]:
        self._recorder.add(ORDER)
        return super().__iter__()

    def __len__(self) -> int:
        self._recorder.add(ORDER)
        return super().__len__()

    def __getitem__(self, index: Any) -> Any:
        self._recorder.add(ORDER)
        return super().__getitem__(index)

    def __repr__(self) -> str:
        self._recorder.add(ORDER)
        return super().__repr__()


class LazySite(TrackedDict):
    """The ``site`` mapping (``s:`` keys); ``posts`` is made by ``make_posts`` on first read,
    so a build that renders no listing never loads every post."""

    def __init__(
        self,
        data: dict[str, Any],
        recorder: Recorder,
        make_posts: Callable[[], list[dict[str, Any]]],
    ) -> None:
        super().__init__({**data, "posts": _ABSENT}, recorder, "s:", False)
        self._make_posts = make_posts

    def _load(self) -> None:
        if dict.get(self, "posts") is _ABSENT:
            posts = [TrackedDict(p, self._recorder, "k:", False) for p in self._make_posts()]
            dict.__setitem__(self, "posts", TrackedPosts(posts, self._recorder))

    def __getitem__(self, key: str) -> Any:
        if key == "posts":
            self._load()
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == "posts":
            self._load()
        return super().get(key, default)

    def _note_all(self) -> None:
        self._load()
        super()._note_all()


class TrackingLoader(jinja2.BaseLoader):
    """Wraps a Jinja2 loader; every template lookup records ``t:NAME`` -> source fingerprint.

    Jinja2 calls the ``uptodate`` callable on each cache hit (``auto_reload``, the default),
    so reuse of a cached layout is recorded too. A missing template records ``''``.
    """

    def __init__(self, inner: jinja2.BaseLoader, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        """Return the inner loader's ``(source, filename, uptodate)``, recording the read.

        Raises ``jinja2.TemplateNotFound`` as the inner loader does.
        """
        key = "t:" + template
        try:
            source, filename, _ = self.inner.get_source(environment, template)
        except jinja2.TemplateNotFound:
            self.recorder.add(key, "")
            raise
        fp = fingerprint(source)
        self.recorder.add(key, fp)

        def uptodate() -> bool:
            self.recorder.add(key, fp)
            return True

        return source, filename, uptodate

    def list_templates(self) -> list[str]:
        """Return the inner loader's template names."""
        return self.inner.list_templates()


class TrackingTree:
    """A :class:`SourceTree` recording ``b:PATH`` (blob id) on reads and ``L`` on listings."""

    def __init__(self, inner: SourceTree, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def paths(self) -> Iterator[str]:
        """Yield the inner tree's paths, recording ``L``."""
        self.recorder.add(PATHS)
        return self.inner.paths()

    def read(self, path: str) -> bytes:
        """Return the file's bytes, recording ``b:PATH``. Raises ``KeyError`` when absent."""
        self._note(path)
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the blob id, recording ``b:PATH``. Raises ``KeyError`` when absent."""
        self._note(path)
        return self.inner.blob_id(path)

    def _note(self, path: str) -> None:
        try:
            blob = self.inner.blob_id(path)
        except KeyError:
            blob = ""
        self.recorder.add("b:" + path, blob)
