"""The ``[render]`` size limits: source files read, and the output of one page while it is made.

- :class:`LimitedTree` refuses to read a source file larger than ``max_file_bytes``, asking
  the tree for the size first (a git tree reads it from the object header; a folder, from
  ``stat``), so the file is never held in memory.
- A page's output is counted while it is made: Liquid's output
  (:mod:`deploybot.render.liquid.templates`), every rendered Markdown token
  (:func:`markdown_budget`) and the fragments put back; each stage stops with :class:`LimitError` as
  soon as it passes ``max_page_bytes``, so a page that would expand to gigabytes never does. Stages
  count characters (never more than the UTF-8 bytes); the finished page is checked in bytes.
- The elements one page's Markdown makes are counted as they are made
  (:func:`markdown_elements`): mistune holds each as a token (a few hundred bytes) until
  the page is rendered, so 50 MB of ``-`` lines (25 million list items) would take ~8 GB;
  past ``markdown_max_elements`` it stops with :class:`LimitError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import mistune
from mistune.core import BlockState, InlineState

from deploybot.render.markdown.mistune_hooks import RenderNext, Token, wrap_render_token
from deploybot.render.read.source import SourceTree
from deploybot.support.errors import OutOfMemoryError, SourceError


class LimitError(Exception):
    """Output passed a ``[render]`` limit. ``line`` is the 1-based source line where it did,
    when known; the caller names the file (as a :class:`~deploybot.support.errors.SourceError`)."""

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


def too_many_elements(limit: int) -> str:
    """Return the message for Markdown that makes more than ``limit`` elements."""
    return f"the Markdown makes more than {limit:,} elements (render.markdown_max_elements)"


SIZED_WORK = frozenset({"reading", "copying"})
"""The work on a source file whose memory its size bounds (at most ``max_file_bytes``,
checked before: :class:`LimitedTree`, :func:`check_file_size`), its front matter's YAML
bounded by ``max_yaml_size``. Running out there is the machine's shortage, not the file's."""


@contextmanager
def out_of_memory(path: str, doing: str) -> Iterator[None]:
    """Around the work on the one source file ``path`` (``doing``: "reading", "copying",
    "rendering"…): a ``MemoryError`` there names the file, in one line. Rendering is the
    file's own problem (a ``SourceError``, exit 1: what the limits cannot see coming, a
    page under all of them that needs more than the machine has, fails as a limit does);
    reading or copying it (:data:`SIZED_WORK`) takes memory its size bounds, within the
    limits, so the machine is short: an ``OutOfMemoryError``, exit 75, try again later."""
    try:
        yield
    except MemoryError as exc:
        # The work's own memory is gone by now (its frames have unwound): a message fits.
        if doing in SIZED_WORK:
            message = f"{path}: out of memory while {doing} this file (try again later)"
            raise OutOfMemoryError(message) from exc
        raise SourceError(f"out of memory while {doing} this file", path) from exc


def check_file_size(tree: SourceTree, path: str, limit: int) -> None:
    """Raise ``SourceError`` naming ``path`` when the file is larger than ``limit`` bytes
    (``KeyError`` when it is not in ``tree``)."""
    size = tree.size(path)
    if size > limit:
        raise SourceError(f"{size:,} bytes, more than render.max_file_bytes ({limit:,})", path)


class LimitedTree:
    """A :class:`~deploybot.render.read.source.SourceTree` whose :meth:`read` refuses files over
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


_DEFINITIONS = ("ref_link", "ref_footnote", "kramdown_abbreviation")
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
