"""What a failed exchange with a git remote means, by its cause, not by where it happened.

A remote that is not there (HTTP 404/410, "repository not found", "does not appear to be a
git repository", git daemon's "not exported"), that wants credentials or refuses them (HTTP
401/403/407, ssh's "Permission denied"), whose host key ssh does not know, whose TLS
certificate cannot be verified (or that answers an https:// URL in plain text), whose
host does not resolve (the resolver's "no such name", ``EAI_NONAME``), that redirects
more than :data:`~deploybot.git.remote.MAX_REDIRECTS` times, or whose answer is not git's
protocol (an HTML login page, garbage for pkt-lines) stays so until someone changes the
config: a :class:`~deploybot.support.errors.ConfigError` (exit 78) naming the key, in
words, with what to do. A server saying its repository is corrupt (git's "possible repository
corruption on the remote side") is bad input (exit 1). Only what can heal by waiting stays
the caller's :class:`~deploybot.support.errors.TemporaryError` (exit 75): a timeout, a refused or
reset connection, HTTP 5xx, 408 and 429, a resolver that cannot be reached (``EAI_AGAIN``),
a deadline passed (:mod:`deploybot.git.bounds`), anything not recognised; a connection
that failed is said in words (:func:`connection_words`), not in urllib3's.

A push the server refuses ref by ref (git's ``ng <ref> <reason>``, :func:`push_refused`) is
read the same way: a hook that declines it (``pre-receive``, ``update``, a forge's
protected branch), the checked-out branch of a repository with a work tree
(``receive.denyCurrentBranch``), a deletion or a ref name the server forbids stay so until
someone changes the config or the server: ConfigError. A race (``non-fast-forward``,
``fetch first``: someone pushed meanwhile; a ref the server could not lock) and anything
not recognised stay the caller's TemporaryError.

The causes are read from dulwich's exceptions (``NotGitRepository`` for 404,
``HTTPUnauthorized``, ``"unexpected http resp NNN"``), the ``socket.gaierror`` under
urllib3's, and the server's or ssh's own words (dulwich's ``HangupException`` carries ssh's
stderr; a ``git://`` server's ``ERR`` line becomes a ``GitProtocolError``).
"""

from __future__ import annotations

import enum
import errno
import http
import re
import socket
import sys
from urllib.parse import urlsplit

from dulwich.client import HTTPProxyUnauthorized, HTTPUnauthorized
from dulwich.errors import HangupException, NotGitRepository

from deploybot.git.bounds import Bound, Overrun
from deploybot.git.remote import MAX_REDIRECTS, Remote
from deploybot.support.errors import (
    ConfigError,
    DeploybotError,
    SourceError,
    TemporaryError,
    exception_chain,
    one_line,
)
from deploybot.support.redact import redact_text, redact_url

_LINKS = ("__cause__", "__context__", "reason")
"""What :func:`deploybot.support.errors.exception_chain` follows here: urllib3's ``reason`` too."""


class Cause(enum.Enum):
    """Why an exchange failed."""

    NOT_FOUND = "not found"
    UNAUTHORIZED = "unauthorized"  # HTTP 401: credentials wanted, or refused
    FORBIDDEN = "forbidden"  # HTTP 403
    PROXY_AUTH = "proxy auth"  # HTTP 407
    REFUSED = "refused"  # another HTTP 4xx
    SSH_LOGIN = "ssh login"
    HOST_KEY = "host key"
    NO_SUCH_HOST = "no such host"
    TLS_CERTIFICATE = "TLS certificate"  # the server's certificate cannot be verified
    NOT_TLS = "not TLS"  # an https:// URL, and the server answered in plain text
    CORRUPT = "corrupt"
    REDIRECT_LOOP = "redirect loop"  # more than MAX_REDIRECTS HTTP redirects
    NOT_GIT = "not git"  # an answer that is not git's protocol (an HTML page, garbage)
    TEMPORARY = "temporary"


