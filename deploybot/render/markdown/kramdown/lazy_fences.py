"""A fenced code block inside a list item whose lines are not indented, as kramdown reads it.

kramdown 2.4 (``lib/kramdown/parser/kramdown/list.rb``, ``parse_list``) gathers a list
item's lines before parsing them: a line indented to the item's content, and also any
non-blank line right after a non-blank one ("lazy": ``!last_is_blank && lazy_re``), whatever
its indentation; only then are the gathered lines parsed as blocks. So a fence opened in an
item, or opened by such a lazy line, keeps the unindented lines that follow it (``---``
front matter shown in a Markdown list step) as its code, up to its closing fence.
CommonMark ends the item, and the code block, at the first such line. This pass indents
those lines to the item's content, before mistune parses the document, for as long as the
fence is open and no blank line came before them (after a blank line an unindented line
ends kramdown's list too). A fence outside any list is skipped whole.
"""

from __future__ import annotations

import re

import mistune
from mistune.core import BlockState

_ITEM = re.compile(r"^( {0,3})([*+-]|\d{1,9}[.)])([ \t]+)(?=\S)")
_FENCE = re.compile(r"^( *)(`{3,}|~{3,})")


def kramdown_lazy_fences(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown's lazy lines inside a fence of a list item (module
    docstring)."""
    md.before_parse_hooks.append(_indent_lazy_fence_lines)


def _indent_lazy_fence_lines(md: mistune.Markdown, state: BlockState) -> None:
    if "```" not in state.src and "~~~" not in state.src:
        return
    state.process(indent_lazy_fence_lines(state.src))


def indent_lazy_fence_lines(text: str) -> str:
    """Return ``text`` with the unindented lines of a fence open in a list item indented
    to the item's content (module docstring); other text is left as it is (a fence outside
    any list is skipped whole: its lines are no list items)."""
    lines = text.split("\n")
    content: int | None = None  # the content column of the list item we are in
    fence: str | None = None  # the open fence's marker
    lazy = False  # whether the open fence is in a list item (its lines may be lazy)
    blank_before = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if fence is not None:
            closes = _closes(line, fence, (content or 0) if lazy else 0)
            if closes and not (lazy and indent < (content or 0)):
                fence = None
            elif lazy and stripped and indent < (content or 0):
                if blank_before:
                    fence, content = None, None  # kramdown's list ends here
                else:
                    lines[index] = " " * (content or 0) + line
                    fence = None if closes else fence
            blank_before = not stripped
            continue
        item = _ITEM.match(line)
        if item is not None:
            content = len(item[1]) + len(item[2]) + min(len(item[3]), 4)
        elif stripped and content is not None and indent < content and blank_before:
            content = None  # a paragraph after a blank line, outside the list
        opening = _FENCE.match(line) if item is None else None
        if opening is not None and indent > (content or 0) + 3:
            opening = None  # indented code, not a fence
        if opening is not None:
            fence, lazy = opening[2], content is not None
            if lazy and content is not None and indent < content:
                if blank_before:
                    lazy = False  # after a blank line: outside the list
                    content = None
                else:  # a lazy line opening the fence
                    lines[index] = " " * content + line
        blank_before = not stripped
    return "\n".join(lines)


def _closes(line: str, fence: str, base: int) -> bool:
    """Whether ``line`` closes the fence opened by ``fence`` (the same character, at least
    as many, nothing after, indented at most 3 columns past ``base``, the content column
    of the item it is in)."""
    closing = _FENCE.match(line)
    return (
        closing is not None
        and len(closing[1]) <= base + 3
        and closing[2][0] == fence[0]
        and len(closing[2]) >= len(fence)
        and not line[closing.end() :].strip()
    )
