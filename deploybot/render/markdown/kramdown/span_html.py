"""kramdown's span-level HTML for mistune 3: tags inside a paragraph re-written as kramdown
writes them.

kramdown parses HTML tags in text (``parse_span_html`` in
``lib/kramdown/parser/kramdown/html.rb``) and writes the element back out
(``convert_html_element``, span category):

- a start tag is written ``<name attr="value">`` (names lower-cased for known HTML,
  values double-quoted and escaped, the ``markdown`` attribute dropped); an element without
  a body (``br``, ``img``, ``input``…) as ``<name … />``;
- a close tag closes the innermost open element; one that closes nothing is text
  (``&lt;/div&gt;``); an element left open is closed at the end of the text;
- a block element's tag (``div``, ``p``, ``table``…) in text is text, escaped, and so is
  a tag kramdown's ``HTML_TAG_RE`` does not read (``<img src=x.png>``: an unquoted value
  is one word).

Comments pass unchanged. Not done: Markdown inside ``<code>``, ``<kbd>``… is still read
(kramdown leaves their content raw).
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

import mistune

from deploybot.render.html_elements import KRAMDOWN_WITHOUT_BODY
from deploybot.render.markdown.kramdown.html_scan import (
    BLOCK_ELEMENTS,
    attributes_html,
    close_tag,
    start_tag,
)
from deploybot.render.markdown.mistune_hooks import Token, wrap_inline_render

_CLOSE_NAME = re.compile(r"</\s*([^\s>]+)")


def kramdown_span_html(md: mistune.Markdown) -> None:
    """mistune plugin: re-write inline HTML tags as kramdown does (module docstring)."""
    wrap_inline_render(md, _rewrite)


def _rewrite(tokens: list[Token], env: MutableMapping[str, Any]) -> list[Token]:
    stack: list[str] = []
    out = _rewrite_in(tokens, env, stack)
    out.extend({"type": "inline_html", "raw": f"</{name}>"} for name in reversed(stack))
    return out


def _rewrite_in(
    tokens: list[Token], env: MutableMapping[str, Any], stack: list[str]
) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        children = token.get("children")
        if isinstance(children, list):
            token["children"] = _rewrite_in(children, env, stack)
        if token["type"] == "inline_html":
            out.append(_tag(token, env, stack))
        else:
            out.append(token)
    return out


def _tag(token: Token, env: MutableMapping[str, Any], stack: list[str]) -> Token:
    raw: str = token["raw"]
    if raw.startswith("<!--") or raw.startswith("<?") or raw.startswith("<!"):
        return token
    if raw.startswith("</"):
        close = close_tag(raw, 0)
        name = close.group(1) if close is not None else ""
        if stack and name.lower() == stack[-1].lower():
            return {"type": "inline_html", "raw": f"</{stack.pop()}>"}
        return {"type": "text", "raw": raw}
    tag = start_tag(raw, 0, env)
    if tag is None or tag.end != len(raw) or tag.name in BLOCK_ELEMENTS:
        # Not a tag kramdown reads (a bare value like src=x.png), or a block element: text.
        return {"type": "text", "raw": raw}
    tag.attrs.pop("markdown", None)
    attrs = {k: re.sub(r"\n+", " ", v) for k, v in tag.attrs.items()}
    html = f"<{tag.name}{attributes_html(attrs)}"
    if tag.closed or tag.name in KRAMDOWN_WITHOUT_BODY:
        return {"type": "inline_html", "raw": html + " />"}
    stack.append(tag.name)
    return {"type": "inline_html", "raw": html + ">"}
