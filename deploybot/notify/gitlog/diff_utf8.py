"""git's UTF-8 check of a hunk header line, before the line is printed.

``fn_out_consume`` in git's ``diff.c`` passes every ``@@`` line through ``sane_truncate_line``:
the line is walked one character at a time with ``utf8_width`` and cut at the first byte that
does not start a valid UTF-8 character (``pick_one_utf8_char`` in ``utf8.c``); then
``emit_hunk_header`` adds the newline back when the cut removed it. So a function text that
the 80-byte cut (``def_ff``) split inside a character loses the partial character, and one
in Latin-1 is cut at its first non-ASCII byte. Pure functions on ``bytes``.
"""

from __future__ import annotations

__all__ = ["sane_truncate_line", "utf8_char_length"]


def utf8_char_length(data: bytes, pos: int) -> int:
    """``pick_one_utf8_char``: the length (1-4) of the UTF-8 character at ``data[pos]``, or 0
    when none starts there.

    Invalid as in git: a truncated sequence, a bad continuation byte, an overlong form, a
    surrogate (U+D800..U+DFFF), U+FFFE and U+FFFF, anything above U+10FFFF, and a lead byte
    0x80..0xBF or 0xF8..0xFF. A NUL is a valid one-byte character.
    """
    left = len(data) - pos
    if left < 1:
        return 0
    s0 = data[pos]
    if s0 < 0x80:
        return 1
    if s0 & 0xE0 == 0xC0:
        ok = left >= 2 and _cont(data[pos + 1]) and s0 & 0xFE != 0xC0
        return 2 if ok else 0
    if s0 & 0xF0 == 0xE0:
        if left < 3 or not (_cont(data[pos + 1]) and _cont(data[pos + 2])):
            return 0
        s1, s2 = data[pos + 1], data[pos + 2]
        overlong = s0 == 0xE0 and s1 & 0xE0 == 0x80
        surrogate = s0 == 0xED and s1 & 0xE0 == 0xA0
        nonchar = s0 == 0xEF and s1 == 0xBF and s2 & 0xFE == 0xBE
        return 0 if overlong or surrogate or nonchar else 3
    if s0 & 0xF8 == 0xF0:
        if left < 4 or not all(_cont(c) for c in data[pos + 1 : pos + 4]):
            return 0
        s1 = data[pos + 1]
        overlong = s0 == 0xF0 and s1 & 0xF0 == 0x80
        too_big = (s0 == 0xF4 and s1 > 0x8F) or s0 > 0xF4
        return 0 if overlong or too_big else 4
    return 0


def _cont(c: int) -> bool:
    return c & 0xC0 == 0x80


def sane_truncate_line(line: bytes) -> bytes:
    """A hunk header line as git prints it: cut before the first byte that does not start a
    valid UTF-8 character (see :func:`utf8_char_length`), then ended with ``\\n`` if the cut
    took it.

    Args:
        line: the ``@@ ... @@ func`` line with its newline, as xdiff formats it.
    """
    if line.isascii():
        return line
    pos = 0
    while pos < len(line):
        step = utf8_char_length(line, pos)
        if not step:
            break
        pos += step
    out = line[:pos]
    return out if out.endswith(b"\n") else out + b"\n"
