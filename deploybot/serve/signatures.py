"""Webhook signatures, per forge, checked over the raw body in constant time.

Which header, in the order looked for (the first one present decides; a request carrying
none is refused):

============================  =========================================================
``X-Hub-Signature-256``       GitHub (and Gitea, Forgejo): ``sha256=`` + hex HMAC-SHA256
``X-Forgejo-Signature``       Forgejo: bare hex HMAC-SHA256
``X-Gitea-Signature``         Gitea: bare hex HMAC-SHA256 (``X-Gogs-Signature`` likewise)
``X-Hub-Signature``           Bitbucket Server/Data Center and Cloud: ``sha256=`` + hex
                              (GitHub's legacy ``sha1=`` is refused: SHA-1 only)
``X-Gitlab-Token``            GitLab: the secret itself, in plain text (no HMAC)
============================  =========================================================

Sources: GitHub's "Validating webhook deliveries" (with its test vector), Gitea's
``services/webhook/deliver.go``, Forgejo's headers, Atlassian's Bitbucket Server "Event
payload" and Bitbucket Cloud's secure webhooks, GitLab's "Webhooks" (``X-Gitlab-Token``).
Every comparison is :func:`hmac.compare_digest` on bytes, so its time does not depend on
where the first wrong character is.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

_HEX_HMAC = "hex"
_PREFIXED_HMAC = "sha256="
_TOKEN = "token"
HEADERS: tuple[tuple[str, str], ...] = (
    ("X-Hub-Signature-256", _PREFIXED_HMAC),
    ("X-Forgejo-Signature", _HEX_HMAC),
    ("X-Gitea-Signature", _HEX_HMAC),
    ("X-Gogs-Signature", _HEX_HMAC),
    ("X-Hub-Signature", _PREFIXED_HMAC),
    ("X-Gitlab-Token", _TOKEN),
)
"""``(header, how it is checked)``, in the order looked for."""


@dataclass(frozen=True)
class Signature:
    """The signature a request carries: the ``header`` it came in and its ``value``."""

    header: str
    value: str
    kind: str

    def verify(self, body: bytes, secret: str) -> bool:
        """True when ``value`` is ``body`` signed with ``secret`` (or, for GitLab's token,
        is ``secret``). Constant time in the value compared; an HMAC over ``body``
        (hashlib releases the GIL for large inputs, so a thread may run it)."""
        given = self.value.strip().encode("utf-8", "surrogateescape")
        key = secret.encode("utf-8")
        if self.kind == _TOKEN:
            return hmac.compare_digest(given, key)
        if self.kind == _PREFIXED_HMAC:
            if given[:7].lower() != b"sha256=":
                return False
            given = given[7:]
        expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")
        return hmac.compare_digest(given.lower(), expected)


def find_signature(headers: Mapping[str, str]) -> Signature | None:
    """The first signature header of :data:`HEADERS` that ``headers`` (case-insensitive,
    as aiohttp's) carry, or None when there is none."""
    for name, kind in HEADERS:
        value = headers.get(name)
        if value is not None:
            return Signature(name, value, kind)
    return None


def sign(body: bytes, secret: str) -> str:
    """``sha256=`` + the hex HMAC-SHA256 of ``body`` with ``secret``: GitHub's
    ``X-Hub-Signature-256`` value (for tests, and docs/daemon.md's curl line)."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
