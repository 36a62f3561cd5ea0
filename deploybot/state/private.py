"""The state folder is private: its folders 0700, deploybot's files in it 0600.

The process umask is left alone (``git receive-pack`` into a local publish repository
writes with it, for the web server that serves it), so each file deploybot writes into the
state folder is created with its own mode, here. Light on purpose (``os`` only): the no-op
shortcut (:mod:`deploybot.pipeline.noop`) imports it.
"""

from __future__ import annotations

import os

FILE_MODE = 0o600
"""A file of deploybot's in the state folder: its owner's only."""


def create(path: str | os.PathLike[str]) -> int:
    """Open ``path`` for writing as a new file of mode :data:`FILE_MODE` (a file of that
    name, such as a temp file a killed run left, is removed first, so it never keeps an
    older mode); return the descriptor.

    Raises:
        OSError: the folder cannot be written.
    """
    _remove(path)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)


def _remove(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return  # (contextlib.suppress: an import the no-op shortcut does without)


def write_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file of mode :data:`FILE_MODE` in the
    same folder, fsynced, renamed over ``path``, then the folder fsynced. A failed write
    removes its temp file and leaves ``path`` as it was.

    Raises:
        OSError: the folder cannot be written (a full disk included: the caller says so).
    """
    name = os.fspath(path)
    folder, base = os.path.split(name)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
    try:
        with open(create(tmp), "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, name)
    except OSError:
        _remove(tmp)
        raise
    fsync_folder(folder or ".")


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``folder`` durable (fsync of the folder itself).
    Raises OSError."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
