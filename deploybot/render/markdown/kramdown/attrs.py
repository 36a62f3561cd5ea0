"""kramdown attribute lists: parse ``{: …}`` IALs and ``{:name: …}`` ALDs, merge, inject.

Pure functions, no mistune. The syntax and the merge rules follow kramdown's parser
(``lib/kramdown/parser/kramdown/extensions.rb``: ``parse_attribute_list``, ``ALD_TYPE_ANY``;
``lib/kramdown/parser/kramdown.rb``: ``update_attr_with_ial``) and its syntax documentation
(https://kramdown.gettalong.org/syntax.html#attribute-list-definitions, "Inline Attribute
Lists"):

- ``#id`` sets the id (a later one replaces an earlier one);
- ``.cls`` adds a class (classes accumulate, separated by one space, duplicates kept);
- ``key="v"`` / ``key='v'`` sets an attribute (``\\}`` and an escaped quote are unescaped);
- a bare ``name`` references an attribute list definition (ALD); references are applied
  first, in order, then the list's own attributes.

Values are not filtered: ``onclick="…"`` and ``href="javascript:…"`` pass through exactly as
kramdown passes them (site authors are trusted, as with raw HTML under ``escape=False``).
Only the HTML *encoding* is enforced: attribute names can only be ``[\\w-]`` words and values
are escaped like kramdown's ``escape_html(v, :attribute)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

# Ruby's \w is ASCII-only; these mirror kramdown's ALD_* regexps. kramdown scans a list with
# ALD_TYPE_ANY, /(?:\A|\s)(?:KEY_VALUE|REF|ID_OR_CLASS_MULTI)(?=\s|\Z)/; _attribute_parts
# does the same scan without searching for a value's closing quote again from every attempt
# (which made a long list of unclosed values quadratic).
_ID_NAME = r"[A-Za-z0-9_][A-Za-z0-9_-]*"
_ID = r"#[A-Za-z][A-Za-z0-9_:-]*"
_CLASS = r"\.[^\s.#]+"
_KEY_START = re.compile(r"(" + _ID_NAME + r")=([\"'])")
_REF = re.compile(r"(" + _ID_NAME + r")(?=\s|\Z)")
# Possessive (as every repeat here): a repeat Python's re may backtrack into keeps a frame
# per pass, 100+ bytes (1.5 KB in mistune's joined block scanner), for each id or class.
_ID_OR_CLASS_MULTI = re.compile(r"((?:" + _ID + "|" + _CLASS + r")++)(?=\s|\Z)")
_SPACE = re.compile(r"\s")
_ID_OR_CLASS = re.compile(r"#(?P<id>[A-Za-z][A-Za-z0-9_:-]*)|\.(?P<cls>[^\s.#]+)")

# kramdown's body of a block attribute list, ``(?:\\\}|[^}\n])+`` before ``\}[ \t]*$``: any
# characters of the line where each "}" follows a backslash, the last "}" (its end) being
# the line's last but blanks. Written so no repeat gives anything back: the runs without
# "}" and each "\}" that is not that last one (the original kept a frame per character).
_BODY = r"(?=[^}\n])[^}\n]*+(?:(?<=\\)\}(?![ \t]*+$)[^}\n]*+)*+"
IAL_LINE_PATTERN = r"^ {0,3}\{:(?![:/])" + _BODY + r"\}[ \t]*+$"
"""A block IAL line, for a mistune rule (no groups): see :data:`IAL_LINE`."""
#: A block line holding an attribute list definition: ``{:name: attrs}`` (kramdown ALD_START).
ALD_LINE = re.compile(r"^ {0,3}\{:(?P<name>" + _ID_NAME + r"):(?P<body>" + _BODY + r")\}[ \t]*+$")
#: A block IAL line: ``{: attrs}``; ``{::ext}`` and ``{:/}`` are extensions (kramdown IAL_BLOCK).
IAL_LINE = re.compile(r"^ {0,3}\{:(?![:/])(?P<body>" + _BODY + r")\}[ \t]*+$")

#: Token key (mistune token dict) for an element's resolved attributes: name -> raw value.
ATTRS_KEY = "kramdown_attrs"
#: ``state.env`` key holding the document's ALDs (name -> AttributeList).
ALDS_KEY = "kramdown_alds"

_ENTITY_OR_SPECIAL = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);|[&<>\"]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


@dataclass
class AttributeList:
    """One parsed IAL/ALD body: ALD references (in order) and literal attributes.

    ``attrs`` keeps insertion order, as kramdown's ``OrderedHash`` does; ``class`` holds the
    space-joined classes.
    """

    refs: list[str] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)

    def update(self, other: AttributeList) -> None:
        """Merge ``other`` into this list as a second IAL on the same element would be."""
        self.refs.extend(other.refs)
        for key, value in other.attrs.items():
            if key == "class" and "class" in self.attrs:
                self.attrs["class"] = f"{self.attrs['class']} {value}"
            else:
                self.attrs[key] = value


def parse_attribute_list(body: str) -> AttributeList:
    """Return the :class:`AttributeList` for the text between ``{:`` and ``}``.

    ``body`` is e.g. `` width="100%" `` or ``.a #b key='v' center``. Unparseable parts are
    ignored (kramdown only warns), so the result may be empty; this never raises.
    """
    result = AttributeList()
    if body.strip() in ("", ":"):
        return result
    for kind, *parts in _attribute_parts(body):
        if kind == "ref":
            result.refs.append(parts[0])
        elif kind == "idcls":
            for part in _ID_OR_CLASS.finditer(parts[0]):
                if part.group("cls") is not None:
                    _add_class(result.attrs, part.group("cls"))
                else:
                    result.attrs["id"] = part.group("id")
        else:
            key, quote, value = parts
            result.attrs[key] = re.sub(r"\\(\}|" + re.escape(quote) + ")", r"\1", value)
    return result


def _attribute_parts(body: str) -> Iterator[tuple[str, ...]]:
    """Yield ``("pair", key, quote, raw value)``, ``("ref", name)`` or ``("idcls", text)``
    for each match of kramdown's ``ALD_TYPE_ANY`` in ``body``, left to right, in O(len)."""
    values = _Values(body)
    pos = 0
    while pos < len(body):
        found = _attribute_at(body, 0, values) if pos == 0 else None
        if found is None and _SPACE.match(body, pos):
            found = _attribute_at(body, pos + 1, values)
        if found is None:
            pos += 1
            continue
        part, pos = found
        yield part


