"""Output to the systemd journal: every line starts with its syslog priority, ``<N>``.

journald reads a ``<N>`` at the start of each line of a service's stdout and stderr as the
line's priority (sd-daemon(3): ``<3>`` error, ``<4>`` warning, ``<6>`` info, ``<7>``
debug); a line without one gets the unit's default, info. So under systemd every line any
deploybot command writes starts with one: its own priority for a log record
(:mod:`deploybot.support.logs`), :data:`INFO` for what a command prints on stdout,
:data:`WARNING` for what it says on stderr as it runs, :data:`ERR` for its error line, a
traceback and a usage error. A line can then never take the priority its text starts
with (a ref name, a commit subject ``<0>...``: journald would show it as an emergency).

Which stream is the journal: systemd sets ``JOURNAL_STREAM`` to ``<device>:<inode>`` of the
socket it connects stdout and stderr to; a stream is the journal when its own ``fstat``
matches (systemd.exec(5): the variable is inherited by whatever a service runs, with its
output maybe in a pipe, so that it is set is not enough). journald ends a line at a line
feed and at a NUL: both start a new one here.

This module imports nothing beyond the interpreter's own start (``deploybot run-once``'s
no-op answer uses it).
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False  # not typing's: the no-op run-once imports this module before it exits
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

ERR, WARNING, INFO, DEBUG = 3, 4, 6, 7
_BREAKS = (b"\n", b"\0")


def is_journal(fd: int, environ: Mapping[str, str] = os.environ) -> bool:
    """True when the file descriptor ``fd`` is the journal stream ``JOURNAL_STREAM``
    names (the same device and inode); False when the variable is unset, malformed, or
    names another file, or ``fd`` is closed."""
    device, colon, inode = environ.get("JOURNAL_STREAM", "").partition(":")
    if not colon or not device.isdigit() or not inode.isdigit():
        return False
    try:
        stat = os.fstat(fd)
    except OSError:
        return False
    return (stat.st_dev, stat.st_ino) == (int(device), int(inode))


class JournalStream(io.RawIOBase):
    """A binary stream over ``raw`` (the journal) that starts every line written to it
    with ``<priority>`` (:attr:`priority`, changed by :func:`priority`); safe across
    threads, each write passed on and flushed at once."""

    def __init__(self, raw: IO[bytes], priority: int) -> None:
        import threading  # here: a command off systemd never loads it for this module

        super().__init__()
        self.raw = raw
        self.priority = priority
        self._line_start = True
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        """Write ``data`` (bytes-like), each line started with the priority; returns its length."""
        data = bytes(data)
        with self._lock:
            prefix = b"<%d>" % self.priority
            out = bytearray()
            for line in _lines(data):
                if self._line_start:
                    out += prefix
                out += line
                self._line_start = line.endswith(_BREAKS)
            self.raw.write(bytes(out))
            self.raw.flush()
        return len(data)

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def isatty(self) -> bool:
        return False


def _lines(data: bytes) -> list[bytes]:
    """``data`` cut after each line feed and each NUL (journald's line ends), in order."""
    out = []
    pos, next_lf, next_nul = 0, data.find(b"\n"), data.find(b"\0")
    while pos < len(data):
        ends = [e for e in (next_lf, next_nul) if e != -1]
        if not ends:
            out.append(data[pos:])
            break
        end = min(ends) + 1
        out.append(data[pos:end])
        pos = end
        if next_lf != -1 and next_lf < pos:
            next_lf = data.find(b"\n", pos)
        if next_nul != -1 and next_nul < pos:
            next_nul = data.find(b"\0", pos)
    return out


def install() -> None:
    """Make ``sys.stdout`` (:data:`INFO`) and ``sys.stderr`` (:data:`ERR`, what a command
    says before it runs: a usage error) start each line with its priority, each when it
    is the journal (:func:`is_journal`). Idempotent; a stream that is not the journal is
    left as it is."""
    if "JOURNAL_STREAM" not in os.environ:
        return
    for name, level in (("stdout", INFO), ("stderr", ERR)):
        stream = getattr(sys, name)
        if stream is None or isinstance(getattr(stream, "buffer", None), JournalStream):
            continue
        try:
            fd = stream.fileno()
        except (OSError, ValueError, AttributeError):
            continue
        if not is_journal(fd) or not hasattr(stream, "buffer"):
            continue
        stream.flush()
        # typeshed wants a buffered stream; a TextIOWrapper needs only write() and flush().
        journal: Any = JournalStream(stream.buffer, level)
        wrapped = io.TextIOWrapper(
            journal, encoding=stream.encoding, errors=stream.errors, write_through=True
        )
        setattr(sys, name, wrapped)


class priority:  # lower case: used as a function, `with journal.priority(sys.stderr, ERR):`
    """Within the ``with`` block, lines written to ``stream`` start with ``<level>``, when
    ``stream`` is the journal (made so by :func:`install`); else nothing changes."""

    def __init__(self, stream: IO[str] | Any, level: int) -> None:
        buffer = getattr(stream, "buffer", None)
        self.stream = stream
        self.target = buffer if isinstance(buffer, JournalStream) else None
        self.level = level
        self.before = level

    def __enter__(self) -> None:
        if self.target is not None:
            self.stream.flush()
            self.before, self.target.priority = self.target.priority, self.level

    def __exit__(self, *exc: object) -> None:
        if self.target is not None:
            self.stream.flush()
            self.target.priority = self.before


def is_installed(stream: IO[str] | Any) -> bool:
    """True when ``stream`` starts each line with a priority (:func:`install` made it so)."""
    return isinstance(getattr(stream, "buffer", None), JournalStream)


def syslog_priority(levelno: int) -> int:
    """The syslog priority of a :mod:`logging` level: CRITICAL 2, ERROR 3, WARNING 4,
    INFO 6, DEBUG 7 (a level between two takes the lower's)."""
    for floor, level in ((50, 2), (40, ERR), (30, WARNING), (20, INFO)):
        if levelno >= floor:
            return level
    return DEBUG
