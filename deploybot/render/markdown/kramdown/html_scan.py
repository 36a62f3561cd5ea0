"""Scanning HTML the way kramdown's parser does: tag names, start tags, attributes, escapes.

Pure functions over a string, no mistune. The rules are kramdown's
(``lib/kramdown/parser/html.rb``: ``HTML_TAG_RE``, ``HTML_ATTRIBUTE_RE``, the element
lists; ``lib/kramdown/utils/html.rb``: ``escape_html``; ``converter/html.rb``:
``html_attributes``), with REXML's ``UNAME_STR`` for names.

Linear: a quoted attribute value is closed by the next same quote, found through a
:class:`NextFinder` (one search answers every later question up to its answer), so a run
of lines that each open a tag with an unclosed quote is not scanned once per line.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from deploybot.render.html_elements import KRAMDOWN_WITHOUT_BODY
from deploybot.render.markdown.kramdown.attrs import escape_attribute

#: REXML's UNAME_STR: an optional prefix, a letter or ``_``, then word characters, ``.``, ``-``.
NAME = re.compile(r"(?:[^\W\d][\w.-]*:)?[^\W\d][\w.-]*")
_SPACE = re.compile(r"\s*")
_VALUE_WORD = re.compile(r"\w+")
_EQUALS = re.compile(r"\s*=\s*")
_TAG_END = re.compile(r"\s*(/)?>")
_CLOSE_TAG = re.compile(r"</(" + NAME.pattern + r")\s*>")

SPAN_ELEMENTS = frozenset(
    [
        "a",
        "abbr",
        "acronym",
        "b",
        "big",
        "bdo",
        "br",
        "button",
        "cite",
        "code",
        "del",
        "dfn",
        "em",
        "i",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "mark",
        "option",
        "q",
        "rb",
        "rbc",
        "rp",
        "rt",
        "rtc",
        "ruby",
        "samp",
        "select",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "tt",
        "u",
        "var",
    ]
)
BLOCK_ELEMENTS = frozenset(
    [
        "address",
        "article",
        "aside",
        "applet",
        "body",
        "blockquote",
        "caption",
        "col",
        "colgroup",
        "dd",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "head",
        "iframe",
        "legend",
        "menu",
        "li",
        "main",
        "map",
        "nav",
        "ol",
        "optgroup",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tfoot",
        "tr",
        "ul",
    ]
)
_MODEL_BLOCK = (
    "address applet article aside blockquote body dd details div dl fieldset figure "
    "figcaption footer form header hgroup iframe li main map menu nav noscript object "
    "section summary td"
)
_MODEL_SPAN = (
    "a abbr acronym b bdo big button cite caption del dfn dt em h1 h2 h3 h4 h5 h6 i ins "
    "label legend optgroup p q rb rbc rp rt rtc ruby select small span strong sub sup th tt"
)
_MODEL_RAW = "script style math option textarea pre code kbd samp var"
_MODELS = {
    **{n: "block" for n in _MODEL_BLOCK.split()},
    **{n: "span" for n in _MODEL_SPAN.split()},
    **{n: "raw" for n in _MODEL_RAW.split()},
}
#: Names kramdown knows as HTML (their tag and attribute names are lower-cased).
KNOWN = frozenset(SPAN_ELEMENTS | BLOCK_ELEMENTS | KRAMDOWN_WITHOUT_BODY | set(_MODELS))
#: The ``markdown`` attribute's values (``HTML_MARKDOWN_ATTR_MAP``).
MARKDOWN_ATTR = {"0": "raw", "1": "default", "span": "span", "block": "block"}
_TEXT_ESCAPE = re.compile(r"&(?:[\w:][\w:.-]*|#\d+|#x[0-9a-fA-F]+);|[&<>]")
_TEXT_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def content_model(name: str) -> str:
    """Return kramdown's ``HTML_CONTENT_MODEL[name]``: ``block``, ``span`` or ``raw``."""
    return _MODELS.get(name, "raw")


