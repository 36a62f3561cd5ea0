"""Bounds on one exchange with a git server (a fetch, a push, a ref listing): a deadline on
the whole of it, and caps on what the server may send.

dulwich sets none: its sockets wait as long as the process default timeout says, for each
read (:func:`deploybot.git.repository` makes that an idle timeout), so a server sending one byte
every few seconds held a run for as long as it liked; it reads a ref advertisement of any
length into one dict (an endless one grew a fetch past 3 GB); and it takes a pack of any
size. Here, for one :class:`Exchange`:

* **the deadline** (``source.timeout``/``publish.timeout``): a watchdog timer, at the
  deadline, shuts down every socket the exchange opened (HTTP(S) connections, as the pool
  connects them: :func:`deploybot.git.http_pool.one_try_pool`; ``git://``'s) and kills its
  processes (``ssh``, a local ``git upload-pack``/``receive-pack``), which wakes the read or
  write dulwich is blocked in, wherever it is (even within an HTTP answer's headers); the
  exchange then fails with :class:`Overrun` ``DEADLINE``. A connect under way at the deadline
  ends by its socket timeout (which the caller keeps within the deadline).
* **the ref advertisement**: what the server sends before the client says what it wants
  (the ``info/refs`` answer, protocol v2's ``ls-refs`` answer, or, on one connection, what
  comes before the client's ``want`` or ``command=fetch``, or a push's commands), framed
  into pkt-lines (git's ``protocol-common.txt``), at most :data:`MAX_ADVERTISED_REFS` lines
  and :data:`MAX_ADVERTISEMENT_BYTES` bytes: ``ADVERTISEMENT``.
* **everything the server sends** (advertisement, negotiation, pack, a push's report),
  at most ``max_bytes`` (``source.max_fetch_bytes``/``publish.max_fetch_bytes``): ``SIZE``.

:func:`bound` fits a dulwich client to an exchange: every read of what the server sends
passes through :meth:`_Stream.read`, which checks the deadline and counts.
"""

from __future__ import annotations

import contextlib
import enum
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn
from urllib.parse import urlsplit

from dulwich.client import (
    AbstractHttpGitClient,
    GitClient,
    SubprocessWrapper,
    TraditionalGitClient,
)
from dulwich.protocol import Protocol

MAX_ADVERTISED_REFS = 100_000
"""Lines of a ref advertisement a server may send (one per ref, and one more per peeled
tag in protocol v0): far above any site's repository (a forge asked with protocol v2's
``ref-prefix`` sends the branch alone), and about 25 MB of dulwich's dict at most."""

MAX_ADVERTISEMENT_BYTES = 64 * 2**20
"""Bytes of a ref advertisement a server may send (64 MiB; a ref line is at most 65,520)."""

Read = Callable[[int], bytes]


class Bound(enum.Enum):
    """Which bound an exchange went past."""

    DEADLINE = "deadline"
    ADVERTISEMENT = "advertisement"
    SIZE = "size"


class Overrun(Exception):
    """An exchange went past one of its bounds; ``bound`` says which, the message how."""

    def __init__(self, bound: Bound, detail: str) -> None:
        super().__init__(detail)
        self.bound = bound


