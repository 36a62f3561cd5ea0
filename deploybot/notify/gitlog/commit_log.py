"""``git log -C --stat -p --cc -1 <commit>``, reproduced byte for byte with dulwich.

This is the body of a git-multimail commit email (``commitLogOpts``). The layout follows
git's ``log-tree.c`` (``show_log``, ``log_tree_diff_flush``), ``pretty.c`` (medium format:
``pp_header``, ``pp_remainder``) and ``diff.c``; the diff itself is :mod:`.diff`, the
stat :mod:`.diffstat`, renames :mod:`.diff_renames`; a merge gets the first-parent stat and
the dense combined diff (:mod:`.merge`, :mod:`.combined`). Assumes git's defaults: no
``.mailmap``, no gitattributes, no ``diff.*`` config, stat width 80; the repository's own
``core.abbrev`` is honoured (:func:`configured_abbrev`).

:func:`format_commit_log_bytes` returns git's exact bytes; :func:`format_commit_log`
returns them decoded as UTF-8 with ``errors="replace"``, as git-multimail decodes them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, get_args

from dulwich.objects import Blob, Commit, ObjectID
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from deploybot.git.damage import DAMAGE_ERRORS
from deploybot.git.tree import Entry, iter_changes
from deploybot.notify.gitlog.damage import note_holder
from deploybot.notify.gitlog.diff import file_script
from deploybot.notify.gitlog.diff_patch import (
    NULL_SHA,
    patch_headers,
    patch_line_count,
    patch_lines,
    stat_entry,
)
from deploybot.notify.gitlog.diff_renames import RENAME_LIMIT, FilePair, Side, detect_copies
from deploybot.notify.gitlog.diffstat import StatEntry, format_diffstat, str_width
from deploybot.notify.gitlog.excerpt import DEFAULT_ABBREV, ExcerptBuilder, LogExcerpt, index_abbrev

log = logging.getLogger("deploybot.notify.gitlog")

S_IFDIR = 0o040000
S_IFGITLINK = 0o160000
MIN_ABBREV = 7
MIN_CONFIGURED_ABBREV = 4  # git's minimum_abbrev
HEX_LENGTH = 40
TAB_WIDTH = 8  # git log's default --expand-tabs for the medium format
_GIT_SPACE = b" \t\n\r"
UNLIMITED = 1 << 62

Engine = Literal["auto", "git", "python"]
"""Who makes the log text: see :func:`read_log_excerpt`."""
ENGINES: tuple[str, ...] = get_args(Engine)

__all__ = [
    "ENGINES",
    "BlobReader",
    "Engine",
    "abbrev_length",
    "format_commit_log",
    "format_commit_log_bytes",
    "read_log_excerpt",
    "unique_abbrev",
]


class BlobReader:
    """Blob contents by id from one repository, read when asked for and not kept.

    A build commit can hold hundreds of MB of blobs and each is needed once for the stat
    and patch (rename detection keeps its own compact per-file data, see
    :mod:`.diff_renames`). Gitlinks read as ``Subproject commit <id>`` as in git's diff.
    """

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def load(self, sha: bytes) -> bytes:
        """Return the blob ``sha`` (40 hex bytes); b"" for the null id or a non-blob."""
        if sha == NULL_SHA:
            return b""
        obj = self.repo.object_store[ObjectID(sha)]
        return obj.as_raw_string() if isinstance(obj, Blob) else b""

    def content(self, side: Side | None) -> bytes:
        """Return one side of a file pair as git diffs it (b"" for a missing side).

        Raises:
            KeyError: the blob is missing (dulwich's, with a note naming ``side``'s path:
                :func:`.damage.note_holder`).
            ObjectFormatException, ChecksumMismatch, zlib.error: the blob cannot be read
                (:data:`deploybot.git.repository.UNREADABLE_OBJECT_ERRORS`, noted the same way).
        """
        if side is None:
            return b""
        if side.mode & 0o170000 == S_IFGITLINK:
            return b"Subproject commit " + side.sha + b"\n"
        try:
            return self.load(side.sha)
        except DAMAGE_ERRORS as exc:
            note_holder(exc, side.path)
            raise


class _Objects(BlobReader):
    """Blob contents (:class:`BlobReader`) and git's short ids from one repository."""

    def __init__(self, repo: Repo, abbrev: int | None) -> None:
        super().__init__(repo)
        self.length = abbrev if abbrev is not None else abbrev_length(repo)

    def abbrev(self, sha: bytes) -> bytes:
        """``find_unique_abbrev``: ``length`` digits, more while another object shares them."""
        return sha[: self.length] if sha == NULL_SHA else unique_abbrev(self.repo, sha, self.length)


