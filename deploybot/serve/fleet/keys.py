"""The fleet's Redis keys and queue names, and the connection to Redis.

Every key deploybot writes starts with ``deploybot:`` (RQ's own start with ``rq:``)::

    deploybot:sites              hash  site -> the shared queue its builds go to
    deploybot:site:<site>        hash  the site's last result (see FleetStore.release)
    deploybot:pending:<site>     JSON  the wanted job (a Want): one per site, coalesced
    deploybot:building:<site>    JSON  the Want the lease holder took (restored if it dies)
    deploybot:lease:<site>       str   the holder's token "<worker>/<instance>/<random>",
                                       with a TTL the holder renews
    deploybot:files:<site>       hash  the shared part of the site's state directory
    deploybot:queued:<site>      str   the id of the RQ job that will take the pending Want
    deploybot:queued-at          zset  site -> when that job was queued (Unix s)
    deploybot:active             set   sites with a building record (checked for expiry)
    deploybot:delayed            zset  site -> when to want it again (backoff, outbox retry)
    deploybot:posts-due          zset  site -> when its first held-back post comes due
    deploybot:worker:<worker>    str   the running process's instance id, while its
                                       heartbeat renews it (TTL queue.heartbeat_timeout)
    deploybot:workers            hash  worker -> its last heartbeat (Unix s)
    deploybot:lease-log          stream  acquired / released / expired, per site
    deploybot:stats              hash  counters (expired leases)

Queues (RQ): the shared one of each site (``[queue] name``, default ``deploybot``) and one
per worker, ``deploybot@<worker>``, where a site's builds wait for the worker that built it
last (affinity).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import redis

from deploybot.config.schema import QueueConfig
from deploybot.support.errors import ConfigError, one_line
from deploybot.support.redact import redact_url, register_secret

Client = Any
"""A ``redis.Redis`` client (and ``Pipe`` one of its pipelines). Typed as Any: redis-py
annotates every command as returning ``Awaitable[Any] | Any`` (its sync and async clients
share those annotations), which strict mypy cannot narrow at each call."""
Pipe = Any

SITES = "deploybot:sites"
WORKERS = "deploybot:workers"
QUEUED_AT = "deploybot:queued-at"
ACTIVE = "deploybot:active"
DELAYED = "deploybot:delayed"
POSTS_DUE = "deploybot:posts-due"
LEASE_LOG = "deploybot:lease-log"
STATS = "deploybot:stats"
SWEEP_LOCK = "deploybot:sweep-lock"
AFFINITY_PREFIX = "deploybot@"
LEASE_LOG_LENGTH = 100_000
"""Entries kept in the lease log (about 20 MB of Redis memory when full)."""


def site(name: str) -> str:
    """The site's status hash."""
    return f"deploybot:site:{name}"


def pending(name: str) -> str:
    """The site's pending Want (JSON)."""
    return f"deploybot:pending:{name}"


def queued(name: str) -> str:
    """The id of the RQ job queued to take the site's pending Want."""
    return f"deploybot:queued:{name}"


def building(name: str) -> str:
    """The Want the site's lease holder is building (JSON)."""
    return f"deploybot:building:{name}"


def lease(name: str) -> str:
    """The site's lease."""
    return f"deploybot:lease:{name}"


def files(name: str) -> str:
    """The shared files of the site's state directory (:mod:`deploybot.serve.fleet.shared`)."""
    return f"deploybot:files:{name}"


def alive(worker: str) -> str:
    """Present while ``worker`` runs: its heartbeat; the value is the instance id of the
    process (a worker restarted under the same name is another instance)."""
    return f"deploybot:worker:{worker}"


def lease_token(worker: str, instance: str) -> str:
    """A new lease token of ``worker``'s process ``instance``: ``<worker>/<instance>/<random>``
    (a worker's name has no ``/``: :func:`deploybot.config.queue.is_queue_name`)."""
    return f"{worker}/{instance}/{uuid.uuid4().hex[:16]}"


def holder(token: str) -> tuple[str, str | None]:
    """``(worker, instance)`` of a lease token; the instance is None in a token of the
    older form ``<worker>/<random>`` (then only the worker's name is known)."""
    parts = token.split("/")
    return parts[0], (parts[1] if len(parts) == 3 else None)


def is_down(heartbeat: str | None, instance: str | None) -> bool:
    """True when a lease held by ``instance`` cannot be renewed any more, as the worker's
    heartbeat (the value of :func:`alive`, None when it expired) tells: no heartbeat, or
    one from another instance (the worker restarted since it took the lease)."""
    return heartbeat is None or (instance is not None and heartbeat != instance)


def affinity_queue(worker: str) -> str:
    """The RQ queue of ``worker``'s own builds."""
    return AFFINITY_PREFIX + worker


def where(queue: QueueConfig, path: Path) -> str:
    """``'queue.url' = <url> in <path>``: which Redis a message means, and where it was set
    (the URL redacted: :func:`deploybot.support.redact.redact_url`)."""
    return f"'queue.url' = {redact_url(queue.url)} in {path}"


def reason(exc: BaseException) -> str:
    """``exc`` (redis-py's, mostly) as one line to go inside a log line, without its final
    period: redis-py ends its sentences with one (``Error 111 connecting to host:6379.
    Connection refused.``), and a log line goes on after it (``: trying again in 1 s``)."""
    return one_line(exc).removesuffix(".")


def unreachable(queue: QueueConfig, path: Path, exc: BaseException) -> str:
    """``Redis unreachable ('queue.url' = <url> in <path>): <reason>``: the start of the
    line logged when Redis cannot be reached (:func:`where`, :func:`reason`)."""
    return f"Redis unreachable ({where(queue, path)}): {reason(exc)}"


def connect(queue: QueueConfig, path: Path, *, timeout: float = 10.0) -> Client:
    """A client of ``queue.url`` (its password from ``queue.password_env``), whose every
    command gives up after ``timeout`` s (redis-py reconnects at the next command);
    ``path`` is the config file that holds ``[queue]``, for the error.

    Raises:
        ConfigError: ``queue.password_env`` names a variable that is unset or empty.
    """
    password = None
    if queue.password_env:
        password = os.environ.get(queue.password_env)
        if not password:
            raise ConfigError(
                f"{path}: 'queue.password_env': the environment variable "
                f"{queue.password_env} is not set"
            )
        register_secret(password)
    return redis.Redis.from_url(
        queue.url,
        password=password,
        socket_timeout=timeout,
        socket_connect_timeout=min(timeout, 5.0),
        health_check_interval=30,
    )
