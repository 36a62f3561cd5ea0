"""Keep secrets out of everything deploybot prints: error lines, logs and tracebacks.

Two kinds of secret: credentials in a URL (``https://user:token@host/...``, RFC 3986's
userinfo), removed wherever a URL is shown; and secrets the code knows, such as a chat
webhook URL's path (the path *is* the secret) or a password, registered with
:func:`register_secret` and replaced by ``[...]``. Every message that names a URL uses
:func:`redact_url`; :func:`redact_text` is the net under all output (the CLI's error line
and traceback) and :class:`RedactingFilter` under the logs of every library (urllib3,
requests, dulwich), whose messages deploybot does not write.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import urlsplit

MASK = "[...]"

_USERINFO_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
# A userinfo anywhere in a text: scheme://, then no '/', whitespace or quote before the '@'.
_USERINFO_IN_TEXT_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s'\"<>]*@")
_secrets: set[str] = set()
_lock = threading.Lock()


def redact_url(url: str) -> str:
    """Return ``url`` without its ``user[:password]@`` part; anything else as it is.

    ``https://bot:tok@git.example.org/site.git`` -> ``https://git.example.org/site.git``.
    Local paths and scp-like ``user@host:path`` (a user name, no password) are unchanged.
    """
    return _USERINFO_RE.sub(r"\1", url)


def url_origin(url: str) -> str:
    """Return only ``scheme://host[:port]`` of ``url``, for URLs whose path is a secret."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or '?'}{port}"


def register_secret(secret: str) -> None:
    """Replace ``secret`` by ``[...]`` in everything :func:`redact_text` sees from now on
    (for this process). Strings shorter than 4 characters are ignored (they would mask
    ordinary words)."""
    if len(secret) >= 4:
        with _lock:
            _secrets.add(secret)


def register_url_secrets(url: str) -> None:
    """Register the path and query of ``url`` (a webhook URL) and its password, if any."""
    parts = urlsplit(url)
    secret = parts.path + (f"?{parts.query}" if parts.query else "")
    if secret not in ("", "/"):
        register_secret(secret)
    if parts.password:
        register_secret(parts.password)


def redact_text(text: str) -> str:
    """Return ``text`` with every URL's credentials and every registered secret removed."""
    text = _USERINFO_IN_TEXT_RE.sub(r"\1", text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter (for handlers) that applies :func:`redact_text` to each record's
    message, so no library's log line shows a secret. The record is formatted here."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_text(message)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True
