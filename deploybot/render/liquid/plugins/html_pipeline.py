"""What jekyll-mentions and jemoji share: html-pipeline 2.14's text filters over a document's
HTML, as Nokogiri 1.13 with libxml2 2.9.14 (Debian's) parses and writes it again.

Both plugins (``jekyll-mentions.rb``, jemoji's ``lib/jemoji.rb``) take the part of the output
between the first ``<body ...>`` (and the blank space after it) and ``</body>``, or the whole
output when it has no ``<body``; parse it with ``Nokogiri::HTML::DocumentFragment.parse``
(libxml2's HTML parser over ``<html><body>`` and the text: the body's children); replace the
text nodes their filter changes (``doc.search('.//text()')``, skipping those under the
ignored elements: ``Filter#has_ancestor?``); and write the fragment with ``to_html``, each
child of the body in turn. libxml2 rewrites what it parsed: end tags closed, ``<br/>`` as
``<br>``, entities as characters, attributes in double quotes, and a newline after a block
element followed by an element (``htmlNodeDumpFormatOutput`` with ``format``), so a page a
filter touches is written anew.

lxml parses with libxml2 too (its wheel's 2.14); its writer differs from 2.9.14 in one way
found on the fixtures' pages: 2.9.14 escapes URI attributes (``href``, ``src``, ``action``,
``name`` of ``a``: ``xmlURIEscapeStr`` with ``@/:=?;#%&,+<>`` kept, leading blanks dropped,
``htmlAttrDumpOutput``), done here (:func:`_escape_uris`) before writing, and its parser in
two: 2.14 reads a carriage return as a newline (HTML5's input stream; kept here:
:func:`_carriage_mark`), and reads an attribute name that 2.9.14 drops (one not starting
with a letter, ``_``, ``:`` or ``.``: Liquid left in a tag, ``{% if x %}``) as HTML5 does:
not followed. Checked: the bodies of the 584 HTML files of ``tests/fixtures`` (outputs
and templates) written by Nokogiri 1.13 on libxml2 2.9.14 and here are the same but for
two templates with Liquid in their tags. The work is linear in the size of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import escape
from typing import Any

BODY_START = "<body"
OPENING_BODY = re.compile(r"<body(.*?)>\s*", re.S)
"""``OPENING_BODY_TAG_REGEX`` of both plugins: ``%r!<body(.*?)>\\s*!m`` (Ruby's ``m``: dot
matches newline)."""
_BODY_FIRST = re.compile(r"^\s*?<body", re.I | re.M)
_URI_ATTRIBUTES = frozenset({"href", "action", "src"})
_URI_KEPT = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()@/:=?;#%&,+<>"
)
_BLANKS = " \t\n\r"

TextFilter = Callable[[str], str | None]
"""A filter of one text node: its text -> the HTML replacing it (``None``: left alone)."""


def split_body(output: str) -> tuple[str, str, str]:
    """Return ``output`` as ``(before, body, after)``: the part both plugins filter between
    the first ``<body ...>`` (its blank space in ``before``) and the next ``</body>``
    (``after`` starts with it); with no ``<body``, all of it is the body. Ruby's
    ``String#partition``: with no opening tag matched, ``before`` is all of it."""
    if BODY_START not in output:
        return "", output, ""
    m = OPENING_BODY.search(output)
    if m is None:
        return output, "", ""
    body, sep, rest = output[m.end() :].partition("</body>")
    return output[: m.end()], body, sep + rest


MAX_DEPTH = 255
"""The deepest element below ``<body>`` libxml2 2.9.14 builds without its huge option
(``xmlParserMaxDepth``, 256 with ``<html>``/``<body>``; found with Nokogiri): it stops
reading at a deeper one, and the rest of the page is lost."""
MAX_TEXT = 10_000_000
"""The longest text node (bytes) it reads so (``XML_MAX_TEXT_LENGTH``): it cuts it there."""
LIMITS_WARNING = (
    "the HTML nests deeper than 255 elements or holds a text over 10 MB: Jekyll's HTML "
    "parser (Nokogiri on libxml2 without its huge option) stops reading there and cuts "
    "the page; deploybot writes it whole"
)


@dataclass(frozen=True)
class Filtered:
    """A filtered fragment: its ``html``, and whether it passes libxml2 2.9.14's limits
    (:data:`MAX_DEPTH`, :data:`MAX_TEXT`), where Nokogiri would cut the page (``beyond``:
    the caller warns; the page is written whole)."""

    html: str
    beyond: bool = False


def filter_fragment(
    html: str, text_filter: TextFilter, ignored: frozenset[str], raw: bool
) -> Filtered:
    """Return the HTML fragment ``html`` parsed and written again as Nokogiri does, each text
    node not under an ``ignored`` element (lower-case names) replaced by what
    ``text_filter`` makes of it. ``raw``: the filter sees the node's text (jemoji's
    ``node.text``), else its HTML (``node.to_html``: ``&``, ``<``, ``>`` escaped, as
    jekyll-mentions reads it). Raises ``ImportError`` without lxml."""
    mark = _carriage_mark(html)
    if mark:
        done = _filter(html.replace("\r", mark), text_filter, ignored, raw)
        return Filtered(done.html.replace(mark, "\r"), done.beyond)
    return _filter(html, text_filter, ignored, raw)