_HEALING_STATUSES = frozenset({408, 429})
# git ends its abort message with the NUL of its C string (upload-pack.c, abort_msg), which
# dulwich shows as '?' (control characters are, _sanitize_sideband_message): "side.?".
_SENTENCE_THEN_NUL = re.compile(r"\.[?\0](?=\s|$)")
_STATUS_RE = re.compile(r"unexpected http resp (\d{3})")
# The server's or ssh's words, in the order tried (case-insensitive).
_WORDS: tuple[tuple[re.Pattern[str], Cause], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), cause)
    for pattern, cause in (
        (r"temporary failure in name resolution", Cause.TEMPORARY),
        (r"could not resolve hostname|name or service not known|nodename nor servname"
         r"|no address associated with hostname", Cause.NO_SUCH_HOST),
        (r"host key verification failed|remote host identification has changed",
         Cause.HOST_KEY),
        (r"possible repository corruption|empty filename in tree entry", Cause.CORRUPT),
        # dulwich's words for an answer that is not git's: smart HTTP, git://, ssh
        # (protocol.py), dumb HTTP's info/refs (refs.py read_info_refs)
        (r"invalid pkt-line length|invalid info/refs format", Cause.NOT_GIT),
        (r"repository not found|does not appear to be a git repository|not a git repository"
         r"|repository not exported|no such repository|repository does not exist"
         r"|could not be found", Cause.NOT_FOUND),
        (r"permission denied|authentication failed|access denied", Cause.SSH_LOGIN),
    )
)  # fmt: skip


class Refusal(enum.Enum):
    """Why a server refused to update a ref a push sent."""

    HOOK = "hook"  # a pre-receive or update hook, a forge's branch protection
    CHECKED_OUT = "checked out"  # the branch checked out in a repository with a work tree
    FORBIDDEN = "forbidden"  # a deletion or a ref name the server does not allow
    RACE = "race"  # the ref moved or was locked meanwhile; anything not recognised


# git's receive-pack.c reasons (and forges'), in the order tried (case-insensitive).
_REFUSALS: tuple[tuple[re.Pattern[str], Refusal], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), refusal)
    for pattern, refusal in (
        (r"currently checked out|checked out branch", Refusal.CHECKED_OUT),
        (r"hook declined|protected branch|\bGH\d{3}\b|declined", Refusal.HOOK),
        (r"deletion prohibited|deny deleting|funny ref|shallow update not allowed"
         r"|not allowed|forbidden|permission", Refusal.FORBIDDEN),
    )
)  # fmt: skip
_ATOMIC_FOLLOWER = re.compile(r"atomic (push|transaction) fail", re.IGNORECASE)


def refusal_of(reason: str) -> Refusal:
    """The :class:`Refusal` a server's reason for not updating one ref (``ng`` line of
    git's report-status, ``pack-protocol.txt``) says; :attr:`Refusal.RACE` when none."""
    for pattern, refusal in _REFUSALS:
        if pattern.search(reason):
            return refusal
    return Refusal.RACE


_GIT_ERROR_LINE = re.compile(r"^(error|fatal): ", re.IGNORECASE)
# What dulwich leaves of a terminal escape sequence once it made its control bytes "?"
# (CSI "ESC [ ... letter", OSC "ESC ] ... BEL"): noise in a one-line message.
_ESCAPE_LEFTOVER = re.compile(r"\?\[[0-9;?]*[A-Za-z]|\?\][^?]*\?")


def remote_words(progress: bytes, limit: int = 300) -> str:
    """The server's side-band messages (``remote:`` lines, as dulwich passes them on:
    control bytes made ``?``) as one line of at most ``limit`` characters: git's own first
    ``error:``/``fatal:`` line when there is one (receive-pack's reason, not the advice
    after it), else the last whole lines (a hook's words end there); what is left of
    terminal escape sequences dropped, a line longer than ``limit`` cut at its start."""
    text = _ESCAPE_LEFTOVER.sub("", progress.decode("utf-8", "replace"))
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line.strip(" ?")]
    errors = [line for line in lines if _GIT_ERROR_LINE.match(line)]
    if errors:
        first = _GIT_ERROR_LINE.sub("", errors[0])
        return first if len(first) <= limit else first[: limit - 3] + "..."
    kept: list[str] = []
    for line in reversed(lines):
        if kept and sum(len(k) + 3 for k in kept) + len(line) > limit:
            break
        kept.insert(0, line)
    words = " / ".join(kept)
    return words if len(words) <= limit else "..." + words[-(limit - 3) :]


