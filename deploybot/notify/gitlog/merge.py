"""The diff part of ``git log -C --stat -p --cc -1 <merge>``: git's ``diff_tree_combined``.

For a merge git prints, after the log message and one blank line (``combine-diff.c``
``diff_tree_combined``, ``find_paths_generic``, ``intersect_paths``, ``show_patch_diff``,
``show_combined_header``):

* the ``--stat`` of the diff against the *first* parent (with ``-C``), without ``---``;
* when some path differs from every parent (each parent's tree diff, copies detected, the
  paths intersected in tree order): a blank line, then per such path the dense combined
  diff: ``diff --cc <path>``, ``index <p1>,<p2>..<result>``, a ``mode``/``new file mode``/
  ``deleted file mode`` line when some parent's mode differs, ``--- a/<path>``/``+++
  b/<path>`` (``/dev/null`` for an added or deleted result; no TAB after a name with a
  space), then the hunks (:mod:`.combined`); ``Binary files differ`` instead when a side is
  binary. A path whose hunks all take one parent's side is left out unless its mode differs.

Pure: the callers hand over each parent's change list (already through copy detection) and
an object reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from deploybot.notify.gitlog.combined import combined_hunks
from deploybot.notify.gitlog.diff import is_binary
from deploybot.notify.gitlog.diff_patch import NULL_SHA, stat_entry
from deploybot.notify.gitlog.diff_renames import FilePair, Side
from deploybot.notify.gitlog.diffstat import StatEntry, quote_path

__all__ = ["Objects", "combined_diff", "first_parent_stat"]


class Objects(Protocol):
    """Reads a side's content as git diffs it, and abbreviates ids (``.gitlog``)."""

    def content(self, side: Side | None) -> bytes: ...

    def abbrev(self, sha: bytes) -> bytes: ...


@dataclass
class _Parent:
    sha: bytes
    mode: int
    status: str


@dataclass
class _Path:
    """``struct combine_diff_path``: the result side of a path and each parent's side."""

    path: bytes
    mode: int
    sha: bytes
    parents: list[_Parent]


def _result_path(pair: FilePair) -> bytes:
    side = pair.new or pair.old
    assert side is not None
    return side.path


def _parent_of(pair: FilePair) -> _Parent:
    old = pair.old
    return _Parent(old.sha, old.mode, pair.status) if old else _Parent(NULL_SHA, 0, pair.status)


def _intersect(queues: Sequence[Sequence[FilePair]]) -> list[_Path]:
    """``intersect_paths``: the paths every parent's diff touches, in tree order."""
    paths: list[_Path] = []
    for pair in queues[0]:
        new = pair.new
        parents = [_Parent(NULL_SHA, 0, "") for _ in queues]
        parents[0] = _parent_of(pair)
        if new is None:
            paths.append(_Path(_result_path(pair), 0, NULL_SHA, parents))
        else:
            paths.append(_Path(new.path, new.mode, new.sha, parents))
    for n, queue in enumerate(queues[1:], 1):
        kept: list[_Path] = []
        i = 0
        for p in paths:
            while i < len(queue) and _result_path(queue[i]) < p.path:
                i += 1
            if i < len(queue) and _result_path(queue[i]) == p.path:
                p.parents[n] = _parent_of(queue[i])
                kept.append(p)
                i += 1
        paths = kept
    return paths


def _name(prefix: bytes, path: bytes) -> bytes:
    """``quote_two_c_style``: prefix + path, C-quoted as a whole when needed."""
    quoted = quote_path(prefix + path)
    return quoted.encode("ascii") if quoted is not None else prefix + path


def _header(elem: _Path, obj: Objects, mode_differs: bool, file_header: bool) -> bytes:
    """``show_combined_header``."""
    out = b"diff --cc " + _name(b"", elem.path) + b"\n"
    out += b"index " + b",".join(obj.abbrev(p.sha) for p in elem.parents)
    out += b".." + obj.abbrev(elem.sha) + b"\n"
    deleted = added = False
    if mode_differs:
        deleted = not elem.mode
        added = not deleted and all(p.status == "A" for p in elem.parents)
        if added:
            out += b"new file mode %06o" % elem.mode
        else:
            out += b"deleted file " if deleted else b""
            out += b"mode " + b",".join(b"%06o" % p.mode for p in elem.parents)
            out += b"..%06o" % elem.mode if elem.mode else b""
        out += b"\n"
    if not file_header:
        return out
    out += b"--- " + (b"/dev/null" if added else _name(b"a/", elem.path)) + b"\n"
    return out + b"+++ " + (b"/dev/null" if deleted else _name(b"b/", elem.path)) + b"\n"


def _side(path: bytes, sha: bytes, mode: int) -> Side | None:
    return None if sha == NULL_SHA else Side(path, mode, sha)


def _patch(elem: _Path, obj: Objects) -> bytes:
    """``show_patch_diff`` for one path (text from the tree, not the work tree)."""
    result = obj.content(_side(elem.path, elem.sha, elem.mode))
    contents = [obj.content(_side(elem.path, p.sha, p.mode)) for p in elem.parents]
    mode_differs = any(p.mode != elem.mode for p in elem.parents)
    if is_binary(result) or any(is_binary(c) for c in contents):
        return _header(elem, obj, mode_differs, False) + b"Binary files differ\n"
    hunks = combined_hunks(
        result, [(p.sha, c) for p, c in zip(elem.parents, contents, strict=True)]
    )
    if hunks is None and not mode_differs:
        return b""
    return _header(elem, obj, mode_differs, True) + b"".join(hunks or ())


def first_parent_stat(queue: Sequence[FilePair], obj: Objects) -> list[StatEntry]:
    """The stat entries of the diff against the first parent (``git log --stat`` of a
    merge shows that one only)."""
    return [stat_entry(p, obj.content(p.old), obj.content(p.new)) for p in queue]


def combined_diff(queues: Sequence[Sequence[FilePair]], obj: Objects) -> bytes:
    """The ``--cc`` patch text of a merge, from each parent's change list (in the parents'
    order, each sorted by path and through :func:`.diff_renames.detect_copies`).

    Returns:
        b"" when no path differs from every parent; else a blank line and the paths'
        combined diffs (paths whose hunks all follow one parent print nothing).
    """
    paths = _intersect(queues)
    if not paths:
        return b""
    return b"\n" + b"".join(_patch(elem, obj) for elem in paths)