def _attribute_at(body: str, at: int, values: _Values) -> tuple[tuple[str, ...], int] | None:
    """Return the attribute starting at ``at`` and where it ends, or ``None``."""
    key = _KEY_START.match(body, at)
    if key is not None:
        start, quote = key.end(), key.group(2)
        close = values.closing_quote(start, quote)
        if close is not None:
            return ("pair", key.group(1), quote, body[start:close]), close + 1
    for kind, pattern in (("ref", _REF), ("idcls", _ID_OR_CLASS_MULTI)):
        m = pattern.match(body, at)
        if m is not None:
            return (kind, m.group(1)), m.end()
    return None


class _Values:
    r"""Where a quoted value ends, as the backtracking regex ``(?:\\\}|\\Q|[^}])*?Q``
    followed by ``(?=\s|\Z)`` (``Q`` the quote) finds it, without its worst case.

    The regex walks forward taking ``\}`` and ``\Q`` as pairs, stopping at the first
    ``Q`` followed by a space or the end; at a ``}`` (not in a pair) or the end it backs
    off to the latest ``\Q`` pair whose ``Q`` is followed by a space or the end. A walk
    that fails (or backs off) says the same for every later start on its path, so that
    stretch is remembered per quote and never walked again: O(len(body)) in all.
    """

    def __init__(self, body: str) -> None:
        self.body = body
        self.dead: dict[str, tuple[int, int]] = {}  # quote -> [from, to] known to fail

    def _closes(self, pos: int, quote: str) -> bool:
        body = self.body
        return body[pos] == quote and (pos + 1 == len(body) or bool(_SPACE.match(body, pos + 1)))

    def closing_quote(self, start: int, quote: str) -> int | None:
        """Return the offset of the quote closing a value that starts at ``start``."""
        dead = self.dead.get(quote)
        if dead is not None and dead[0] <= start <= dead[1]:
            return None
        body, pos, backoff = self.body, start, None
        stops = _VALUE_STOPS[quote]
        while (m := stops.search(body, pos)) is not None:
            pos = m.start()
            char = body[pos]
            if char == quote:
                if self._closes(pos, quote):
                    return pos
                pos += 1
            elif char == "}":
                break
            elif body.startswith("}", pos + 1):
                pos += 2
            elif body.startswith(quote, pos + 1):
                if self._closes(pos + 1, quote):
                    backoff = pos + 1
                pos += 2
            else:
                pos += 1
        else:
            pos = len(body)
        self.dead[quote] = (start if backoff is None else backoff + 1, pos)
        return backoff


