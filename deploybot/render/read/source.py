"""The render stage's input: a tree of blobs, read from git objects or a folder.

The render stage never touches git itself; it reads a :class:`SourceTree`. ``gitutil.GitTree``
implements it over a git tree object (no checkout), :class:`DirTree` over a folder (for
``deploybot build SOURCE OUT`` previews) and :class:`MemoryTree` over a dict (for tests).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from deploybot.git import path_rules

T = TypeVar("T")


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
    """A :class:`SourceTree` over a ``{path: bytes}`` mapping. The paths in ``symlinks``
    are symlinks (their bytes are the target, as git stores one); ``submodules`` lists
    submodule paths (gitlinks: no bytes, not in :meth:`paths`)."""

    def __init__(
        self,
        files: Mapping[str, bytes],
        *,
        symlinks: Iterable[str] = (),
        submodules: Iterable[str] = (),
    ) -> None:
        self._files = dict(files)
        self._links = frozenset(symlinks) & self._files.keys()
        self._submodules = sorted(submodules)

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` is a symlink. Raises ``KeyError`` when absent."""
        if path not in self._files:
            raise KeyError(path)
        return path in self._links

    def submodules(self) -> list[str]:
        """The submodule paths, sorted."""
        return list(self._submodules)

    def is_submodule(self, path: str) -> bool:
        """Whether ``path`` is a submodule."""
        return path in self._submodules

    def paths(self) -> Iterator[str]:
        return iter(sorted(self._files))

    def read(self, path: str) -> bytes:
        return self._files[path]

    def blob_id(self, path: str) -> str:
        return git_blob_id(self._files[path])

    def size(self, path: str) -> int:
        return len(self._files[path])


class DirTree:
    """A :class:`SourceTree` over a folder on disk, read as git would store it.

    Nothing outside ``root`` is ever read: a symlink is never followed, and is a file whose
    bytes are its target (as a git tree stores a symlink; a folder symlink too), and every
    folder on a path is opened with ``O_NOFOLLOW``. ``.git`` (the repository itself) is
    skipped, and a folder below the root holding a ``.git`` (a submodule's checkout, or
    another repository) is a submodule (:meth:`submodules`), as git stores it: none of its
    files is listed. FIFOs, sockets and devices are skipped (git does not store them
    either). Paths are checked by :mod:`deploybot.git.path_rules`. ``skip``: a folder below
    the root (``/``-separated) not listed either, as Jekyll skips its destination:
    ``deploybot build src src/_site`` writes there. A tree is one build's: a file's blob id
    and whether it is a symlink are what it was when first asked (or listed).

    Raises:
        SourceError: from :meth:`paths`, :meth:`read` and :meth:`blob_id` when a name is
            refused (``..``, ``.GIT``, control characters, not UTF-8); the message names it.
    """

    def __init__(self, root: Path, skip: str | None = None) -> None:
        self.root = Path(root)
        self.skip = skip
        self._submodules: list[str] | None = None
        # A tree is one build's: a build asks each path several times whether it is a
        # symlink, for its blob id, its size and its bytes (reading, then rendering; the
        # layouts with every post), so what the listing saw, the blob ids and the last few
        # small files read are kept (each ask was 2 to 4 system calls: a tenth of a folder
        # build's time).
        self._listed: dict[str, bool] = {}  # listed path -> whether it is a symlink
        self._blobs: dict[str, str] = {}
        self._recent: dict[str, bytes] = {}  # the last _RECENT files read, oldest first

    def paths(self) -> Iterator[str]:
        found: list[str] = []
        self._submodules = []
        self._listed = {}
        self._scan(self.root, "", found)
        return iter(sorted(found))

    def _scan(self, folder: Path, prefix: str, found: list[str]) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name == ".git":
                    continue
                path_rules.check_name(entry.name, prefix)
                path = f"{prefix}/{entry.name}" if prefix else entry.name
                if path == self.skip:
                    continue
                link = entry.is_symlink()
                if link or entry.is_file(follow_symlinks=False):
                    found.append(path)
                    self._listed[path] = link
                elif entry.is_dir(follow_symlinks=False):
                    if os.path.lexists(os.path.join(entry.path, ".git")):
                        assert self._submodules is not None
                        self._submodules.append(path)
                    else:
                        self._scan(Path(entry.path), path, found)

    def submodules(self) -> list[str]:
        """The folders holding a ``.git`` below the root, sorted (lists the tree)."""
        if self._submodules is None:
            self.paths()
        return sorted(self._submodules or ())

    def is_submodule(self, path: str) -> bool:
        """Whether ``path`` is a folder holding a ``.git`` (see :meth:`submodules`)."""
        return path in self.submodules()

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` is a symlink (not followed), as the listing (:meth:`paths`) saw
        it. Raises ``KeyError`` when absent."""
        link = self._listed.get(path)
        return self._at(path, _is_link) if link is None else link

    def read(self, path: str) -> bytes:
        recent = self._recent
        data = recent.pop(path, None)
        if data is None:
            data = self._at(path, _read_entry)
            if len(data) > _RECENT_BYTES:
                return data
            if len(recent) >= _RECENT:
                del recent[next(iter(recent))]
        recent[path] = data
        return data

    def _at(self, path: str, action: Callable[[int, str], T]) -> T:
        """Run ``action(folder fd, name)`` on ``path``'s entry, reached without following a
        symlink on the way; ``KeyError`` when it is missing or cannot be reached."""
        path_rules.check_path(path)
        *folders, name = path.split("/")
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise KeyError(path) from exc
        try:
            for folder in folders:
                # O_NOFOLLOW: a symlinked folder on the way is not entered (ELOOP).
                inner = os.open(folder, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
            return action(fd, name)
        except OSError as exc:  # missing, not a folder, a symlink on the way, unreadable
            raise KeyError(path) from exc
        finally:
            os.close(fd)

    def blob_id(self, path: str) -> str:
        found = self._blobs.get(path)
        if found is None:
            found = self._blobs[path] = git_blob_id(self.read(path))
        return found

    def size(self, path: str) -> int:
        data = self._recent.get(path)
        return self._at(path, _entry_size) if data is None else len(data)


_RECENT = 8  # files kept by a DirTree (the last read: a post's and its layouts)
_RECENT_BYTES = 1 << 18  # and only files up to this size (bytes): at most 2 MiB in all
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _is_link(folder_fd: int, name: str) -> bool:
    return stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode)


def _entry_size(folder_fd: int, name: str) -> int:
    """Return the size in bytes of what :func:`_read_entry` would return, without reading."""
    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return len(os.fsencode(os.readlink(name, dir_fd=folder_fd)))
    if not stat.S_ISREG(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
    return info.st_size


def _read_entry(folder_fd: int, name: str) -> bytes:
    """Return the bytes of ``name`` in the open folder: a regular file's content or a
    symlink's target. Raises ``OSError`` for anything else (``EISDIR``, a FIFO…)."""
    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return os.fsencode(os.readlink(name, dir_fd=folder_fd))
    if not stat.S_ISREG(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder_fd)
    with os.fdopen(fd, "rb") as file:
        return file.read()
