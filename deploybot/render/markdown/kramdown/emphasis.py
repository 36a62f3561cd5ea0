"""``***text***`` as kramdown nests it: ``<strong><em>text</em></strong>``.

kramdown's emphasis parser (``lib/kramdown/parser/kramdown/emphasis.rb``) takes the longest
delimiter first, so ``***x***`` is strong around emphasis; mistune (CommonMark) writes
``<em><strong>x</strong></em>``. An emphasis whose only content is a strong span is turned
inside out, in texts that hold ``***`` or ``___`` (mistune's tokens do not keep their
delimiters; ``*__x__*`` in such a text is turned too, where kramdown keeps it).
"""

from __future__ import annotations

import mistune
from mistune.core import InlineState

from deploybot.render.markdown.mistune_hooks import Token


def kramdown_strong_emphasis(md: mistune.Markdown) -> None:
    """mistune plugin: ``***x***`` -> ``<strong><em>x</em></strong>`` (module docstring)."""
    inline = md.inline
    inner = inline.render

    def render(state: InlineState) -> list[Token]:
        tokens: list[Token] = inner(state)
        if "***" in state.src or "___" in state.src:
            tokens = state.tokens = _swap(tokens)
        return tokens

    setattr(inline, "render", render)  # noqa: B010


def _swap(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        children = token.get("children")
        if isinstance(children, list):
            token["children"] = children = _swap(children)
            if token["type"] == "emphasis" and len(children) == 1:
                inner = children[0]
                if inner["type"] == "strong" and isinstance(inner.get("children"), list):
                    token = {
                        **token,
                        "type": "strong",
                        "children": [{"type": "emphasis", "children": inner["children"]}],
                    }
        out.append(token)
    return out
