"""The checks of the ``[queue]`` table's keys (:class:`deploybot.config.schema.QueueConfig`).

A Redis URL is read as redis-py's ``Redis.from_url`` reads it (``redis://[user@]host[:port][/db]``,
``rediss://`` for TLS, ``unix:///path/to/socket[?db=N]``); a password written into it is
refused (secrets come from the variable ``queue.password_env``, never from the file), and
so is a URL that names no host, a port outside 1-65535, a database that is no number or
a query other than ``?db=N`` (redis-py would take any other key as a client setting).
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from deploybot.config import checks
from deploybot.support.errors import ConfigError

REDIS_SCHEMES = ("redis", "rediss", "unix")
_QUEUE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_queue_name(name: str, key: str, path: Path) -> None:
    """Check ``queue.name`` (:func:`is_queue_name`). Raises ConfigError naming ``key``."""
    if not is_queue_name(name):
        raise ConfigError(
            f"{path}: '{key}' must be 1 to 64 letters, digits, '.', '_' or '-', not {name!r}"
        )


def check_lease(seconds: float, key: str, path: Path) -> None:
    """Check a lease or heartbeat timeout (``queue.lease_ttl``, ``queue.heartbeat_timeout``):
    a timeout (:func:`deploybot.config.checks.check_timeout`) of 1 s or more (a renewal
    every third of it, or five heartbeats, must fit). Raises ConfigError naming ``key``."""
    checks.check_timeout(seconds, key, path)
    if seconds < 1:
        raise ConfigError(f"{path}: '{key}' must be 1 second or more")


def check_redis_url(url: str, key: str, path: Path) -> None:
    """Check a Redis URL (see the module doc). Raises ConfigError naming ``key``."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{path}: '{key}' cannot be read as a Redis URL: {exc}") from None
    if parts.scheme not in REDIS_SCHEMES:
        raise ConfigError(
            f"{path}: '{key}' must start with redis://, rediss:// or unix://, not {url[:40]!r}"
        )
    if parts.password is not None:
        raise ConfigError(
            f"{path}: '{key}' holds a password: name an environment variable holding it "
            "in 'queue.password_env' instead"
        )
    _check_query(parts.query, key, path)
    if parts.scheme == "unix":
        if not parts.path:
            raise ConfigError(f"{path}: '{key}' names no socket path (unix:///path/to/socket)")
        return
    if not parts.hostname:
        raise ConfigError(f"{path}: '{key}' names no host (redis://host:6379/0)")
    if port == 0:
        raise ConfigError(f"{path}: '{key}': port must be from 1 to 65535")
    db = parts.path.strip("/")
    if db and not _is_number(db):
        raise ConfigError(f"{path}: '{key}': the database must be a number, not {db!r}")


def _check_query(query: str, key: str, path: Path) -> None:
    """Refuse a URL query other than ``db=<number>``: redis-py hands every other query key
    to ``Redis()`` as a keyword argument (``socket_timeout=abc`` fails at the first
    connection, an unknown key is a TypeError), so it would pass the load and then fail
    in ``serve``, ``worker`` or ``fleet status``. Values are not shown (one may be a
    password). Raises ConfigError naming ``key`` and ``path``."""
    fields = urllib.parse.parse_qsl(query, keep_blank_values=True)
    for name, _ in fields:
        if name != "db":
            raise ConfigError(
                f"{path}: '{key}': its query may set only db, not {name[:40]!r} "
                "(deploybot sets the timeouts itself)"
            )
    dbs = [value for _, value in fields]
    if len(dbs) > 1:
        raise ConfigError(f"{path}: '{key}': db is given twice in its query")
    if dbs and not _is_number(dbs[0]):
        raise ConfigError(f"{path}: '{key}': the database must be a number, not {dbs[0][:20]!r}")


def _is_number(text: str) -> bool:
    """True for ASCII digits only (``str.isdigit`` also takes "²", which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def is_queue_name(name: str) -> bool:
    """True for a name a queue (or a worker, whose own queue it names) may have: 1 to 64
    letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit."""
    return bool(_QUEUE_NAME_RE.match(name))
