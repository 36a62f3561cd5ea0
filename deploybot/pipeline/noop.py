"""A run that has nothing to do, told without doing the run: the no-op stamp.

A ``run-once`` whose source branch was already built fetches both remotes, finds the publish
head's record naming the source tip, delivers nothing and stops ("up to date"). Done in full
that costs a Python process its imports (dulwich, the notify stage, click) and two fetches;
``git fetch`` alone takes a fraction of it. So a run that ends with the publish branch built
from the source tip (published now, or already) and nothing left to deliver writes a *stamp*,
``<state.dir>/noop.stamp``, of everything that decides the next run:

* the config file: a SHA-256 of its resolved path, the folder its relative paths are
  relative to (:func:`deploybot.git.locations.config_base`: a symlink's own folder) and its
  bytes (and the deploybot version);
* the renderer as the file system describes it (:func:`renderer_state`): its modules and
  bundled theme, and the folders its libraries are installed in. The run that writes the
  stamp compared the renderer's fingerprint with the publish head's record
  (:mod:`deploybot.render.fingerprint`); while none of these files changed, that still holds;
* each remote's refs as its files hold them now, for a remote on this machine (a local path
  or ``file://``): the bytes of ``packed-refs`` and of the loose files of the refs a run
  reads (the branch; for the publish remote also ``refs/notes/deploybot``). Written only
  when those refs hold exactly what the run saw: the source branch at the commit built, the
  publish branch and notes at the mirror's (what the run fetched or pushed). Any push to
  either remote changes those bytes;
* the remotes' locations as the config resolves them (:mod:`deploybot.git.locations`, the
  rule both use; a symlink on the way may change);
* ``until``: when the published build holds back a post dated in the future, that date
  (Unix seconds): from then on the stamp no longer holds, since a run must build the same
  source again to publish the post (``next-future`` of the build record). A site with a
  scheduled post keeps its shortcut until the post is due.

The next ``run-once`` without ``--full``, ``--retry-now``, ``--allow-older`` or ``-v`` takes
the state directory's lock and compares. When every part is the same and the outbox holds
nothing to send or prune, a full run would fetch nothing and change nothing, so it prints
the line a full run prints and exits 0, having read a few small files
(:func:`deploybot.cli.entry.main` does so before click is even imported). Anything else runs in
full, and every full run deletes the stamp first, under the lock, before it writes anything:
a run killed part way leaves none. A remote reached over the network has no refs to read
here: no stamp, every run in full (its fetch costs more than the imports anyway); nor does a
site with a Jekyll theme (``theme:``, ``remote_theme:``), which may move with no push to either
remote, nor a site with branch previews (``[preview] branches``), whose branches the stamp
does not read.

Light on purpose (``os.path``, no ``pathlib``, ``json`` or ``typing``): the shortcut costs
what it reads.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from deploybot import __version__
from deploybot.git.locations import config_base, is_remote_url, resolve_location
from deploybot.record.refs import NOTES_REF
from deploybot.render.fingerprint import renderer_files
from deploybot.state import private

TYPE_CHECKING = False  # not typing's: importing typing costs milliseconds
if TYPE_CHECKING:
    from collections.abc import Sequence
    from hashlib import sha256
else:
    try:  # hashlib loads OpenSSL, in milliseconds; its builtin fallback in microseconds
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - a Python without the builtin module
        from hashlib import sha256

STAMP = "noop.stamp"
FORMAT = "3"
KEEP_SENT = 90 * 24 * 3600.0  # deploybot.notify.deliver.outbox.KEEP_SENT
FILED = ("sent", "superseded", "dropped")  # deploybot.notify.deliver.outbox.PRUNED
WAITING = (
    ".eml",
    ".http",
    ".status",
)  # deploybot.notify.deliver.outbox.KINDS: .eml email, .http webhook, .status commit status
_KEY_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_KEY_CHARS = _KEY_FIRST | frozenset("._-")
FILE_URL = "file://"
_KEYS = [
    "format", "version", "renderer", "config", "state_dir", "source_raw", "publish_raw",
    "source_url", "source_branch", "publish_url", "publish_branch", "source_refs",
    "publish_refs", "commit", "build", "until",
]  # fmt: skip

Stamp = dict[str, str]


def refs_of(url: str, refnames: Sequence[str]) -> tuple[str, dict[str, str | None]] | None:
    """Read refs of the repository at ``url`` (a local path or ``file://`` URL) from its
    files: ``(digest of packed-refs and each loose ref file, {refname: 40 hex or None})``;
    None when they cannot be read so: not a bare repository nor one with a ``.git``
    folder, a reftable repository, a symbolic ref."""
    root = url.removeprefix(FILE_URL)
    git_dir = os.path.join(root, ".git")
    if not os.path.isdir(git_dir):
        git_dir = root
    if not os.path.isfile(os.path.join(git_dir, "HEAD")):
        return None
    if os.path.exists(os.path.join(git_dir, "reftable")):
        return None
    digest = sha256(os.path.realpath(git_dir).encode("utf-8", "surrogateescape"))
    packed = _read(os.path.join(git_dir, "packed-refs"))
    digest.update(b"\0packed-refs\0" + (b"-" if packed is None else b"+" + packed))
    values: dict[str, str | None] = {}
    for name in refnames:
        data = _read(os.path.join(git_dir, name))
        digest.update(b"\0%s\0" % name.encode() + (b"-" if data is None else b"+" + data))
        if data is not None:
            value = data.strip().decode("ascii", "replace")
            if len(value) != 40:
                return None  # a symbolic or damaged ref
            values[name] = value
        else:
            values[name] = _packed_value(packed, name)
    return digest.hexdigest(), values


def _packed_value(packed: bytes | None, name: str) -> str | None:
    tail = b" " + name.encode() + b"\n"
    for line in (packed or b"").splitlines(keepends=True):
        if line.endswith(tail) and not line.startswith((b"#", b"^")):
            return line[:40].decode("ascii", "replace")
    return None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def renderer_state() -> str:
    """A digest of the renderer's files (:func:`deploybot.render.fingerprint.renderer_files`) by
    name, size and modification time (ns), and of the modification time of each
    ``*-packages`` folder on ``sys.path``: installing, upgrading or removing a library
    there adds or removes its ``.dist-info`` folder. Stat calls only (no file is read): a
    file that differs in none of these is taken as unchanged, as git's index takes it."""
    digest = sha256()
    folders = [(name, name) for name in sys.path if name.endswith("-packages")]
    for name, path in [*renderer_files(), *folders]:
        try:
            info = os.stat(path)
        except OSError:
            digest.update(b"\0%s\0-" % name.encode("utf-8", "surrogateescape"))
            continue
        seen = f"\0{name}\0{info.st_size} {info.st_mtime_ns}"
        digest.update(seen.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def config_digest(path: str | os.PathLike[str], base: str) -> str | None:
    """SHA-256 of the config file's resolved path, the folder its relative paths are
    relative to (``base``: :func:`deploybot.git.locations.config_base` of the name it was
    given) and its bytes; None when unreadable. Two names of one file (a symlink) with
    two bases are two sites, with two digests."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    where = os.path.realpath(path).encode("utf-8", "surrogateescape")
    folder = base.encode("utf-8", "surrogateescape")
    return sha256(where + b"\0" + folder + b"\0" + data).hexdigest()


def outbox_clear(outbox: str | os.PathLike[str], now: float) -> bool:
    """Whether the outbox holds no message waiting (what
    :func:`deploybot.notify.deliver.outbox.list_pending` lists: ``<key>.eml`` or ``<key>.http``; not
    an orphan sidecar or a temp file a kill left) and no delivered message due for pruning
    (what :func:`deploybot.notify.deliver.outbox.prune_delivered` deletes at ``now``)."""
    try:
        entries = list(os.scandir(outbox))
    except (FileNotFoundError, NotADirectoryError):
        return True
    for entry in entries:
        stem, dot, suffix = entry.name.rpartition(".")
        if dot and "." + suffix in WAITING and _is_key(stem):
            return False
    for folder in FILED:
        try:
            filed = list(os.scandir(os.path.join(outbox, folder)))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for done in filed:
            if done.is_file() and done.stat().st_mtime < now - KEEP_SENT:
                return False
    return True


def _is_key(stem: str) -> bool:
    """Whether ``stem`` is an outbox key (``deploybot.notify.deliver.outbox._KEY_RE``, whose ``$``
    also matches before a final newline): 1-200 of ``[A-Za-z0-9._-]``, the first alnum."""
    stem = stem.removesuffix("\n")
    return 0 < len(stem) <= 200 and stem[0] in _KEY_FIRST and _KEY_CHARS.issuperset(stem)


def write(state_dir: str | os.PathLike[str], facts: Stamp) -> bool:
    """Write the stamp atomically; False (and none) when a value cannot be stored in it
    (a newline in a path) or the write fails: that only costs the next run its shortcut."""
    stamp = {"format": FORMAT, "version": __version__, "renderer": renderer_state(), **facts}
    if set(stamp) != set(_KEYS) or any("\n" in value for value in stamp.values()):
        return False
    path = os.path.join(state_dir, STAMP)
    temp = os.path.join(state_dir, f".{STAMP}.{os.getpid()}.tmp")
    text = "".join(f"{key} {stamp[key]}\n" for key in _KEYS)
    try:
        with open(private.create(temp), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        os.replace(temp, path)
    except OSError:
        _unlink(temp)
        return False
    return True


def forget(state_dir: str | os.PathLike[str]) -> None:
    """Delete the stamp: this run may change what it describes."""
    _unlink(os.path.join(state_dir, STAMP))


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return  # (contextlib.suppress: an import this module does without)


def read(state_dir: str | os.PathLike[str]) -> Stamp | None:
    """The stamp, or None when there is none, it is damaged (keys, or an ``until`` that is
    no number) or of another version or renderer (:func:`renderer_state`)."""
    try:
        with open(os.path.join(state_dir, STAMP), encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    stamp = dict(line.split(" ", 1) for line in lines if " " in line)
    if list(stamp) != _KEYS or stamp["format"] != FORMAT or stamp["version"] != __version__:
        return None
    try:
        float(stamp["until"] or 0)
    except ValueError:  # damaged: only a full run can tell
        return None
    if stamp["renderer"] != renderer_state():
        return None  # the renderer changed: the output may too
    return stamp


def still_holds(
    state_dir: str | os.PathLike[str], config: str | None, now: float, clock: float | None = None
) -> Stamp | None:
    """The stamp when it still describes things: same config digest ``config``, the
    remotes' refs as stamped, the outbox clear at ``now`` (Unix seconds), and the run's
    wall clock ``clock`` (default ``now``) before the stamp's ``until``; else None. The
    caller holds the state directory's lock."""
    stamp = read(state_dir)
    if stamp is None or config is None or stamp["config"] != config:
        return None
    if stamp["until"] and (now if clock is None else clock) >= float(stamp["until"]):
        return None  # a held-back post is due: the run builds again
    if not outbox_clear(os.path.join(state_dir, "outbox"), now):
        return None
    source = refs_of(stamp["source_url"], [f"refs/heads/{stamp['source_branch']}"])
    if source is None or source[0] != stamp["source_refs"]:
        return None
    publish = refs_of(stamp["publish_url"], publish_refs(stamp))
    if publish is None or publish[0] != stamp["publish_refs"]:
        return None
    return stamp


def publish_refs(site: Stamp) -> list[str]:
    """The refs of the publish remote a run reads: its branch and the build records."""
    return [f"refs/heads/{site['publish_branch']}", NOTES_REF]


def describe(
    config_path: str,
    base: str,
    state_dir: str,
    raw_urls: Sequence[str],
    source: Sequence[str],
    publish: Sequence[str],
) -> Stamp | None:
    """The facts of a site a stamp is written for and checked against (the first keys of
    the stamp): ``config_path`` and ``base`` (:func:`config_digest`), the state directory,
    the two remotes' URLs as the config wrote them (``raw_urls``) and ``source`` and
    ``publish`` as ``(URL resolved, branch)``. None when the config file cannot be read
    or a URL as written no longer resolves as it did (a symlink on the way moved)."""
    digest = config_digest(config_path, base)
    resolved = [resolve_location(url, base) for url in raw_urls]
    if digest is None or resolved != [source[0], publish[0]]:
        return None
    return {
        "config": digest, "state_dir": state_dir, "source_raw": raw_urls[0],
        "publish_raw": raw_urls[1], "source_url": source[0], "source_branch": source[1],
        "publish_url": publish[0], "publish_branch": publish[1],
    }  # fmt: skip


def holds_for(site: Stamp | None, now: float, clock: float | None = None) -> Stamp | None:
    """The stamp in ``site``'s state directory when it was written for ``site`` (every fact
    of :func:`describe` the same) and still holds at ``now`` and ``clock``
    (:func:`still_holds`); else None. The caller holds the state directory's lock."""
    if site is None:
        return None
    stamp = still_holds(site["state_dir"], site["config"], now, clock)
    if stamp is None or any(stamp[key] != value for key, value in site.items()):
        return None
    return stamp


def record(
    site: Stamp | None,
    commit: str,
    build: str,
    mirror: dict[str, str | None],
    now: float,
    until: float | None = None,
) -> bool:
    """Stamp a run after which ``site``'s publish branch is ``build``, built from source
    ``commit`` (both 40 hex), with nothing left to deliver at ``now``, until ``until``
    (Unix seconds: the date of a post the build holds back; None: no end): when both remotes
    are on this machine and their refs hold exactly what the run saw (the source branch
    at ``commit``; the publish refs, :func:`publish_refs`, as the run's ``mirror`` of them
    holds them: ``{refname: 40 hex or None}``). True when a stamp was written."""
    if site is None:
        return False
    urls = (site["source_url"], site["publish_url"])
    if any(is_remote_url(url) and not url.startswith(FILE_URL) for url in urls):
        return False  # its refs cannot be read here: every run fetches
    if not outbox_clear(os.path.join(site["state_dir"], "outbox"), now):
        return False
    branch = f"refs/heads/{site['source_branch']}"
    source = refs_of(site["source_url"], [branch])
    publish = refs_of(site["publish_url"], publish_refs(site))
    if source is None or publish is None or source[1][branch] != commit:
        return False
    if publish[1] != mirror or mirror[publish_refs(site)[0]] != build:
        return False  # someone pushed since the run read or wrote the publish branch
    facts = {"source_refs": source[0], "publish_refs": publish[0], "commit": commit}
    end = "" if until is None else repr(float(until))
    return write(site["state_dir"], {**site, **facts, "build": build, "until": end})


def up_to_date_line(stamp: Stamp) -> str:
    """What ``run-once`` prints for this no-op (as :func:`deploybot.cli.report.print_run`)."""
    return f"up to date: {stamp['publish_branch']} was built from source {stamp['commit'][:12]}"


def try_lock(path: str) -> int | None:
    """Take the state directory's lock (the ``flock`` :func:`deploybot.state.statedir.held` takes)
    if it is free: the open descriptor (close it to release), or None when it is held or missing
    (a full run then reports it)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def state_folder(text: bytes) -> str:
    """``[state] dir`` of the config file's bytes ``text`` (``.deploybot`` when unset), as
    written (relative to the config's folder, or absolute): what :mod:`deploybot.config.load`
    loads from the same bytes.

    A file without a backslash or a triple quote is read line by line: without an escape
    (``"st\\u0061te"``) a key is spelled as it reads, and without a multi-line string every
    line is what it looks like. So a file that never writes ``state`` has none, and a
    ``[state]`` line with a one-line quoted ``dir = ...`` (comments and blanks allowed)
    holds it. Anything else (a dotted or inline ``state``, a quoted key, an escape) is
    left to ``tomllib``, whose import costs a no-op run milliseconds.

    Raises:
        ValueError: ``text`` is not UTF-8 or not TOML (tomllib's TOMLDecodeError).
        TypeError, AttributeError: ``state`` is not a table or ``state.dir`` not a string
            (loading the config fails, naming the key).
    """
    folder = ".deploybot"
    if b"\\" not in text and b'"""' not in text and b"'''" not in text:
        if b"state" not in text:
            return folder
        plain = _plain_state_dir(text.decode("utf-8-sig"))  # a BOM: as config.load reads it
        if plain is not None:
            return plain
    import tomllib

    found = tomllib.loads(text.decode("utf-8-sig")).get("state", {}).get("dir", folder)
    if not isinstance(found, str):
        raise TypeError(f"state.dir is {type(found).__name__}, not a string")
    return found


def _plain_state_dir(text: str) -> str | None:
    """``dir`` of a ``[state]`` table in ``text`` (TOML without escapes or multi-line
    strings: see :func:`state_folder`) when it is a one-line quoted string; None for any
    other spelling, or none."""
    lines = [line.partition("#")[0].strip(" \t\r") for line in text.split("\n")]
    if "[state]" not in lines:
        return None
    for line in lines[lines.index("[state]") + 1 :]:
        if line.startswith("["):
            return None  # the next table: dir is unset, or spelled in another way
        key, equals, value = line.partition("=")
        if equals and key.strip(" \t") == "dir":
            value = value.strip(" \t")
            quote = value[:1]
            one_string = quote in ("'", '"') and value.find(quote, 1) == len(value) - 1 > 1
            return value[1:-1] if one_string else None
    return None


def cli_check(config_path: str) -> str | None:
    """For ``deploybot run-once``: the line to print when the stamp still holds (see the
    module docstring), else None (run in full).

    The stamp is looked for in the state directory :func:`state_folder` reads from the
    config; only a stamp written for this very config (its digest) and this state
    directory counts. The remotes' locations are resolved again from the stamped config
    values.
    """
    try:
        with open(config_path, "rb") as f:
            text = f.read()
        base = config_base(config_path)
        state_dir = os.path.realpath(os.path.join(base, state_folder(text)))
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    lock = try_lock(os.path.join(state_dir, "lock"))
    if lock is None:
        return None
    try:
        stamp = still_holds(state_dir, config_digest(config_path, base), time.time())
    finally:
        os.close(lock)  # releases the flock
    if stamp is None or stamp["state_dir"] != state_dir:
        return None
    for key in ("source", "publish"):
        if resolve_location(stamp[f"{key}_raw"], base) != stamp[f"{key}_url"]:
            return None  # a symlink on the way to a remote changed since
    return up_to_date_line(stamp)
