"""kramdown's IAL at the start of a list item: ``* {:.done} Text`` is ``<li class="done">``.

kramdown 2.4 (``lib/kramdown/parser/kramdown/list.rb``, ``parse_list``) takes
``LIST_ITEM_IAL`` (``{:`` + attributes + ``}`` and the whitespace around, not an ALD or an
extension) off the first line of each item and gives its attributes to the ``<li>``; an IAL
without valid attributes (``{:.}``: a Liquid table of contents' empty class) is taken off
all the same, with kramdown's warning. ALD references resolve against the document's ALDs.
"""

from __future__ import annotations

import re

import mistune
from mistune.core import BlockState

from deploybot.render.markdown.kramdown.attrs import (
    ALDS_KEY,
    ATTRS_KEY,
    parse_attribute_list,
    resolve_attributes,
)
from deploybot.render.markdown.mistune_hooks import Token, walk

_LIST_ITEM_IAL = re.compile(r"\A\s*\{:(?![\w-]*:|/)((?:\\\}|[^}])+)\}\s*")
"""kramdown's ``LIST_ITEM_IAL`` (``ALD_ID_NAME`` is ``\\w[\\w-]*``)."""


def kramdown_list_item_ials(md: mistune.Markdown) -> None:
    """mistune plugin: list item IALs (module docstring). Register it before the task list
    plugin (a task marker follows the IAL)."""
    md.before_render_hooks.append(_item_ials)


def _item_ials(md: mistune.Markdown, state: BlockState) -> None:
    for token in walk(state.tokens):
        if token["type"] == "list":
            for item in token.get("children", []):
                _take_ial(item, state)


def _take_ial(item: Token, state: BlockState) -> None:
    first = (item.get("children") or [None])[0]
    if first is None or first["type"] not in ("paragraph", "block_text"):
        return
    text = first.get("text")
    if not isinstance(text, str):
        return
    m = _LIST_ITEM_IAL.match(text)
    if m is None:
        return
    first["text"] = text[m.end() :]
    attrs: dict[str, str] = item.setdefault(ATTRS_KEY, {})
    resolve_attributes(parse_attribute_list(m[1]), state.env.get(ALDS_KEY, {}), attrs)