def unique_abbrev(repo: Repo, sha: bytes, length: int) -> bytes:
    """git's ``find_unique_abbrev``: the first ``length`` digits of ``sha`` (40 hex bytes),
    more while another object in ``repo`` shares them."""
    n = length
    for other in repo.object_store.iter_prefix(sha[:n]):
        if other != sha:
            common = next((i for i in range(40) if sha[i] != other[i]), 40)
            n = max(n, common + 1)
    return sha[:n]


def abbrev_length(repo: Repo) -> int:
    """git's abbreviation length for ``repo`` (``find_unique_abbrev_r``): its
    ``core.abbrev`` (:func:`configured_abbrev`), else the automatic length.

    The automatic length comes from the number of *packed* objects
    (``repo_approximate_object_count``), alternates included: ``max(7,
    ceil((bit_length(count) + 1) / 2))``, i.e. 7 below 2**14 objects.
    """
    configured = configured_abbrev(repo)
    if configured is not None:
        return configured
    stores = [repo.object_store, *getattr(repo.object_store, "alternates", [])]
    count = sum(len(pack.index) for store in stores for pack in getattr(store, "packs", []))
    bits = max(count.bit_length(), 1)
    return max(MIN_ABBREV, (bits + 1) // 2)


def configured_abbrev(repo: Repo) -> int | None:
    """The length ``core.abbrev`` in ``repo``'s own config file sets, read as git's
    ``config.c`` reads it: ``auto`` (any case) is None (the automatic length); ``no``,
    ``false``, ``off`` or empty is 40 (full ids); a number from 4 (git's
    ``minimum_abbrev``) to 40 is itself. None as well without the key, or for a value git
    refuses (it then stops; the email is made with the automatic length, and logged).

    Only the repository's own config is read: git's system and global config are not,
    as the git path (:mod:`.git_cli`) runs without them (an email is the same on any
    machine). The last ``core.abbrev`` wins, as in git.
    """
    try:
        raw = repo.get_config().get((b"core",), b"abbrev")
    except KeyError:
        return None
    value = raw.decode("utf-8", "replace").strip().lower()
    if value == "auto":
        return None
    if value in ("no", "false", "off", ""):
        return HEX_LENGTH
    try:
        length = int(value)
    except ValueError:
        length = 0
    if MIN_CONFIGURED_ABBREV <= length <= HEX_LENGTH:
        return length
    log.warning("%s: core.abbrev = %r is no length git takes: using the automatic length",
                repo.path, value)  # fmt: skip
    return None


def tree_changes(repo: Repo, old_tree: bytes | None, new_tree: bytes) -> list[FilePair]:
    """The recursive tree diff in git's order (byte order of full paths).

    Subtrees with the same id on both sides are never read, so a one-file change in a site of
    10,000 pages reads a handful of trees, as git's ``diff-tree`` does.
    """
    pairs = [_pair(path, a, b) for path, a, b in iter_changes(repo, old_tree, new_tree)]
    pairs.sort(key=lambda pair: (pair.new or pair.old or _NO_SIDE).path)
    return pairs


def _pair(path: bytes, a: Entry | None, b: Entry | None) -> FilePair:
    side_a = Side(path, a[0], a[1]) if a is not None else None
    side_b = Side(path, b[0], b[1]) if b is not None else None
    if side_a is None:
        return FilePair(None, side_b, "A")
    if side_b is None:
        return FilePair(side_a, None, "D")
    changed_type = (side_a.mode ^ side_b.mode) & 0o170000
    return FilePair(side_a, side_b, "T" if changed_type else "M")


_NO_SIDE = Side(b"", 0, b"")


def _date(when: int, offset: int) -> bytes:
    """git's default date format: ``Tue Jul 14 09:12:04 2020 -0700`` (day not padded)."""
    dt = datetime.fromtimestamp(when, timezone(timedelta(seconds=offset)))
    sign = "-" if offset < 0 else "+"
    hhmm = abs(offset) // 3600 * 100 + abs(offset) % 3600 // 60
    text = f"{dt:%a %b} {dt.day} {dt:%H:%M:%S} {dt.year} {sign}{hhmm:04d}"
    return text.encode("ascii")


def _expand_tabs(line: bytes) -> bytes:
    """``strbuf_add_tabexpand`` with width 8, columns counted in display width."""
    if b"\t" not in line:
        return line
    out = b""
    for seg in line.split(b"\t")[:-1]:
        try:
            width = str_width(seg.decode("utf-8"))
        except UnicodeDecodeError:
            width = len(seg)
        out += seg + b" " * (TAB_WIDTH - width % TAB_WIDTH)
    return out + line.rsplit(b"\t", 1)[1]


def _message(message: bytes) -> bytes:
    """``pp_remainder`` for the medium format: each line indented 4, trailing space dropped.

    Leading blank lines are skipped, blank lines inside become four spaces, trailing blank
    lines disappear (git right-trims the whole text), and tabs are expanded.
    """
    out: list[bytes] = []
    for raw in message.split(b"\n"):
        line = raw.rstrip(_GIT_SPACE)
        if not line and not out:
            continue
        out.append(b"    " + _expand_tabs(line))
    text = b"\n".join(out).rstrip(_GIT_SPACE)
    return text + b"\n" if text else b""


def _reencode(data: bytes, encoding: bytes | None) -> bytes:
    """``logmsg_reencode``: a commit with an ``encoding`` header other than UTF-8 is shown
    re-encoded to UTF-8 (git's default ``i18n.logOutputEncoding``); kept as stored when
    the encoding is unknown or the bytes are not in it (git keeps them when iconv fails)."""
    if not encoding or encoding.lower() in (b"utf-8", b"utf8"):
        return data
    try:
        return data.decode(encoding.decode("ascii")).encode("utf-8")
    except (LookupError, ValueError):
        return data


def _header(commit: Commit, obj: _Objects) -> bytes:
    out = b"commit " + bytes(commit.id) + b"\n"
    if len(commit.parents) > 1:  # pretty.c add_merge_info
        out += b"Merge:" + b"".join(b" " + obj.abbrev(p) for p in commit.parents) + b"\n"
    author: bytes = _reencode(commit.author, commit.encoding)
    out += b"Author: " + author + b"\n"
    out += b"Date:   " + _date(commit.author_time, commit.author_timezone) + b"\n"
    body = _message(_reencode(commit.message, commit.encoding))
    return out + (b"\n" + body if body else b"")


def _scan(
    obj: _Objects, pairs: list[FilePair], room: int, emit: Callable[[bytes], None]
) -> tuple[list[StatEntry], int, int | None]:
    """Read each pair's blobs once: its stat entry, and its patch lines while ``room`` lasts.

    The first ``room`` patch lines (each ending in ``\\n``) go to ``emit``; the rest are only
    counted (:func:`.diff_patch.patch_line_count`: no text is made for them).

    Returns:
        ``(stat entries, number of patch lines, length of the first index line's old id or
        None)``.
    """
    entries: list[StatEntry] = []
    total = 0
    short: int | None = None
    for pair in pairs:
        old_data, new_data = obj.content(pair.old), obj.content(pair.new)
        entries.append(stat_entry(pair, old_data, new_data))
        if short is None:
            heads = patch_headers(pair, old_data, new_data, obj.abbrev)
            short = index_abbrev(heads.decode("utf-8", "replace"))
        if room > 0:
            shown = 0
            for line in patch_lines(pair, old_data, new_data, obj.abbrev):
                emit(line)
                shown += 1
                if shown == room:
                    break
            room -= shown
            # The budget ran out inside this file: count its lines instead of making them.
            total += shown if room else patch_line_count(pair, old_data, new_data, _any_id)
        else:
            total += patch_line_count(pair, old_data, new_data, _any_id)
    file_script.cache_clear()  # it holds the last file pair: not for longer than the email
    return entries, total, short


def _any_id(sha: bytes) -> bytes:
    """For counting only: an id's text never changes a line count, so skip the unique-prefix
    search (one object-store lookup per file)."""
    return sha


def _open(repo: Repo, commit: str, abbrev: int | None) -> tuple[_Objects, Commit]:
    return _Objects(repo, abbrev), parse_commit(repo, commit.encode())


def _tree_diff(repo: Repo, target: Commit) -> list[FilePair]:
    """The change list of a commit against its first parent (or the empty tree)."""
    parent_tree = None
    if target.parents:
        parent = repo.object_store[target.parents[0]]
        assert isinstance(parent, Commit)
        parent_tree = parent.tree
    return tree_changes(repo, parent_tree, target.tree)


def _git_pays(repo: Repo, changes: list[FilePair] | None) -> bool:
    from deploybot.notify.gitlog.git_cli import prefer_git

    return prefer_git(repo, changes)


def _from_git(args: dict[str, Any]) -> LogExcerpt | None:
    from deploybot.notify.gitlog.git_cli import git_log_excerpt

    return git_log_excerpt(**args)


def _parent_pairs(
    repo: Repo, obj: _Objects, target: Commit, parent: int | None, rename_limit: int
) -> list[FilePair]:
    """The change list from parent number ``parent`` (None: the empty tree) to ``target``,
    through ``-C`` copy detection."""
    parent_tree = None
    if parent is not None:
        commit = repo.object_store[target.parents[parent]]
        assert isinstance(commit, Commit)
        parent_tree = commit.tree
    changes = tree_changes(repo, parent_tree, target.tree)
    return detect_copies(changes, obj.load, rename_limit)


def _merge_text(repo: Repo, obj: _Objects, target: Commit, width: int, rename_limit: int) -> bytes:
    """A merge's whole log text: header, blank line, first-parent stat, ``--cc`` patch."""
    from deploybot.notify.gitlog.merge import combined_diff, first_parent_stat  # merges only

    queues = [_parent_pairs(repo, obj, target, n, rename_limit) for n in range(len(target.parents))]
    entries = first_parent_stat(queues[0], obj)
    return _header(target, obj) + b"\n" + _stat_text(entries, width) + combined_diff(queues, obj)


def _stat_text(entries: list[StatEntry], width: int) -> bytes:
    return "".join(line + "\n" for line in format_diffstat(entries, width)).encode("ascii")


def format_commit_log_bytes(
    repo_path: Path,
    commit: str,
    abbrev: int | None = None,
    width: int = 80,
    rename_limit: int = RENAME_LIMIT,
) -> bytes:
    """Exactly what ``git log -C --stat -p --cc -1 <commit>`` writes to a pipe.

    Holds the whole text; an email needs only its start (:func:`read_log_excerpt`).

    Args:
        repo_path: the repository (bare or not).
        commit: a commit id (full or at least 4 hex digits) or a ref name.
        abbrev: the short-id length; None computes git's default (see :func:`abbrev_length`).
        width: the stat width: git uses ``COLUMNS`` or the terminal's, else 80 (a hook's
            stdout is a pipe, so 80).
        rename_limit: ``diff.renameLimit`` (git's default 1000; 0 = unlimited).

    Returns:
        The raw output bytes (paths and contents as stored; never re-encoded). For a merge:
        ``Merge: <p1> <p2>...`` in the header, the stat against the first parent (without
        ``---``) and the dense combined diff (:func:`.merge.combined_diff`).

    Raises:
        KeyError: ``commit`` does not name a commit in the repository.
    """
    with Repo(str(repo_path)) as repo:
        obj, target = _open(repo, commit, abbrev)
        if len(target.parents) > 1:
            return _merge_text(repo, obj, target, width, rename_limit)
        pairs = _parent_pairs(repo, obj, target, 0 if target.parents else None, rename_limit)
        out = _header(target, obj)
        if not pairs:
            return out
        patches: list[bytes] = []
        entries, _, _ = _scan(obj, pairs, UNLIMITED, patches.append)
        return out + b"---\n" + _stat_text(entries, width) + b"\n" + b"".join(patches)


def format_commit_log(
    repo_path: Path, commit: str, abbrev: int | None = None, width: int = 80
) -> str:
    """:func:`format_commit_log_bytes` decoded as UTF-8 with ``errors="replace"``."""
    raw = format_commit_log_bytes(repo_path, commit, abbrev, width)
    return raw.decode("utf-8", errors="replace")


def read_log_excerpt(
    repo_path: Path,
    commit: str,
    *,
    max_lines: int,
    max_line_length: int,
    abbrev: int | None = None,
    width: int = 80,
    rename_limit: int = RENAME_LIMIT,
    engine: Engine = "auto",
) -> LogExcerpt:
    """What an email shows of :func:`format_commit_log`, at a cost bounded by what it shows.

    Equal to ``excerpt_from_text(format_commit_log(...), max_lines, max_line_length)``
    (:mod:`deploybot.notify.gitlog.excerpt`), but the patch text is made only for the first
    ``max_lines`` lines; past them each file's patch is only counted (an added or deleted file by
    its newlines, a modified one by its edit script), and each blob is read once and then dropped.
    Memory: the kept lines, the stat (one entry per file) and the largest file pair. A merge (never
    a build commit) is made whole and then cut.

    Args:
        max_lines, max_line_length: the email's ``emailMaxLines``/``emailMaxLineLength``
            (0 = unlimited); the log's lines need at most ``max_lines`` of them.
        abbrev, width, rename_limit: as :func:`format_commit_log_bytes`.
        engine: ``"git"``: git's own ``git log`` output (:mod:`.git_cli`), the same
            bytes made in C, falling back to Python when git is missing, fails or times
            out; ``"python"``: the pure-Python path only; ``"auto"``: git when it pays
            (:func:`.git_cli.prefer_git`).

    Raises:
        KeyError: as :func:`format_commit_log_bytes`.
        ValueError: ``engine`` is none of :data:`ENGINES`.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r} is none of {', '.join(map(repr, ENGINES))}")
    git = {
        "repo_path": repo_path,
        "commit": commit,
        "max_lines": max_lines,
        "max_line_length": max_line_length,
        "width": width,
        "rename_limit": rename_limit,
    }
    ask_git = abbrev is None and engine != "python"  # git prints its own abbreviations only
    if ask_git and engine == "git":
        excerpt = _from_git(git)
        if excerpt is not None:
            return excerpt
        ask_git = False
    builder = ExcerptBuilder(max_lines, max_line_length)
    with Repo(str(repo_path)) as repo:
        obj, target = _open(repo, commit, abbrev)
        merge = len(target.parents) > 1
        changes = None if merge else _tree_diff(repo, target)
        if ask_git and _git_pays(repo, changes):
            excerpt = _from_git(git)
            if excerpt is not None:
                return excerpt
        if changes is None:  # a merge (never a build): made whole, then cut
            text = _merge_text(repo, obj, target, width, rename_limit)
            builder.add_text(text)
            return builder.build(index_abbrev(text.decode("utf-8", "replace")) or DEFAULT_ABBREV)
        pairs = detect_copies(changes, obj.load, rename_limit)
        builder.add_text(_header(target, obj))
        if not pairs:
            return builder.build(DEFAULT_ABBREV)
        # The stat comes first but needs every file; its size is known: a line per file,
        # the summary line, the "---" above and the blank line below.
        keep = builder.room - (len(pairs) + 3)
        patches = ExcerptBuilder(max_lines, max_line_length, keep=max(keep, 0), in_header=False)
        entries, total, short = _scan(obj, pairs, patches.room, lambda line: patches.add(line[:-1]))
        patches.skip(total - patches.total)  # the lines only counted
    builder.add_text(b"---\n" + _stat_text(entries, width) + b"\n")
    builder.extend(patches)
    return builder.build(short or DEFAULT_ABBREV)
