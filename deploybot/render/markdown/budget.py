"""What one page's Markdown may make: mistune plugins that count its output and its elements as
they are made, and stop with :class:`deploybot.render.limits.LimitError` past a limit
(``[render] max_page_bytes``, ``markdown_max_elements``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mistune
from mistune.core import BlockState, InlineState

from deploybot.render.limits import LimitError, page_too_large, too_many_elements
from deploybot.render.markdown.mistune_hooks import RenderNext, Token, wrap_render_token

_COUNT = "_output_budget"


def markdown_budget(limit: int) -> mistune.plugins.Plugin:
    """Return a mistune plugin that raises :class:`LimitError` as soon as the HTML rendered
    for one document passes ``limit`` characters. Register it after every other plugin.

    Each token's own markup is its HTML minus its children's, so the running sum over the
    tokens rendered so far is exactly the length of the HTML built so far, whatever the
    nesting; a document cannot build more than ``limit`` characters plus one token.
    """

    def plugin(md: mistune.Markdown) -> None:
        wrap_render_token(md, lambda token, state, next_: _count(token, state, next_, limit))

    return plugin


def _count(token: Token, state: BlockState, render_next: RenderNext, limit: int) -> str:
    # state.env is per document: [total so far, stack of children's lengths per open token]
    counter: list[Any] = state.env.setdefault(_COUNT, [0, []])
    stack: list[int] = counter[1]
    stack.append(0)
    try:
        html = render_next(token, state)
    finally:
        children = stack.pop()
    counter[0] += len(html) - children
    if stack:
        stack[-1] += len(html)
    if counter[0] > limit:
        raise LimitError(page_too_large(limit))
    return html


_ELEMENTS = "_markdown_elements"


def markdown_elements(limit: int) -> mistune.plugins.Plugin:
    """Return a mistune plugin that raises :class:`LimitError` as soon as one document
    makes more than ``limit`` elements: the block and inline tokens mistune appends (every
    other token sits beside or inside one of them, a bounded number apiece) and the HTML
    elements of raw HTML (:func:`count_elements`), as kramdown's tree has one element for
    each. Counted while they are made, so the tokens never outgrow the limit."""

    def plugin(md: mistune.Markdown) -> None:
        bases = (_CountedBlockState, md.block.state_cls)
        block = type("BlockState", bases, {"element_limit": limit})
        # Instance attributes: other Markdown objects keep mistune's own states.
        setattr(md.block, "state_cls", block)  # noqa: B010
        setattr(md.inline, "state_cls", _CountedInlineState)  # noqa: B010
        # Definitions are kept in state.env, not as tokens.
        for name in _DEFINITIONS:
            if name in md.block._methods:
                md.block._methods[name] = _counted(md.block._methods[name])

    return plugin


_DEFINITIONS = ("ref_link", "kramdown_link_def", "ref_footnote", "kramdown_abbreviation")
_Method = Callable[[Any, BlockState], "int | None"]


def _counted(method: _Method) -> _Method:
    def counted(m: Any, state: BlockState) -> int | None:
        count_elements(state.env)
        return method(m, state)

    return counted


def count_elements(env: Any, count: int = 1) -> None:
    """Count ``count`` elements of the document whose ``state.env`` is ``env`` (nothing
    without :func:`markdown_elements`). Raises :class:`LimitError` past its limit."""
    counter: list[int] | None = env.get(_ELEMENTS)
    if counter is None:
        return
    counter[0] += count
    if counter[0] > counter[1]:
        raise LimitError(too_many_elements(counter[1]))


class _CountedBlockState(BlockState):
    """A block state whose document counts its tokens; the document's state (no parent)
    starts the count at ``element_limit``."""

    element_limit = 0

    def __init__(self, parent: Any | None = None) -> None:
        super().__init__(parent)
        if parent is None:
            self.env[_ELEMENTS] = [0, self.element_limit]

    def append_token(self, token: dict[str, Any]) -> None:
        count_elements(self.env)
        super().append_token(token)

    def child_state(self, src: str, *args: Any, **kwargs: Any) -> BlockState:
        # A list item or a block quote: its own token is appended to no state.
        count_elements(self.env)
        return super().child_state(src, *args, **kwargs)


class _CountedInlineState(InlineState):
    """An inline state counting its tokens in its document's count."""

    def append_token(self, token: dict[str, Any]) -> None:
        count_elements(self.env)
        super().append_token(token)
