"""Value rules for ``deploybot.toml`` keys, applied by :mod:`deploybot.config` at load.

Each ``check_*`` function takes the value, the dotted key and the config file, and raises
:class:`~deploybot.errors.ConfigError` naming both when the value cannot work; it returns
nothing (or the value as it will be used). The rules follow the tools that later read the
value: git's ``check-ref-format`` for branches (via dulwich's implementation), the URL
forms dulwich's ``get_transport_and_path`` maps to a transport, POSIX names for environment
variables, and the ranges a socket accepts for ports and timeouts.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from dulwich.refs import Ref, check_ref_format

from deploybot.errors import ConfigError
from deploybot.redact import redact_url

GIT_SCHEMES = ("file", "http", "https", "ssh", "git", "git+ssh")
"""The URL schemes dulwich 1.2's ``get_transport_and_path`` gives a transport to; any other
``scheme://`` falls through to its scp-like parser and runs ``ssh`` to a host named after
the scheme (``ftp://h/x`` -> ``ssh ftp``)."""

SCHEME_ALIASES = {"ssh+git": "ssh"}
"""Spellings git accepts that dulwich does not, rewritten to the one dulwich reads."""

MAX_TIMEOUT = 86400.0
"""The longest timeout accepted, in seconds (one day); longer ones are surely a mistake."""

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# git's rule (connect.c, url_is_local_not_ssh): a colon before any slash makes it scp-like.
_SCP_RE = re.compile(r"^(?:[^/@:]+@)?([^/:]+):")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f]")
_HOST_RE = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_-]+)*\.?$"
)
_IPV6_RE = re.compile(r"^[0-9A-Fa-f:.]+$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _fail(path: Path, key: str, what: str) -> ConfigError:
    return ConfigError(f"{path}: '{key}' {what}")


def is_remote_url(url: str) -> bool:
    """True for ``scheme://…`` URLs and scp-like ``[user@]host:path`` (a colon before any
    slash, as git decides); False for local paths."""
    return bool(_SCHEME_RE.match(url) or _SCP_RE.match(url))


def check_git_url(url: str, key: str, path: Path) -> str:
    """Check a git remote (``source.url``, ``publish.url``); return it as dulwich should get it.

    Accepted: a local path, ``file://``, ``http(s)://``, ``git://``, ``ssh://``,
    ``git+ssh://`` (``ssh+git://`` is rewritten to ``ssh://``), and scp-like
    ``[user@]host:path``. A URL needs a host; a port must be 1-65535.

    Raises:
        ConfigError: empty, a control character, another scheme, no host, or a bad port.
    """
    if not url.strip() or _CONTROL_RE.search(url):
        raise _fail(path, key, f"must be a path or a git URL, not {redact_url(url)!r}")
    match = _SCHEME_RE.match(url)
    if match is None:
        scp = _SCP_RE.match(url)
        if scp is not None and not _is_host(scp.group(1)):
            raise _fail(path, key, f"names no valid host before ':' in {redact_url(url)!r}")
        return url
    scheme = match.group(1).lower()
    if scheme in SCHEME_ALIASES:
        scheme = SCHEME_ALIASES[scheme]
        url = scheme + url[match.end(1) :]
    if scheme not in GIT_SCHEMES:
        schemes = ", ".join(f"{s}://" for s in GIT_SCHEMES)
        shown = redact_url(url)
        raise _fail(path, key, f"must be a local path, {schemes} or user@host:path, not {shown!r}")
    if scheme != "file":
        _check_host_and_port(url, key, path)
    return url


def check_http_url(url: str, key: str, path: Path) -> None:
    """Check an ``http://`` or ``https://`` URL with a host (``notify.webhook.url``).

    Raises:
        ConfigError: another scheme (``file://`` included), no scheme, no host, a bad port,
            whitespace or a control character.
    """
    scheme = urlsplit(url).scheme.lower() if _SCHEME_RE.match(url) else ""
    if scheme not in ("http", "https") or re.search(r"\s", url) or _CONTROL_RE.search(url):
        raise _fail(path, key, "must be an http:// or https:// URL")
    _check_host_and_port(url, key, path)


def _check_host_and_port(url: str, key: str, path: Path) -> None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise _fail(path, key, "has a port that is not a number from 1 to 65535") from None
    if not parts.hostname or not _is_host(parts.hostname):
        raise _fail(path, key, "must name a host (scheme://host/...)")
    if port is not None and not 1 <= port <= 65535:
        raise _fail(path, key, "has a port that is not a number from 1 to 65535")


def _is_host(host: str) -> bool:
    return bool(_HOST_RE.match(host) or (":" in host and _IPV6_RE.match(host)))


def check_host(host: str, key: str, path: Path) -> None:
    """Check a host name or IP address (``notify.smtp.host``).

    Raises:
        ConfigError: empty, or not a host name (RFC 1123 labels) or IP address.
    """
    if not _is_host(host):
        raise _fail(path, key, f"must be a host name or IP address, not {host!r}")


def check_port(port: int, key: str, path: Path) -> None:
    """Check a TCP port: 1-65535. Raises ConfigError otherwise."""
    if not 1 <= port <= 65535:
        raise _fail(path, key, f"must be a port number from 1 to 65535, not {port}")


def check_timeout(seconds: float, key: str, path: Path) -> None:
    """Check a timeout in seconds: finite, more than 0, at most :data:`MAX_TIMEOUT`.

    Raises:
        ConfigError: 0, negative, ``nan``, ``inf`` or more than a day.
    """
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT):
        raise _fail(path, key, f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds")


def check_env_name(name: str | None, key: str, path: Path) -> None:
    """Check the name of an environment variable (POSIX: letters, digits, ``_``)."""
    if name is not None and not _ENV_NAME_RE.match(name):
        raise _fail(path, key, f"must be an environment variable name like MY_VAR, not {name!r}")


def check_branch(branch: str, key: str, path: Path) -> None:
    """Check a branch name as ``git check-ref-format --branch`` does.

    ``refs/heads/<branch>`` must pass git's ref rules (dulwich's ``check_ref_format``: no
    ``..``, ``@{``, space, control or ``~^:?*[\\`` characters, no component starting with
    ``.`` or ending in ``.lock``, no trailing ``/`` or ``.``), and, as ``git branch``
    requires, the name may not start with ``-`` or be ``HEAD``.

    Raises:
        ConfigError: the name is not a valid branch name.
    """
    ok = (
        bool(branch)
        and not branch.startswith("-")
        and branch != "HEAD"
        and check_ref_format(Ref(b"refs/heads/" + branch.encode("utf-8", "surrogateescape")))
    )
    if not ok:
        raise _fail(path, key, f"is not a valid git branch name (git check-ref-format): {branch!r}")


def check_relative_path(value: str, key: str, path: Path, what: str) -> None:
    """Check a clean relative path inside a tree: not empty or absolute, no ``.``/``..`` or
    empty components (a trailing ``/`` is allowed), no backslash or control character."""
    parts = value.rstrip("/").split("/")
    bad = (
        not value.strip()
        or value.startswith("/")
        or "\\" in value
        or _CONTROL_RE.search(value) is not None
        or any(part in ("", ".", "..") for part in parts)
    )
    if bad:
        raise _fail(path, key, f"{what}, not {value!r}")


def check_one_line(value: str, key: str, path: Path, *, empty_ok: bool = True) -> None:
    """Check text that goes into one line of an email or a commit: no control characters
    (line breaks included) and, unless ``empty_ok``, not empty."""
    if _CONTROL_RE.search(value) or (not empty_ok and not value.strip()):
        need = "one line of text" if empty_ok else "one non-empty line of text"
        raise _fail(path, key, f"must be {need}, not {value!r}")


def check_file_location(file: Path, key: str, path: Path) -> None:
    """Check where a file will be written (``notify.mbox``): not a folder, and no folder
    above it that is a file."""
    if file.is_dir():
        raise _fail(path, key, f"{file} is a folder, not a file")
    _check_parents(file.parent, key, path)


def check_folder_location(folder: Path, key: str, path: Path) -> None:
    """Check a folder deploybot creates and writes (``state.dir``): it and every existing
    folder above it are folders."""
    if folder.exists() and not folder.is_dir():
        raise _fail(path, key, f"{folder} is a file, not a folder")
    _check_parents(folder.parent, key, path)


def check_writable_folder(folder: Path, key: str, path: Path | None) -> None:
    """Check that ``folder`` can be written, or created in its nearest existing parent
    (``os.access``: a read-only file system fails for root too).

    Raises:
        ConfigError: it (or the parent it would be made in) is not a writable folder.
    """
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    where = f"{path}: " if path is not None else ""
    if not nearest.is_dir():
        raise ConfigError(f"{where}'{key}' {nearest} is a file, not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        made = "" if nearest == folder else f" (it would be created in {nearest})"
        raise ConfigError(f"{where}'{key}' {folder} is not writable{made}")


def _check_parents(folder: Path, key: str, path: Path) -> None:
    for parent in (folder, *folder.parents):
        if parent.exists():
            if not parent.is_dir():
                raise _fail(path, key, f"{parent} is a file, not a folder")
            return
