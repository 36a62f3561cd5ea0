"""Who may read the status page: open, behind a token, or off.

The page shows what a site's people see anyway on a forge (commit subjects, the publish
branch) but also what they may not: log lines naming paths and mail servers, the outbox's
errors naming addresses. So (:func:`decide`):

- ``daemon.status_page = false``: off (404 for every page).
- ``daemon.status_token_env`` set: the page asks for the token, on any address (a proxy on
  the same machine makes a loopback daemon reachable from anywhere). The token comes as
  ``Authorization: Bearer <token>``, a ``deploybot_status`` cookie, or ``?token=<token>``
  once (the answer sets the cookie and redirects to the page without it, so it is not
  left in the address bar or in a link); each is checked in constant time
  (:func:`hmac.compare_digest`).
- else, listening on a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``) or a
  ``unix:`` socket: open, as ``/healthz`` is: only this machine reaches it.
- else (``0.0.0.0``, ``::``, a public address or a host name): off, with a 403 saying
  why: a daemon listening to the network would show its logs to anyone.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from deploybot.config.checks import parse_listen
from deploybot.serve.settings import Settings

COOKIE = "deploybot_status"
"""The cookie holding the token once given."""
QUERY = "token"


class Mode(StrEnum):
    """How the page is served."""

    OPEN = "open"
    TOKEN = "token"
    OFF = "off"


@dataclass(frozen=True)
class Gate:
    """The decision: ``mode``, the ``token`` (for :attr:`Mode.TOKEN`) and ``why``: one
    line for the log and the 403 of :attr:`Mode.OFF`."""

    mode: Mode
    why: str
    token: str | None = field(default=None, repr=False)


def is_local(listen: str) -> bool:
    """True when the ``daemon.listen`` address is reachable from this machine only: a
    ``unix:`` socket, ``localhost`` or a loopback IP. A host name other than
    ``localhost`` counts as not local (it may resolve to anything). Raises ValueError for
    an address :func:`deploybot.config.checks.parse_listen` refuses."""
    where = parse_listen(listen)
    if isinstance(where, Path):
        return True
    host = where[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def decide(listen: str, enabled: bool, token: str | None) -> Gate:
    """The :class:`Gate` for a daemon listening on ``listen`` with ``daemon.status_page``
    ``enabled`` and the token (``daemon.status_token_env``'s value, or None); the rules
    are the module doc's."""
    if not enabled:
        return Gate(Mode.OFF, "the status page is off (daemon.status_page = false)")
    if token:
        return Gate(Mode.TOKEN, "the status page asks for daemon.status_token_env's token", token)
    if is_local(listen):
        return Gate(
            Mode.OPEN, f"the status page is open: {listen} is reachable from this machine only"
        )
    return Gate(
        Mode.OFF,
        f"the status page is off: the daemon listens on {listen}, beyond this machine; "
        "set daemon.status_token_env to serve it behind a token",
    )


def gate_of(settings: Settings) -> Gate:
    """:func:`decide` for the daemon's ``settings``."""
    daemon = settings.daemon
    return decide(daemon.listen, daemon.status_page, settings.status_token)


def given_token(
    headers: Mapping[str, str], cookies: Mapping[str, str], query: Mapping[str, str]
) -> str | None:
    """The token a request gives: ``Authorization: Bearer``, else the query, else the
    cookie (a ``?token=`` given after the token was changed wins over the old cookie,
    which the page then replaces); None when none."""
    scheme, _, value = headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get(QUERY) or cookies.get(COOKIE) or None


def admits(gate: Gate, given: str | None) -> bool:
    """Whether a request that gives ``given`` (or nothing) may read the page."""
    if gate.mode is Mode.OPEN:
        return True
    if gate.mode is Mode.OFF or gate.token is None or given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), gate.token.encode("utf-8"))
