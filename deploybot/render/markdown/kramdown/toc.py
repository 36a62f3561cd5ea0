"""kramdown's table of contents: a list marked ``{:toc}`` becomes ``ul#markdown-toc``.

kramdown (https://kramdown.gettalong.org/converter/html.html#toc; converter ``html.rb``:
``convert_ul``, ``convert_header``, ``convert_root``, ``generate_toc_tree``,
``fix_for_toc_entry``) replaces the first ordered or unordered list whose IAL references
``toc``::

    * TOC
    {:toc}

by a nested list of the document's headers that have an id (Jekyll's ``auto_ids``), at the
levels of ``toc_levels`` (Jekyll's default 1-6; ``{::options toc_levels="2..4" /}`` in the
document sets it, :func:`toc_levels`) and without the class ``no_toc``. Each entry
is ``<li><a href="#ID" id="LISTID-ID">header text</a></li>`` where LISTID is the list's id
(``markdown-toc`` unless its IAL sets one); footnote markers are dropped and links unwrapped
from the header text. A deeper header nests under the entry before it. With no such header
the list renders as nothing.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import mistune
from mistune.core import BlockState

from deploybot.render.markdown.kramdown.attrs import ATTRS_KEY, escape_attribute
from deploybot.render.markdown.kramdown.extensions import option
from deploybot.render.markdown.mistune_hooks import RenderNext, Token, wrap_render_token

#: Token key set on a list whose IAL references ``toc`` (kramdown's ``{:toc}``).
TOC_KEY = "kramdown_toc"
_STATE = "_kramdown_toc"
# Stands for the TOC until the whole document is rendered (kramdown uses a random word).
_PLACEHOLDER = "\x02kramdown-toc\x03"
_DROPPED = frozenset({"footnote_ref"})
_LEVELS = range(1, 7)


@dataclass
class _Toc:
    """What one document's TOC needs: the list's tag and attributes, the entries so far."""

    tag: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    entries: list[tuple[int, str, str]] = field(default_factory=list)  # level, id, html


def kramdown_toc(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown's ``{:toc}`` (see the module docstring).

    Register it after :func:`~deploybot.render.markdown.kramdown.headings.heading_ids` (it reads the
    ids that assigns) and after the attribute plugin (which marks lists with :data:`TOC_KEY`).
    """
    wrap_render_token(md, _render)
    md.after_render_hooks.append(_replace_placeholder)


def _toc(env: MutableMapping[str, Any]) -> _Toc:
    toc: _Toc = env.setdefault(_STATE, _Toc())
    return toc


def _render(token: Token, state: BlockState, render_next: RenderNext) -> str:
    kind = token["type"]
    if kind == "list" and token.get(TOC_KEY) and not _toc(state.env).tag:
        toc = _toc(state.env)
        toc.tag = "ol" if token.get("attrs", {}).get("ordered") else "ul"
        toc.attrs = dict(token.get(ATTRS_KEY) or {})
        return _PLACEHOLDER
    html = render_next(token, state)
    if kind == "heading":
        _record(token, state, render_next)
    return html


def _record(token: Token, state: BlockState, render_next: RenderNext) -> None:
    attrs: dict[str, Any] = token.get(ATTRS_KEY) or {}
    ident = attrs.get("id") or token.get("attrs", {}).get("id")
    level = token.get("attrs", {}).get("level", 0)
    # kramdown's in_toc?: toc_levels include the level, no "no_toc" word in the class.
    levels = toc_levels(option(state.env, "toc_levels"))
    if not ident or level not in levels or "no_toc" in str(attrs.get("class", "")).split():
        return
    children = _toc_children(token.get("children", []))
    html = "".join(render_next(child, state) for child in children)
    _toc(state.env).entries.append((level, str(ident), html))


def toc_levels(value: str | None) -> range | tuple[int, ...]:
    """Return the header levels a TOC lists for a ``toc_levels`` option set by
    ``{::options toc_levels="…" /}`` (the last one in the document counts for all of it:
    kramdown's converter reads the options as parsing left them): ``2..4`` a range,
    ``2,3`` a list; none, or another value (kramdown warns and keeps its default), 1-6."""
    if value is None:
        return _LEVELS
    m = re.fullmatch(r"(\d)\.\.(\d)", value)
    if m:
        return range(int(m[1]), int(m[2]) + 1)
    if re.fullmatch(r"\d(?:,\d)*", value):
        return tuple(dict.fromkeys(int(v) for v in value.split(",")))
    return _LEVELS


def _toc_children(tokens: list[Token]) -> list[Token]:
    """Return header inline tokens as kramdown's ``fix_for_toc_entry`` leaves them: no
    footnote markers, links replaced by their content."""
    out: list[Token] = []
    for token in tokens:
        if token["type"] in _DROPPED:
            continue
        children = token.get("children")
        if token["type"] == "link" and isinstance(children, list):
            out.extend(_toc_children(children))
        elif isinstance(children, list):
            out.append({**token, "children": _toc_children(children)})
        else:
            out.append(token)
    return out


def _replace_placeholder(md: mistune.Markdown, result: Any, state: BlockState) -> Any:
    toc: _Toc | None = state.env.get(_STATE)
    if toc is None or not toc.tag or not isinstance(result, str):
        return result
    return result.replace(_PLACEHOLDER, toc_html(toc.tag, toc.attrs, toc.entries), 1)


def toc_html(tag: str, attrs: dict[str, str], entries: list[tuple[int, str, str]]) -> str:
    """Return kramdown's TOC list for ``entries`` (``(level, id, inner HTML)`` in document
    order) as a ``tag`` (``ul``/``ol``) with ``attrs`` (its IAL attributes; the id defaults
    to ``markdown-toc``), indented as kramdown's converter indents it; ``""`` when there are
    no entries (``generate_toc_tree``, ``convert_li``)."""
    if not entries:
        return ""
    attrs = dict(attrs)
    attrs.setdefault("id", "markdown-toc")
    prefix = attrs["id"]
    roots: list[_Item] = []
    stack: list[_Item] = []
    for level, ident, html in entries:
        item = _Item(level, ident, html)
        while stack and stack[-1].level >= level:
            stack.pop()
        (stack[-1].children if stack else roots).append(item)
        stack.append(item)
    return _list_html(tag, _attributes(attrs), roots, prefix, 0)


@dataclass
class _Item:
    level: int
    ident: str
    html: str
    children: list[_Item] = field(default_factory=list)


def _attributes(attrs: dict[str, str]) -> str:
    return "".join(f' {k}="{escape_attribute(v)}"' for k, v in attrs.items())


def _list_html(tag: str, attrs: str, items: list[_Item], prefix: str, indent: int) -> str:
    body = "".join(_item_html(tag, item, prefix, indent + 2) for item in items)
    pad = " " * indent
    return f"{pad}<{tag}{attrs}>\n{body}{pad}</{tag}>\n"


def _item_html(tag: str, item: _Item, prefix: str, indent: int) -> str:
    href = escape_attribute("#" + item.ident)
    own = escape_attribute(f"{prefix}-{item.ident}")
    inner = f'<a href="{href}" id="{own}">{item.html}</a>'
    pad = " " * indent
    if item.children:
        inner += _list_html(tag, "", item.children, prefix, indent + 2) + pad
    return f"{pad}<li>{inner}</li>\n"
