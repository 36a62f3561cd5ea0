"""kramdown's ``<p>`` in list items for mistune 3: decided per item, not per list.

mistune (CommonMark) makes a whole list loose (every item's text in ``<p>``) when any item
is followed by a blank line. kramdown (``lib/kramdown/parser/kramdown/list.rb``,
``parse_list``) decides for each item whether its first paragraph is "transparent" (written
without ``<p>``): it is when

1. the item's first block is a paragraph, and
2. no blank line follows that paragraph inside the item (a blank line before the next item
   counts; for the last item, a blank line that only ends the list does not), and
3. the item is not the last, or the list has one item, or some earlier item does not start
   with a ``<p>`` paragraph.

So ``- a\\n- b\\n\\n- c\\n`` gives ``a`` bare, ``b`` and ``c`` in ``<p>``, and an item whose text
is followed directly by a nested list stays bare in a loose list. Other paragraphs of an
item are always in ``<p>``.

The list rule is wrapped (on this instance) to note, for each item, whether a blank line
comes before the next item; a before-render hook then sets each item's paragraphs.
"""

from __future__ import annotations

import re

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BlockState

from deploybot.render.markdown.mistune_hooks import Token, walk

_BLANK_AFTER = "_kramdown_blank_after"
#: Token type of a bare line break (kramdown's layout inside ``<li>``/``<dd>``).
NEWLINE = "kramdown_newline"
_TEXT = frozenset({"paragraph", "block_text"})
_BULLETS = {".": r"\d{1,9}\.", ")": r"\d{1,9}\)", "*": r"\*", "+": r"\+", "-": "-"}


def kramdown_lists(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown's per-item list paragraphs (module docstring)."""
    block = md.block
    inner = block._methods["list"]

    def parse_list(m: re.Match[str], state: BlockState) -> int | None:
        count = len(state.tokens)
        end = inner(m, state)
        if end:
            _note_blank_lines(block, m, state, count, end)
        return end

    block._methods["list"] = parse_list
    md.before_render_hooks.append(_paragraphs)
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register(NEWLINE, lambda renderer: "\n")


def _note_blank_lines(
    block: BlockParser, m: re.Match[str], state: BlockState, count: int, end: int
) -> None:
    lists = [t for t in state.tokens[count:] if t["type"] == "list"]
    if not lists:
        return
    items = lists[0]["children"]
    marker = m.group("list_2")
    width = min(len(m.group("list_1")) + len(marker), 3)
    item_re = re.compile(
        r"^ {0," + str(width) + "}" + _BULLETS[marker[-1]] + r"(?:[ \t]*|[ \t][^\n]+)$", re.M
    )
    src, first_line_end = state.src, state.src.find("\n", m.start())
    starts = [
        found.start()
        for found, _ in zip(
            item_re.finditer(src, first_line_end + 1 if first_line_end >= 0 else end, end),
            items[1:],
            strict=False,
        )
    ]
    for item, start in zip(items, starts, strict=False):
        before = src.rfind("\n", 0, start - 1)
        item[_BLANK_AFTER] = not src[before + 1 : start].strip()


def _paragraphs(md: mistune.Markdown, state: BlockState) -> None:
    for token in walk(state.tokens):
        if token["type"] == "list":
            _decide(token["children"])


def _decide(items: list[Token]) -> None:
    earlier_not_p = False  # some earlier item does not start with a <p> paragraph
    for index, item in enumerate(items):
        children: list[Token] = item.get("children", [])
        for child in children[1:]:
            if child["type"] in _TEXT:
                child["type"] = "paragraph"
        if not children or children[0]["type"] not in _TEXT:
            earlier_not_p = True
            if children:
                _line_breaks(children)
            continue
        last = index == len(items) - 1
        if len(children) > 1:
            blank_after = children[1]["type"] == "blank_line"
        else:
            blank_after = bool(item.get(_BLANK_AFTER)) and not last
        bare = not blank_after and (not last or len(items) == 1 or earlier_not_p)
        children[0]["type"] = "block_text" if bare else "paragraph"
        earlier_not_p = earlier_not_p or bare
        _line_breaks(children)


def _line_breaks(children: list[Token]) -> None:
    """Lay the item out as kramdown's ``convert_li``: ``<li>`` then a line break before a
    first block that is not bare text; bare text followed by more blocks ends its line."""
    if children[0]["type"] != "block_text":
        children.insert(0, {"type": NEWLINE})
    elif len(children) > 1:
        children.insert(1, {"type": NEWLINE})
