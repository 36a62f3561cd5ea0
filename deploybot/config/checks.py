"""Value rules for ``deploybot.toml`` keys, applied by :mod:`deploybot.config.load` at load.

Each ``check_*`` function takes the value, the dotted key and the config file, and raises
:class:`~deploybot.support.errors.ConfigError` naming both when the value cannot work; it returns
nothing (or the value as it will be used). The rules follow the tools that later read the
value: git's ``check-ref-format`` for branches (via dulwich's implementation), the URL
forms dulwich's ``get_transport_and_path`` maps to a transport, POSIX names for environment
variables, and the ranges a socket accepts for ports and timeouts.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

from dulwich.refs import Ref, check_ref_format

from deploybot.git.locations import config_base, is_remote_url, resolve_location
from deploybot.support.errors import ConfigError
from deploybot.support.redact import redact_text, redact_url

GIT_SCHEMES = ("file", "http", "https", "ssh", "git", "git+ssh")
"""The URL schemes dulwich 1.2's ``get_transport_and_path`` gives a transport to; any other
``scheme://`` falls through to its scp-like parser and runs ``ssh`` to a host named after
the scheme (``ftp://h/x`` -> ``ssh ftp``)."""

SCHEME_ALIASES = {"ssh+git": "ssh"}
"""Spellings git accepts that dulwich does not, rewritten to the one dulwich reads."""

MAX_TIMEOUT = 86400.0
"""The longest timeout accepted, in seconds (one day); longer ones are surely a mistake."""

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# git's transport helper form, <helper>::<address> (transport.c, transport_get: a run of
# URL scheme characters, then "::"), which runs git-remote-<helper>; ext:: runs any command.
_HELPER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::")
# git's rule (connect.c, url_is_local_not_ssh): a colon before any slash makes it scp-like.
_SCP_RE = re.compile(r"^(?:[^/@:]+@)?([^/:]+):")
# scp-like user:password@: a colon, then an '@', before any '/' of the part before the '@'.
_SCP_PASSWORD_RE = re.compile(r"^[^/@:]*:[^/@]*@")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f]")
_HOST_RE = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_-]+)*\.?$"
)
_IPV6_RE = re.compile(r"^[0-9A-Fa-f:.]+$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _fail(path: Path, key: str, what: str) -> ConfigError:
    return ConfigError(f"{path}: '{key}' {what}")


def check_git_url(url: str, key: str, path: Path) -> str:
    """Check a git remote (``source.url``, ``publish.url``); return it as dulwich should get it.

    Accepted: a local path, ``file://``, ``http(s)://``, ``git://``, ``ssh://``,
    ``git+ssh://`` (``ssh+git://`` is rewritten to ``ssh://``), and scp-like
    ``[user@]host:path``. A URL needs a host; a port must be 1-65535.

    Raises:
        ConfigError: empty, a control character, a transport helper address
            (``ext::...``, ``fd::...``, any ``<helper>::``: git runs a program for it, and
            dulwich read ``ext::sh -c ...`` as ssh to the host ``ext``), another scheme, no
            host, or a bad port.
    """
    if not url.strip() or _CONTROL_RE.search(url):
        raise _fail(path, key, f"must be a path or a git URL, not {redact_url(url)!r}")
    helper = _HELPER_RE.match(url)
    if helper is not None:
        raise _fail(
            path,
            key,
            f"is a transport helper address ({helper.group(1)}::), which git runs a program "
            "for (git-remote-" + helper.group(1) + "; ext:: runs any command): deploybot "
            "fetches only a local path, file://, http(s)://, ssh://, git:// or user@host:path",
        )
    match = _SCHEME_RE.match(url)
    if match is None:
        scp = _SCP_RE.match(url)
        if scp is None and _SCP_PASSWORD_RE.match(url) is None:
            return url  # a local path
        _check_scp_like(url, key, path)
        if scp is None or not _is_host(scp.group(1)):
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
    elif _split(url, key, path).netloc:
        raise _fail(path, key, "must name no host after file:// (file:///path/to/repo.git)")
    return url


def _check_scp_like(url: str, key: str, path: Path) -> None:
    """Refuse the scp-like forms no transport reads as written: ``user:password@host:path``
    (ssh takes no password in the address; dulwich would run ssh to the host ``user``),
    and ``git:...``, ``ssh:...``, ``http:...`` (any scheme dulwich knows, without ``//``),
    which dulwich's ``urlparse`` reads as that scheme with no host (an AssertionError)."""
    if _SCP_PASSWORD_RE.match(url):
        raise _fail(
            path,
            key,
            "has a password before '@', which ssh does not take in the address: use an SSH "
            "key, or an https:// URL with the token in an environment variable (token_env)",
        )
    scheme = url.partition(":")[0].lower()
    if scheme in GIT_SCHEMES:
        raise _fail(
            path,
            key,
            f"reads as the URL scheme {scheme}: with no '//' and no host (dulwich reads "
            f"'{scheme}:...' so, not as host:path): write {scheme}://host/path",
        )


def check_token_env(token_env: str | None, url: str, key: str, url_key: str, path: Path) -> None:
    """Check the ``token_env`` given by ``key`` against the remote ``url`` (given by
    ``url_key``) it logs in to: a variable name (:func:`check_env_name`), for an
    ``http(s)://`` URL only (the token goes as the password of HTTP basic auth; ssh logs
    in with keys), and no password in ``url`` too.

    Raises:
        ConfigError: naming the key and ``path``.
    """
    check_env_name(token_env, key, path)
    if token_env is None:
        return
    match = _SCHEME_RE.match(url)
    if match is None or match.group(1).lower() not in ("http", "https"):
        raise _fail(
            path,
            key,
            f"is for http(s):// URLs (the token is sent as HTTP basic auth), not "
            f"{redact_url(url)!r}: ssh logs in with a key",
        )
    if _split(url, key, path).password is not None:
        raise _fail(
            path,
            key,
            f"names a token and '{url_key}' holds a password: keep the token, out of "
            "the file, and drop the password from the URL",
        )


def repository_key(url: str) -> str:
    """What names the repository at ``url``, so that two spellings of one compare equal.

    A local path or ``file://`` URL gives ``file:`` + its git directory: absolute, with
    ``~`` expanded and symlinks resolved; the ``.git`` folder of a work tree (a folder or a
    ``gitdir:`` file); and the main repository of a linked worktree (git's ``commondir``
    file: its branches are the main repository's). A network URL gives host and path, lower
    case, without scheme, user, port, percent-encoding, a leading ``~/``, ``.git`` and
    slashes at either end: ``https://github.com/o/r``, ``git@github.com:o/r.git``,
    ``ssh://git@github.com:22/o/r.git`` and ``git://github.com/o/r`` all give
    ``github.com/o/r``. Forges serve a repository at one path over https and ssh and match
    owner and name without case, collapse runs of slashes in the path (``o//r`` is
    ``o/r``), and an scp-like path is the ssh path relative to the home folder; so this
    errs on the side of "the same" (where the answer refuses a config, wrongly
    "different" would let a build overwrite its source).
    """
    url = url.strip()
    scheme = _SCHEME_RE.match(url)
    if scheme and scheme.group(1).lower() == "file":
        return "file:" + _git_dir(unquote(urlsplit(url).path))
    if scheme:
        parts = urlsplit(url)
        host, where = parts.hostname or "", unquote(parts.path)
    elif is_remote_url(url):  # scp-like [user@]host:path
        user_host, _, where = url.partition(":")
        host = user_host.rpartition("@")[2].strip("[]")
    else:
        return "file:" + _git_dir(url)
    # forges collapse runs of slashes (github.com/o//r is o/r), and so do file systems
    where = re.sub("/+", "/", where).strip("/").removeprefix("~/").removesuffix(".git")
    where = where.strip("/")
    return f"{host.lower().rstrip('.')}/{where.lower()}"


def _git_dir(folder: str) -> str:
    """The git directory of the repository at ``folder`` (see :func:`repository_key`)."""
    folder = os.path.realpath(os.path.expanduser(folder))
    dot = os.path.join(folder, ".git")
    if os.path.isdir(dot):
        folder = dot
    else:
        gitfile = _first_line(dot)  # git's gitfile (setup.c, read_gitfile): "gitdir: <path>"
        if gitfile.startswith("gitdir:"):
            folder = os.path.join(folder, gitfile.removeprefix("gitdir:").strip())
    common = _first_line(os.path.join(folder, "commondir"))
    if common:
        folder = os.path.join(folder, common)
    return os.path.realpath(folder)


def _first_line(file: str) -> str:
    """The first line of the regular file ``file``, stripped; "" when there is none."""
    if not os.path.isfile(file):  # not a FIFO, whose open would wait for a writer
        return ""
    try:
        with open(file, encoding="utf-8", errors="surrogateescape") as text:
            return text.readline(4096).strip()
    except OSError:
        return ""


def check_not_onto_source(
    source: tuple[str, str], publish: tuple[str, str], publish_url_set: bool, path: Path
) -> None:
    """Refuse publishing onto the source branch: ``publish`` (url, branch) naming the
    branch of ``source`` (url, branch) in the same repository (:func:`repository_key`;
    branches compared by :func:`branch_name`), which each build would replace with its
    own output (and build that output next time).

    Raises:
        ConfigError: naming ``publish.branch``, ``source.branch`` and ``path``.
    """
    (source_url, source_branch), (publish_url, publish_branch) = source, publish
    if branch_name(source_branch) != branch_name(publish_branch):
        return
    if repository_key(source_url) != repository_key(publish_url):
        return
    why = (
        f"'publish.url' {redact_url(publish_url)!r} and 'source.url' "
        f"{redact_url(source_url)!r} name one repository"
        if publish_url_set
        else "'publish.url' is not set, so it is source.url"
    )
    raise _fail(
        path,
        "publish.branch",
        f"is 'source.branch' ({source_branch!r}) of the same repository ({why}): each build "
        "would replace the site source with its output; set publish.branch to another "
        "branch (asf-site, gh-pages) or publish.url to another repository",
    )


def check_http_url(url: str, key: str, path: Path) -> None:
    """Check an ``http://`` or ``https://`` URL with a host (``notify.webhook.url``).

    Raises:
        ConfigError: another scheme (``file://`` included), no scheme, no host, a bad port,
            whitespace or a control character.
    """
    scheme = _split(url, key, path).scheme.lower() if _SCHEME_RE.match(url) else ""
    if scheme not in ("http", "https") or re.search(r"\s", url) or _CONTROL_RE.search(url):
        raise _fail(path, key, "must be an http:// or https:// URL")
    _check_host_and_port(url, key, path)


def _split(url: str, key: str, path: Path) -> SplitResult:
    """``urlsplit(url)``; ConfigError for what it refuses (an unclosed ``[`` of an IPv6
    host, a bad IDNA name), without the URL (it may hold a secret)."""
    try:
        return urlsplit(url)
    except ValueError as exc:
        raise _fail(path, key, f"is not a valid URL (RFC 3986): {exc}") from None


def _check_host_and_port(url: str, key: str, path: Path) -> None:
    parts = _split(url, key, path)
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


def check_fraction(value: float, key: str, path: Path) -> None:
    """Check a fraction: from 0 to 1 (``nan`` refused).

    Raises:
        ConfigError: below 0, above 1 or not a number.
    """
    if not 0 <= value <= 1:
        raise _fail(path, key, f"must be a fraction from 0 to 1, not {value!r}")


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

    A name starting with ``refs/`` is refused too: git takes ``refs/heads/gh-pages`` as
    the branch ``refs/heads/refs/heads/gh-pages``, where no one (GitHub Pages included)
    looks for it; it is surely a refname given for a branch name.

    Raises:
        ConfigError: the name is not a valid branch name, or is a refname.
    """
    normal = re.sub("/+", "/", branch).lstrip("/")
    if normal.startswith("refs/"):
        name = normal.removeprefix("refs/heads/")
        instead = (
            f"give the branch name, {name}, not the refname {branch}"
            if name != normal and name
            else f"give the name of a branch (gh-pages), not the refname {branch}"
        )
        raise _fail(path, key, f"must be a branch name, not a refname: {instead}")
    ok = (
        bool(branch)
        and not branch.startswith("-")
        and branch != "HEAD"
        and check_ref_format(Ref(b"refs/heads/" + branch.encode("utf-8", "surrogateescape")))
    )
    if not ok:
        raise _fail(path, key, f"is not a valid git branch name (git check-ref-format): {branch!r}")


def branch_name(branch: str) -> str:
    """``branch`` as git normalises a ref name (``git check-ref-format --normalize``:
    leading slashes dropped, runs of slashes made one), and a refname under
    ``refs/heads/`` as the name of its branch: ``/main``, ``refs/heads//main`` -> ``main``.
    For comparing branch names (:func:`check_not_onto_source`)."""
    return re.sub("/+", "/", branch).lstrip("/").removeprefix("refs/heads/")


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


def check_one_line(
    value: str, key: str, path: Path, *, empty_ok: bool = True, url: bool = False
) -> None:
    """Check text that goes into one line of an email or a commit: no control characters
    (line breaks included) and, unless ``empty_ok``, not empty. ``url``: the value is a URL,
    shown without its secrets (:func:`~deploybot.support.redact.redact_url`)."""
    if _CONTROL_RE.search(value) or (not empty_ok and not value.strip()):
        need = "one line of text" if empty_ok else "one non-empty line of text"
        shown = redact_url(value) if url else redact_text(value)
        raise _fail(path, key, f"must be {need}, not {shown!r}")


def check_branch_globs(globs: tuple[str, ...], key: str, path: Path) -> None:
    """Check ``preview.branches``: each an fnmatch glob of branch names (``feature/*``):
    one non-empty line without spaces, not a refname (``refs/heads/...``).

    Raises:
        ConfigError: naming the key and the entry.
    """
    for glob in globs:
        check_one_line(glob, key, path, empty_ok=False)
        if any(c.isspace() for c in glob):
            raise _fail(path, key, f"entries are branch globs without spaces, not {glob!r}")
        if glob.lstrip("/").startswith("refs/"):
            raise _fail(path, key, f"entries are branch names (feature/*), not refnames: {glob!r}")


def check_not_onto_branch(
    target: tuple[str, str], other: tuple[str, str], keys: tuple[str, str], path: Path
) -> None:
    """Refuse ``target`` (url, branch) naming the branch ``other`` (url, branch) of the same
    repository (:func:`repository_key`, branches by :func:`branch_name`); ``keys`` name the
    two branches' keys in the message (``preview.publish_branch``, ``publish.branch``).

    Raises:
        ConfigError: naming both keys and ``path``.
    """
    (target_url, target_branch), (other_url, other_branch) = target, other
    if branch_name(target_branch) != branch_name(other_branch):
        return
    if repository_key(target_url) != repository_key(other_url):
        return
    raise _fail(
        path, keys[0],
        f"is {keys[1]!r} ({other_branch!r}) of the same repository: previews would overwrite "
        f"it; set {keys[0]} to another branch (previews) or preview.url to another repository",
    )  # fmt: skip


def check_message(message: str, key: str, path: Path) -> None:
    """Check a commit message template (``publish.message``): one non-empty line."""
    check_one_line(message, key, path, empty_ok=False)


def check_url_text(url: str, key: str, path: Path) -> None:
    """Check a URL shown in an email (``notify.repository_url``): one line, shown redacted."""
    check_one_line(url, key, path, url=True)


def check_keep(prefixes: tuple[str, ...], key: str, path: Path) -> None:
    """Check the path prefixes a build never touches (``publish.keep``): each a clean
    relative path (:func:`check_relative_path`)."""
    for prefix in prefixes:
        check_relative_path(prefix, key, path, "entries must be paths relative to the branch root")


def check_themes(entries: tuple[str, ...], key: str, path: Path) -> tuple[str, ...]:
    """Check ``render.themes``: each entry ``GEM=LOCATION`` (a gem name, then a git URL or
    path with ``@REF``, or a folder); return them with each local path made absolute
    against the config file's folder (:func:`deploybot.git.locations.resolve_location`)."""
    resolved: list[str] = []
    for entry in entries:
        gem, equals, where = (part.strip() for part in entry.partition("="))
        if not equals or not gem or not where or _CONTROL_RE.search(entry) is not None:
            raise _fail(path, key, f'entries must be "GEM=LOCATION", not {entry!r}')
        head, slash, last = where.rpartition("/")
        name, at, ref = last.partition("@")
        location = resolve_location(head + slash + name, config_base(path))
        resolved.append(f"{gem}={location}{at}{ref}")
    return tuple(resolved)


def check_theme(theme: str, key: str, path: Path) -> None:
    """Check ``render.theme``: ``"default"`` or a clean relative path in the source."""
    if theme != "default":
        check_relative_path(theme, key, path, 'must be "default" or a folder in the source')


KERNEL_FILE_SYSTEMS = (Path("/proc"), Path("/sys"))
"""Where Linux mounts its own file systems (procfs, sysfs): nothing there holds mail."""

_FILE_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def check_file_location(file: Path, key: str, path: Path) -> None:
    """Check that ``file`` (absolute, resolved; ``notify.mbox``) is, or can be created as,
    a regular file deploybot can read and write: not on /proc or /sys, not a folder, a
    device, a FIFO or a socket, not an existing file without read and write permission
    (``os.access``: a read-only file system fails for root too), no folder above it that is
    a file, and the nearest existing folder above a missing one writable.

    Raises:
        ConfigError: naming ``key``, ``path`` and what is wrong.
    """
    for root in KERNEL_FILE_SYSTEMS:
        if file == root or root in file.parents:
            raise _fail(path, key, f"{file} is on the kernel's {root} file system, not a file")
    try:
        mode = file.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        _check_parents(file.parent, key, path)
        check_writable_folder(file.parent, key, path)
        return
    except OSError as exc:
        raise _fail(path, key, f"{file} cannot be examined: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise _fail(path, key, f"{file} is a folder, not a file")
    for test, kind in _FILE_KINDS:
        if test(mode):
            raise _fail(path, key, f"{file} is {kind}, not a regular file")
    if not os.access(file, os.R_OK | os.W_OK):
        raise _fail(path, key, f"{file} is not writable")


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


AUTHOR_RE = re.compile(r"^\s*([^<>]*?)\s*<([^<>\s]+)>\s*$")
"""``Name <email>``: group 1 the name, group 2 the address (as git's ident lines)."""


def check_author(author: str, key: str, path: Path) -> None:
    """Check a ``Name <email>`` (``publish.author``). Raises ConfigError otherwise."""
    if not AUTHOR_RE.match(author) or "\n" in author:
        raise _fail(path, key, f"must look like 'Name <email>', not {author!r}")


_BARE_ADDR_RE = re.compile(r"^[^\x00-\x20\x7f<>\",@]+@[^\x00-\x20\x7f<>\",@]+$")
_SENDER_RE = re.compile(r"^\s*(?:[^<>]*<([^<>]+)>|([^<>\s]+))\s*$")


def check_to(to: tuple[str, ...], key: str, path: Path) -> None:
    """Reject a recipient the email layer cannot use (``notify.to``: bare ASCII addresses),
    at load time (exit 78), not mid-run. Raises ConfigError naming the key."""
    for addr in to:
        if not (addr.isascii() and _BARE_ADDR_RE.match(addr)):
            raise _fail(
                path,
                key,
                f"entries must be bare addresses like 'commits@example.org' (no display "
                f"name), not {addr!r}",
            )


def check_sender(sender: str, key: str, path: Path) -> None:
    """Reject a sender the email layer cannot use (``notify.from``: ``addr@host`` or
    ``Name <addr@host>``), at load time. Raises ConfigError naming the key."""
    m = _SENDER_RE.match(sender)
    addr = (m.group(1) or m.group(2)) if m else ""
    if not (addr.isascii() and _BARE_ADDR_RE.match(addr)):
        raise _fail(path, key, f"must be 'addr@host' or 'Name <addr@host>', not {sender!r}")


def check_timezone(tz: str | None, key: str, path: Path) -> None:
    """Check an IANA timezone name (``zoneinfo``); None passes. Raises ConfigError."""
    if tz is None:
        return
    import zoneinfo  # here: its import reads sysconfig (4 ms), and most commands set no timezone

    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _fail(path, key, f"is not a known IANA timezone: {tz!r}") from None


UNIX_PREFIX = "unix:"
_SUN_PATH_MAX = 107  # bytes of a socket path (sockaddr_un's sun_path[108], NUL included: unix(7))


def parse_listen(value: str) -> tuple[str, int] | Path:
    """Read ``[daemon] listen``: ``HOST:PORT`` (an IPv6 address in brackets:
    ``[::1]:8787``; port 0 = any free port) -> ``(host, port)``, or ``unix:PATH`` -> the
    path (relative paths are the caller's to resolve).

    Raises:
        ValueError: what is wrong, in words (for :func:`check_listen`).
    """
    if value.startswith(UNIX_PREFIX):
        socket_path = value[len(UNIX_PREFIX) :]
        if not socket_path or _CONTROL_RE.search(socket_path):
            raise ValueError("unix: needs a path (no control characters)")
        return Path(socket_path)
    host, colon, port = value.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:
            raise ValueError("brackets hold an IPv6 address")
    elif ":" in host:
        raise ValueError("an IPv6 address goes in brackets: [::1]:8787")
    if not colon or not port.isascii() or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError("needs a port from 0 to 65535 after the last ':'")
    if not _is_host(host):
        raise ValueError(f"{host!r} is not a host name or IP address")
    return host, int(port)


def check_listen(value: str, key: str, path: Path) -> None:
    """Check ``[daemon] listen`` (see :func:`parse_listen`). Raises ConfigError."""
    try:
        parse_listen(value)
    except ValueError as exc:
        raise _fail(
            path, key, f"must be HOST:PORT (127.0.0.1:8787) or unix:/path, not {value!r}: {exc}"
        ) from None


def check_socket_path(socket_path: Path, key: str, path: Path) -> None:
    """Check that a resolved Unix socket path fits ``sun_path``. Raises ConfigError."""
    if len(os.fsencode(socket_path)) > _SUN_PATH_MAX:
        raise _fail(path, key, f"socket path {socket_path} is longer than {_SUN_PATH_MAX} bytes")


_SITE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_site_name(name: str, key: str, path: Path) -> None:
    """Check a site's name (``/webhook/<name>``): 1 to 64 of letters, digits, ``.``, ``_``,
    ``-``, starting with a letter or digit. Raises ConfigError."""
    if not _SITE_NAME_RE.match(name):
        raise _fail(
            path,
            key,
            f"must be 1 to 64 letters, digits, '.', '_' or '-' (a URL path), not {name!r}",
        )


def author_name(author: str) -> str:
    """Return the name part of ``"Name <email>"``."""
    m = AUTHOR_RE.match(author)
    return m.group(1) if m else author
