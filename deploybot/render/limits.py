"""The ``[render]`` size limits: source files read, and the output of one page while it is made.

- :class:`LimitedTree` refuses to read a source file larger than ``max_file_bytes``, asking
  the tree for the size first (a git tree reads it from the object header; a folder, from
  ``stat``), so the file is never held in memory.
- A page's output is counted while it is made: Liquid's output (:mod:`.liquid`), every
  rendered Markdown token (:func:`markdown_budget`) and the fragments put back; each stage
  stops with :class:`LimitError` as soon as it passes ``max_page_bytes``, so a page that
  would expand to gigabytes never does. Stages count characters (never more than the
  UTF-8 bytes); the finished page is checked in bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mistune
from mistune.core import BlockState

from deploybot.errors import SourceError
from deploybot.render.mistune_hooks import RenderNext, Token, wrap_render_token
from deploybot.render.source import SourceTree


class LimitError(Exception):
    """Output passed a ``[render]`` limit. ``line`` is the 1-based source line where it did,
    when known; the caller names the file (as a :class:`~deploybot.errors.SourceError`)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def page_too_large(limit: int) -> str:
    """Return the message for a page whose output passes ``limit`` bytes."""
    return f"the page's output is more than {limit:,} bytes (render.max_page_bytes)"


def site_too_large(limit: int) -> str:
    """Return the message for a build whose output passes ``limit`` bytes."""
    return f"the build's output passes {limit:,} bytes (render.max_site_bytes)"


def check_file_size(tree: SourceTree, path: str, limit: int) -> None:
    """Raise ``SourceError`` naming ``path`` when the file is larger than ``limit`` bytes
    (``KeyError`` when it is not in ``tree``)."""
    size = tree.size(path)
    if size > limit:
        raise SourceError(f"{size:,} bytes, more than render.max_file_bytes ({limit:,})", path)


class LimitedTree:
    """A :class:`~deploybot.render.source.SourceTree` whose :meth:`read` refuses files over
    ``max_file_bytes`` (``SourceError`` naming the path) before reading them."""

    def __init__(self, inner: SourceTree, max_file_bytes: int) -> None:
        self.inner = inner
        self.max_file_bytes = max_file_bytes

    def paths(self) -> Iterator[str]:
        """Yield the inner tree's paths."""
        return self.inner.paths()

    def read(self, path: str) -> bytes:
        """Return the file's bytes. Raises ``KeyError`` when absent, ``SourceError`` when
        it is larger than the limit."""
        check_file_size(self.inner, path, self.max_file_bytes)
        return self.inner.read(path)

    def blob_id(self, path: str) -> str:
        """Return the inner tree's blob id. Raises ``KeyError`` when absent."""
        return self.inner.blob_id(path)

    def size(self, path: str) -> int:
        """Return the inner tree's file size. Raises ``KeyError`` when absent."""
        return self.inner.size(path)


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