@dataclass(frozen=True)
class StartTag:
    """A start tag found at ``start``; ``end`` is just after its ``>``. ``name`` is lower-cased
    when kramdown knows it; ``attrs`` keep source order (a repeated name keeps its first
    place and its last value); ``closed`` is true for ``<x/>``."""

    start: int
    end: int
    name: str
    attrs: dict[str, str]
    closed: bool


class NextFinder:
    """``pattern.search(src, pos)`` answered from the last search while ``pos`` lies between
    where it started and what it found: amortised linear for rising positions."""

    def __init__(self, src: str, pattern: re.Pattern[str]) -> None:
        self.src = src
        self.pattern = pattern
        self.start = len(src) + 1
        self.found: re.Match[str] | None = None

    def search(self, pos: int) -> re.Match[str] | None:
        """Return the first match of the pattern at or after ``pos``, or ``None``."""
        if self.start <= pos and (self.found is None or pos <= self.found.start()):
            return self.found
        self.start = pos
        self.found = self.pattern.search(self.src, pos)
        return self.found


def finder(env: MutableMapping[str, Any], src: str, pattern: re.Pattern[str]) -> NextFinder:
    """Return the document's :class:`NextFinder` for ``pattern`` over ``src`` (kept in
    ``env``, so every rule asking about the same text shares one)."""
    finders: dict[tuple[int, str], NextFinder] = env.setdefault("_kramdown_finders", {})
    key = (id(src), pattern.pattern)
    found = finders.get(key)
    if found is None or found.src is not src:
        found = finders[key] = NextFinder(src, pattern)
    return found


_QUOTES = {q: re.compile(q) for q in "\"'"}


def start_tag(src: str, pos: int, env: MutableMapping[str, Any]) -> StartTag | None:
    """Return the start tag whose ``<`` is at ``pos`` (kramdown's ``HTML_TAG_RE``), or ``None``.

    Attribute values are a word or quoted (to the next same quote, across lines); an
    attribute may have no value. Anything else before the ``>`` means no tag.
    """
    m = NAME.match(src, pos + 1)
    if m is None or src[pos] != "<":
        return None
    raw_name, at = m.group(0), m.end()
    known = raw_name.lower() in KNOWN
    attrs: dict[str, str] = {}
    while True:
        space = _SPACE.match(src, at)
        assert space is not None
        attr = NAME.match(src, space.end()) if space.end() > at else None
        if attr is None:
            break
        value, at = "", attr.end()
        equals = _EQUALS.match(src, at)
        if equals is not None and equals.end() < len(src):
            value_at = equals.end()
            quote = src[value_at]
            word = _VALUE_WORD.match(src, value_at)
            if word is not None:
                value, at = word.group(0), word.end()
            elif quote in _QUOTES:
                close = finder(env, src, _QUOTES[quote]).search(value_at + 1)
                if close is not None:
                    value, at = src[value_at + 1 : close.start()], close.end()
        name = attr.group(0).lower() if known else attr.group(0)
        attrs[name] = value
    end = _TAG_END.match(src, at)
    if end is None:
        return None
    name = raw_name.lower() if known else raw_name
    return StartTag(pos, end.end(), name, attrs, end.group(1) is not None)


def close_tag(src: str, pos: int) -> re.Match[str] | None:
    """Return the match of a close tag ``</name >`` at ``pos`` (group 1: the name), or ``None``."""
    return _CLOSE_TAG.match(src, pos)


def attributes_html(attrs: dict[str, str]) -> str:
    """Return ``attrs`` as kramdown's ``html_attributes`` writes them: `` name="value"``
    each, values escaped as attributes, an empty ``id`` left out."""
    return "".join(
        f' {k}="{escape_attribute(v)}"' for k, v in attrs.items() if k != "id" or v.strip()
    )


def escape_text(text: str) -> str:
    """Return ``text`` escaped as kramdown's ``escape_html(text, :text)``: ``& < >`` become
    entities, except an ``&`` that starts an entity reference."""
    return _TEXT_ESCAPE.sub(lambda m: _TEXT_ESCAPES.get(m.group(0), m.group(0)), text)
