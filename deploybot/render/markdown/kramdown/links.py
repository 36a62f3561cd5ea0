"""kramdown's links for mistune 3: autolinks and ``[text] [ref]``.

- Autolinks (``lib/kramdown/parser/kramdown/autolink.rb``, ``AUTOLINK_START``): only
  ``<mailto:…>``, ``<http(s):…>``, ``<ftp(s):…>`` and ``<user@host>``; a ``mailto:`` link
  shows the address without ``mailto:``, an address gets ``mailto:`` in its ``href``. Any
  other ``<scheme:…>`` (``<rsync://…>``) stays text, as kramdown leaves it.
- An image's ``alt`` is the text between its brackets as written (``link.rb``:
  ``alt_text``, backslash escapes removed): code spans and emphasis keep their markers.
- Reference links (``link.rb``, ``LINK_INLINE_ID_RE = /\\s*?\\[([^\\]]+)?\\]/``) may have
  whitespace, a line break included, between ``[text]`` and ``[ref]``: ``[text] [ref]`` is
  ``[text][ref]`` when ``ref`` (or, for ``[text] []``, ``text``) is defined.

URLs of every scheme are kept (``rsync:``, ``news:``, ``irc:``…): the renderer is made with
``allow_harmful_protocols=True`` (:mod:`deploybot.render.markdown.renderer`), as kramdown filters
none.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.core import BlockState, InlineState
from mistune.inline_parser import InlineParser
from mistune.util import unikey

from deploybot.render.markdown.kramdown.attrs import escape_attribute
from deploybot.render.markdown.kramdown.tables import code_spans
from deploybot.render.markdown.mistune_hooks import RenderNext, Token, walk, wrap_render_token

_AUTOLINK = r"<(?:(?:mailto|https?|ftps?):[^>\n]+|[\w.-]+@[\w.-]+)>"
# [text] <whitespace> [ref]: the text has no brackets; the gap is what \s*? allows.
_SPACED_REF = re.compile(r"(?<!\\)\[([^\[\]]*)\](\s+)\[([^\]]*)\]")


def kramdown_links(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown autolinks and spaced reference links (module docstring)."""
    inline = md.inline
    inline.register(
        "kramdown_autolink", _AUTOLINK, _parse_autolink, before="auto_link", start_chars="<"
    )
    for name in ("auto_link", "auto_email"):
        if name in inline.rules:
            inline.rules.remove(name)
    md.before_render_hooks.append(_join_spaced_refs)
    wrap_render_token(md, _image_alt)


def _parse_autolink(inline: InlineParser, m: Any, state: InlineState) -> int:
    target: str = m.group(0)[1:-1]
    end: int = m.end()
    if state.in_link:
        inline.process_text(m.group(0), state)
        return end
    href = target if ":" in target.split("@", 1)[0] else "mailto:" + target
    text = target[len("mailto:") :] if target.startswith("mailto:") else target
    state.append_token(
        {"type": "link", "children": [{"type": "text", "raw": text}], "attrs": {"url": href}}
    )
    return end


def _join_spaced_refs(md: mistune.Markdown, state: BlockState) -> None:
    refs: dict[str, Any] = state.env.get("ref_links") or {}
    if not refs:
        return
    for token in walk(state.tokens):
        text = token.get("text")
        if isinstance(text, str) and "]" in text:
            token["text"] = join_spaced_refs(text, refs)


def join_spaced_refs(text: str, refs: dict[str, Any]) -> str:
    """Return ``text`` with the whitespace of each ``[text] [ref]`` whose reference is
    defined in ``refs`` (mistune's ``ref_links``, keyed by ``unikey``) removed, outside code
    spans. Linear: one regex pass, one pass over the code spans."""
    spans = code_spans(text)
    out: list[str] = []
    last, span = 0, 0
    for m in _SPACED_REF.finditer(text):
        while span < len(spans) and spans[span][1] <= m.start():
            span += 1
        if span < len(spans) and spans[span][0] < m.end():
            continue  # inside (or across) a code span
        label = m.group(3) or m.group(1)
        if unikey(label) not in refs:
            continue
        out.append(text[last : m.start(2)])
        last = m.end(2)
    out.append(text[last:])
    return "".join(out)


_MARKERS = {"emphasis": "*", "strong": "**", "strikethrough": "~~"}
_ALT = '<img src="'


def _image_alt(token: Token, state: BlockState, render_next: RenderNext) -> str:
    html = render_next(token, state)
    if token["type"] != "image" or not html.startswith(_ALT):
        return html
    alt = escape_attribute(raw_text(token.get("children", [])))
    start = html.find(' alt="')
    end = html.find('"', start + 6) if start >= 0 else -1
    return html if end < 0 else html[: start + 6] + alt + html[end:]


def raw_text(tokens: list[Token]) -> str:
    """Return the Markdown a list of inline tokens was read from, as far as the tokens tell:
    text, code spans in one backtick, emphasis in ``*``/``**`` (mistune keeps neither the
    delimiter nor the backtick count, so ``_x_`` comes back as ``*x*``)."""
    parts: list[str] = []
    for token in tokens:
        kind, children = token["type"], token.get("children")
        if kind == "codespan":
            parts.append("`" + str(token.get("raw", "")) + "`")
        elif kind in ("softbreak", "linebreak"):
            parts.append("\n")
        elif isinstance(children, list):
            marker = _MARKERS.get(kind, "")
            parts.append(marker + raw_text(children) + marker)
        else:
            parts.append(str(token.get("raw", "")))
    return "".join(parts)
