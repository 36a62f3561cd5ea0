"""The one small error hierarchy; the CLI maps each class to a sysexits-style exit code."""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

EX_OK = 0
EX_INPUT = 1  # bad input in the source (names file and line)
EX_USAGE = 2  # a command used wrongly (as click reports usage errors)
EX_TEMPFAIL = 75  # try again later: network, lock held, push rejected, mail not delivered
EX_CONFIG = 78  # bad configuration (names the key and the file)
EX_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell shows a process SIGINT ended
# (stdout's reader gone, ``| head``: deploybot.cli.stdio.EX_PIPE, 141 = 128 + SIGPIPE)
INTERRUPTED = "deploybot: interrupted"  # the one line a Ctrl-C prints


def one_line(what: BaseException | str | bytes) -> str:
    """Return an exception, a server reply or any text as one line for an error message:
    whitespace runs (line breaks included) folded to one space; an exception that says
    nothing gives its type name. Bytes are decoded as UTF-8 with replacement."""
    if isinstance(what, bytes):
        what = what.decode("utf-8", "replace")
    text = " ".join(str(what).split())
    if not text and isinstance(what, BaseException):
        return type(what).__name__
    return text


def holds(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc``, or an exception it was raised from or while handling (its
    ``__cause__`` and ``__context__``, all the way down), is a ``kind``: a library's
    ``BufferError`` raised while it cleaned up after a MemoryError holds the MemoryError.
    For ``MemoryError``, an extension module the loader could not map counts too
    (:func:`unmappable`): a lazy import under the build's memory cap meets it."""
    return any(
        isinstance(here, kind) or (kind is MemoryError and unmappable(here))
        for here in exception_chain(exc)
    )


_NO_ROOM_TO_LOAD = ("failed to map segment from shared object", "cannot allocate memory")
"""What glibc's dlopen(3) says when mmap(2) finds no address space (ENOMEM)."""


def unmappable(exc: BaseException) -> bool:
    """Whether ``exc`` is an ImportError of an extension module that could not be mapped
    for want of memory (``lxml/etree...so: failed to map segment from shared object``), not
    a module that is missing or broken."""
    text = str(exc).lower()
    return isinstance(exc, ImportError) and any(words in text for words in _NO_ROOM_TO_LOAD)


def exception_chain(
    exc: BaseException, links: tuple[str, ...] = ("__context__", "__cause__")
) -> Iterator[BaseException]:
    """``exc``, then what it was raised from or while handling, all the way down, each once
    (a cycle ends). ``links`` are the attributes followed, the last one first; a library's
    own (urllib3's ``reason``) may be added."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        here = todo.pop()
        if id(here) in seen:
            continue
        seen.add(id(here))
        yield here
        for name in links:
            inner = getattr(here, name, None)
            if isinstance(inner, BaseException):
                todo.append(inner)


def memory_error(exc: BaseException, running: str) -> DeploybotError:
    """What to report for ``exc``, which holds a MemoryError (:func:`holds`): the
    DeploybotError in its chain that says what ran out (a source file named by
    :func:`deploybot.render.limits.out_of_memory`; exit 1 when the file's own content needs
    too much, 75 when the machine has too little), else ``out of memory while running
    <running>`` (an :class:`OutOfMemoryError`, exit 75). The one rule for the CLI, the
    daemon's build processes and the fleet's workers: a library that fails as it cleans up
    after the MemoryError (a ``BufferError``) does not hide the file named."""
    for here in exception_chain(exc):
        if isinstance(here, DeploybotError) and holds(here, MemoryError):
            return here
    return OutOfMemoryError(f"out of memory while running {running}")


class DeploybotError(Exception):
    """Base class of every error deploybot reports to its user.

    ``exit_code`` is the process exit status the CLI uses for it.
    """

    exit_code: int = EX_INPUT


class ConfigError(DeploybotError):
    """A configuration file or key is wrong; the message names the key and the file."""

    exit_code = EX_CONFIG


class SourceError(DeploybotError):
    """Bad input in the site source.

    Args:
        message: what is wrong.
        path: the source path (relative to the source tree root), if known.
        line: the 1-based line number in ``path``, if known.
    """

    exit_code = EX_INPUT

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or ""
        if self.path and self.line is not None:
            where = f"{self.path}:{self.line}"
        return f"{where}: {self.message}" if where else self.message


class UsageError(DeploybotError):
    """A command was used in a way that cannot work (e.g. an output folder inside the source)."""

    exit_code = EX_USAGE


class TemporaryError(DeploybotError):
    """A failure that a later run may not meet: network down, lock held, and the like."""

    exit_code = EX_TEMPFAIL


class OutOfMemoryError(TemporaryError):
    """The machine ran out of memory for work whose size the limits bound: a later run,
    with memory free, may not (exit 75). The message names the source file, if any."""


class FetchError(TemporaryError):
    """The source repository could not be fetched."""


class LockHeldError(TemporaryError):
    """Another deploybot run holds the state directory's lock."""


class PublishError(TemporaryError):
    """The build commit could not be pushed (rejected, or the remote is unreachable)."""


class NotifyError(TemporaryError):
    """The commit email could not be delivered; it stays in the outbox for the next run."""


class MissingObjectError(TemporaryError):
    """A git object is missing from a repository that should hold it (a damaged repository);
    the message names the object and the repository and says what to do."""


class DamagedRepositoryError(DeploybotError):
    """A git object is missing from, or unreadable in, a repository deploybot cannot fetch
    anew (one the user named, or a mirror still damaged after a fresh fetch): waiting does
    not mend it (exit 1). The message names the object, the file that held it when known,
    the repository (absolute) and the ``git fsck`` to run."""


class DiskFullError(TemporaryError):
    """A file could not be written: no space left on its device, or the quota is used up.

    Raised for ``ENOSPC``/``EDQUOT`` (errno(3)) and sqlite's ``SQLITE_FULL`` ("database or
    disk is full"); the message names what could not be written. A later run, with room
    again, goes on where this one stopped.
    """


NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL = 13  # sqlite3.SQLITE_FULL (sqlite3.h): the module is not imported here


def is_disk_full(exc: BaseException) -> bool:
    """True for an OSError with errno ENOSPC or EDQUOT, or sqlite's SQLITE_FULL error."""
    if isinstance(exc, OSError):
        return exc.errno in NO_SPACE_ERRNOS
    if _is_sqlite_error(exc):
        code: int | None = getattr(exc, "sqlite_errorcode", None)
        return code == SQLITE_FULL
    return False


def _is_sqlite_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``sqlite3.Error``. The module is not imported for this: every
    command imports this module, and no sqlite error can have been raised in a process that
    has not imported sqlite3."""
    sqlite3 = sys.modules.get("sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)


def disk_full(exc: BaseException, what: str | object) -> DiskFullError:
    """Return the DiskFullError for ``exc`` (see :func:`is_disk_full`): "no space left on
    device to write <what>", ``what`` being e.g. a path or "the build cache <path>"."""
    reason = "disk quota exceeded" if getattr(exc, "errno", None) == errno.EDQUOT else None
    return DiskFullError(f"{reason or 'no space left on device'}: cannot write {what}")


@contextmanager
def no_space_left(state_dir: Path) -> Iterator[None]:
    """Around a whole run: a full disk in the block that no stage named is a DiskFullError
    naming the file, or the build cache (sqlite), or else ``state_dir``."""
    try:
        yield
    except Exception as exc:
        if not is_disk_full(exc):  # an OSError or sqlite3.Error of a full disk
            raise
        if _is_sqlite_error(exc):
            raise disk_full(exc, f"the build cache in {state_dir / 'cache'}") from exc
        raise disk_full(exc, getattr(exc, "filename", None) or f"into {state_dir}") from exc