class Exchange:
    """The bounds of one exchange with one git server, as a context manager whose block is
    the exchange (the deadline runs from its start).

    Args:
        timeout: seconds the whole exchange may take.
        max_bytes: bytes the server may send in all.
    """

    def __init__(self, timeout: float, max_bytes: int) -> None:
        self.timeout, self.max_bytes = timeout, max_bytes
        self.received = 0
        self.advertised_lines = 0
        self.advertised_bytes = 0
        self._first: Overrun | None = None
        self._deadline = time.monotonic() + timeout
        self._expired = False
        self._closed = False
        self._lock = threading.Lock()
        self._stops: list[Callable[[], None]] = []
        self._held: list[socket.socket] = []
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Exchange:
        self._deadline = time.monotonic() + self.timeout
        self._timer = threading.Timer(self.timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True  # what is registered from here on is not stopped any more
            held, self._held, self._stops = self._held, [], []
        for sock in held:
            sock.close()

    def overrun(self) -> Overrun | None:
        """The first bound the exchange went past, or None. A deadline that shut the
        connection down counts, whatever dulwich then made of the broken read."""
        if self._first is None and self._expired_now():
            self._first = Overrun(Bound.DEADLINE, f"took more than {self.timeout:g} s")
        return self._first

    def check(self) -> None:
        """Raise Overrun ``DEADLINE`` once the deadline has passed."""
        if self._expired_now():
            self._fail(Bound.DEADLINE, f"took more than {self.timeout:g} s")

    def _expired_now(self) -> bool:
        return self._expired or time.monotonic() >= self._deadline

    def _fail(self, bound: Bound, detail: str) -> NoReturn:
        if self._first is None:
            self._first = Overrun(bound, detail)
        raise Overrun(self._first.bound, str(self._first))

    def _expire(self) -> None:
        with self._lock:
            self._expired = True
            stops = [] if self._closed else list(self._stops)
        for stop in stops:
            stop()

    def on_deadline(self, stop: Callable[[], None]) -> None:
        """Call ``stop`` at the deadline (at once when it has passed) to end a connection."""
        with self._lock:
            if self._closed:
                return
            expired = self._expired
            if not expired:
                self._stops.append(stop)
        if expired:
            stop()

    def connected(self, sock: socket.socket) -> None:
        """Shut the connection of ``sock`` down at the deadline (see :meth:`hold`)."""
        self.hold(sock.fileno())

    def hold(self, fd: int) -> None:
        """Shut the connection whose socket has the file descriptor ``fd`` down at the
        deadline. A duplicate of ``fd`` is held until the exchange ends: the shutdown
        reaches the connection even once TLS has taken the socket over, and never a later
        socket given the same descriptor number."""
        held = socket.socket(fileno=os.dup(fd))
        with self._lock:
            if self._closed:
                held.close()
                return
            self._held.append(held)
        self.on_deadline(lambda: _shut(held))

    def count(self, data: bytes, advertising: bool) -> None:
        """Count ``data`` (bytes the server sent); Overrun past a cap."""
        self.received += len(data)
        if self.received > self.max_bytes:
            self._fail(Bound.SIZE, f"sent more than {self.max_bytes:,} bytes")
        if advertising:
            self.advertised_bytes += len(data)
            if self.advertised_bytes > MAX_ADVERTISEMENT_BYTES:
                self._fail(
                    Bound.ADVERTISEMENT,
                    f"advertised more than {MAX_ADVERTISEMENT_BYTES:,} bytes of refs",
                )

    def advertised_line(self) -> None:
        """Count one pkt-line of a ref advertisement; Overrun past the cap."""
        self.advertised_lines += 1
        if self.advertised_lines > MAX_ADVERTISED_REFS:
            self._fail(Bound.ADVERTISEMENT, f"advertised more than {MAX_ADVERTISED_REFS:,} refs")

    def paced(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """``chunks`` (a request body being sent) with the deadline checked before each."""
        for chunk in chunks:
            self.check()
            yield chunk


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # the peer closed it already: nothing left to wake
        sock.shutdown(socket.SHUT_RDWR)


class _Stream:
    """What the server sends on one connection or in one HTTP answer: counted, and framed
    into pkt-lines while it is a ref advertisement."""

    def __init__(self, exchange: Exchange, advertising: bool, pushing: bool = False) -> None:
        self.exchange, self.advertising, self.pushing = exchange, advertising, pushing
        self._head = b""  # the length digits of a pkt-line read so far
        self._left = 0  # bytes of the current pkt-line's payload still to come

    def read(self, read: Read) -> Read:
        """``read`` checked against the exchange's deadline, its bytes counted."""

        def bounded(size: int = -1) -> bytes:
            self.exchange.check()
            try:
                data = read(size)
            except Overrun:
                raise
            except Exception:
                self.exchange.check()  # the deadline shut the connection: say so
                raise
            self.exchange.check()
            self.exchange.count(data, self.advertising)
            if self.advertising:
                self._frame(data)
            return data

        return bounded

    def write(self, write: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        """``write`` checked against the deadline; the client's ``want`` (``command=fetch``
        in protocol v2), or any command of a push, ends the advertisement."""

        def bounded(data: bytes) -> Any:
            self.exchange.check()
            if self.advertising and (self.pushing or b"want " in data or b"command=fetch" in data):
                self.advertising = False
            try:
                return write(data)
            except Exception:
                self.exchange.check()
                raise

        return bounded

    def _frame(self, data: bytes) -> None:
        i, end = 0, len(data)
        while i < end:
            if self._left:
                step = min(self._left, end - i)
                self._left -= step
                i += step
                continue
            take = 4 - len(self._head)
            self._head += data[i : i + take]
            i += take
            if len(self._head) < 4:
                return
            try:
                size = int(self._head, 16)
            except ValueError:
                size = 0  # not a pkt-line: dulwich says what is wrong
            self._head = b""
            if size > 4:  # 0000 flush, 0001 delim, 0002 response-end carry no ref
                self._left = size - 4
                self.exchange.advertised_line()


def bound(client: GitClient, exchange: Exchange) -> None:
    """Fit ``client`` (made for this one exchange) to ``exchange``: an HTTP client's every
    answer, a connection's or subprocess's every read and write, go through a
    :class:`_Stream`; subprocesses are killed at the deadline, sockets of ``git://`` shut
    down (an HTTP client's sockets come through its pool: :meth:`Exchange.connected`).
    dulwich's in-process local client is left as it is (no peer to bound)."""
    if isinstance(client, AbstractHttpGitClient):
        request = client._http_request

        def bounded_request(
            url: str,
            headers: dict[str, str] | None = None,
            data: bytes | Iterator[bytes] | None = None,
            raise_for_status: bool = True,
        ) -> tuple[Any, Read]:
            exchange.check()
            advertising = urlsplit(url).path.endswith("/info/refs") or (
                isinstance(data, bytes) and b"command=ls-refs" in data
            )
            if data is not None and not isinstance(data, bytes):
                data = exchange.paced(data)
            try:
                response, read = request(url, headers, data, raise_for_status)
            except Exception:
                exchange.check()
                raise
            return response, _Stream(exchange, advertising).read(read)

        # An instance attribute, for this one client: dulwich calls self._http_request.
        setattr(client, "_http_request", bounded_request)  # noqa: B010
    elif isinstance(client, TraditionalGitClient):
        connect = client._connect

        def bounded_connect(
            cmd: bytes, path: str | bytes, protocol_version: int | None = None
        ) -> tuple[Protocol, Callable[[], bool], Any]:
            exchange.check()
            proto, can_read, stderr = connect(cmd, path, protocol_version)
            _stop_at_deadline(exchange, proto, can_read)
            stream = _Stream(exchange, advertising=True, pushing=cmd == b"receive-pack")
            proto.read = stream.read(proto.read)
            proto.write = stream.write(proto.write)
            return proto, can_read, stderr

        setattr(client, "_connect", bounded_connect)  # noqa: B010


def _stop_at_deadline(exchange: Exchange, proto: Protocol, can_read: Callable[[], bool]) -> None:
    """Register how to end a connection dulwich made: its subprocess (``ssh``, ``git``:
    dulwich's ``SubprocessWrapper``, whose ``can_read`` is handed back) is killed; a socket
    (``git://``: the file object whose ``read`` the protocol reads with) is shut down."""
    wrapper = getattr(can_read, "__self__", None)
    if isinstance(wrapper, SubprocessWrapper):
        exchange.on_deadline(wrapper.proc.kill)
        return
    reader = getattr(proto.read, "__self__", None)
    fileno = getattr(reader, "fileno", None)
    if fileno is not None:
        with contextlib.suppress(OSError):  # not a socket: nothing to shut down
            exchange.hold(fileno())
