"""Heading ids as Jekyll makes them: kramdown-parser-gfm's automatic header ids.

Jekyll's default ``kramdown.input`` is ``GFM``; kramdown-parser-gfm (``lib/kramdown/parser/
gfm.rb``: ``update_raw_text``, ``generate_gfm_header_id``) builds a heading's id from its
*rendered* text (text, code spans, entities, smart quotes and typographic symbols as
characters; not image alt text, not URLs):

1. downcase;
2. drop every character that is not ``\\p{Word}``, ``-``, space or tab;
3. turn each space and tab into ``-``;
4. the n-th repeat of an id in the document gets ``-n`` appended (``intro``, ``intro-1``…).

So "1. Graph Annotation" gives ``1-graph-annotation`` and "Bio & Acknowledgement" gives
``bio--acknowledgement``. An explicit id wins and is not counted: a block IAL
``{: #custom}``, or kramdown's header id syntax ``# Heading {#custom}``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import MutableMapping
from typing import Any

import mistune
from mistune.core import BlockState

from deploybot.render.markdown.kramdown.attrs import ATTRS_KEY
from deploybot.render.markdown.kramdown.extensions import option
from deploybot.render.markdown.mistune_hooks import RenderNext, Token, walk, wrap_render_token

#: ``state.env`` key: base id -> how many times it was used so far in the document.
COUNTER_KEY = "kramdown_heading_ids"
# kramdown's HEADER_ID (parser/kramdown/header.rb): "{#id}" at the end of the heading text.
_HEADER_ID = re.compile(r"[\t ]\{#(?P<id>[A-Za-z][A-Za-z0-9_:-]*)\}$")
_ZERO_WIDTH_JOINERS = frozenset("\u200c\u200d")
# Inline tokens whose content is not heading text: alt text, raw tags, footnote markers.
_SKIPPED = frozenset({"image", "inline_html", "footnote_ref", "linebreak", "softbreak"})


def gfm_header_id(text: str) -> str:
    """Return the GFM id base for a heading whose rendered text is ``text`` (no de-duplication).

    ``text`` is plain text (entities decoded). The result may be empty.
    """
    kept = "".join(c for c in text.lower() if _is_word(c) or c in "- \t")
    return kept.replace(" ", "-").replace("\t", "-")


def _is_word(char: str) -> bool:
    # Ruby's \p{Word}: letters, marks, numbers, connector punctuation, joiners.
    category = unicodedata.category(char)
    return category[0] in "LMN" or category == "Pc" or char in _ZERO_WIDTH_JOINERS


def unique_id(base: str, counter: MutableMapping[str, int]) -> str:
    """Return ``base`` the first time, then ``base-1``, ``base-2``…; updates ``counter``.

    Like kramdown-parser-gfm, only exact repeats of ``base`` are counted, so a heading
    literally named "intro-1" can still collide with the second "intro".
    """
    seen = counter.get(base, -1) + 1
    counter[base] = seen
    return base if seen == 0 else f"{base}-{seen}"


def heading_text(children: list[Token]) -> str:
    """Return the plain text of a heading's inline tokens, as kramdown's ``raw_text``."""
    parts: list[str] = []
    for token in children:
        kind = token["type"]
        if kind in _SKIPPED:
            continue
        if kind == "text":
            parts.append(html.unescape(token.get("raw", "")))
        elif kind in ("codespan", "inline_math", "kramdown_abbr"):
            parts.append(token.get("raw", ""))
        elif isinstance(token.get("children"), list):
            parts.append(heading_text(token["children"]))
    return "".join(parts)


def heading_ids(md: mistune.Markdown) -> None:
    """mistune plugin: put kramdown GFM auto-ids on ``<h1>``…``<h6>``.

    Ids are assigned while rendering, in document order, from the rendered inline text
    (so typography and span markup are already applied). A heading whose token already has
    an ``id`` (header id syntax, mistune's toc hook) or an IAL ``id`` keeps it.
    """
    md.before_render_hooks.append(_header_id_syntax)
    wrap_render_token(md, _render_heading)


def _header_id_syntax(md: mistune.Markdown, state: BlockState) -> None:
    for token in walk(state.tokens):
        if token["type"] != "heading" or not isinstance(token.get("text"), str):
            continue
        m = _HEADER_ID.search(token["text"].rstrip())
        if m is not None:
            token["text"] = token["text"].rstrip()[: m.start()].rstrip()
            token.setdefault("attrs", {})["id"] = m.group("id")


def _render_heading(token: Token, state: BlockState, render_next: RenderNext) -> str:
    if token["type"] == "heading":
        _assign_id(token, state.env)
    return render_next(token, state)


def _assign_id(token: Token, env: MutableMapping[str, Any]) -> None:
    attrs: dict[str, Any] = token.setdefault("attrs", {})
    ial: dict[str, str] | None = token.get(ATTRS_KEY)
    if attrs.get("id") or (ial and "id" in ial):
        return
    if option(env, "auto_ids") == "false":
        return  # {::options auto_ids="false" /} anywhere in the document
    counter: dict[str, int] = env.setdefault(COUNTER_KEY, {})
    ident = unique_id(gfm_header_id(heading_text(token.get("children", []))), counter)
    if ial:
        # kramdown's converter adds the auto id after the IAL's attributes.
        if ident:
            ial["id"] = ident
    else:
        attrs["id"] = ident
