"""The commit email's ``git log`` text made by git itself, when git is installed.

:func:`.commit_log.read_log_excerpt` makes ``git log -C --stat -p --cc -1 <commit>`` in pure
Python; git makes the same bytes 20-75x faster on big commits (it diffs in C). This module
runs git for that text and streams its output into the same
:class:`deploybot.notify.gitlog.excerpt.ExcerptBuilder`, so the email is byte for byte the one the
pure-Python path makes (the tests compare both); the email's own rules (``dateSubstitute``, the
long-line cut, the line budget) stay ours.

git must print exactly what the pure-Python path assumes (git's defaults: no ``.mailmap``, no
gitattributes, no notes, no ``diff.*``/``log.*`` settings, stat width 80; the repository's
own ``core.abbrev``, which both read alike):

* the environment is git's defaults only: every ``GIT_*`` variable dropped (an external diff,
  ``GIT_DIFF_OPTS``, a notes ref, another object directory), no system or global config
  (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no user attributes file
  (``XDG_CONFIG_HOME`` pointed nowhere, ``core.attributesFile=/dev/null``), replace refs
  ignored (dulwich ignores them), ``LC_ALL=C`` (the stat's summary line is translated);
* the repository is read as bare (no work tree, so no work tree ``.gitattributes``), with
  ``attr.tree`` set to the empty tree (git >= 2.42 reads a bare repository's attributes from
  ``HEAD``), ``--no-mailmap`` (a bare repository reads ``HEAD:.mailmap``), ``--no-notes``,
  ``--no-ext-diff``, ``--no-textconv``, ``core.quotePath=true`` (names C-quoted as
  :func:`.diffstat.quote_path` does);
* the repository's own config may only hold keys that do not change this output
  (:func:`config_allows_git`); anything else, an ``info/attributes`` or ``info/grafts`` file,
  or a shallow repository, and the pure-Python path is used.

git runs with a deadline for the whole call (:data:`GIT_TIMEOUT`); its output is read in
chunks and only what the email shows is kept (the rest is counted), so memory stays bounded
by the email, whatever the commit's size. When git is missing, fails, or runs out of time,
the caller falls back to the pure-Python path.
"""

from __future__ import annotations

import logging
import os
import re
import selectors
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from dulwich.repo import Repo

from deploybot.git.damage import DAMAGE_ERRORS
from deploybot.git.object_size import object_size
from deploybot.notify.gitlog.damage import note_holder
from deploybot.notify.gitlog.diff_renames import FilePair
from deploybot.notify.gitlog.excerpt import DEFAULT_ABBREV, ExcerptBuilder, LogExcerpt
from deploybot.support.deadline import Deadline, DeadlineExceeded

log = logging.getLogger("deploybot.notify.gitlog_cli")

