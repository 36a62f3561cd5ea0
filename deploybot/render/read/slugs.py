"""Jekyll's ``Utils.slugify`` (``lib/jekyll/utils.rb``), for URLs and the ``slugify`` filter.

Modes: ``raw`` (runs of whitespace -> ``-``), ``default`` (runs of anything but letters,
marks and decimal digits -> ``-``), ``pretty`` (as ``default`` but ``._~!$&'()+,;=@`` are
kept), ``ascii`` (anything but ``A-Za-z0-9``), ``latin`` (accents dropped first, then as
``default``); then one ``-`` is dropped at either end of each line and the result is
lower-cased unless ``cased``. Any other mode (``none``) only lower-cases.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

MODES = ("raw", "default", "pretty", "ascii", "latin")
_PRETTY_KEPT = frozenset("._~!$&'()+,;=@")
# I18n.transliterate's table (i18n's DEFAULT_APPROXIMATIONS, U+00C0..U+017E): the letters
# listed here, and every other letter of that range by its unaccented base letter.
_SPECIAL = {
    "Æ": "AE", "Ð": "D", "×": "x", "Ø": "O", "Þ": "Th", "ß": "ss", "æ": "ae", "ð": "d",
    "ø": "o", "þ": "th", "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h", "ı": "i", "Ĳ": "IJ",
    "ĳ": "ij", "ĸ": "k", "Ŀ": "L", "ŀ": "l", "Ł": "L", "ł": "l", "ŉ": "'n", "Ŋ": "NG",
    "ŋ": "ng", "Œ": "OE", "œ": "oe", "Ŧ": "T", "ŧ": "t",
}  # fmt: skip


def _approximation(char: str) -> str:
    if char in _SPECIAL:
        return _SPECIAL[char]
    if "\u00c0" <= char <= "\u017e" and char != "\u00f7":
        base = unicodedata.normalize("NFD", char)[0]
        if base.isascii():
            return base
    return "?"


def _word(char: str) -> bool:
    """Ruby's ``[\\p{M}\\p{L}\\p{Nd}]``."""
    category = unicodedata.category(char)
    return category[0] in "LM" or category == "Nd"


_KEEP: dict[str, Callable[[str], bool]] = {
    "raw": lambda c: not c.isspace(),
    "default": _word,
    "latin": _word,
    "pretty": lambda c: _word(c) or c in _PRETTY_KEPT,
    "ascii": lambda c: c.isascii() and c.isalnum(),
}


def transliterate(text: str) -> str:
    """``I18n.transliterate``: the Latin letters of its table lose their accents; any
    other non-ASCII character becomes ``?``."""
    return "".join(char if char.isascii() else _approximation(char) for char in text)


def slugify(text: str, mode: str | None = None, cased: bool = False) -> str:
    """Return ``text`` slugified in ``mode`` (default ``"default"``); see the module
    docstring."""
    chosen = mode or "default"
    if chosen not in MODES:
        return text if cased else text.lower()
    if chosen == "latin":
        text = transliterate(text)
    keep = _KEEP[chosen]
    pieces: list[str] = []
    run = False
    for char in text:
        if keep(char):
            pieces.append(char)
            run = False
        elif not run:
            pieces.append("-")
            run = True
    slug = re.sub(r"^-|-$", "", "".join(pieces), flags=re.MULTILINE)
    return slug if cased else slug.lower()
