"""Where a kramdown extension start tag (``{::comment}``, ``{::options a="b" /}``) ends, in
time linear in the text over all the tags of a document.

kramdown's tag is the regex ``\\{::(name)(?:\\s(opts)|)(/)?\\}`` with ``opts`` =
``(?:\\\\\\}|[^}])*?`` (``EXT_START_STR``, ``ALD_ANY_CHARS`` in
``lib/kramdown/parser/kramdown/extensions.rb``), followed by blanks and the line's end for a
block tag. ``opts`` may run over lines, so each ``{::comment x`` line without a ``}`` made
the regex scan to the end of the document (1 MB of such lines: hours), and it kept a
backtracking frame per character. :func:`extension_tag` gives the regex's answer from two
searches that every tag of the text shares (:class:`~.html_scan.NextFinder`):

- the lazy ``opts`` steps over ``\\}`` pairs and other characters up to the first ``}``
  that no backslash escapes; the tag ends there if the tail (``}``, for a block tag then
  blanks and the line's end) follows it, with ``/`` before it as the closing slash;
- else the regex backs off to the last ``\\}`` before that ``}`` whose ``}`` the tail
  follows, and ends there;
- else, with no blank after the name, the tag is ``{::name}`` or ``{::name/}``.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from deploybot.render.markdown.kramdown.html_scan import finder

_SPACE = re.compile(r"\s")
_UNESCAPED_CLOSE = re.compile(r"(?<!\\)\}")
_BLOCK_TAIL = re.compile(r"\}[ \t]*(?:\n|\Z)")
_SPAN_TAIL = re.compile(r"\}")
_BLOCK_PAIR = re.compile(r"\\(?=\}[ \t]*(?:\n|\Z))")
_SPAN_PAIR = re.compile(r"\\(?=\})")
_LAST_PAIRS = "_kramdown_ext_last_pairs"


@dataclass(frozen=True)
class ExtensionTag:
    """An extension start tag: its ``opts`` (``None`` for ``{::name}``), whether it closes
    itself (``/}``) and where it ends in the text (past the newline, for a block tag)."""

    opts: str | None
    close: bool
    end: int


def extension_tag(
    src: str, name_end: int, block: bool, env: MutableMapping[str, Any]
) -> ExtensionTag | None:
    """Return the start tag whose name ends at ``name_end`` of ``src`` (``{::comment`` just
    before it), as kramdown's regex reads it (module docstring), or ``None`` when it is no
    tag. ``block``: a block tag (blanks and the line's end after ``}``). ``env``: the
    document's ``state.env``, which keeps the searches for the next calls."""
    tail = _BLOCK_TAIL if block else _SPAN_TAIL
    if _SPACE.match(src, name_end) is None:
        close = src.startswith("/", name_end)
        end = tail.match(src, name_end + close)
        return None if end is None else ExtensionTag(None, close, end.end())
    start = name_end + 1
    brace = finder(env, src, _UNESCAPED_CLOSE).search(start)
    if brace is not None:
        at = brace.start()
        end = tail.match(src, at)
        if end is not None:
            close = at > start and src[at - 1] == "/"
            return ExtensionTag(src[start : at - close], close, end.end())
    limit = len(src) if brace is None else brace.start()
    pair = _last_pair(env, src, _BLOCK_PAIR if block else _SPAN_PAIR, start, limit)
    if pair is None:
        return None
    end = tail.match(src, pair + 1)
    assert end is not None  # the pair pattern looks for this tail
    return ExtensionTag(src[start : pair + 1], False, end.end())


def _last_pair(
    env: MutableMapping[str, Any], src: str, pattern: re.Pattern[str], start: int, limit: int
) -> int | None:
    """Return the position of the last match of ``pattern`` in ``[start, limit)``, or
    ``None``. Every ``start`` before one ``limit`` shares what was searched (from the lowest
    ``start`` asked: the last match there), so the tags before one ``}`` search once."""
    known: dict[tuple[int, str, int], _Searched] = env.setdefault(_LAST_PAIRS, {})
    key = (id(src), pattern.pattern, limit)
    seen = known.get(key)
    if seen is None or seen.src is not src:
        seen = known[key] = _Searched(src, limit, -1)
    if start < seen.lowest:
        found = _last_before(env, src, pattern, start, seen.lowest)
        seen.lowest, seen.last = start, seen.last if seen.last != -1 else found
    return seen.last if seen.last >= start else None


@dataclass
class _Searched:
    """``[lowest, limit)`` of ``src`` was searched; ``last`` is its last match (-1: none)."""

    src: str
    lowest: int
    last: int


def _last_before(
    env: MutableMapping[str, Any], src: str, pattern: re.Pattern[str], start: int, limit: int
) -> int:
    """The position of the last match of ``pattern`` in ``[start, limit)``, -1 for none."""
    search = finder(env, src, pattern).search
    last = -1
    found = search(start)
    while found is not None and found.start() < limit:
        last = found.start()
        found = search(last + 1)
    return last