GIT_TIMEOUT = 300.0
"""Seconds ``git log`` may take in all before it is killed and the pure-Python path runs.
git makes the email of a 5,452-file build in about 12 s on a 2-core machine: this bounds a
git that hangs (a stalled network file system), not a big commit."""

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: every git knows it without storing it."""

S_IFGITLINK = 0o160000
_CHUNK = 1 << 16
_STDERR_KEEP = 2000
_INDEX_LINE = re.compile(rb"^index ([0-9a-f]{4,40})(?:,[0-9a-f]+)*\.\.[0-9a-f]+", re.MULTILINE)
_LONGEST_INDEX_PREFIX = 4096  # an "index a,b,..,z..r" line of an octopus merge fits in it

# Keys of a repository's config that cannot change ``git log -C --stat -p --cc`` output:
# whole sections, and single ``core`` keys; and ``core.abbrev``, which the pure-Python path
# reads as git does (:func:`.commit_log.configured_abbrev`). Anything else (diff.*, log.*,
# format.*, color.*, core.quotePath, include.*, extensions.*, i18n.*, mailmap.*, notes.*,
# ...) sends the email through the pure-Python path, which assumes git's defaults.
_SAFE_SECTIONS = frozenset(
    {
        "branch",
        "credential",
        "fetch",
        "gc",
        "http",
        "init",
        "lfs",
        "maintenance",
        "pack",
        "pull",
        "push",
        "receive",
        "remote",
        "submodule",
        "transfer",
        "uploadpack",
        "user",
    }
)
_SAFE_CORE_KEYS = frozenset(
    {
        "abbrev",  # read by both paths alike
        "autocrlf",
        "bare",
        "compression",
        "deltabasecachelimit",
        "eol",
        "filemode",
        "fsync",
        "fsyncmethod",
        "ignorecase",
        "logallrefupdates",
        "loosecompression",
        "packedgitlimit",
        "packedgitwindowsize",
        "precomposeunicode",
        "repositoryformatversion",
        "safecrlf",
        "sharedrepository",
        "symlinks",
    }
)


GIT_MIN_MODIFIED = 3
"""From this many modified files on (each needs a line diff), ``"auto"`` asks git."""

GIT_MIN_BYTES = 512 * 1024
"""From this many bytes of modified files (both sides) on, ``"auto"`` asks git."""

GIT_MIN_PAIRS = 64
"""From this many (added file, rename source) pairs to score on, ``"auto"`` asks git."""


def prefer_git(repo: Repo, changes: Sequence[FilePair] | None) -> bool:
    """Whether the ``"auto"`` engine asks git for a commit with the tree diff ``changes``
    (None: a merge): git is installed and the Python path would diff or score much.

    Where each path spends (``python -m tests.bench_email``): starting git costs about
    10 ms, and git writes the whole patch however little of it the email shows; the Python
    path only counts the lines of an added or deleted file past the email's 10,000 (a
    10,000-page first build: 0.6x git's time), but diffs every modified file line by line
    and scores every added file against every rename source, both slow in Python. So git
    makes a merge's text, and a commit's with :data:`GIT_MIN_MODIFIED` modified files or
    more, or :data:`GIT_MIN_BYTES` of them (sizes from object headers,
    :func:`deploybot.git.object_size.object_size`), or :data:`GIT_MIN_PAIRS` pairs to score
    (added files whose blob no source has, times the sources).
    """
    if git_executable() is None:
        return False
    if changes is None:
        return True
    modified = [p for p in changes if p.old and p.new and p.old.sha != p.new.sha]
    if len(modified) >= GIT_MIN_MODIFIED:
        return True
    size = 0
    for pair in modified:
        for side in (pair.old, pair.new):
            if side is not None and side.mode & 0o170000 != S_IFGITLINK:
                try:
                    size += object_size(repo, side.sha.decode("ascii"))
                except DAMAGE_ERRORS as exc:  # a missing or unreadable blob: the caller says so
                    note_holder(exc, side.path)
                    raise
    if size >= GIT_MIN_BYTES:
        return True
    sources = [p.old for p in changes if p.old is not None and p.old != p.new]
    blobs = {side.sha for side in sources}
    added = sum(1 for p in changes if p.old is None and p.new and p.new.sha not in blobs)
    return added * len(sources) >= GIT_MIN_PAIRS


def git_executable() -> str | None:
    """The git program on ``PATH``, or None when git is not installed."""
    return shutil.which("git")


def git_dir(repo_path: Path) -> Path | None:
    """The git directory of the repository at ``repo_path`` (bare, or with a ``.git``
    folder), or None when it is neither (a ``.git`` file of a linked work tree)."""
    dot_git = repo_path / ".git"
    if dot_git.is_dir():
        return dot_git
    if (repo_path / "objects").is_dir() and (repo_path / "HEAD").is_file():
        return repo_path
    return None


def config_allows_git(folder: Path) -> bool:
    """Whether git run on the git directory ``folder`` prints what the pure-Python path
    assumes: only harmless config keys (see the module docstring), and no
    ``info/attributes``, ``info/grafts`` or ``shallow`` file."""
    if any((folder / name).exists() for name in ("info/attributes", "info/grafts", "shallow")):
        return False
    try:
        text = (folder / "config").read_bytes().decode("utf-8")
    except FileNotFoundError:
        return True
    except (OSError, UnicodeDecodeError):
        return False
    return all(_safe_key(key) for key in _config_keys(text))


def _config_keys(text: str) -> list[str]:
    """The ``section.key`` names set in a git config file's text (subsections dropped), as
    git's config syntax has them; a line that is neither a section nor a key gives ``"?"``."""
    keys: list[str] = []
    section = "?"
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = line[1:].split("]", 1)[0].strip()
            section = head.split(None, 1)[0].split(".", 1)[0].strip('"').lower() or "?"
            rest = line.split("]", 1)[1].strip() if "]" in line else ""
            if not rest or rest[0] in "#;":
                continue
            line = rest  # "[core] bare = true" on one line
        name = re.split(r"[\s=]", line, maxsplit=1)[0].lower()
        keys.append(f"{section}.{name}" if name.replace("-", "").isalnum() else "?")
    return keys


