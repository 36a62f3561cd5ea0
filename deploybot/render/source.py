"""The render stage's input: a tree of blobs, read from git objects or a folder.

The render stage never touches git itself; it reads a :class:`SourceTree`. ``gitutil.GitTree``
implements it over a git tree object (no checkout), :class:`DirTree` over a folder (for
``deploybot build SOURCE OUT`` previews) and :class:`MemoryTree` over a dict (for tests).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable


def git_blob_id(data: bytes) -> str:
    """Return git's blob id (40 hex digits, SHA-1 of ``blob <len>\\0<data>``) for ``data``."""
    header = b"blob %d\x00" % len(data)
    return hashlib.sha1(header + data).hexdigest()


@runtime_checkable
class SourceTree(Protocol):
    """A read-only tree of files. Paths are POSIX, relative, without a leading ``/``."""

    def paths(self) -> Iterator[str]:
        """Yield every file path in the tree (regular files and symlinks), sorted."""
        ...

    def read(self, path: str) -> bytes:
        """Return the file's bytes. Raises ``KeyError`` when ``path`` is not in the tree."""
        ...

    def blob_id(self, path: str) -> str:
        """Return the git blob id (40 hex) of ``path``. Raises ``KeyError`` when absent."""
        ...

    def size(self, path: str) -> int:
        """Return the file's size in bytes, without reading it where the tree can tell.
        Raises ``KeyError`` when ``path`` is not in the tree."""
        ...


class MemoryTree:
    """A :class:`SourceTree` over a ``{path: bytes}`` mapping."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = dict(files)

    def paths(self) -> Iterator[str]:
        return iter(sorted(self._files))

    def read(self, path: str) -> bytes:
        return self._files[path]

    def blob_id(self, path: str) -> str:
        return git_blob_id(self._files[path])

    def size(self, path: str) -> int:
        return len(self._files[path])


class DirTree:
    """A :class:`SourceTree` over a folder on disk; ``.git`` folders are skipped."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def paths(self) -> Iterator[str]:
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            rel = Path(dirpath).relative_to(self.root)
            for name in filenames:
                found.append((rel / name).as_posix() if str(rel) != "." else name)
        return iter(sorted(found))

    def read(self, path: str) -> bytes:
        full = self.root / path
        if not full.is_file():
            raise KeyError(path)
        return full.read_bytes()

    def blob_id(self, path: str) -> str:
        return git_blob_id(self.read(path))

    def size(self, path: str) -> int:
        full = self.root / path
        if not full.is_file():
            raise KeyError(path)
        return full.stat().st_size