def _carriage_mark(html: str) -> str:
    """Return a character ``html`` does not hold to stand for its carriage returns ('' when
    it has none): libxml2 2.9.14 keeps a ``\r`` as it is, 2.14 reads ``\r\n`` and ``\r``
    as ``\n`` (HTML5's input stream), so they pass its parser as a private-use character."""
    if "\r" not in html:
        return ""
    used = {c for c in html if "\ue000" <= c <= "\uf8ff"}
    return next((chr(c) for c in range(0xE000, 0xF900) if chr(c) not in used), "")


def _filter(html: str, text_filter: TextFilter, ignored: frozenset[str], raw: bool) -> Filtered:
    """:func:`filter_fragment` of a fragment without carriage returns."""
    import lxml.etree as etree

    parser = etree.HTMLParser(encoding="utf-8", huge_tree=True)
    root = etree.fromstring(("<html><body>" + html).encode("utf-8"), parser)
    body = root.find("body") if root is not None else None
    if body is None:
        return Filtered("")
    beyond = _deepest(body) > MAX_DEPTH
    for node, is_tail, depth in list(_text_nodes(body, ignored)):
        text = (node.tail if is_tail else node.text) or ""
        beyond = beyond or depth > MAX_DEPTH or len(text.encode("utf-8")) > MAX_TEXT
        replaced = text_filter(text if raw else escape(text, quote=False))
        if replaced is not None:
            beyond = beyond or (depth >= MAX_DEPTH and "<" in replaced)
            _replace_text(node, is_tail, replaced, parser)
    _escape_uris(body)
    if _BODY_FIRST.search(html):  # Nokogiri: a line starting with <body takes the body itself
        return Filtered(_serialize(body, etree), beyond)
    parts = [escape(body.text or "", quote=False)]
    for child in body:
        parts.append(_serialize(child, etree))
        parts.append(escape(child.tail or "", quote=False))
    return Filtered("".join(parts), beyond)


def _serialize(node: Any, etree: Any) -> str:
    """One node as Nokogiri's ``Node#to_html`` writes it (lxml adds a newline after a
    node written with ``pretty_print``; libxml2 2.9.14 does not, at the top)."""
    text: str = etree.tostring(
        node, method="html", encoding="unicode", pretty_print=True, with_tail=False
    )
    return text[:-1] if text.endswith("\n") else text


def _text_nodes(body: Any, ignored: frozenset[str]) -> Iterator[tuple[Any, bool, int]]:
    """Yield ``(element, is_tail, depth)`` for each text node under ``body`` in document
    order that has no ``ignored`` ancestor: an element's text (``is_tail`` false) or the
    text after it (its tail, whose parent is the element's parent), and the depth of its
    parent below ``body`` (0: the body). A comment's text is no text node."""
    stack: list[tuple[Any, bool, bool, int]] = [(body, False, False, 0)]
    while stack:
        element, is_tail, hidden, depth = stack.pop()
        if is_tail:
            if element.tail and not hidden:
                yield element, True, depth
            continue
        if not isinstance(element.tag, str):  # a comment or processing instruction
            continue
        inside = hidden or element.tag.lower() in ignored
        if element.text and not inside:
            yield element, False, depth
        for child in reversed(element):
            stack.append((child, True, inside, depth))
            stack.append((child, False, inside, depth + 1))


def _deepest(body: Any) -> int:
    """Return the depth of the deepest element below ``body`` (its children: 1)."""
    deepest, stack = 0, [(child, 1) for child in body]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element)
    return deepest


def _replace_text(node: Any, is_tail: bool, html: str, parser: Any) -> None:
    """Replace the text (or the tail) of ``node`` by the nodes the HTML ``html`` parses to
    (Nokogiri's ``Node#replace`` with a string)."""
    import lxml.etree as etree

    fragment = etree.fromstring(("<html><body>" + html).encode("utf-8"), parser)
    new = fragment.find("body") if fragment is not None else None
    lead = "" if new is None else new.text or ""
    children = [] if new is None else list(new)
    if is_tail:
        node.tail = lead or None  # an empty text node would change where libxml2 breaks lines
        last = node
    elif children:
        node.text = lead or None
        node.insert(0, children[0])
        last, children = children[0], children[1:]
    else:
        node.text = lead or None
        return
    for child in children:  # each after the last: no walk through the siblings
        last.addnext(child)
        last = child


def _escape_uris(body: Any) -> None:
    """Escape the URI attributes of every element under ``body`` as libxml2 2.9.14 writes
    them (see the module docstring)."""
    for element in body.iter():
        if not isinstance(element.tag, str):
            continue
        for name, value in element.attrib.items():
            lower = name.lower()
            if lower in _URI_ATTRIBUTES or (lower == "name" and element.tag.lower() == "a"):
                escaped = uri_escape(value.lstrip(_BLANKS))
                if escaped != value:
                    element.set(name, escaped)


def uri_escape(value: str) -> str:
    """libxml2's ``xmlURIEscapeStr(value, "@/:=?;#%&,+<>")``: every UTF-8 byte but ASCII
    letters, digits, ``-_.!~*'()`` and those kept as ``%XX`` (upper-case hex)."""
    data = value.encode("utf-8")
    if all(b in _URI_KEPT for b in data):
        return value
    return "".join(chr(b) if b in _URI_KEPT else f"%{b:02X}" for b in data)
