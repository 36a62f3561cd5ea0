"""Markdown to HTML with mistune 3, shaped like Jekyll's kramdown (GFM input) output.

- Fenced code: Pygments spans inside kramdown's Rouge wrapper (:mod:`.highlight`).
- Inline code: ``<code class="language-plaintext highlighter-rouge">`` (Jekyll >= 4.1).
- Headings get kramdown-parser-gfm ids (``generate_gfm_header_id``: downcase, keep word
  characters, ``-`` and spaces, spaces -> ``-``, ``-1``, ``-2``… for duplicates).
- Tables, footnotes and strikethrough are on; raw HTML passes through (``escape=False``).
"""

from __future__ import annotations

import html
import re
from typing import Any

import mistune
from mistune.core import BlockState

from deploybot.render.highlight import fenced_block

_NOT_ID_CHARS = re.compile(r"[^\w\- \t]")
_SPACES = re.compile(r"[ \t]")


class JekyllRenderer(mistune.HTMLRenderer):
    """mistune's HTML renderer with kramdown/Rouge code markup."""

    def block_code(self, code: str, info: str | None = None) -> str:
        """Return a fenced block; ``info``'s first word is the language (none: plaintext)."""
        lang = html.unescape(info).split(None, 1)[0] if info and info.strip() else None
        return fenced_block(code, lang)

    def codespan(self, text: str) -> str:
        """Return inline code with Jekyll's ``language-plaintext highlighter-rouge`` class."""
        escaped = html.escape(text, quote=False)
        return f'<code class="language-plaintext highlighter-rouge">{escaped}</code>'


def gfm_heading_id(text: str) -> str:
    """Return kramdown-parser-gfm's id for a heading whose raw text is ``text``."""
    return _SPACES.sub("-", _NOT_ID_CHARS.sub("", text.lower()))


def _heading_ids(md: mistune.Markdown, state: BlockState) -> None:
    seen: dict[str, int] = {}
    for token in _walk(state.tokens):
        if token["type"] != "heading" or token["attrs"].get("id"):
            continue
        base = gfm_heading_id(token.get("text", ""))
        count = seen.get(base, 0)
        seen[base] = count + 1
        token["attrs"]["id"] = base if count == 0 else f"{base}-{count}"


def _walk(tokens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for token in tokens:
        found.append(token)
        children = token.get("children")
        if isinstance(children, list) and token["type"] in ("block_quote", "list", "list_item"):
            found.extend(_walk(children))
    return found


def make_markdown() -> mistune.Markdown:
    """Return a fresh mistune ``Markdown`` (reusable across documents; not thread-safe)."""
    md = mistune.create_markdown(
        escape=False,
        renderer=JekyllRenderer(escape=False),
        plugins=["table", "footnotes", "strikethrough"],
    )
    md.before_render_hooks.append(_heading_ids)
    return md


def markdown_to_html(text: str, md: mistune.Markdown) -> str:
    """Render Markdown ``text`` to an HTML fragment (str) with ``md`` from :func:`make_markdown`."""
    result = md(text)
    assert isinstance(result, str)
    return result
