"""kramdown abbreviations: ``*[HTML]: Hyper Text Markup Language`` for mistune 3.

kramdown (``lib/kramdown/parser/kramdown/abbreviation.rb``; converter
``convert_abbreviation``): a line ``*[ABBR]: title`` defines an abbreviation for the whole
document and renders nothing; every occurrence of ABBR in text (not in code, not inside raw
HTML) that stands alone, not next to a word character, becomes
``<abbr title="title">ABBR</abbr>`` (no ``title`` when it is empty). Longer abbreviations
win over shorter ones that start them.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState

from deploybot.render.markdown.kramdown.attrs import escape_attribute
from deploybot.render.markdown.mistune_hooks import Token, wrap_inline_render

#: ``state.env`` key: abbreviation -> title.
ABBREVIATIONS_KEY = "kramdown_abbreviations"
_DEFINITION = r"^ {0,3}\*\[(?P<abbr_id>[^\n]+?)\]:(?P<abbr_text>[^\n]*)(?:\n|$)"
_PATTERN_KEY = "_kramdown_abbreviation_pattern"


def kramdown_abbreviations(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown abbreviations (module docstring)."""
    md.block.register("kramdown_abbreviation", _DEFINITION, _parse_definition, before="list")
    for rules in (md.block.block_quote_rules, md.block.list_rules):
        if "kramdown_abbreviation" not in rules:
            rules.append("kramdown_abbreviation")
    wrap_inline_render(md, _replace)
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_abbr", _render)


def _parse_definition(block: BlockParser, m: Any, state: BlockState) -> int:
    found: dict[str, str] = state.env.setdefault(ABBREVIATIONS_KEY, {})
    found[m.group("abbr_id")] = m.group("abbr_text").strip()
    state.env.pop(_PATTERN_KEY, None)
    state.append_token({"type": "kramdown_eob"})
    return int(m.end())


def _pattern(env: MutableMapping[str, Any]) -> re.Pattern[str] | None:
    found: dict[str, str] = env.get(ABBREVIATIONS_KEY, {})
    if not found:
        return None
    pattern: re.Pattern[str] | None = env.get(_PATTERN_KEY)
    if pattern is None:
        names = sorted(found, key=len, reverse=True)
        alternatives = "|".join(re.escape(name) for name in names)
        pattern = env[_PATTERN_KEY] = re.compile(r"(?<!\w)(?:" + alternatives + r")(?!\w)")
    return pattern


def _replace(tokens: list[Token], env: MutableMapping[str, Any]) -> list[Token]:
    pattern = _pattern(env)
    if pattern is None:
        return tokens
    return _replace_in(tokens, pattern, env[ABBREVIATIONS_KEY])


def _replace_in(
    tokens: list[Token], pattern: re.Pattern[str], titles: dict[str, str]
) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        children = token.get("children")
        if isinstance(children, list):
            token["children"] = _replace_in(children, pattern, titles)
        if token["type"] != "text" or not pattern.search(token.get("raw", "")):
            out.append(token)
            continue
        text, last = token["raw"], 0
        for m in pattern.finditer(text):
            if m.start() > last:
                out.append({"type": "text", "raw": text[last : m.start()]})
            title = titles.get(m.group(0), "")
            out.append({"type": "kramdown_abbr", "raw": m.group(0), "attrs": {"title": title}})
            last = m.end()
        if last < len(text):
            out.append({"type": "text", "raw": text[last:]})
    return out


def _render(renderer: BaseRenderer, text: str, title: str) -> str:
    attr = f' title="{escape_attribute(title)}"' if title else ""
    return f"<abbr{attr}>{text}</abbr>"
