"""Make a composed message fit the SMTP server it goes to: 8-bit only where 8BITMIME is.

Pure: bytes in, bytes out. The composers label every body ``Content-Transfer-Encoding:
8bit`` (as git-multimail does) and write it in UTF-8. That may be sent as it is only to a
server that offers 8BITMIME (RFC 6152 §3: "a client [...] MUST NOT send 8bit data" to one
that does not), and only in lines of at most 998 octets (RFC 5321 §4.5.3.1.6; 8BITMIME does
not lift it, and a 500-character line of CJK text is 1,500 bytes) without NUL bytes (RFC
2045 §2.8). Otherwise :func:`for_smtp` re-encodes the body quoted-printable (RFC 2045 §6.7):
ASCII text stays readable, and the decoded body is the composed one byte for byte.
"""

from __future__ import annotations

import re

MAX_LINE_OCTETS = 998
"""RFC 5321 §4.5.3.1.6: a text line of at most 1000 octets, CRLF included."""
QP_LINE = 76
"""RFC 2045 §6.7 (5): encoded lines of at most 76 characters."""

_CTE = re.compile(rb"^content-transfer-encoding:[^\n]*$", re.IGNORECASE | re.MULTILINE)
_PLAIN = re.compile(rb"[\x21-\x3c\x3e-\x7e \t]*")  # QP literal: printable ASCII but "=", SP, TAB
_LITERAL = frozenset(range(0x21, 0x7F)) - {0x3D} | {0x09, 0x20}
_LONG_LINE = re.compile(rb"[^\n]{%d}" % (MAX_LINE_OCTETS + 1))


def for_smtp(message: bytes, *, eight_bit_ok: bool) -> tuple[bytes, bool]:
    """Return ``(message to send, whether it holds 8-bit data)`` for a server that offers
    8BITMIME (``eight_bit_ok``) or not.

    ``message`` (``\\n`` line ends, a header block, an empty line, the body) is returned as
    it is when its body may go as it is; else with the body quoted-printable and its
    ``Content-Transfer-Encoding`` field (added when missing) saying so. A message without
    a body is returned as it is.
    """
    head, sep, body = message.partition(b"\n\n")
    if not sep:
        return message, False
    eight_bit = not body.isascii()
    if not _must_encode(body, eight_bit, eight_bit_ok):
        return message, eight_bit
    field = b"Content-Transfer-Encoding: quoted-printable"
    head, found = _CTE.subn(field, head, count=1)
    if not found:
        head += b"\n" + field
    return head + sep + quoted_printable(body), False


def _must_encode(body: bytes, eight_bit: bool, eight_bit_ok: bool) -> bool:
    return (eight_bit and not eight_bit_ok) or b"\0" in body or _LONG_LINE.search(body) is not None


def quoted_printable(data: bytes) -> bytes:
    """RFC 2045 §6.7 quoted-printable of text with ``\\n`` line ends (kept as hard breaks).

    Every byte but printable ASCII (not ``=``), space and tab becomes ``=XX`` (a lone CR
    too, so no transport turns it into a line end); a space or tab that ends a line is
    encoded; longer lines get soft breaks (``=`` at the end) so none passes 76 characters.
    """
    return b"\n".join(_encode_line(line) for line in data.split(b"\n"))


def _encode_line(line: bytes) -> bytes:
    plain = _PLAIN.fullmatch(line) is not None
    if plain and len(line) <= QP_LINE and not line.endswith((b" ", b"\t")):
        return line  # the common case in a diff: nothing to do
    tokens = [bytes((c,)) if c in _LITERAL else b"=%02X" % c for c in line]
    if tokens and tokens[-1] in (b" ", b"\t"):
        tokens[-1] = b"=%02X" % tokens[-1][0]
    out: list[bytes] = []
    current = b""
    for token in tokens:
        if len(current) + len(token) > QP_LINE - 1:  # room for the soft break's "="
            out.append(current + b"=")
            current = b""
        current += token
    out.append(current)
    return b"\n".join(out)
