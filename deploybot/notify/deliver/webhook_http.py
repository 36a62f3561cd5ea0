"""requests with one deadline for a whole request (used by the webhook channel).

requests' ``timeout`` applies to the connect and to each read, so a server that sends one
header line every two seconds keeps a POST going forever; urllib3's ``Timeout(total=...)``
only shortens the read timeout once (it is still per read). Here the responses that
requests' urllib3 connections make (``http.client.HTTPResponse``, which reads the status
line, the headers and the body) read through :func:`deploybot.support.deadline.deadline_reader`, and
each write sets the socket's timeout to what is left, so
:class:`deploybot.support.deadline.Deadline` bounds the whole exchange. Everything else (proxies
from the environment, certificates, errors) is requests' own.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from deploybot.support.deadline import Deadline, deadline_reader

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

# The deadline of the request running in this thread (requests runs it in the caller's).
_DEADLINE: ContextVar[Deadline | None] = ContextVar("deploybot_http_deadline", default=None)


class _Response(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        deadline = _DEADLINE.get()
        if deadline is not None:
            self.fp.close()
            self.fp = deadline_reader(sock, deadline)


class _Sending:
    """Connection mix-in: connect and every write get at most the time left."""

    sock: socket.socket | None
    timeout: Any

    def connect(self) -> None:
        deadline = _DEADLINE.get()
        if deadline is not None:
            self.timeout = deadline.left(self.timeout if isinstance(self.timeout, float) else None)
        super().connect()  # type: ignore[misc]

    def send(self, data: ReadableBuffer | Any) -> None:
        deadline = _DEADLINE.get()
        if deadline is not None:
            deadline.bound(self.sock)
        super().send(data)  # type: ignore[misc]


class _HTTPConnection(_Sending, HTTPConnection):
    response_class = _Response


class _HTTPSConnection(_Sending, HTTPSConnection):
    response_class = _Response


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class _Adapter(HTTPAdapter):
    """requests' adapter, with the pools above for direct and HTTP-proxied requests."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):  # SOCKS pools make their own connections
            manager.pool_classes_by_scheme = _POOLS
        return manager


@contextmanager
def bounded_session(deadline: Deadline) -> Iterator[requests.Session]:
    """A requests session whose requests (in this thread, inside the ``with``) end by
    ``deadline``: connect, send and read all stop when it passes, with a requests
    ``Timeout``/``ConnectionError``. Closed on exit."""
    session = requests.Session()
    adapter = _Adapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    token = _DEADLINE.set(deadline)
    try:
        yield session
    finally:
        _DEADLINE.reset(token)
        session.close()
