"""kramdown definition lists for mistune 3.

kramdown (https://kramdown.gettalong.org/syntax.html#definition-lists; parser
``lib/kramdown/parser/kramdown/list.rb``: ``parse_definition_list``; converter
``convert_dl``, ``convert_dd`` = ``convert_li``)::

    Term one
    Term two
    : Definition a
    : Definition b

- a line starting (up to three spaces in) with ``:`` and a space or tab, right after a
  paragraph (or after a paragraph and one empty line), turns each line of that paragraph
  into a ``<dt>`` and starts a ``<dd>``;
- a definition's text continues on lines indented as far as its first character, and on
  unindented lines that do not follow a blank line; another ``:`` line starts the next
  ``<dd>``; its content is read as blocks;
- a definition's first paragraph is bare (no ``<p>``) unless a blank line comes before the
  definition;
- a definition list right after another (a blank line between) joins it.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState

from deploybot.render.markdown.kramdown.lists import NEWLINE

_START = r"^ {0,3}:[ \t][^\n]*(?:\n|$)"
_BLANK = re.compile(r"[ \t]*(?:\n|$)")
_EOB = re.compile(r"\^[ \t]*(?:\n|$)")
# Lines a lazy continuation may not be: a block IAL, or an HTML tag (LAZY_END_HTML_*).
_NOT_LAZY = re.compile(r" {0,3}(?:\{:(?![:/])|</?[^\W\d])")


def kramdown_definition_lists(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown definition lists (module docstring)."""
    md.block.register("kramdown_deflist", _START, _parse, before="list")
    for rules in (md.block.block_quote_rules, md.block.list_rules):
        if "kramdown_deflist" not in rules:
            rules.append("kramdown_deflist")
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_dl", _render_dl)
        md.renderer.register("kramdown_dt", _render_dt)
        md.renderer.register("kramdown_dd", _render_dd)


def _terms(state: BlockState, start: int) -> tuple[list[dict[str, Any]], bool] | None:
    """Pop and return the paragraph that becomes the terms (and whether an empty line came
    between it and the definition), or ``None`` when there is none."""
    tokens = state.tokens
    if tokens and tokens[-1]["type"] == "paragraph":
        para, spaced = tokens.pop(), False
    elif _one_empty_line_before(state, start, tokens):
        tokens.pop()
        para, spaced = tokens.pop(), True
    else:
        return None
    lines = [line for line in str(para.get("text", "")).split("\n") if line.strip()]
    return [{"type": "kramdown_dt", "text": line.strip()} for line in lines], spaced


def _one_empty_line_before(state: BlockState, start: int, tokens: list[dict[str, Any]]) -> bool:
    # kramdown joins a paragraph and a definition over exactly one empty line ("\n").
    if len(tokens) < 2 or tokens[-1]["type"] != "blank_line":
        return False
    src = state.src
    one_empty = start >= 3 and src[start - 2 : start] == "\n\n" and src[start - 3] != "\n"
    return tokens[-2]["type"] == "paragraph" and one_empty


def _parse(block: BlockParser, m: Any, state: BlockState) -> int | None:
    start: int = m.start()
    found = _terms(state, start)
    if found is None:
        return None
    items, spaced = found
    pos = start
    src = state.src
    while pos < state.cursor_max:
        dd = re.compile(r" {0,3}:[ \t]").match(src, pos)
        if dd is None:
            break
        pos, item = _definition(block, state, pos, dd.end() - 1, spaced)
        items.append(item)
        spaced = item.pop("_blank_last")
    last = state.tokens[-1] if state.tokens else None
    if last is not None and last["type"] == "blank_line" and len(state.tokens) >= 2:
        before = state.tokens[-2]
        if before["type"] == "kramdown_dl":
            state.tokens.pop()
            last = before
    if last is not None and last["type"] == "kramdown_dl":
        last["children"].extend(items)
    else:
        state.append_token({"type": "kramdown_dl", "children": items})
    return pos


def _definition(
    block: BlockParser, state: BlockState, line_start: int, text_start: int, spaced: bool
) -> tuple[int, dict[str, Any]]:
    """Read one ``<dd>`` whose ``:`` line starts at ``line_start``; return where it ends and
    its token (with ``_blank_last``: whether it ended with a blank line)."""
    src = state.src
    end = state.find_line_end_at(line_start)
    first = src[text_start:end].expandtabs(4)
    content = first.lstrip(" ")
    indent = (text_start - line_start) + (len(first) - len(content))
    lines = [content if content.endswith("\n") else content + "\n"]
    pos, blank = end, False
    while pos < state.cursor_max:
        line_end = state.find_line_end_at(pos)
        line = src[pos:line_end]
        if _EOB.match(line) or re.match(r" {0,3}:[ \t]", line):
            break
        if _BLANK.fullmatch(line):
            lines.append("\n")
            blank = True
        elif line.expandtabs(4).startswith(" " * indent):
            lines.append(line.expandtabs(4)[indent:])
            blank = False
        elif not blank and not _NOT_LAZY.match(line):
            lines.append(line)
        else:
            break
        pos = line_end
    child = state.child_state("".join(lines))
    block.parse(child, block.list_rules)
    children = child.tokens
    while children and children[-1]["type"] == "blank_line":
        children.pop()
    if children and children[0]["type"] == "paragraph" and not spaced:
        children[0]["type"] = "block_text"
        if len(children) > 1:
            children.insert(1, {"type": NEWLINE})
    elif children:
        children.insert(0, {"type": NEWLINE})
    return pos, {"type": "kramdown_dd", "children": children, "_blank_last": blank}


def _render_dl(renderer: BaseRenderer, text: str) -> str:
    return f"<dl>\n{text}</dl>\n"


def _render_dt(renderer: BaseRenderer, text: str) -> str:
    return f"<dt>{text}</dt>\n"


def _render_dd(renderer: BaseRenderer, text: str) -> str:
    return f"<dd>{text}</dd>\n"
