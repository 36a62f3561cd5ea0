"""The ``[render]`` size limits: their errors and messages, one home for each.

Each part of the stage applies them where it reads or makes something:

- :class:`deploybot.render.read.limited.LimitedTree` refuses to read a source file larger
  than ``max_file_bytes``, asking the tree for the size first (a git tree reads it from the
  object header; a folder, from ``stat``), so the file is never held in memory.
- A page's output is counted while it is made: Liquid's output
  (:mod:`deploybot.render.liquid.templates`), every rendered Markdown token
  (:func:`deploybot.render.markdown.budget.markdown_budget`) and the fragments put back; each
  stops with :class:`LimitError` as soon as it passes ``max_page_bytes``, so a page that would
  expand to gigabytes never does. Stages count characters (never more than the UTF-8 bytes);
  the finished page is checked in bytes.
- The elements one page's Markdown makes are counted as they are made
  (:func:`deploybot.render.markdown.budget.markdown_elements`): mistune holds each as a token
  (a few hundred bytes) until the page is rendered, so 50 MB of ``-`` lines (25 million list
  items) would take ~8 GB; past ``markdown_max_elements`` it stops with :class:`LimitError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
