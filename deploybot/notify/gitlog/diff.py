"""git's default line diff of two file versions, as ``git diff``/``git log -p`` print it.

Inputs are the raw file contents (``bytes``); outputs are ``bytes`` too, so that any byte
sequence (non-UTF-8 text, CR, missing final newline) comes out exactly as git prints it.
Callers that need text decode at the edge (the email layer uses ``errors="replace"``).

What is matched, with its source in git:

* the line matching: ``xdl_do_diff`` (Myers with xdiff's speed-ups; :mod:`.diff_myers`);
* group sliding with the indent heuristic: ``xdl_change_compact`` (:mod:`.diff_slider`);
* hunks with 3 lines of context, merged when at most 6 unchanged lines lie between two
  changes (``xdl_get_hunk``, ``interhunkctxlen`` 0), the ``@@ -a,b +c,d @@`` header
  (``xdl_emit_hunk_hdr``: a count of 1 is omitted, an empty range starts one line earlier),
  the function text after ``@@`` (``def_ff``: the nearest old-file line above the hunk that
  starts with an ASCII letter, ``_`` or ``$``, cut to 80 bytes, trailing whitespace removed),
  and ``\\ No newline at end of file`` (``xdl_emit_diffrec``) -- all ``xdiff/xemit.c`` and
  ``xdiff/xutils.c``; then the header line is cut before its first invalid or partial UTF-8
  character (``diff.c`` ``sane_truncate_line``; :mod:`.diff_utf8`);
* binary detection: a NUL byte in the first 8000 bytes (``xdiff-interface.c``
  ``buffer_is_binary``);
* the line counts for ``--stat``: git's ``builtin_diffstat`` diffs with the patch's context
  (``xecfg.ctxlen = o->context``), so it counts the lines of the patch's own diff
  (:func:`count_changes`). Only a zero-context diff (``combine-diff.c``'s) first drops the
  common tail in 1024-byte blocks (``xdiff-interface.c`` ``trim_common_tail``), which can
  change what xdiff discards as multimatch lines and so the result
  (:func:`zero_context_script`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from deploybot.notify.gitlog.diff_myers import classify, mark_changes
from deploybot.notify.gitlog.diff_slider import Change, compact_and_script
from deploybot.notify.gitlog.diff_utf8 import sane_truncate_line

FIRST_FEW_BYTES = 8000
CONTEXT = 3
FUNC_LINE_MAX = 80
HUNK_HEADER_MAX = 128
NO_NEWLINE = b"\\ No newline at end of file\n"
_GIT_SPACE = b" \t\n\r"  # git's own isspace(): no VT, no FF

__all__ = [
    "Change",
    "Hunk",
    "count_changes",
    "count_lines",
    "diff_lines",
    "edit_script",
    "hunk_line_count",
    "hunk_lines",
    "is_binary",
    "split_lines",
    "unified_diff",
    "zero_context_script",
]


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` hunk.

    Attributes:
        old_start, old_count, new_start, new_count: the numbers as printed in the header
            (1-based starts; an empty range names the line before it).
        function: the text after the closing ``@@`` (no leading space), possibly empty.
        lines: the body lines, each ``b" "``/``b"-"``/``b"+"`` + the line with its newline;
            a line without a final newline is followed by ``b"\\\\ No newline at end of file\\n"``
            after a newline is added to it.
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    function: bytes
    lines: tuple[bytes, ...]

    def header(self) -> bytes:
        """The ``@@ -a,b +c,d @@ func`` line with its newline (``xdl_emit_hunk_hdr``), cut
        before a partial or invalid UTF-8 character (:func:`.diff_utf8.sane_truncate_line`)."""
        out = b"@@ -" + _range(self.old_start, self.old_count)
        out += b" +" + _range(self.new_start, self.new_count) + b" @@"
        if self.function:
            room = HUNK_HEADER_MAX - len(out) - 2  # git's 128-byte buffer, space and newline
            out += b" " + self.function[: max(room, 0)]
        return sane_truncate_line(out + b"\n")

    def text(self) -> bytes:
        """Header and body as git prints them."""
        return self.header() + b"".join(self.lines)


def _range(start: int, count: int) -> bytes:
    if count == 1:
        return b"%d" % start
    return b"%d,%d" % (start, count)


def split_lines(data: bytes) -> list[bytes]:
    """Split into xdiff records: each line keeps its ``\\n``; the last one may lack it."""
    return data.splitlines(keepends=True) if b"\r" not in data else _split_lf(data)


def _split_lf(data: bytes) -> list[bytes]:
    # bytes.splitlines also splits at a lone CR; git splits at LF only.
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def is_binary(data: bytes) -> bool:
    """git's ``buffer_is_binary``: is there a NUL in the first 8000 bytes?"""
    return b"\0" in data[:FIRST_FEW_BYTES]