def _safe_key(key: str) -> bool:
    section, _, name = key.partition(".")
    if section in _SAFE_SECTIONS:
        return True
    return section == "core" and name in _SAFE_CORE_KEYS


def git_env(width: int) -> dict[str, str]:
    """The environment git runs in: this process's without any ``GIT_*`` variable, plus
    git's defaults pinned (see the module docstring) and ``COLUMNS`` = ``width`` (the
    stat width: git reads it for ``--stat``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        XDG_CONFIG_HOME="/nonexistent",
        LC_ALL="C",
        COLUMNS=str(width),
    )
    env.pop("LANGUAGE", None)
    return env


def log_argv(git: str, folder: Path, commit: str, rename_limit: int) -> list[str]:
    """The command line: ``git log -C --stat -p --cc -1 <commit>`` with git's defaults
    pinned (see the module docstring)."""
    return [
        git,
        f"--git-dir={folder}",
        "--bare",
        "--no-replace-objects",
        "-c",
        "core.quotePath=true",
        "-c",
        f"diff.renameLimit={rename_limit}",
        "-c",
        "core.attributesFile=/dev/null",
        "-c",
        f"attr.tree={EMPTY_TREE}",
        "log",
        "--no-mailmap",
        "--no-notes",
        "--no-decorate",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-C",
        "--stat",
        "-p",
        "--cc",
        "-1",
        commit,
        "--",
    ]


class _Reader:
    """Turns git's output, chunk by chunk, into an :class:`ExcerptBuilder`'s lines.

    Lines within the budget are kept (each at most ``cap`` bytes: enough for the long-line
    cut to come out as on the whole line); past it lines are only counted. The first
    ``index`` line's old id gives the short-id length, as in
    :func:`deploybot.notify.gitlog.excerpt.index_abbrev`.
    """

    def __init__(self, builder: ExcerptBuilder) -> None:
        self.builder = builder
        n = builder.max_line_length
        # A character takes at most 4 bytes and U+FFFD replaces at most 3, so 4n + 16
        # bytes decode to more than n characters, the first n - 7 of them as in the
        # whole line. (Below 8, the cut's "first n - 7" counts from the end: keep all.)
        self.cap = 4 * n + 16 if n >= 8 else None
        self.line = bytearray()  # the current line's start, while lines are kept
        self.over = False  # the current line was longer than ``cap``
        self.tail = b""  # the current line's start, while lines are counted
        self.short: int | None = None
        self.ends_line = True  # the output so far ends at a line end

    def feed(self, data: bytes) -> None:
        """One chunk of git's output."""
        if data:
            self.ends_line = data.endswith(b"\n")
        start = 0
        while self.builder.room > 0:
            end = data.find(b"\n", start)
            if end < 0:
                self._grow(data[start:])
                return
            self._grow(data[start:end])
            self._keep(bytes(self.line))
            self.line.clear()
            self.over = False
            start = end + 1
        # The budget is spent, and always at a line end: the rest is only counted.
        rest = data[start:] if start else data
        self.builder.skip(rest.count(b"\n"))
        if self.short is None and rest:
            self._find_short(rest)

    def _grow(self, part: bytes) -> None:
        if self.over:
            return
        self.line += part
        if self.cap is not None and len(self.line) > self.cap:
            del self.line[self.cap :]
            self.over = True

    def _keep(self, line: bytes) -> None:
        if self.short is None:
            match = _INDEX_LINE.match(line)
            if match:
                self.short = len(match.group(1))
        self.builder.add(line)

    def _find_short(self, data: bytes) -> None:
        """Look for the first ``index`` line in counted text; ``tail`` carries the start of
        a line cut by the chunk's end (or a NUL when that line is too long to matter)."""
        buf = self.tail + data
        match = _INDEX_LINE.search(buf)
        if match:
            self.short = len(match.group(1))
            return
        rest = buf[buf.rfind(b"\n") + 1 :]
        self.tail = rest if len(rest) <= _LONGEST_INDEX_PREFIX else b"\0"


