"""kramdown math (``$$…$$``) for mistune 3, written for MathJax as Jekyll's default engine does.

kramdown's parser (``lib/kramdown/parser/kramdown/math.rb``) and its built-in MathJax engine
(``converter/math_engine/mathjax.rb``, Jekyll's ``math_engine: mathjax``):

- a block that is only ``$$…$$`` (it may span lines), after a block boundary (start, blank
  line, ``^``) and before one, is display math: ``\\[…\\]`` on its own line;
- ``$$…$$`` anywhere else is inline math: ``\\(…\\)``;
- the content is stripped and ``& < >`` escaped; nothing inside is Markdown. A single
  ``$`` is text.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState, InlineState
from mistune.inline_parser import InlineParser

from deploybot.render.markdown.kramdown.html_scan import finder

_BLOCK_START = r"^ {0,3}\\?\$\$"
_INLINE = r"\$\$(?P<kramdown_math>[\s\S]*?)\$\$"
_DOLLARS = re.compile(r"\$\$")
# kramdown's BLOCK_BOUNDARY: a blank line, "^", a block IAL, or the end.
_BOUNDARY = re.compile(r"[ \t]*\n|\^[ \t]*(?:\n|$)| {0,3}\{:|$")
_AFTER = re.compile(r"[ \t]*(?:\n|$)")
_BOUNDARY_TOKENS = frozenset({"blank_line", "kramdown_eob"})
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def kramdown_math(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown display and inline math (module docstring)."""
    md.block.register("kramdown_math", _BLOCK_START, _parse_block, before="blank_line")
    for rules in (md.block.block_quote_rules, md.block.list_rules):
        if "kramdown_math" not in rules:
            rules.append("kramdown_math")
    md.inline.register("inline_math", _INLINE, _parse_inline, before="codespan", start_chars="$")
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_math", _render_block)
        md.renderer.register("inline_math", _render_inline)


def _parse_block(block: BlockParser, m: Any, state: BlockState) -> int | None:
    src = state.src
    last = state.last_token()
    if src[m.end() - 3] == "\\" or (last is not None and last["type"] not in _BOUNDARY_TOKENS):
        return None
    close = finder(state.env, src, _DOLLARS).search(m.end())
    if close is None or close.start() >= state.cursor_max:
        return None
    end = _AFTER.match(src, close.end())
    if end is None or not _BOUNDARY.match(src, end.end()):
        return None  # text follows: a paragraph with inline math
    state.append_token({"type": "kramdown_math", "raw": src[m.end() : close.start()].strip()})
    return end.end()


def _parse_inline(inline: InlineParser, m: Any, state: InlineState) -> int:
    state.append_token({"type": "inline_math", "raw": m.group("kramdown_math").strip()})
    end: int = m.end()
    return end


def _escape(text: str) -> str:
    return re.sub(r"[&<>]", lambda m: _ESCAPES[m.group(0)], text)


def _render_block(renderer: BaseRenderer, text: str) -> str:
    return f"\\[{_escape(text)}\\]\n"


def _render_inline(renderer: BaseRenderer, text: str) -> str:
    return f"\\({_escape(text)}\\)"