def push_refused(
    remote: Remote,
    refused: dict[str, str],
    progress: bytes,
    error: type[TemporaryError],
) -> DeploybotError:
    """The error to raise for a push ``remote`` refused: ``refused`` is ``{refname:
    reason}`` of the refs it did not update (as git's report-status gives them),
    ``progress`` the end of the server's side-band messages (a hook's words:
    :func:`remote_words`). A refusal that
    waiting cannot mend (:class:`Refusal` other than RACE) is a ConfigError naming the key,
    with what to do; a race (or what is not recognised) is ``error``, to try again later.
    One line; no secret of the URL in it."""
    url = redact_url(remote.url)
    # with an atomic push, the refs that were fine are refused "atomic push failed" too
    reasons = {ref: why for ref, why in refused.items() if not _ATOMIC_FOLLOWER.search(why)}
    reasons = reasons or refused
    by_reason: dict[str, list[str]] = {}
    for ref, why in sorted(reasons.items()):
        by_reason.setdefault(why, []).append(ref)
    listed = "; ".join(f"{', '.join(refs)}: {why}" for why, refs in by_reason.items())
    said = remote_words(progress)
    words = f" (remote: {redact_text(said)})" if said else ""
    refusals = {refusal_of(why) for why in reasons.values()}
    where = f"'{remote.key}' {url}"
    if Refusal.CHECKED_OUT in refusals:
        return ConfigError(
            f"{where}: the server refuses the push ({listed}){words}: it is the branch checked "
            "out in a repository with a work tree (git's receive.denyCurrentBranch); push to a "
            "bare repository (git clone --bare) or another branch, or set "
            "receive.denyCurrentBranch to updateInstead there"
        )
    if Refusal.HOOK in refusals:
        return ConfigError(
            f"{where}: a hook of the repository declines the push ({listed}){words}: ask "
            "whoever runs the server to allow deploybot's pushes to that branch, or point "
            f"{remote.key} at a repository deploybot may push to"
        )
    if Refusal.FORBIDDEN in refusals:
        return ConfigError(f"{where}: the server does not allow the push ({listed}){words}")
    return error(f"push to {url} rejected: {listed}{words}")


def cause_of(exc: BaseException) -> tuple[Cause, int | None]:
    """The :class:`Cause` of ``exc`` (raised by a dulwich client), and the HTTP status
    that told it, if one did."""
    if isinstance(exc, HTTPUnauthorized):
        return Cause.UNAUTHORIZED, 401
    if isinstance(exc, HTTPProxyUnauthorized):
        return Cause.PROXY_AUTH, 407
    if isinstance(exc, NotGitRepository):
        return Cause.NOT_FOUND, 404  # what dulwich's HTTP client raises it for
    for inner in exception_chain(exc, _LINKS):
        if isinstance(inner, socket.gaierror):
            unknown = inner.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", None))
            return (Cause.NO_SUCH_HOST if unknown else Cause.TEMPORARY), None
        if _is_instance(inner, "ssl", "SSLCertVerificationError"):
            return Cause.TLS_CERTIFICATE, None
        if _is_instance(inner, "urllib3.exceptions", "ResponseError") and (
            "too many redirects" in str(inner)
        ):
            return Cause.REDIRECT_LOOP, None
        wrong_version = getattr(inner, "reason", None) == "WRONG_VERSION_NUMBER"
        if wrong_version and _is_instance(inner, "ssl", "SSLError"):
            return Cause.NOT_TLS, None
    text = str(exc)
    status = _STATUS_RE.search(text)
    if status is not None:
        return _status_cause(int(status.group(1))), int(status.group(1))
    for pattern, cause in _WORDS:
        if pattern.search(text):
            return cause, None
    return Cause.TEMPORARY, None


def _is_instance(exc: BaseException, module: str, name: str) -> bool:
    """Whether ``exc`` is a ``module.name``; without importing ``module`` (``ssl``,
    ``urllib3``): not loaded, nothing can have raised one."""
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(kind, type) and isinstance(exc, kind)


_ERRNO_WORDS = {
    errno.ECONNREFUSED: "the connection was refused (is the server running?)",
    errno.ECONNRESET: "the server reset the connection",
    errno.ECONNABORTED: "the connection was aborted",
    errno.EPIPE: "the server closed the connection",
    errno.ETIMEDOUT: "connecting timed out (is the host up?)",
    errno.EHOSTUNREACH: "there is no route to the host",
    errno.ENETUNREACH: "the network is unreachable",
}


