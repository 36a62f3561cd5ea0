"""mistune's block parsing, made linear where it grew a text by copying it for each line.

- A paragraph: ``BlockState.add_paragraph``/``append_paragraph`` do
  ``token["text"] += line``, which copies the paragraph so far for each line added one by
  one (each line after a paragraph that a rule looked at and left as text: ``<span>``,
  ``<x``, ``{::comment x`` or indented lines): 1 MB of ``<span>a`` lines took 25 s, 50 MB
  would take days. :class:`LinearBlockState` keeps a paragraph's lines as pieces
  (:class:`Paragraph`), joined once when its text is read.
- A block quote: ``BlockParser.extract_block_quote`` does ``text += quote`` for each line
  (1 MB of ``>`` lines: 10 s); :func:`linear_block_quotes` gathers the lines in a list.

Both give mistune's results (the Jekyll, kramdown and Markdown tests run through them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mistune
from mistune.block_parser import BlockParser, _parse_block_quote_line
from mistune.core import BlockState
from mistune.util import expand_leading_tab, expand_tab

_TEXT = "text"


class Paragraph(dict[str, Any]):
    """A paragraph token whose ``text`` grows by pieces (:meth:`add`), joined into one
    string the first time anyone reads it, by any dict method."""

    __slots__ = ("pieces",)

    def __init__(self, text: str) -> None:
        super().__init__(type="paragraph", text=text)
        self.pieces: list[str] = []

    def add(self, text: str) -> None:
        """Append ``text`` to the paragraph's text, in amortised constant time."""
        self.pieces.append(text)

    def _join(self) -> None:
        if self.pieces and super().__contains__(_TEXT):
            text = super().__getitem__(_TEXT) + "".join(self.pieces)
            self.pieces.clear()
            super().__setitem__(_TEXT, text)

    def __getitem__(self, key: str) -> Any:
        if key == _TEXT:
            self._join()
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key == _TEXT:
            self.pieces.clear()  # replaced as a whole
        super().__setitem__(key, value)

    def __iter__(self) -> Iterator[str]:
        # Not dict's own: {**token} and dict(token) then read through __getitem__.
        return super().__iter__()

    def get(self, key: str, default: Any = None) -> Any:
        """``dict.get``, with the text joined."""
        if key == _TEXT:
            self._join()
        return super().get(key, default)

    def pop(self, key: str, *default: Any) -> Any:
        """``dict.pop``, with the text joined."""
        if key == _TEXT:
            self._join()
        return super().pop(key, *default)

    def items(self) -> Any:
        """``dict.items``, with the text joined."""
        self._join()
        return super().items()

    def values(self) -> Any:
        """``dict.values``, with the text joined."""
        self._join()
        return super().values()

    def __repr__(self) -> str:
        self._join()
        return super().__repr__()


class LinearBlockState(BlockState):
    """mistune's block state whose paragraphs are :class:`Paragraph` tokens."""

    def _last_paragraph(self) -> Paragraph | None:
        last = self.tokens[-1] if self.tokens else None
        if isinstance(last, Paragraph) and last["type"] == "paragraph":
            return last
        return None

    def add_paragraph(self, text: str) -> None:
        """Append ``text`` to the last token when it is a paragraph, else start one."""
        last = self._last_paragraph()
        if last is not None:
            last.add(text)
        elif self.tokens and self.tokens[-1]["type"] == "paragraph":
            self.tokens[-1]["text"] += text  # a paragraph some plugin made itself
        else:
            self.tokens.append(Paragraph(text))

    def append_paragraph(self) -> int | None:
        """Append the line at the cursor to the last token when it is a paragraph and
        return where the line ends, else ``None``."""
        last = self._last_paragraph()
        if last is None:
            return super().append_paragraph()
        pos = self.find_line_end()
        last.add(self.get_text(pos))
        return pos


def linear_parsing(md: mistune.Markdown) -> None:
    """mistune plugin: :class:`LinearBlockState` and :func:`linear_block_quotes` on this
    instance. Register it before any plugin that changes the block state class."""
    # Instance attributes: other Markdown objects keep mistune's own.
    setattr(md.block, "state_cls", LinearBlockState)  # noqa: B010
    block = md.block

    def extract(m: Any, state: BlockState) -> tuple[str, int | None, set[int]]:
        return linear_block_quotes(block, state)

    setattr(block, "extract_block_quote", extract)  # noqa: B010


def linear_block_quotes(block: BlockParser, state: BlockState) -> tuple[str, int | None, set[int]]:
    """mistune's ``BlockParser.extract_block_quote`` (3.x), its lines gathered in a list:
    the quote's text, where the quote ends when a rule ended it, and where its lazy
    continuation lines start in the text."""
    first = _parse_block_quote_line(state.get_line(state.cursor))
    assert first is not None
    parts = [first]
    size = len(first)
    lazy_line_starts: set[int] = set()
    sc = block.compile_sc(["blank_line", "indent_code", "fenced_code"])
    require_marker = bool(sc.match(first))
    state.cursor += len(state.get_line(state.cursor))
    end_pos: int | None = None
    prev_blank_line = False
    break_sc = block.compile_sc(
        ["blank_line", "thematic_break", "fenced_code", "list", "block_html"]
    )
    while state.cursor < state.cursor_max:
        quote = _parse_block_quote_line(state.get_line(state.cursor))
        if quote is not None:
            parts.append(quote)
            size += len(quote)
            state.cursor += len(state.get_line(state.cursor))
            prev_blank_line = not quote.strip()
            continue
        if require_marker or prev_blank_line:
            # CommonMark Example 249: after a blank line, laziness needs a new marker
            break
        m = break_sc.match(state.src, state.cursor)
        if m:
            end_pos = block.parse_method(m, state)
            if end_pos:
                break
        # a lazy continuation line
        line = state.get_line(state.cursor)
        lazy_line_starts.add(size)
        lazy = expand_leading_tab(line, 3)
        parts.append(lazy)
        size += len(lazy)
        state.cursor += len(line)
    # CommonMark Example 6: the second tab counts as 4 spaces
    return expand_tab("".join(parts)), end_pos, lazy_line_starts
