"""Keep secrets out of everything deploybot prints: error lines, logs and tracebacks.

Two kinds of secret. Secrets in a URL, removed wherever a URL is shown: RFC 3986's userinfo
(``https://user:token@host/...``; GitHub takes a token as the user name alone), *every*
query value (``?access_token=...`` -> ``?access_token=[...]``) and the fragment
(``#...`` -> ``#[...]``), and the ``user:password@`` of an scp-like address
(``deploy:token@host:path``, also ``git:token@host:path``). Every query value is masked,
not only those under secret-sounding names (token, access_token, private_token, key,
secret, password, sig, signature, auth...): the names services use have no end (GitLab's
``private_token``, S3's ``X-Amz-Signature``, Azure's ``sig``, Bitbucket's ``at``, plain
``t``), a git remote's query says nothing a reader of an error needs, and the names stay,
so the reader still sees what was given. A scp-like ``user@host:path`` (no password)
keeps its user: ``git@github.com`` is an account name, not a secret; so does an
``ssh://`` (``git+ssh://``, ``ssh+git://``) URL, whose password alone goes
(``ssh://root:pw@host/`` -> ``ssh://root@host/``): ssh takes no token as the user. Any
other scheme's userinfo goes whole: over http(s) the user name alone may be the token
(``https://TOKEN@github.com/``).

And secrets the code knows, such as a chat webhook URL's path (the path *is* the secret),
a password, or the secret parts of the git remotes (:func:`register_url_credentials`, for
libraries that print a URL in their own shape, e.g. only its path), registered with
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
MIN_TOKEN = 8
"""Characters a query value or fragment needs to be registered as a secret by
:func:`register_url_credentials` (tokens are longer; short ones would mask common words)."""

_USERINFO_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)@")
# The schemes whose user name is shown (ssh's; git's spellings, connect.c).
_SSH_SCHEMES = frozenset({"ssh://", "git+ssh://", "ssh+git://"})
_SCHEME_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# scp-like with a password: a colon, then an '@', both before any '/' of the address part
# (git's rule: a colon before any slash makes it scp-like); the password may hold a '/'.
_SCP_PASSWORD_RE = re.compile(r"^[^/@:]*:[^@]*@")
# A scheme:// in a text. It is looked for only where a run of scheme characters begins
# (digits and +.- are skipped to its first letter, where a plain search would start): a
# search from every letter of a long run is quadratic (100 KB of letters took 35 s).
_SCHEME_IN_TEXT = r"(?<![A-Za-z0-9+.-])[0-9+.-]*+[A-Za-z][A-Za-z0-9+.-]*+://"
# A userinfo anywhere in a text: scheme://, then no '/', whitespace or quote before the '@'.
_USERINFO_IN_TEXT_RE = re.compile(rf"({_SCHEME_IN_TEXT})([^/?#@\s'\"<>]*+)@")
# A query or fragment of a scheme:// URL anywhere in a text (up to whitespace or a quote).
_QUERY_IN_TEXT_RE = re.compile(rf"({_SCHEME_IN_TEXT}[^\s'\"<>?#]*+)([?#][^\s'\"<>]*)")
# scp-like user:password@host in a text, starting a word; not a scheme's "://" (an ssh
# URL's user stays, scheme and all).
_SCP_PASSWORD_IN_TEXT_RE = re.compile(
    r"(?<![^\s'\"(<\[=,])[^\s/@:'\"<>]+:(?!//)[^\s@'\"<>]*@(?=[^\s/@:'\"<>]+[:/])"
)
# What may close a sentence right after a URL: kept out of the masked value.
_TRAILING = ":;,.)!"
_secrets: set[str] = set()
_lock = threading.Lock()


def redact_url(url: str) -> str:
    """Return ``url`` without its secrets (the module docstring): userinfo removed (but an
    ssh URL's user name), every query value and the fragment replaced by ``[...]``;
    scp-like ``user:password@`` removed. Anything else as it is.

    ``https://bot:tok@git.example.org/site.git?access_token=t`` ->
    ``https://git.example.org/site.git?access_token=[...]``; ``deploy:tok@host:site.git``
    -> ``host:site.git``; ``ssh://git:pw@host/x`` -> ``ssh://git@host/x``. Local paths,
    scp-like ``user@host:path`` and ``ssh://user@host/...`` are unchanged.
    """
    if not _SCHEME_URL_RE.match(url):
        return _SCP_PASSWORD_RE.sub("", url)
    url = _USERINFO_RE.sub(_without_secret_userinfo, url)
    cut = min((i for i in (url.find("?"), url.find("#")) if i != -1), default=len(url))
    return url[:cut] + _mask_query_and_fragment(url[cut:])


def _without_secret_userinfo(match: re.Match[str]) -> str:
    """``scheme://`` and what of the userinfo may show: an ssh URL's user name (without
    its password), nothing for any other scheme."""
    scheme, userinfo = match.group(1), match.group(2)
    user = userinfo.partition(":")[0]
    if scheme.lower() in _SSH_SCHEMES and user:
        return f"{scheme}{user}@"
    return scheme


def _mask_query_and_fragment(tail: str) -> str:
    """``?a=1&b#f`` -> ``?a=[...]&[...]#[...]``: names kept, values masked; empty stays."""
    query, hash_, fragment = tail.partition("#")
    if query.startswith("?"):
        query = "?" + "&".join(_mask_parameter(p) for p in query[1:].split("&"))
    return query + hash_ + (MASK if fragment else "")


def _mask_parameter(parameter: str) -> str:
    name, equals, value = parameter.partition("=")
    if not equals:
        return MASK if name else ""
    return f"{name}={MASK}" if value else f"{name}="


def _mask_in_text(match: re.Match[str]) -> str:
    tail = match.group(2)
    kept = len(tail) - len(tail.rstrip(_TRAILING))
    end = tail[len(tail) - kept :] if kept else ""
    return match.group(1) + _mask_query_and_fragment(tail[: len(tail) - kept]) + end


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


def register_url_credentials(url: str) -> None:
    """Register the secrets of a git remote ``url`` (:func:`register_secret`): its password
    (or a user name standing alone, as GitHub's tokens do, when longer than 20 characters),
    every query value and its fragment, in whatever shape a library prints them later.
    Query values and fragments shorter than :data:`MIN_TOKEN` are left to the URL rules
    (a ``ref=main`` would otherwise mask the word everywhere)."""
    if not _SCHEME_URL_RE.match(url):
        scp = _SCP_PASSWORD_RE.match(url)
        if scp:
            register_secret(scp.group(0)[:-1].partition(":")[2])
        return
    parts = urlsplit(url)
    ssh = url.lower().startswith(tuple(_SSH_SCHEMES))
    if parts.password:
        register_secret(parts.password)
    elif parts.username and len(parts.username) > 20 and not ssh:
        register_secret(parts.username)
    for parameter in [*parts.query.split("&"), f"={parts.fragment}"]:
        name, equals, value = parameter.partition("=")
        value = value if equals else name
        if len(value) >= MIN_TOKEN:
            register_secret(value)


def redact_text(text: str) -> str:
    """Return ``text`` with every URL's secrets (see :func:`redact_url`) and every
    registered secret removed."""
    text = _USERINFO_IN_TEXT_RE.sub(_without_secret_userinfo, text)
    text = _QUERY_IN_TEXT_RE.sub(_mask_in_text, text)
    text = _SCP_PASSWORD_IN_TEXT_RE.sub("", text)
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
