"""A deadline for a whole network exchange, enforced on the socket.

A socket timeout bounds each read or write: a server that answers one byte a second, or one
header line every two seconds, never trips it and holds the caller as long as it likes.
:class:`Deadline` is one end time for the whole exchange; :func:`deadline_reader` wraps a
socket so that every read first sets the socket's timeout to the time left (and fails once
none is left), and callers set it the same way before each write. CPython's TLS handshake
and ``sendall`` already apply their timeout to the whole call (``socket.sendall``: "the
socket timeout is [...] the maximum total duration to send all data", Python 3.5+).
"""

from __future__ import annotations

import io
import socket
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class DeadlineExceeded(TimeoutError):
    """The exchange's deadline passed (a TimeoutError, so libraries treat it as a timeout)."""


class Deadline:
    """The end of an exchange: ``seconds`` (> 0) from now, by ``time.monotonic``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self, cap: float | None = None) -> float:
        """Seconds left (at most ``cap`` when given), for a socket timeout.

        Raises:
            DeadlineExceeded: no time is left.
        """
        left = self.end - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"no complete answer within {self.seconds:g} s")
        return left if cap is None else min(left, cap)

    @property
    def passed(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self.end

    def bound(self, sock: socket.socket | None) -> None:
        """Set ``sock``'s timeout to the time left, before a write (or a TLS handshake)."""
        if sock is not None:
            sock.settimeout(self.left())


class _DeadlineRaw(io.RawIOBase):
    """A socket's raw reader whose every read waits at most until the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # counted by the socket, like makefile's
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int | None:
        self._sock.settimeout(self._deadline.left())
        return self._raw.readinto(buffer)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def deadline_reader(sock: socket.socket, deadline: Deadline) -> io.BufferedReader:
    """Return a buffered binary reader of ``sock`` (what ``sock.makefile("rb")`` returns)
    whose reads fail with :class:`DeadlineExceeded` (or the socket's timeout) once
    ``deadline`` has passed, however slowly the peer trickles its bytes."""
    return io.BufferedReader(_DeadlineRaw(sock, deadline))