def connection_words(exc: BaseException) -> str | None:
    """What ended the connection under ``exc`` (a dulwich client's exception), in plain
    words: refused, reset, closed without an answer, timed out, unreachable, a TLS
    handshake failed; None when it was none of these. urllib3's own text (``Max retries
    exceeded ... NewConnectionError(...)``) says the same in its classes' names."""
    chain = list(exception_chain(exc, _LINKS))
    for inner in chain:  # the OS's words first: urllib3's classes wrap them
        if _is_instance(inner, "http.client", "RemoteDisconnected"):
            return "the server closed the connection without answering"
        if isinstance(inner, OSError) and inner.errno in _ERRNO_WORDS:
            return _ERRNO_WORDS[inner.errno]
    for inner in chain:
        if _is_instance(inner, "urllib3.exceptions", "ConnectTimeoutError"):
            return "connecting timed out (is the host up?)"
        if isinstance(inner, TimeoutError) or _is_instance(
            inner, "urllib3.exceptions", "ReadTimeoutError"
        ):
            return "the server stopped answering (timed out)"
        if _is_instance(inner, "ssl", "SSLError"):
            reason = getattr(inner, "reason", None) or one_line(inner)
            return f"the TLS handshake failed ({reason})"
    if isinstance(exc, HangupException) and not exc.stderr_lines:  # else ssh's words say
        return "the server closed the connection without answering"
    return None


def _status_cause(status: int) -> Cause:
    if status in (404, 410):
        return Cause.NOT_FOUND
    if status == 401:
        return Cause.UNAUTHORIZED
    if status == 403:
        return Cause.FORBIDDEN
    if status == 407:
        return Cause.PROXY_AUTH
    if 400 <= status < 500 and status not in _HEALING_STATUSES:
        return Cause.REFUSED
    return Cause.TEMPORARY


def _status_words(status: int) -> str:
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def failure(
    remote: Remote,
    exc: BaseException,
    overrun: Overrun | None,
    doing: str,
    error: type[TemporaryError],
) -> DeploybotError:
    """The error to raise for ``exc``, which ended an exchange with ``remote``: ``doing``
    is ``"fetch from"`` or ``"push to"``; ``overrun`` the bound it went past, if any
    (:meth:`deploybot.git.bounds.Exchange.overrun`); ``error`` the TemporaryError class of
    the caller's stage (FetchError, PublishError). One line; no secret of the URL in it.
    ConfigErrors name the key (the pipeline adds the config file)."""
    url = redact_url(remote.url)
    if overrun is not None:
        return _overrun(remote, url, overrun, doing, error)
    said = redact_text(_SENTENCE_THEN_NUL.sub(".", one_line(exc)))
    cause, status = cause_of(exc)
    where = f"'{remote.key}' {url}"
    if cause is Cause.TEMPORARY:
        reason = f"the server answered {_status_words(status)}" if status is not None else None
        return error(f"cannot {doing} {url}: {reason or connection_words(exc) or said}")
    if cause is Cause.CORRUPT:
        return SourceError(
            f"{remote.key} {url}: the server says its repository is corrupt ({said}): "
            "run git fsck there"
        )
    if cause is Cause.NO_SUCH_HOST:
        host = _host(remote.url)
        return ConfigError(f"{where}: the host {host} does not resolve (no such name in DNS)")
    if cause is Cause.TLS_CERTIFICATE:
        return ConfigError(f"{where}: {_certificate_advice(remote, exc)}")
    if cause is Cause.REDIRECT_LOOP:
        return ConfigError(
            f"{where}: the server redirects more than {MAX_REDIRECTS} times"
            f"{_last_redirect(exc)} (a loop?): is the URL the repository's clone URL?"
        )
    if cause is Cause.NOT_GIT:
        sent = "it sent an HTML page" if _HTML.search(said) else "its answer is not git's protocol"
        return ConfigError(
            f"{where}: this URL does not answer as a git server ({sent}): is it the "
            "repository's clone URL?"
        )
    if cause is Cause.NOT_TLS:
        return ConfigError(
            f"{where}: the server does not speak TLS there (OpenSSL: wrong version number): "
            "is it an http:// URL?"
        )
    return ConfigError(f"{where}: {_advice(remote, cause, status, said, doing)}")


def damaged_pack(remote: Remote, detail: str) -> SourceError:
    """The error for a pack ``remote`` sent that cannot be read (``detail``: dulwich's
    words, one line): bad input, as a server saying its repository is corrupt is (exit 1),
    not the mirror's damage."""
    return SourceError(
        f"{remote.key} {redact_url(remote.url)}: the pack the server sent cannot be read "
        f"({redact_text(detail)}): is its repository damaged? (run git fsck there)"
    )