def edit_script(old: list[bytes], new: list[bytes], indent_heuristic: bool = True) -> list[Change]:
    """The changes git's default diff makes between two line lists, in file order.

    Args:
        old, new: records from :func:`split_lines`.
        indent_heuristic: git's ``diff.indentHeuristic`` (default on).

    Returns:
        :class:`Change` tuples (0-based ``i1``/``i2``, counts ``chg1``/``chg2``).
    """
    a, b = classify(old, new)
    changed1, changed2 = mark_changes(a, b)
    return compact_and_script(a, old, changed1, b, new, changed2, indent_heuristic)


@functools.lru_cache(maxsize=1)
def file_script(old: bytes, new: bytes) -> tuple[Change, ...]:
    """:func:`edit_script` of two file contents, kept for the last pair asked: a file's
    stat entry and its patch need the same script (:func:`count_changes`, then
    :func:`hunk_lines` or :func:`hunk_line_count`), so it is made once. Holds one pair."""
    return tuple(edit_script(split_lines(old), split_lines(new)))


def _func_line(line: bytes) -> bytes | None:
    """xdiff's ``def_ff``: the function text a line gives, or None when it gives none."""
    if not line:
        return None
    c = line[0]
    if not (65 <= c <= 90 or 97 <= c <= 122 or c in (0x5F, 0x24)):
        return None
    return line[:FUNC_LINE_MAX].rstrip(_GIT_SPACE)


def _find_func(old: list[bytes], before: int) -> bytes:
    for i in range(before - 1, -1, -1):
        found = _func_line(old[i])
        if found is not None:
            return found
    return b""


def _group(script: Sequence[Change], context: int) -> list[list[Change]]:
    """``xdl_get_hunk``: changes at most ``2 * context`` unchanged lines apart share a hunk."""
    groups: list[list[Change]] = []
    for ch in script:
        if groups:
            last = groups[-1][-1]
            if ch.i1 - (last.i1 + last.chg1) <= 2 * context:
                groups[-1].append(ch)
                continue
        groups.append([ch])
    return groups


def _record(prefix: bytes, line: bytes) -> bytes:
    if line.endswith(b"\n"):
        return prefix + line
    return prefix + line + b"\n" + NO_NEWLINE


def _bounds(n_old: int, n_new: int, group: list[Change], context: int) -> tuple[int, ...]:
    """A hunk's 0-based ranges ``(s1, e1, s2, e2)``: its changes plus the context around."""
    first, last = group[0], group[-1]
    lctx = min(context, n_old - (last.i1 + last.chg1), n_new - (last.i2 + last.chg2))
    return (
        max(first.i1 - context, 0),
        last.i1 + last.chg1 + lctx,
        max(first.i2 - context, 0),
        last.i2 + last.chg2 + lctx,
    )


def _make_hunk(old: list[bytes], new: list[bytes], group: list[Change], context: int) -> Hunk:
    s1, e1, s2, e2 = _bounds(len(old), len(new), group, context)
    body: list[bytes] = []
    pos = s1
    for ch in group:
        body.extend(_record(b" ", old[i]) for i in range(pos, ch.i1))
        body.extend(_record(b"-", old[i]) for i in range(ch.i1, ch.i1 + ch.chg1))
        body.extend(_record(b"+", new[i]) for i in range(ch.i2, ch.i2 + ch.chg2))
        pos = ch.i1 + ch.chg1
    body.extend(_record(b" ", old[i]) for i in range(pos, e1))
    c1, c2 = e1 - s1, e2 - s2
    return Hunk(
        old_start=s1 + 1 if c1 else s1,
        old_count=c1,
        new_start=s2 + 1 if c2 else s2,
        new_count=c2,
        function=_find_func(old, s1),
        lines=tuple(body),
    )


def diff_lines(old: bytes, new: bytes, context: int = CONTEXT) -> list[Hunk]:
    """The hunks of git's diff from ``old`` to ``new`` (text; see :func:`is_binary`).

    Returns:
        The hunks in file order; empty when the contents are equal.
    """
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    return [_make_hunk(a, b, g, context) for g in _group(file_script(old, new), context)]


