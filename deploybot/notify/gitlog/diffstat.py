"""git's ``--stat`` block, from line counts to text: a pure function of its entries.

Follows git's ``diff.c`` (``show_stats``, ``scale_linear``, ``fill_print_name``,
``pprint_rename``, ``print_stat_summary_inserts_deletes``) and ``quote.c``
(``quote_c_style`` with ``core.quotePath`` true), as described and checked against
git 2.39.5 in ``shared/reference/notifier-research.md`` section 4.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


@dataclass(frozen=True)
class StatEntry:
    """One file of the stat.

    Attributes:
        name: the print name (see :func:`print_name`): already quoted, renames as
            ``pfx{old => new}sfx``.
        added, deleted: changed line counts; for a binary file, the new and old sizes in bytes.
        binary: draw ``Bin OLD -> NEW bytes`` instead of a bar.
    """

    name: str
    added: int
    deleted: int
    binary: bool = False


def _needs_quote(c: int) -> bool:
    return c < 0x20 or c in (0x22, 0x5C) or c >= 0x7F


# The bytes a path may hold unquoted: deleting them (``bytes.translate``, in C) leaves the
# ones that need quoting, so a plain path is told in one call instead of one per byte.
_PLAIN_BYTES = bytes(c for c in range(256) if not _needs_quote(c))


def quote_path(path: bytes) -> str | None:
    """``quote_c_style``: the double-quoted form of ``path``, or None if it needs none.

    Control characters, ``"``, ``\\``, DEL and every byte >= 0x80 are escaped (``\\t``,
    ``\\"``, octal ``\\303`` and so on), as with git's default ``core.quotePath=true``.
    """
    if not path.translate(None, _PLAIN_BYTES):
        return None
    out = ['"']
    for c in path:
        if not _needs_quote(c):
            out.append(chr(c))
        elif c in _ESCAPES:
            out.append("\\" + _ESCAPES[c])
        else:
            out.append(f"\\{c:03o}")
    out.append('"')
    return "".join(out)


def path_name(path: bytes) -> str:
    """``path`` as git prints it in a stat or a ``rename from`` line: quoted when needed."""
    quoted = quote_path(path)
    return quoted if quoted is not None else path.decode("ascii")


def rename_name(old: bytes, new: bytes) -> str:
    """``pprint_rename``: ``a/{b => c}/d`` using the common directory prefix and suffix.

    Falls back to ``old => new`` when nothing is common, and to ``"old" => "new"`` (both
    C-quoted where needed) when either name needs quoting.
    """
    if quote_path(old) is not None or quote_path(new) is not None:
        return f"{path_name(old)} => {path_name(new)}"
    pfx = 0
    i = 0
    while i < len(old) and i < len(new) and old[i] == new[i]:
        if old[i] == 0x2F:
            pfx = i + 1
        i += 1
    # The suffix scan starts at the strings' terminating NULs, as in C.
    a = old + b"\0"
    b = new + b"\0"
    i, j = len(old), len(new)
    sfx = 0
    adjust = 1 if pfx else 0
    while pfx - adjust <= i and pfx - adjust <= j and a[i] == b[j]:
        if a[i] == 0x2F:
            sfx = len(old) - i
        i -= 1
        j -= 1
    a_mid = max(len(old) - pfx - sfx, 0)
    b_mid = max(len(new) - pfx - sfx, 0)
    mid = f"{old[pfx : pfx + a_mid].decode('ascii')} => {new[pfx : pfx + b_mid].decode('ascii')}"
    if pfx + sfx:
        head = old[:pfx].decode("ascii")
        tail = old[len(old) - sfx :].decode("ascii")
        return f"{head}{{{mid}}}{tail}"
    return mid


def print_name(path: bytes, old_path: bytes | None = None) -> str:
    """``fill_print_name``: the stat name of a file, or of a rename/copy from ``old_path``."""
    if old_path is not None and old_path != path:
        return rename_name(old_path, path)
    return path_name(path)


def char_width(ch: str) -> int:
    """Display columns of one character, close to git's ``git_wcwidth``."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def str_width(s: str) -> int:
    """Display columns of a string (``utf8_strwidth``).

    Printable ASCII (every quoted path name) is one column a character, as
    :func:`char_width` says for each: counted without looking at each."""
    if s.isascii() and s.isprintable():
        return len(s)
    return sum(char_width(ch) for ch in s)