_VALUE_STOPS = {q: re.compile(r"[\\}" + q + "]") for q in "\"'"}


def resolve_attributes(
    ial: AttributeList,
    alds: Mapping[str, AttributeList],
    into: dict[str, str] | None = None,
) -> dict[str, str]:
    """Apply ``ial`` (its ALD references first, then its own attributes) to ``into``.

    Returns ``into`` (a new dict when None): attribute name -> unescaped value. Unknown
    references are ignored; a reference cycle between ALDs is applied once per cycle.
    """
    target: dict[str, str] = {} if into is None else into
    _apply(ial, alds, target, frozenset())
    return target


def _apply(
    ial: AttributeList,
    alds: Mapping[str, AttributeList],
    target: dict[str, str],
    seen: frozenset[str],
) -> None:
    for ref in ial.refs:
        ald = alds.get(ref)
        if ald is not None and ref not in seen:
            _apply(ald, alds, target, seen | {ref})
    for key, value in ial.attrs.items():
        if key == "class":
            _add_class(target, value)
        else:
            target[key] = value


def _add_class(attrs: dict[str, str], value: str) -> None:
    attrs["class"] = f"{attrs['class']} {value}".lstrip() if attrs.get("class") else value


def escape_attribute(value: str) -> str:
    """Return ``value`` escaped for a double-quoted HTML attribute.

    Like kramdown's ``escape_html(value, :attribute)``: ``< > "`` and ``&`` are escaped, but
    an ``&`` that already starts an entity reference (``&amp;``, ``&#8217;``) is kept.
    """

    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        return _ESCAPES.get(text, text)

    return _ENTITY_OR_SPECIAL.sub(sub, value)


_FIRST_TAG = re.compile(
    r"(?P<lead>\s*)<(?P<name>[A-Za-z][A-Za-z0-9-]*)"
    r"(?P<attrs>(?:\s+[^\s\"'<>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*+)"
    r"(?P<end>\s*/?>)"
)
_TAG_ATTR = re.compile(
    r"(?P<space>\s+)(?P<name>[^\s\"'<>/=]+)(?:\s*=\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?"
)


def inject_attributes(html: str, attrs: Mapping[str, str]) -> str:
    """Return ``html`` with ``attrs`` merged into its first start tag.

    ``html`` is one rendered element, e.g. ``<img src="a.png" alt="" />`` or ``<p>text</p>``.
    An attribute already on the tag keeps its place and gets the new value (``class`` gets
    the new classes appended); new attributes follow the existing ones in ``attrs`` order,
    as kramdown's ``html_attributes`` writes ``el.attr``. When ``html`` does not start with
    a tag (blank output, a comment, text), it is returned unchanged.
    """
    if not attrs:
        return html
    m = _FIRST_TAG.match(html)
    if m is None:
        return html
    pending = {name.lower(): (name, value) for name, value in attrs.items()}
    parts: list[str] = []
    for a in _TAG_ATTR.finditer(m.group("attrs")):
        name = a.group("name")
        if name.lower() not in pending:
            parts.append(a.group(0))
            continue
        new = pending.pop(name.lower())[1]
        if name.lower() == "class" and a.group("value"):
            old = a.group("value").strip("\"'")
            parts.append(f'{a.group("space")}{name}="{old} {escape_attribute(new)}"')
        else:
            parts.append(f'{a.group("space")}{name}="{escape_attribute(new)}"')
    parts.extend(f' {name}="{escape_attribute(value)}"' for name, value in pending.values())
    tag = f"{m.group('lead')}<{m.group('name')}{''.join(parts)}{m.group('end')}"
    return tag + html[m.end() :]