def unified_diff(old: bytes, new: bytes, context: int = CONTEXT) -> bytes:
    """The hunk part of ``git diff`` (everything after the ``+++`` line), as bytes."""
    return b"".join(h.text() for h in diff_lines(old, new, context))


def count_lines(data: bytes) -> int:
    """The number of xdiff records in ``data`` (:func:`split_lines`, without splitting)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def hunk_lines(old: bytes, new: bytes, context: int = CONTEXT) -> Iterator[bytes]:
    """:func:`unified_diff` one output line at a time (each ending in ``\\n``).

    An added or deleted file (one side empty) is not diffed: its one hunk holds every line.
    Memory: one hunk at a time besides the two contents.
    """
    if old == new:
        return
    if not old or not new:
        lines = split_lines(new or old)
        n = len(lines)
        yield Hunk(0, 0, 1, n, b"", ()).header() if new else Hunk(1, n, 0, 0, b"", ()).header()
        mark = b"+" if new else b"-"
        for line in lines:
            yield from _split_record(_record(mark, line))
        return
    a, b = split_lines(old), split_lines(new)
    for group in _group(file_script(old, new), context):
        hunk = _make_hunk(a, b, group, context)
        yield hunk.header()
        for record in hunk.lines:
            yield from _split_record(record)


def _split_record(record: bytes) -> list[bytes]:
    """A body record is one line, or a line and the ``\\ No newline`` line after it."""
    if record.endswith(NO_NEWLINE) and len(record) > len(NO_NEWLINE):
        cut = len(record) - len(NO_NEWLINE)
        if record[cut - 1 : cut] == b"\n":
            return [record[:cut], record[cut:]]
    return [record]


def hunk_line_count(old: bytes, new: bytes, context: int = CONTEXT) -> int:
    """``len(list(hunk_lines(old, new)))``, without making the lines.

    Per hunk: its header, every old line in its range (context or ``-``), its ``+`` lines,
    and a ``\\ No newline at end of file`` after a shown last line that lacks its newline.
    """
    if old == new:
        return 0
    if not old or not new:
        data = new or old
        return 1 + count_lines(data) + (0 if data.endswith(b"\n") else 1)
    a, b = split_lines(old), split_lines(new)
    old_open = not a[-1].endswith(b"\n")
    new_open = not b[-1].endswith(b"\n")
    total = 0
    for group in _group(file_script(old, new), context):
        s1, e1, _, _ = _bounds(len(a), len(b), group, context)
        total += 1 + (e1 - s1) + sum(ch.chg2 for ch in group)
        total += old_open and s1 <= len(a) - 1 < e1
        total += new_open and any(ch.i2 <= len(b) - 1 < ch.i2 + ch.chg2 for ch in group)
    return total


def _trim_common_tail(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """``trim_common_tail``: drop equal 1024-byte tail blocks, then give back to a newline."""
    blk = 1024
    smaller = min(len(a), len(b))
    trimmed = 0
    while (
        blk + trimmed <= smaller
        and a[len(a) - trimmed - blk : len(a) - trimmed]
        == b[len(b) - trimmed - blk : len(b) - trimmed]
    ):
        trimmed += blk
    if not trimmed:
        return a, b
    tail = a[len(a) - trimmed :]
    nl = tail.find(b"\n")
    recovered = trimmed if nl < 0 else nl + 1
    cut = trimmed - recovered
    return a[: len(a) - cut], b[: len(b) - cut]


def zero_context_script(old: bytes, new: bytes) -> list[Change]:
    """The changes of a diff made with no context lines, as ``xdi_diff`` makes it: the common
    tail is trimmed first (:func:`_trim_common_tail`), which can change the result. Used by
    the combined diff (``combine-diff.c``); ``--stat`` counts the patch's diff instead."""
    if old == new:
        return []
    a_bytes, b_bytes = _trim_common_tail(old, new)
    return edit_script(split_lines(a_bytes), split_lines(b_bytes))


def count_changes(old: bytes, new: bytes) -> tuple[int, int]:
    """``(added, deleted)`` line counts as ``git diff --stat`` shows them for a text file:
    the ``+`` and ``-`` lines of its patch (:func:`hunk_lines`), from the same edit script."""
    if old == new:
        return 0, 0
    if not old or not new:  # one side empty: every line of the other changed, no diff needed
        return count_lines(new), count_lines(old)
    script = file_script(old, new)
    return sum(c.chg2 for c in script), sum(c.chg1 for c in script)