def git_log_excerpt(
    repo_path: Path,
    commit: str,
    *,
    max_lines: int,
    max_line_length: int,
    width: int = 80,
    rename_limit: int = 1000,
    timeout: float | None = None,
) -> LogExcerpt | None:
    """:func:`.commit_log.read_log_excerpt`'s excerpt, made from git's own output.

    Args:
        repo_path: the repository (bare, or a work tree with a ``.git`` folder).
        commit: a full commit id (40 hex).
        max_lines, max_line_length, width, rename_limit: as
            :func:`.commit_log.read_log_excerpt`.
        timeout: seconds for the whole call (None: :data:`GIT_TIMEOUT`); then git is
            killed.

    Returns:
        The excerpt, or None when git cannot be used: not installed, a repository git would
        print differently for (:func:`config_allows_git`), or git failed, wrote no complete
        text, or ran out of time (each logged). Never raises for git's failures.
    """
    git = git_executable()
    folder = git_dir(repo_path)
    if commit.startswith("-"):  # never an option to git (``--output=...`` writes a file)
        return None
    if git is None or folder is None or not config_allows_git(folder):
        return None
    timeout = GIT_TIMEOUT if timeout is None else timeout
    builder = ExcerptBuilder(max_lines, max_line_length)
    reader = _Reader(builder)
    argv = log_argv(git, folder.resolve(), commit, rename_limit)
    try:
        status, errors = _run(argv, folder, git_env(width), reader.feed, timeout)
    except OSError as exc:
        log.info("git log could not run (%s): formatting the email in Python", exc)
        return None
    if status is None:
        log.warning("git log took more than %g s: formatting the email in Python", timeout)
        return None
    if status != 0 or not reader.ends_line or builder.total == 0:
        why = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {status}"]
        log.info("git log failed (%s): formatting the email in Python", why[0])
        return None
    return builder.build(reader.short or DEFAULT_ABBREV)


def _run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    sink: Callable[[bytes], None],
    timeout: float,
) -> tuple[int | None, bytes]:
    """Run ``argv``, handing its stdout to ``sink`` chunk by chunk, until it exits or
    ``timeout`` seconds (> 0) have passed in all (then it is killed).

    Returns:
        ``(exit status, or None on timeout; the last bytes of its stderr)``.

    Raises:
        OSError: ``argv`` could not be started.
    """
    deadline = Deadline(timeout)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    log.debug("%s started as pid %d", Path(argv[0]).name, proc.pid)
    errors = b""
    try:
        assert proc.stdout is not None and proc.stderr is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map():
                for key, _ in sel.select(deadline.left()):
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        sel.unregister(key.fileobj)
                    elif key.fileobj is proc.stdout:
                        sink(chunk)
                    else:
                        errors = (errors + chunk)[-_STDERR_KEEP:]
        return proc.wait(deadline.left()), errors
    except (DeadlineExceeded, subprocess.TimeoutExpired):
        return None, errors
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
