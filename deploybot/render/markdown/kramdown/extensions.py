"""kramdown's extensions ``{::comment}``, ``{::nomarkdown}``, ``{::options}`` and the
``\\\\`` line break, for mistune 3.

From kramdown's parser (``lib/kramdown/parser/kramdown/extensions.rb``:
``parse_extension_start_tag``, ``handle_extension``; ``line_break.rb``) and converter
(``convert_comment``, ``convert_raw``):

- ``{::comment}…{:/comment}`` (or ``{:/}``) becomes ``<!-- … -->``, as a block (start and
  stop tags on lines of their own) or inside text;
- ``{::nomarkdown}…{:/nomarkdown}`` is written out as it is, unread;
- ``{::options key="value" /}`` sets kramdown options for the document. Two are honoured:
  ``auto_ids="false"`` (no automatic heading ids, for the whole document: the GFM parser
  adds them after parsing) and ``parse_block_html="true"`` (HTML blocks after it are read
  with their content model, as with ``markdown="1"``); others are ignored;
- two backslashes at the end of a line are a line break (``<br />``), like two spaces.

Another extension name, or a start tag without its stop tag, stays text (kramdown warns).
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState, InlineState
from mistune.inline_parser import InlineParser

from deploybot.render.markdown.kramdown.attrs import parse_attribute_list
from deploybot.render.markdown.kramdown.ext_tags import ExtensionTag, extension_tag
from deploybot.render.markdown.kramdown.html_scan import finder

#: ``state.env`` key: kramdown options set by ``{::options}`` (name -> value as written).
OPTIONS_KEY = "kramdown_options"
_NAMES = "comment|nomarkdown|options"
# Only the name: where the tag ends is extension_tag's (a regex for it was quadratic).
_START = r"\{::(?P<ext_name>" + _NAMES + r")"
_BLOCK = r"^ {0,3}" + _START
_ACTIVE_RULES = "kramdown_active_rules"
_BLOCK_STOPS = {
    name: re.compile(r"^ {0,3}\{:/(?:" + name + r")?\}[ \t]*(?:\n|$)", re.M)
    for name in _NAMES.split("|")
}
_SPAN_STOPS = {name: re.compile(r"\{:/(?:" + name + r")?\}") for name in _NAMES.split("|")}


def kramdown_extensions(md: mistune.Markdown) -> None:
    """mistune plugin: the extensions and line break of the module docstring."""
    block = md.block
    block.register("kramdown_extension", _BLOCK, _parse_block, before="blank_line")
    _record_rules(block)
    for rules in (block.block_quote_rules, block.list_rules):
        if "kramdown_extension" not in rules:
            rules.append("kramdown_extension")
    inline = md.inline
    inline.register("kramdown_extension", _START, _parse_span, before="link", start_chars="{")
    inline.register(
        "kramdown_linebreak", r"\\\\\n", _parse_linebreak, before="escape", start_chars="\\"
    )
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_comment", _render_comment)
        md.renderer.register("kramdown_raw", _render_raw)


def option(env: Any, name: str) -> str | None:
    """Return the value ``{::options}`` set for ``name`` in this document, or ``None``."""
    options: dict[str, str] = env.get(OPTIONS_KEY, {})
    return options.get(name)


def _set_options(env: Any, text: str | None) -> None:
    options: dict[str, str] = env.setdefault(OPTIONS_KEY, {})
    options.update(parse_attribute_list(text or "").attrs)


def _record_rules(block: BlockParser) -> None:
    """Keep on each block state the rules it is parsed with, for :func:`_not_a_tag`."""
    inner = block.parse

    def parse(state: BlockState, rules: list[str] | None = None) -> None:
        setattr(state, _ACTIVE_RULES, block.rules if rules is None else rules)
        inner(state, rules)

    # An instance attribute shadows BlockParser.parse for this parser only.
    setattr(block, "parse", parse)  # noqa: B010


def _not_a_tag(
    parser: BlockParser | InlineParser, rules: list[str], m: Any, state: Any
) -> int | None:
    """Where ``{::name`` at ``m`` is no tag: what the rules after this one in ``rules`` make
    of it, as when the tag was one alternative of the parser's joined regex."""
    after = rules[rules.index("kramdown_extension") + 1 :] if "kramdown_extension" in rules else []
    found = parser.compile_sc(after).match(state.src, m.start()) if after else None
    return None if found is None else parser.parse_method(found, state)


def _parse_block(block: BlockParser, m: Any, state: BlockState) -> int | None:
    name: str = m.group("ext_name")
    tag = extension_tag(state.src, m.end(), True, state.env)
    if tag is None:
        return _not_a_tag(block, getattr(state, _ACTIVE_RULES, block.rules), m, state)
    end = tag.end
    if name == "options":
        _set_options(state.env, tag.opts)
        state.append_token({"type": "kramdown_eob"})
        return end
    if tag.close:
        return end
    stop = finder(state.env, state.src, _BLOCK_STOPS[name]).search(end)
    if stop is None:
        return None
    body = state.src[end : stop.start()]
    body = body[:-1] if body.endswith("\n") else body
    kind = "kramdown_comment" if name == "comment" else "kramdown_raw"
    state.append_token({"type": kind, "raw": body, "attrs": {"block": True}})
    return stop.end()


def _parse_span(inline: InlineParser, m: Any, state: InlineState) -> int | None:
    name: str = m.group("ext_name")
    tag: ExtensionTag | None = extension_tag(state.src, m.end(), False, state.env)
    if tag is None:
        return _not_a_tag(inline, inline.rules, m, state)
    end = tag.end
    if name == "options":
        _set_options(state.env, tag.opts)
        return end
    if tag.close:
        return end
    stop = finder(state.env, state.src, _SPAN_STOPS[name]).search(end)
    if stop is None:
        return None
    kind = "kramdown_comment" if name == "comment" else "kramdown_raw"
    body = state.src[end : stop.start()]
    state.append_token({"type": kind, "raw": body, "attrs": {"block": False}})
    return stop.end()


def _parse_linebreak(inline: InlineParser, m: Any, state: InlineState) -> int:
    state.append_token({"type": "linebreak"})
    return int(m.end())


def _render_comment(renderer: BaseRenderer, text: str, block: bool) -> str:
    return f"<!-- {text} -->" + ("\n" if block else "")


def _render_raw(renderer: BaseRenderer, text: str, block: bool) -> str:
    return text + ("\n" if block else "")
