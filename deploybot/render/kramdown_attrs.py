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
from collections.abc import Mapping
from dataclasses import dataclass, field

# Ruby's \w is ASCII-only; these mirror kramdown's ALD_* regexps.
_ID_NAME = r"[A-Za-z0-9_][A-Za-z0-9_-]*"
_KEY_VALUE = (
    r"(?P<key>" + _ID_NAME + r")=(?P<q>[\"'])"
    r"(?P<val>(?:\\\}|\\(?P=q)|[^}])*?)(?P=q)"
)
_ID = r"#[A-Za-z][A-Za-z0-9_:-]*"
_CLASS = r"\.[^\s.#]+"
_ANY = re.compile(
    r"(?:\A|\s)(?:"
    + _KEY_VALUE
    + r"|(?P<ref>"
    + _ID_NAME
    + r")|(?P<idcls>(?:"
    + _ID
    + "|"
    + _CLASS
    + r")+))(?=\s|\Z)"
)
_ID_OR_CLASS = re.compile(r"#(?P<id>[A-Za-z][A-Za-z0-9_:-]*)|\.(?P<cls>[^\s.#]+)")

#: A block line holding an attribute list definition: ``{:name: attrs}`` (kramdown ALD_START).
ALD_LINE = re.compile(r"^ {0,3}\{:(?P<name>" + _ID_NAME + r"):(?P<body>(?:\\\}|[^}\n])+)\}[ \t]*$")
#: A block IAL line: ``{: attrs}``; ``{::ext}`` and ``{:/}`` are extensions (kramdown IAL_BLOCK).
IAL_LINE = re.compile(r"^ {0,3}\{:(?![:/])(?P<body>(?:\\\}|[^}\n])+)\}[ \t]*$")
#: A span IAL: ``{: attrs}`` right after a span element (kramdown IAL_SPAN_START).
SPAN_IAL = re.compile(r"\{:(?![:/])(?P<body>(?:\\\}|[^}])+)\}")

#: Token key (mistune token dict) for an element's resolved attributes: name -> raw value.
ATTRS_KEY = "kramdown_attrs"

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
    for m in _ANY.finditer(body):
        if m.group("ref") is not None:
            result.refs.append(m.group("ref"))
        elif m.group("idcls") is not None:
            for part in _ID_OR_CLASS.finditer(m.group("idcls")):
                if part.group("cls") is not None:
                    _add_class(result.attrs, part.group("cls"))
                else:
                    result.attrs["id"] = part.group("id")
        else:
            quote = m.group("q")
            value = re.sub(r"\\(\}|" + re.escape(quote) + ")", r"\1", m.group("val"))
            result.attrs[m.group("key")] = value
    return result


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
    r"(?P<attrs>(?:\s+[^\s\"'<>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)"
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