def _advice(remote: Remote, cause: Cause, status: int | None, said: str, doing: str) -> str:
    """What ``cause`` means for ``remote``, and what to do, in words; ``status`` is the HTTP
    status that told it, else ``said`` (the server's or ssh's words) did."""
    token_key = remote.key_of("token_env")
    may = "push to" if doing == "push to" else "read"
    code = f"HTTP {status}" if status is not None else said
    if cause is Cause.NOT_FOUND:
        return f"no git repository there ({_status_words(status) if status else said})"
    if cause is Cause.UNAUTHORIZED and remote.token_env is not None:
        return (
            f"the server refused the token in {remote.token_env} ({code}): check the token, "
            f"and that it may {may} the repository"
        )
    if cause is Cause.UNAUTHORIZED:
        return (
            f"the server wants credentials ({code}): set {token_key} to the name of an "
            "environment variable holding an access token (sent as HTTP basic auth), or use "
            "an ssh:// URL with a key"
        )
    if cause is Cause.FORBIDDEN:
        given = f"the token in {remote.token_env}" if remote.token_env else "no credentials"
        return (
            f"the server refuses access ({code}) with {given}: give deploybot a token that "
            f"may {may} the repository ({token_key})"
        )
    if cause is Cause.PROXY_AUTH:
        return f"the HTTP proxy wants credentials ({code}): give them in https_proxy/http_proxy"
    if cause is Cause.REFUSED:
        return f"the server refuses the request ({_status_words(status) if status else said})"
    if cause is Cause.HOST_KEY:
        return (
            f"ssh does not know the server's host key ({said}): add it to ~/.ssh/known_hosts "
            f"of the user running deploybot ({_keyscan(remote.url)})"
        )
    return (  # Cause.SSH_LOGIN
        f"ssh could not log in ({said}): give the ssh key of the user running deploybot "
        f"access to the repository (a deploy key), or use an https:// URL with {token_key}"
    )


def _certificate_advice(remote: Remote, exc: BaseException) -> str:
    """Why the server's TLS certificate was refused (OpenSSL's words: ``self-signed
    certificate``, ``certificate has expired``, a host name mismatch), and what to do."""
    why = next(
        (
            getattr(inner, "verify_message", None) or one_line(inner)
            for inner in exception_chain(exc, _LINKS)
            if _is_instance(inner, "ssl", "SSLCertVerificationError")
        ),
        "certificate verify failed",
    )
    return (
        f"the TLS certificate of {_host(remote.url)} cannot be verified ({why}): give the "
        "server a certificate from an authority this machine trusts, or add its authority "
        "to the system's trust store (or a CA bundle holding it in the environment variable "
        "SSL_CERT_FILE)"
    )


def _overrun(
    remote: Remote, url: str, overrun: Overrun, doing: str, error: type[TemporaryError]
) -> DeploybotError:
    if overrun.bound is Bound.DEADLINE:
        return error(f"cannot {doing} {url}: {overrun} in all ({remote.key_of('timeout')})")
    if overrun.bound is Bound.SIZE:
        return ConfigError(
            f"'{remote.key_of('max_fetch_bytes')}': {url} {overrun} in one {doing.split()[0]}: "
            "raise it if the repository is that big"
        )
    return ConfigError(
        f"'{remote.key}' {url}: the server {overrun}, more than deploybot reads from one "
        "server: is it the git repository meant?"
    )


# The start of an HTML page as dulwich quotes it: the first bytes of the answer (b'<!DO' for
# a pkt-line length) or its first line (info/refs).
_HTML = re.compile(r"b['\"]\s*<(!doctype|!do|html|htm|head|body|\?xml|!--)", re.IGNORECASE)


def _last_redirect(exc: BaseException) -> str:
    """``, the last time to <URL>`` (redacted): where urllib3's ``MaxRetryError`` under
    ``exc`` was sent last; "" when it does not say."""
    for inner in exception_chain(exc, _LINKS):
        url = getattr(inner, "url", None)
        if _is_instance(inner, "urllib3.exceptions", "MaxRetryError") and isinstance(url, str):
            return f", the last time to {redact_url(url)}"
    return ""


def _keyscan(url: str) -> str:
    """The ``ssh-keyscan`` command line printing the host keys of the ssh ``url``'s server
    (with ``-p`` for a port other than 22: known_hosts keys them by host and port)."""
    try:
        port = urlsplit(url).port if "://" in url else None
    except ValueError:
        port = None
    return f"ssh-keyscan {f'-p {port} ' if port not in (None, 22) else ''}{_host(url)}"


def _host(url: str) -> str:
    """The host of a git URL or scp-like address."""
    if "://" in url:
        return urlsplit(url).hostname or "?"
    return url.partition(":")[0].rpartition("@")[2]