def scale_linear(it: int, width: int, max_change: int) -> int:
    """``scale_linear``: at least one column for any change, integer arithmetic."""
    if it == 0:
        return 0
    return 1 + (it * (width - 1) // max_change)


def _decimal_width(n: int) -> int:
    return len(str(n))


def _truncate(name: str, name_width: int) -> tuple[str, str, int]:
    """``...``-truncate ``name`` to ``name_width`` columns: (prefix, name, padding)."""
    length = name_width
    prefix = ""
    if name_width < str_width(name):
        prefix = "..."
        length = max(length - 3, 0)
        width = str_width(name)
        k = 0
        while width > length:
            width -= char_width(name[k])
            k += 1
        name = name[k:]
        slash = name.find("/")
        if slash >= 0:
            name = name[slash:]
    return prefix, name, max(length - str_width(name), 0)


def _widths(entries: Sequence[StatEntry], width: int) -> tuple[int, int, int]:
    """Return (name_width, number_width, graph_width) as ``show_stats`` sizes them."""
    max_len = max((str_width(e.name) for e in entries), default=0)
    max_change = max((e.added + e.deleted for e in entries if not e.binary), default=0)
    number_width = 3 if any(e.binary for e in entries) else 0
    bin_width = max(
        (14 + _decimal_width(e.added) + _decimal_width(e.deleted) for e in entries if e.binary),
        default=0,
    )
    number_width = max(number_width, _decimal_width(max_change))
    width = max(width, 16 + 6 + number_width)
    graph_width = max_change if max_change + 4 > bin_width else bin_width - 4
    name_width = max_len
    if name_width + number_width + 6 + graph_width > width:
        if graph_width > width * 3 // 8 - number_width - 6:
            graph_width = max(width * 3 // 8 - number_width - 6, 6)
        if name_width > width - number_width - 6 - graph_width:
            name_width = width - number_width - 6 - graph_width
        else:
            graph_width = width - number_width - 6 - name_width
    return name_width, number_width, graph_width


def _bar(e: StatEntry, graph_width: int, max_change: int) -> str:
    add, dele = e.added, e.deleted
    if graph_width <= max_change:
        total = scale_linear(add + dele, graph_width, max_change)
        if total < 2 and add and dele:
            total = 2
        if add < dele:
            add = scale_linear(add, graph_width, max_change)
            dele = total - add
        else:
            dele = scale_linear(dele, graph_width, max_change)
            add = total - dele
    return "+" * add + "-" * dele


def format_diffstat(entries: Sequence[StatEntry], width: int = 80) -> list[str]:
    """The ``--stat`` lines git prints for ``entries`` (in the given order), then the summary.

    Args:
        entries: the files, in git's output order.
        width: the total width (git: ``COLUMNS`` or the terminal, else 80).

    Returns:
        Lines without newlines: one per entry (each starting with a space), then
        :func:`summary_line`. Empty when there are no entries.
    """
    if not entries:
        return []
    name_width, number_width, graph_width = _widths(entries, width)
    max_change = max((e.added + e.deleted for e in entries if not e.binary), default=0)
    lines: list[str] = []
    for e in entries:
        prefix, name, padding = _truncate(e.name, name_width)
        head = f" {prefix}{name}{' ' * padding} | "
        if e.binary:
            line = head + f"{'Bin':>{number_width}}"
            if e.added or e.deleted:
                line += f" {e.deleted} -> {e.added} bytes"
            lines.append(line)
            continue
        total = e.added + e.deleted
        count = f"{total:>{number_width}}" + (" " if total else "")
        lines.append(head + count + _bar(e, graph_width, max_change))
    adds = sum(e.added for e in entries if not e.binary)
    dels = sum(e.deleted for e in entries if not e.binary)
    lines.append(summary_line(len(entries), adds, dels))
    return lines


def summary_line(files: int, insertions: int, deletions: int) -> str:
    """``print_stat_summary_inserts_deletes``: `` N files changed, X insertions(+), ...``.

    Insertions are shown when non-zero or when there are no deletions, and the other way
    round, so ``0 insertions(+), 0 deletions(-)`` appears only when both are zero.
    """
    out = f" {files} file{'s' if files != 1 else ''} changed"
    if insertions or not deletions:
        out += f", {insertions} insertion{'s' if insertions != 1 else ''}(+)"
    if deletions or not insertions:
        out += f", {deletions} deletion{'s' if deletions != 1 else ''}(-)"
    return out
