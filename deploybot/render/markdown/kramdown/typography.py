"""kramdown's default typography: smart quotes and typographic symbols, as characters.

Rules from kramdown's parser (``lib/kramdown/parser/kramdown/smart_quotes.rb``: ``SQ_RULES``,
a port of SmartyPants; ``typographic_symbol.rb``: ``TYPOGRAPHIC_SYMS``) with Jekyll's
defaults ``smart_quotes: lsquo,rsquo,ldquo,rdquo`` and ``entity_output: as_char``, so the
output holds the characters themselves (``’`` rather than ``&#8217;``), as the published
TVM pages do:

- ``'`` -> ‘ ’ and ``"`` -> “ ” depending on the neighbouring characters;
- ``---`` -> —, ``--`` -> –, ``...`` -> …, ``<<`` -> «, ``>>`` -> », and ``<< `` / `` >>``
  -> ``«`` / ``»`` joined to the word by a no-break space (U+00A0).

Only Markdown text is changed: never code spans, code blocks, raw HTML, link URLs, autolinks,
image alt text, or characters escaped with a backslash (``\\"``, ``\\--``).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import mistune
from mistune.core import InlineState
from mistune.helpers import PUNCTUATION
from mistune.inline_parser import InlineParser
from mistune.plugins import Plugin
from mistune.util import escape_url

from deploybot.render.markdown.mistune_hooks import Token, wrap_inline_render

_LITERAL = "typography_literal"
_PROTECTED = frozenset("'\"-.<>")
_SQ_PUNCT = r"""[!"#$%'()*+,\-./:;<=>?@\[\\\]^_`{|}~]"""
_SQ_CLOSE = r"[^ \\\t\r\n\[{(-]"
_A = re.ASCII
# (pattern, keeps group 1 as text, symbols for the quotes that follow): SQ_RULES in order.
_RULES: list[tuple[re.Pattern[str], bool, tuple[str, ...]]] = [
    (re.compile(r"""(["'])(?=[_*]{1,2}\S)""", _A), False, ("open",)),
    (re.compile(r"""(["'])(?=""" + _SQ_PUNCT + r"""(?!\.\.)\B)""", _A), False, ("close",)),
    (re.compile(r"""(\s?)"'(?=\w)""", _A), True, ("“", "‘")),
    (re.compile(r"""(\s?)'"(?=\w)""", _A), True, ("‘", "“")),
    (re.compile(r"""(\s?)'(?=\d\ds)""", _A), True, ("’",)),
    (re.compile(r"""(\s)(['"])(?=\w)""", _A), True, ("open",)),
    (re.compile("(" + _SQ_CLOSE + r""")(['"])""", _A), True, ("close",)),
    (re.compile(r"""(["'])(?=\s|s\b|$)""", _A | re.M), False, ("close",)),
    (re.compile(r"""(.?)'""", _A | re.S), True, ("‘",)),
    (re.compile(r"""(.?)\"""", _A | re.S), True, ("“",)),
]
_QUOTES = {("open", "'"): "‘", ("close", "'"): "’", ("open", '"'): "“", ("close", '"'): "”"}
_SYMBOLS = re.compile(r"---|--|\.\.\.|<< | >>|<<|>>")
_CANDIDATES = re.compile(r"--|\.\.\.|<<| >>|>>|['\"]")  # where a symbol or a quote may start
_SYMBOL_CHARS = {
    "---": "—",
    "--": "–",
    "...": "…",
    "<< ": "«\u00a0",
    " >>": "\u00a0»",
    "<<": "«",
    ">>": "»",
}
# Characters at which a kramdown span parser always starts (emphasis, code, link, escape):
# a quote right after one of them does not see it as its preceding character.
_SPAN_STARTS = frozenset("*_`[\\")
_MARKERS = {"emphasis": "*", "strong": "**", "strikethrough": "~~", "mark": "==", "insert": "^^"}


def make_typography(*, enabled: bool = True) -> Plugin:
    """Return a mistune plugin for kramdown typography; with ``enabled=False`` a no-op."""

    def plugin(md: mistune.Markdown) -> None:
        if enabled:
            typography(md)

    return plugin


def typography(md: mistune.Markdown) -> None:
    """mistune plugin: smart quotes and typographic symbols in Markdown text (see module doc).

    Register it after plugins that add inline syntax whose text must not change.
    """
    # possessive: a run of escapes is one token, with no backtracking frame per escape
    escape = r"(?:\\" + PUNCTUATION + ")++"
    md.inline.register(
        "typography_escape", escape, _parse_escape, before="escape", start_chars="\\"
    )
    wrap_inline_render(md, _smarten_tokens)


def smarten(text: str) -> str:
    """Return plain ``text`` with kramdown's smart quotes and symbols (no markup handling)."""
    buf = _Buffer()
    buf.add(text, editable=True)
    edits = _scan(buf)
    return _edited(text, 0, edits.positions, edits.texts)


def _parse_escape(inline: InlineParser, m: Any, state: InlineState) -> int:
    # Like mistune's parse_escape, but quotes, dashes, dots and angle brackets escaped with a
    # backslash stay literal: they become tokens that _smarten_tokens does not touch.
    plain: list[str] = []
    for char in m.group(0)[1::2]:
        if char in _PROTECTED:
            if plain:
                inline.process_text("".join(plain), state, parse_emphasis=False)
                plain = []
            state.append_token({"type": _LITERAL, "raw": char})
        else:
            plain.append(char)
    if plain:
        inline.process_text("".join(plain), state, parse_emphasis=False)
    end: int = m.end()
    return end


@dataclass
class _Buffer:
    """The inline content as one string, with what may change and what counts as text.

    ``editable`` and ``textual`` hold one byte (0 or 1) per character: lists of bools and
    of one-character strings took 24 bytes per character, 1.2 GB for a 50 MB paragraph."""

    parts: list[str] = field(default_factory=list)
    editable: bytearray = field(default_factory=bytearray)
    textual: bytearray = field(default_factory=bytearray)
    owners: list[tuple[int, Token]] = field(default_factory=list)

    def add(self, text: str, *, editable: bool = False, textual: bool | None = None) -> None:
        self.parts.append(text)
        self.editable += _flags(editable, len(text))
        self.textual += _flags(editable if textual is None else textual, len(text))

    def add_token(self, token: Token) -> None:
        self.owners.append((len(self.editable), token))
        self.add(token["raw"], editable=True)

    @property
    def string(self) -> str:
        return "".join(self.parts)


def _flags(value: bool, count: int) -> bytes:
    return b"\x01" * count if value else bytes(count)


@dataclass
class _Edits:
    """The characters to replace, at increasing buffer positions: ``texts[i]`` replaces the
    character at ``positions[i]`` (``""`` drops it). Two flat arrays, 16 bytes an edit (a
    dict of tuples, and its copy per character, took 200: 200 MB for 1 MB of quotes)."""

    positions: array[int] = field(default_factory=lambda: array("q"))
    texts: list[str] = field(default_factory=list)

    def replace(self, pos: int, length: int, text: str) -> None:
        """Replace ``length`` characters from ``pos`` by ``text``: the first carries it, the
        rest vanish. Each rule looks only past the last edit (``_scan``'s ``consumed``), so
        ``pos`` is past every position already replaced."""
        assert not self.positions or pos > self.positions[-1], "edits out of order"
        self.positions.extend(range(pos, pos + length))
        self.texts.append(text)
        self.texts.extend([""] * (length - 1))


def _smarten_tokens(tokens: list[Token], env: MutableMapping[str, Any]) -> list[Token]:
    buf = _Buffer()
    _flatten(tokens, buf)
    edits = _scan(buf)
    at = edits.positions
    if at:
        for start, token in buf.owners:
            raw: str = token["raw"]
            first, last = bisect_left(at, start), bisect_left(at, start + len(raw))
            if first != last:  # only tokens with an edit are rebuilt
                token["raw"] = _edited(raw, start, at[first:last], edits.texts[first:last])
    return _unliteral(tokens)


def _edited(raw: str, start: int, positions: array[int], texts: list[str]) -> str:
    """Return ``raw`` (at buffer offset ``start``) with the character at each of the sorted
    buffer ``positions`` replaced by the text at the same index of ``texts``."""
    pieces: list[str] = []
    parts: list[str] = []
    done = 0
    for position, text in zip(positions, texts, strict=True):
        parts += (raw[done : position - start], text)
        done = position - start + 1
        if len(parts) >= _BATCH:  # a list of two pieces per edit held 16 bytes a character
            pieces.append("".join(parts))
            parts.clear()
    parts.append(raw[done:])
    pieces.append("".join(parts))
    return "".join(pieces)


_BATCH = 4096


def _flatten(tokens: list[Token], buf: _Buffer) -> None:
    """Append ``tokens`` to ``buf`` roughly as the Markdown source looked (markers opaque)."""
    for token in tokens:
        kind = token["type"]
        children = token.get("children")
        if kind == "text":
            buf.add_token(token)
        elif kind == "softbreak":
            buf.add("\n", textual=True)
        elif kind == "codespan":
            buf.add("`" + token["raw"] + "`")
        elif kind == "image" or (kind == "link" and _is_autolink(token)):
            buf.add("![]()" if kind == "image" else "<" + token["attrs"]["url"] + ">")
        elif kind == "link" and isinstance(children, list):
            buf.add("[")
            _flatten(children, buf)
            buf.add("](" + _url_context(token["attrs"].get("url", "")) + ")")
        elif isinstance(children, list):
            marker = _MARKERS.get(kind, "")
            buf.add(marker)
            _flatten(children, buf)
            buf.add(marker)
        else:
            buf.add(token.get("raw") or "\ufffc")


def _url_context(url: str) -> str:
    """Return what the rules can see of a link's URL: its ends. The rules look at most 3
    characters past a quote, and a URL is never edited, so its middle never matters; and a
    reference link's URL, copied into every use, must not make the buffer (link uses x URL
    length) outgrow the source."""
    return url if len(url) <= 8 else url[:4] + url[-4:]


def _is_autolink(token: Token) -> bool:
    children = token.get("children") or []
    if len(children) != 1 or children[0]["type"] != "text":
        return False
    url: str = token.get("attrs", {}).get("url", "")
    text: str = children[0]["raw"]
    return url in (text, "mailto:" + text) or url == escape_url(text)


def _scan(buf: _Buffer) -> _Edits:
    """Return every change kramdown would make."""
    s = buf.string
    edits = _Edits()
    pos = consumed = 0
    # Jump from one place a symbol or a quote can start to the next (a regex search, not a
    # Python step per character: this scan ran over every character of every paragraph).
    while (found := _CANDIDATES.search(s, pos)) is not None:
        pos = found.start()
        if not buf.editable[pos]:
            pos += 1
            continue
        symbol = _SYMBOLS.match(s, pos)
        if symbol and all(buf.editable[pos : symbol.end()]):
            edits.replace(pos, len(symbol.group(0)), _SYMBOL_CHARS[symbol.group(0)])
            pos = consumed = symbol.end()
        elif s[pos] in "'\"":
            pos = consumed = _smart_quote(s, buf, pos, consumed, edits)
        else:
            pos += 1
    return edits


def _smart_quote(s: str, buf: _Buffer, pos: int, consumed: int, edits: _Edits) -> int:
    """Apply the first matching SQ_RULE for the quote at ``pos``; return the end of the match."""
    before = pos - 1
    start = before if before >= consumed and buf.textual[before] else pos
    if start == before and s[before] in _SPAN_STARTS:
        start = pos
    for pattern, keeps_prefix, symbols in _RULES:
        m = pattern.match(s, start)
        if m is None:
            continue
        first = m.end(1) if keeps_prefix else m.start()
        for offset, symbol in zip(range(first, m.end()), symbols, strict=False):
            if buf.editable[offset]:
                edits.replace(offset, 1, _QUOTES.get((symbol, s[offset]), symbol))
        return max(m.end(), pos + 1)
    return pos + 1


def _unliteral(tokens: list[Token]) -> list[Token]:
    for token in tokens:
        if token["type"] == _LITERAL:
            token["type"] = "text"
        children = token.get("children")
        if isinstance(children, list):
            _unliteral(children)
    return tokens
