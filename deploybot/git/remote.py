"""A git remote as a fetch or a push talks to it: where it is, how to log in, and the bounds
of one exchange with it (:class:`Remote`, the record the watch and publish stages hand to
:mod:`deploybot.git.repository`).

Light on purpose (``os`` and ``dataclasses``): :mod:`deploybot.config.load` builds these at load.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from deploybot.support.errors import ConfigError
from deploybot.support.redact import register_secret

DEFAULT_TIMEOUT = 600.0
"""Seconds one fetch or push may take in all (``source.timeout``, ``publish.timeout``),
however steadily the server sends: a server trickling a byte every few seconds never trips
the idle timeout (:data:`deploybot.git.repository.IDLE_TIMEOUT`) and held a run for hours."""

DEFAULT_MAX_FETCH_BYTES = 2**31
"""Bytes a server may send during one fetch or push (``source.max_fetch_bytes``,
``publish.max_fetch_bytes``; 2 GiB): the ref advertisement, the negotiation and the pack."""

MAX_REDIRECTS = 5
"""HTTP redirects one request to a git server may follow (:mod:`deploybot.git.http_pool`);
more is a loop, or a server sending deploybot elsewhere than a git repository."""

TOKEN_USER = "x-access-token"
"""The user name sent with a token when the URL names none: GitHub's own for tokens; Gitea,
Forgejo, GitLab and Bitbucket take any user name with a token as the password."""


@dataclass(frozen=True)
class Remote:
    """A git remote of a site: ``source.url`` or ``publish.url`` and its section's keys.

    Attributes:
        url: the location as dulwich gets it (a resolved local path, or a URL).
        key: the config key that gives the URL, ``source.url`` or ``publish.url``
            (``source.url`` for the publish side too when ``publish.url`` is unset): every
            ConfigError about the remote names it (or a key of its section).
        token_env: the environment variable holding an access token for an http(s) URL,
            sent as the password of HTTP basic auth (RFC 7617); None: no token.
        timeout: seconds one fetch or push may take in all.
        max_fetch_bytes: bytes the server may send during one fetch or push.
        token_key: the key that gives ``token_env`` (or, without a token, the one to
            set); None: ``token_env`` of ``section``.
        section: the section whose ``timeout`` and ``max_fetch_bytes`` these are
            (``source``, ``publish``); None: the section of ``key``.
    """

    url: str
    key: str = "source.url"
    token_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES
    token_key: str | None = None
    section: str | None = None

    def key_of(self, name: str) -> str:
        """The key ``name`` of this remote's section: ``key_of("timeout")`` ->
        ``source.timeout``; ``key_of("token_env")`` is :attr:`token_key` when set."""
        if name == "token_env" and self.token_key is not None:
            return self.token_key
        return f"{self.section or self.key.partition('.')[0]}.{name}"

    def credentials(self, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
        """``(user, token)`` for HTTP basic auth, or None without ``token_env``. The user
        is the URL's own when it names one, else :data:`TOKEN_USER`. The token (and the
        ``Authorization`` value made of it) is registered as a secret
        (:func:`deploybot.support.redact.register_secret`), so no message or log shows it.

        Raises:
            ConfigError: the variable ``token_env`` names is unset or empty (names the key).
        """
        if self.token_env is None:
            return None
        token = (os.environ if environ is None else environ).get(self.token_env, "")
        if not token:
            raise ConfigError(
                f"'{self.key_of('token_env')}': environment variable {self.token_env} is not set"
            )
        user = _url_user(self.url) or TOKEN_USER
        register_secret(token)
        register_secret(base64.b64encode(f"{user}:{token}".encode()).decode("ascii"))
        return user, token


def _url_user(url: str) -> str | None:
    """The user name of a ``scheme://user@host/...`` URL (percent-decoded), or None."""
    user = urlsplit(url).username
    return unquote(user) if user else None
