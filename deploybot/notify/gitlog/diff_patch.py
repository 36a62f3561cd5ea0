"""One file pair's ``diff --git`` section and its stat entry, as git's ``diff.c`` makes them.

Pure: the caller supplies the pair (:class:`~.diff_renames.FilePair`), the two contents and a
function that abbreviates object ids. Follows ``builtin_diff``, ``fill_metainfo``,
``builtin_diffstat`` and the ``DIFF_SYMBOL_FILEPAIR_*`` output of git's ``diff.c``:

* ``diff --git a/P b/Q``, then ``new file mode``/``deleted file mode`` or ``old mode``/
  ``new mode``, then ``similarity index``/``rename from``/``rename to`` (or ``copy``), then
  ``index <old>..<new>[ <mode>]`` when the blob ids differ (the mode only when unchanged);
* ``--- a/P``/``+++ b/Q`` (``/dev/null`` for a missing side; a TAB is appended when the label
  holds a space) only when there is at least one hunk; a binary change prints
  ``Binary files a/P and b/Q differ`` instead;
* names with special bytes are C-quoted as a whole, prefix included: ``"a/caf\\303\\251"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from deploybot.notify.gitlog.diff import count_changes, hunk_line_count, hunk_lines, is_binary
from deploybot.notify.gitlog.diff_renames import S_IFMT, FilePair, Side, similarity_percent
from deploybot.notify.gitlog.diffstat import StatEntry, path_name, print_name, quote_path

NULL_SHA = b"0" * 40
Abbrev = Callable[[bytes], bytes]


def _label(prefix: bytes, path: bytes) -> bytes:
    """``quote_two``: prefix + path, quoted as a whole when the path needs it."""
    quoted = quote_path(prefix + path)
    return quoted.encode("ascii") if quoted is not None else prefix + path


def _side_label(prefix: bytes, side: Side | None) -> bytes:
    return b"/dev/null" if side is None else _label(prefix, side.path)


def _filepair_line(mark: bytes, label: bytes) -> bytes:
    return mark + b" " + label + (b"\t" if b" " in label else b"") + b"\n"


def _metainfo(pair: FilePair, abbrev: Abbrev) -> bytes:
    """``fill_metainfo``: similarity/rename/copy lines and the ``index`` line."""
    out = b""
    old, new = pair.old, pair.new
    if pair.status in ("R", "C") and old is not None and new is not None:
        word = b"rename" if pair.status == "R" else b"copy"
        out += b"similarity index %d%%\n" % similarity_percent(pair.score)
        out += word + b" from " + path_name(old.path).encode("ascii") + b"\n"
        out += word + b" to " + path_name(new.path).encode("ascii") + b"\n"
    old_sha = old.sha if old is not None else NULL_SHA
    new_sha = new.sha if new is not None else NULL_SHA
    if old_sha != new_sha:
        out += b"index " + abbrev(old_sha) + b".." + abbrev(new_sha)
        old_mode = old.mode if old is not None else 0
        new_mode = new.mode if new is not None else 0
        if old_mode == new_mode:
            out += b" %06o" % old_mode
        out += b"\n"
    return out


def _sections(
    pair: FilePair, old_data: bytes, new_data: bytes, abbrev: Abbrev
) -> Iterator[tuple[bytes, bytes, bytes, bool]]:
    """``(header, old, new, has_hunks)`` per printed section: two for a type change (``T``),
    printed as a deletion followed by an addition, as ``run_diff`` splits it; else one.

    The header runs from ``diff --git`` to ``+++`` (or the ``Binary files`` line); when
    ``has_hunks``, the hunks of ``old`` -> ``new`` follow it.
    """
    old, new = pair.old, pair.new
    if old is not None and new is not None and (old.mode ^ new.mode) & S_IFMT:
        yield from _sections(FilePair(old, None, "D"), old_data, b"", abbrev)
        yield from _sections(FilePair(None, new, "A"), b"", new_data, abbrev)
        return
    a_path = old.path if old is not None else new.path if new is not None else b""
    b_path = new.path if new is not None else a_path
    header = b"diff --git " + _label(b"a/", a_path) + b" " + _label(b"b/", b_path) + b"\n"
    if old is None and new is not None:
        header += b"new file mode %06o\n" % new.mode
    elif new is None and old is not None:
        header += b"deleted file mode %06o\n" % old.mode
    elif old is not None and new is not None and old.mode != new.mode:
        header += b"old mode %06o\nnew mode %06o\n" % (old.mode, new.mode)
    header += _metainfo(pair, abbrev)
    lbl_a, lbl_b = _side_label(b"a/", old), _side_label(b"b/", new)
    if old_data == new_data:
        yield header, old_data, new_data, False
    elif is_binary(old_data) or is_binary(new_data):
        binary = b"Binary files " + lbl_a + b" and " + lbl_b + b" differ\n"
        yield header + binary, old_data, new_data, False
    else:
        files = _filepair_line(b"---", lbl_a) + _filepair_line(b"+++", lbl_b)
        yield header + files, old_data, new_data, True


def patch_headers(pair: FilePair, old_data: bytes, new_data: bytes, abbrev: Abbrev) -> bytes:
    """The section headers of one pair without its hunks (cheap: no diff is made)."""
    return b"".join(head for head, _, _, _ in _sections(pair, old_data, new_data, abbrev))


def patch_lines(
    pair: FilePair, old_data: bytes, new_data: bytes, abbrev: Abbrev
) -> Iterator[bytes]:
    """:func:`patch_text` one line at a time, each ending in ``\\n``."""
    for head, old, new, has_hunks in _sections(pair, old_data, new_data, abbrev):
        yield from (line + b"\n" for line in head.split(b"\n")[:-1])
        if has_hunks:
            yield from hunk_lines(old, new)


def patch_line_count(pair: FilePair, old_data: bytes, new_data: bytes, abbrev: Abbrev) -> int:
    """The number of lines of :func:`patch_text`, without making its hunks' text.

    An added or deleted file costs a newline count; a modified one a diff (its edit script).
    """
    total = 0
    for head, old, new, has_hunks in _sections(pair, old_data, new_data, abbrev):
        total += head.count(b"\n") + (hunk_line_count(old, new) if has_hunks else 0)
    return total


def patch_text(pair: FilePair, old_data: bytes, new_data: bytes, abbrev: Abbrev) -> bytes:
    """The ``diff --git`` section of one pair (``builtin_diff``), as bytes.

    A pair whose two sides differ in file type (``T``) is printed as a deletion followed by
    an addition, as ``run_diff`` splits it.
    """
    return b"".join(patch_lines(pair, old_data, new_data, abbrev))


def stat_entry(pair: FilePair, old_data: bytes, new_data: bytes) -> StatEntry:
    """``builtin_diffstat`` for one pair: its print name and counts (bytes if binary)."""
    old, new = pair.old, pair.new
    path = new.path if new is not None else old.path if old is not None else b""
    old_path = old.path if old is not None and new is not None else None
    name = print_name(path, old_path)
    if is_binary(old_data) or is_binary(new_data):
        if old_data == new_data:
            return StatEntry(name, 0, 0, binary=True)
        return StatEntry(name, len(new_data), len(old_data), binary=True)
    added, deleted = count_changes(old_data, new_data)
    return StatEntry(name, added, deleted)
