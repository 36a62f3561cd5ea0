"""What the engine writes to and reports: output sinks, the build report, a one-source view
of a tree, and the microsecond clock the cache keys dates by."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Protocol

from deploybot.git import path_rules
from deploybot.render.limits import site_too_large
from deploybot.render.links.extract import PageLinks
from deploybot.render.links.report import LinkReport
from deploybot.render.model import EPOCH, RenderWarning
from deploybot.render.read.siteconfig import CONFIG_PATH
from deploybot.render.read.source import SourceTree
from deploybot.support.errors import SourceError


class NeedFullBuild(Exception):
    """An incremental build cannot tell what changed; the message says why."""


class OutputSink(Protocol):
    """Where outputs go. Paths are the publish tree's (POSIX, relative)."""

    def write(self, path: str, data: bytes) -> None:
        """Store ``data`` as the output ``path``."""
        ...

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Store the source blob ``blob_id`` as ``path``; ``read()`` gives its bytes when
        the sink does not have the blob already."""
        ...

    def delete(self, path: str) -> None:
        """Remove the output ``path`` (no error when absent)."""
        ...


class MemorySink:
    """An :class:`OutputSink` over a ``{path: bytes}`` dict (tests, previews)."""

    def __init__(self, base: Mapping[str, bytes] | None = None) -> None:
        self.files: dict[str, bytes] = dict(base or {})

    def write(self, path: str, data: bytes) -> None:
        """Set ``files[path]``."""
        self.files[path] = data

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Set ``files[path]`` to ``read()``."""
        self.write(path, read())

    def delete(self, path: str) -> None:
        """Remove ``files[path]``."""
        self.files.pop(path, None)


RAW_BYTES = 16 << 20
"""The output a :class:`PackedSink` keeps uncompressed (bytes): more than half of a
1,000-post site's. At 48 MiB a build near its memory limit ran out while it rendered a post
(exit 1, the post blamed) instead of in the feeds after it (exit 75: tests/test_out_of_memory.py),
for a twentieth of the CPU time at most."""


class PackedSink(Mapping[str, bytes]):
    """An :class:`OutputSink` keeping outputs in memory, and copies of source blobs as the
    means to read them, until they are read back as a mapping of ``{path: bytes}``
    (``deploybot build`` writes them out only once the whole build succeeded). The first
    ``raw_bytes`` of output are kept as they are; past them, zlib-compressed (rendered HTML
    packs to about a tenth), so a 10k-post site's output stays in tens of megabytes while
    a small site's pays no compression (at 1,000 posts of the bench, 28 MB: compressing
    and expanding it was a twentieth of the build's CPU time). A static file is read from
    the source again when it is looked up (the source must still be open then)."""

    def __init__(self, raw_bytes: int = RAW_BYTES) -> None:
        self._files: dict[str, bytes | Callable[[], bytes]] = {}
        self._raw: dict[str, bytes] = {}  # outputs kept as they are
        self._room = raw_bytes  # how many more bytes may be kept as they are

    def write(self, path: str, data: bytes) -> None:
        """Keep ``data`` as ``path`` (compressed once the raw room is used)."""
        self.delete(path)
        if len(data) <= self._room:
            self._room -= len(data)
            self._raw[path] = data
        else:
            self._files[path] = zlib.compress(data, 1)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Keep ``read`` as the way to ``path``'s bytes."""
        self.delete(path)
        self._files[path] = read

    def delete(self, path: str) -> None:
        """Forget ``path``."""
        raw = self._raw.pop(path, None)
        if raw is not None:
            self._room += len(raw)
        self._files.pop(path, None)

    def __getitem__(self, path: str) -> bytes:
        raw = self._raw.get(path)
        if raw is not None:
            return raw
        kept = self._files[path]
        return kept() if callable(kept) else zlib.decompress(kept)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted([*self._files, *self._raw]))

    def __len__(self) -> int:
        return len(self._files) + len(self._raw)


