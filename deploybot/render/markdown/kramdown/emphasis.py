"""kramdown's emphasis in mistune: ``***text***`` nested as kramdown nests it, and its
delimiters opening and closing by kramdown's rule.

Flanking: kramdown (``lib/kramdown/parser/kramdown/emphasis.rb``) opens an emphasis at a
delimiter not followed by whitespace and closes it at one not preceded by whitespace; it has
no punctuation rule, so ``以及**“引号”**和`` and ``a**"b"**c`` are strong, where CommonMark's
flanking rules (mistune's) keep them text. While one of our Markdown's texts is parsed,
mistune's two flanking checks (module functions of ``mistune._inline.emphasis``) are
replaced by kramdown's (its ``_`` rules too: not after a letter, not closing before a
letter or digit); they are put back after, so another mistune in the process is not affected.

``***text***`` as kramdown nests it: ``<strong><em>text</em></strong>``.

kramdown's emphasis parser (``lib/kramdown/parser/kramdown/emphasis.rb``) takes the longest
delimiter first, so ``***x***`` is strong around emphasis; mistune (CommonMark) writes
``<em><strong>x</strong></em>``. An emphasis whose only content is a strong span is turned
inside out, in texts that hold ``***`` or ``___`` (mistune's tokens do not keep their
delimiters; ``*__x__*`` in such a text is turned too, where kramdown keeps it).
"""

from __future__ import annotations

from collections.abc import Callable

import mistune
from mistune._inline import emphasis as mistune_emphasis
from mistune.core import InlineState

from deploybot.render.markdown.mistune_hooks import Token


def kramdown_strong_emphasis(md: mistune.Markdown) -> None:
    """mistune plugin: ``***x***`` -> ``<strong><em>x</em></strong>`` (module docstring)."""
    inline = md.inline
    inner = inline.render

    def render(state: InlineState) -> list[Token]:
        with KramdownFlanking():
            tokens: list[Token] = inner(state)
        if "***" in state.src or "___" in state.src:
            tokens = state.tokens = _swap(tokens)
        return tokens

    setattr(inline, "render", render)  # noqa: B010


FlankCheck = Callable[[str, int, int, str], bool]


def can_open(text: str, start: int, size: int, marker: str) -> bool:
    """kramdown: a delimiter run at ``text[start:start+size]`` opens unless whitespace (or
    the end) follows it, or it is ``_`` after a letter (or a letter and ``-``)."""
    following = text[start + size] if start + size < len(text) else "\n"
    if marker == "_":
        before = text[max(start - 2, 0) : start]
        if before[-1:].isalpha() or (before[-1:] == "-" and before[:1].isalpha()):
            return False
    return not following.isspace()


def can_close(text: str, start: int, size: int, marker: str) -> bool:
    """kramdown: a delimiter run closes unless whitespace (or the start) precedes it, or it
    is ``_`` before a letter or digit."""
    previous = text[start - 1] if start > 0 else "\n"
    following = text[start + size] if start + size < len(text) else "\n"
    if marker == "_" and following.isalnum():
        return False
    return not previous.isspace()


class KramdownFlanking:
    """Within: mistune's flanking checks are :func:`can_open`/:func:`can_close` (nested
    uses keep the outer swap)."""

    _depth = 0
    _saved: tuple[FlankCheck, FlankCheck] | None = None

    def __enter__(self) -> None:
        cls = type(self)
        if cls._depth == 0:
            cls._saved = (
                mistune_emphasis._can_open_emphasis,
                mistune_emphasis._can_close_emphasis,
            )
            mistune_emphasis._can_open_emphasis = can_open
            mistune_emphasis._can_close_emphasis = can_close
        cls._depth += 1

    def __exit__(self, *exc: object) -> None:
        cls = type(self)
        cls._depth -= 1
        if cls._depth == 0 and cls._saved is not None:
            opener, closer = cls._saved
            setattr(mistune_emphasis, "_can_open_emphasis", opener)  # noqa: B010
            setattr(mistune_emphasis, "_can_close_emphasis", closer)  # noqa: B010
            cls._saved = None


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
