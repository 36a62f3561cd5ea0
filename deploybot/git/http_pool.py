"""The pool manager of HTTP(S) git transports: dulwich's own, with each request tried once.

Its own module so that importing :mod:`deploybot.git.repository` does not load urllib3, ``ssl``
and ``http.client`` (milliseconds a no-op run does not spend) for runs without an
``http(s)://`` remote.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import urllib3
from dulwich.client import default_urllib3_manager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from deploybot.git.remote import MAX_REDIRECTS

_ONE_TRY = urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=MAX_REDIRECTS)
"""HTTP(S) requests to a git server are never tried again (redirects are still followed):
urllib3's default (3 more tries) would multiply :data:`IDLE_TIMEOUT` by four for a server
that accepts and never answers; the next run, or the daemon's backoff, retries instead."""


class _OneTryPoolManager(urllib3.PoolManager):
    """A pool manager whose requests are tried once (see :data:`_ONE_TRY`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, retries=_ONE_TRY, **kwargs)


class _OneTryProxyManager(urllib3.ProxyManager):
    """The same through an ``http(s)_proxy``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, retries=_ONE_TRY, **kwargs)


OnConnect = Callable[[socket.socket], None]
"""Called with the socket of each connection a pool opens (plain TCP, before TLS)."""


def one_try_pool(url: str, on_connect: OnConnect | None = None) -> urllib3.PoolManager | None:
    """For an ``http(s)://`` URL, the pool manager dulwich would make (its proxy, CA and
    user-agent rules, ``dulwich.client.default_urllib3_manager``) but trying each request
    once; None for other URLs. ``on_connect`` (optional) gets the socket of every
    connection it opens, proxies' included, as soon as it is connected: before TLS, the
    request or the answer's first byte (:mod:`deploybot.git.bounds` shuts it down at a
    deadline, whatever is under way)."""
    if not url.lower().startswith(("http://", "https://")):
        return None
    pool = default_urllib3_manager(
        None,
        pool_manager_cls=_OneTryPoolManager,
        proxy_manager_cls=_OneTryProxyManager,
        base_url=url,
    )
    assert isinstance(pool, urllib3.PoolManager)  # no auth callbacks: not wrapped
    if on_connect is not None:
        pool.pool_classes_by_scheme = {
            "http": _reporting_pool(HTTPConnectionPool, HTTPConnection, on_connect),
            "https": _reporting_pool(HTTPSConnectionPool, HTTPSConnection, on_connect),
        }
    return pool


def _reporting_pool(
    pool_cls: type[HTTPConnectionPool], conn_cls: type[HTTPConnection], on_connect: OnConnect
) -> type[HTTPConnectionPool]:
    """``pool_cls`` whose connections (``conn_cls``) hand each new socket to ``on_connect``."""

    class Reporting(conn_cls):  # type: ignore[valid-type,misc]
        def _new_conn(self) -> socket.socket:
            sock: socket.socket = super()._new_conn()
            on_connect(sock)
            return sock

    return type(f"Reporting{pool_cls.__name__}", (pool_cls,), {"ConnectionCls": Reporting})