class CheckedSink:
    """An :class:`OutputSink` that refuses output paths :mod:`deploybot.git.path_rules` refuses
    (``..``, ``.git``, control characters…) before they reach ``inner``, and rendered
    output past ``max_bytes`` in all (``None``: no limit; copies of source blobs do not
    count).

    Raises ``SourceError`` naming the path from :meth:`write`, :meth:`copy` and
    :meth:`delete`; nothing is passed on for that path.
    """

    def __init__(self, inner: OutputSink, max_bytes: int | None = None) -> None:
        self.inner = inner
        self.max_bytes = max_bytes
        self.written = 0

    def write(self, path: str, data: bytes) -> None:
        """Pass ``write`` on once ``path`` is checked and ``data`` fits the limit."""
        path_rules.check_path(path, "output path")
        self.written += len(data)
        if self.max_bytes is not None and self.written > self.max_bytes:
            raise SourceError(site_too_large(self.max_bytes), path)
        self.inner.write(path, data)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Pass ``copy`` on once ``path`` is checked."""
        self.inner.copy(path_rules.check_path(path, "output path"), blob_id, read)

    def delete(self, path: str) -> None:
        """Pass ``delete`` on once ``path`` is checked."""
        self.inner.delete(path_rules.check_path(path, "output path"))


@dataclasses.dataclass(frozen=True)
class BuildReport:
    """What a build did.

    Attributes:
        full: whether it was a full build.
        reason: why it was full ('' for an incremental build).
        rendered: the producers that ran (source paths, or ``:feeds`` etc.).
        warnings: as :attr:`~deploybot.render.model.SiteBuild.warnings`.
        timezone: the site's IANA timezone.
        waiting: the earliest date (aware, UTC) of a post or collection document held back
            by the future cut-off, when the cut-off follows the clock (not ``future: true``
            nor ``_config.yml``'s ``time``): a build after it publishes more. ``None``
            when nothing waits.
    """

    full: bool
    reason: str
    rendered: frozenset[str]
    warnings: tuple[RenderWarning, ...]
    timezone: str
    waiting: datetime | None = None
    links: LinkReport | None = None

    @property
    def to_tell(self) -> tuple[RenderWarning, ...]:
        """The warnings a publishing run tells: a full build's all; an incremental
        build's without those about the settings (naming ``_config.yml``): they did
        not change (a changed ``_config.yml`` is built in full), and the full build
        that read them told them, so cron does not mail them with every publish."""
        if self.full:
            return self.warnings
        return tuple(w for w in self.warnings if w.path != CONFIG_PATH)


@dataclasses.dataclass(frozen=True)
class RenderedSource:
    """One post's, document's or page's render, before anything is stored (a render
    worker's result).

    Attributes:
        outputs: ``(output path, bytes)`` in the order written (a paginated index: several).
        content: the content HTML (a post's for the feeds and listings, a page's for
            ``site.pages``: its first output's).
        deps: the dependencies the render read (``{key: fingerprint}``,
        :mod:`deploybot.render.engine.deps`). warnings: the render's warnings.
        links: the links of its HTML outputs by output path, when a render worker parsed
            them (:meth:`deploybot.render.engine.full.Engine.links_of`); empty otherwise
            (the link check, if on, parses the pages as they are written).

        packed: ``content`` as the build cache stores it
            (:func:`deploybot.render.engine.cache.pack_text`), in its place (``content`` is
            ``None`` then) when a render worker sends it: a tenth of the text to send, and
            the parent need not compress it.
    """

    outputs: list[tuple[str, bytes]]
    content: str | None
    deps: dict[str, str]
    warnings: list[RenderWarning]
    links: dict[str, PageLinks] = dataclasses.field(default_factory=dict)
    packed: bytes | None = None


class SubsetTree:
    """A :class:`SourceTree` showing only ``paths`` of ``inner`` (to read one source)."""

    def __init__(self, inner: SourceTree, paths: Iterable[str]) -> None:
        self.inner = inner
        self._paths = sorted(paths)

    def paths(self) -> Iterator[str]:
        """Yield the chosen paths, sorted."""
        return iter(self._paths)

    def read(self, path: str) -> bytes:
        """Return the inner tree's bytes. Raises ``KeyError`` when absent."""
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the inner tree's blob id. Raises ``KeyError`` when absent."""
        return self.inner.blob_id(path)

    def size(self, path: str) -> int:
        """Return the inner tree's file size. Raises ``KeyError`` when absent."""
        return self.inner.size(path)


def micros(moment: datetime) -> int:
    """Return an aware ``moment`` as whole microseconds since the epoch (exact)."""
    return (moment - EPOCH) // timedelta(microseconds=1)
