"""A source tree that refuses files over ``[render] max_file_bytes`` before reading them
(:mod:`deploybot.render.limits`)."""

from __future__ import annotations

from collections.abc import Iterator

from deploybot.render.read.source import SourceTree
from deploybot.support.errors import SourceError


def check_file_size(tree: SourceTree, path: str, limit: int) -> None:
    """Raise ``SourceError`` naming ``path`` when the file is larger than ``limit`` bytes
    (``KeyError`` when it is not in ``tree``)."""
    size = tree.size(path)
    if size > limit:
        raise SourceError(f"{size:,} bytes, more than render.max_file_bytes ({limit:,})", path)


class LimitedTree:
    """A :class:`~deploybot.render.read.source.SourceTree` whose :meth:`read` refuses files over
    ``max_file_bytes`` (``SourceError`` naming the path) before reading them."""

    def __init__(self, inner: SourceTree, max_file_bytes: int) -> None:
        self.inner = inner
        self.max_file_bytes = max_file_bytes

    def paths(self) -> Iterator[str]:
        """Yield the inner tree's paths."""
        return self.inner.paths()

    def read(self, path: str) -> bytes:
        """Return the file's bytes. Raises ``KeyError`` when absent, ``SourceError`` when
        it is larger than the limit."""
        check_file_size(self.inner, path, self.max_file_bytes)
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the inner tree's blob id. Raises ``KeyError`` when absent."""
        return self.inner.blob_id(path)

    def size(self, path: str) -> int:
        """Return the inner tree's file size. Raises ``KeyError`` when absent."""
        return self.inner.size(path)
