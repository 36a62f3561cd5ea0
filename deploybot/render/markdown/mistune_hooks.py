"""Small helpers for mistune 3 plugins that post-process tokens or rendered elements.

mistune 3 (``mistune/markdown.py``, ``core.py``) has hooks before parsing, before rendering and
after rendering, but none between inline parsing and rendering, and none per element. These
helpers add both by wrapping methods *on one instance* (never on the class), so other
``Markdown`` objects are untouched and several plugins can stack their wrappers:

- :func:`wrap_inline_render` sees every inline token list right after mistune's inline parser
  has finished it (emphasis resolved), before any renderer sees it;
- :func:`wrap_render_token` sees every token (block and inline) as the renderer turns it into
  HTML, and may change the token first or the HTML afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import mistune
from mistune.core import BlockState, InlineState

Token = dict[str, Any]
#: ``render(token, state) -> html``: the renderer's ``render_token`` (or the next wrapper).
RenderNext = Callable[[Token, BlockState], str]
RenderHook = Callable[[Token, BlockState, RenderNext], str]
InlineHook = Callable[[list[Token], MutableMapping[str, Any]], list[Token]]


def wrap_render_token(md: mistune.Markdown, hook: RenderHook) -> None:
    """Route every ``md.renderer.render_token(token, state)`` call through ``hook``.

    ``hook(token, state, render_next)`` returns the HTML string; it usually calls
    ``render_next(token, state)`` once. Does nothing when ``md`` has no renderer (AST output).
    """
    renderer = md.renderer
    if renderer is None:
        return
    inner: RenderNext = renderer.render_token

    def render_token(token: Token, state: BlockState) -> str:
        return hook(token, state, inner)

    # An instance attribute shadows HTMLRenderer.render_token for this renderer only.
    setattr(renderer, "render_token", render_token)  # noqa: B010


def wrap_inline_render(md: mistune.Markdown, hook: InlineHook) -> None:
    """Pass every finished inline token list through ``hook(tokens, env) -> tokens``.

    ``env`` is the document's ``state.env`` (shared by block and inline parsing). Wrappers
    registered later run later (they see the output of earlier ones).
    """
    inline = md.inline
    inner: Callable[[InlineState], list[Token]] = inline.render

    def render(state: InlineState) -> list[Token]:
        tokens = hook(inner(state), state.env)
        state.tokens = tokens
        return tokens

    setattr(inline, "render", render)  # noqa: B010


def walk(tokens: list[Token]) -> Iterator[Token]:
    """Yield ``tokens`` and all their descendants (via ``children`` lists), depth first."""
    for token in tokens:
        yield token
        children = token.get("children")
        if isinstance(children, list):
            yield from walk(children)
