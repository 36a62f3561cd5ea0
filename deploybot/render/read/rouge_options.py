"""kramdown's ``syntax_highlighter_opts`` for Rouge, as far as deploybot follows them.

kramdown 2.4's Rouge converter (``converter/syntax_highlighter/rouge.rb``,
``prepare_options``) merges ``_config.yml``'s ``kramdown.syntax_highlighter_opts`` with
its ``block`` mapping for code blocks (``span`` for inline code) and hands them to Rouge's
``HTMLLegacy`` formatter: ``line_numbers: true`` writes a block in Rouge's ``HTMLTable``
(``rouge-table``, a ``rouge-gutter gl`` cell of numbers from ``start_line``, a
``rouge-code`` cell). Those two are followed; any other key gets a warning naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FOLLOWED = frozenset({"line_numbers", "start_line"})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def block_line_start(data: Mapping[str, Any]) -> int | None:
    """Return the first line number of a code block's gutter for the ``_config.yml``
    mapping ``data`` (``None``: no line numbers)."""
    opts = _mapping(_mapping(data.get("kramdown")).get("syntax_highlighter_opts"))
    merged = {**{k: v for k, v in opts.items() if k not in ("block", "span")}}
    merged.update(_mapping(opts.get("block")))
    if merged.get("line_numbers") in (None, False):
        return None
    start = merged.get("start_line", 1)
    return start if isinstance(start, int) and not isinstance(start, bool) else 1


def option_notes(data: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """Return ``(keys, message)`` for each ``syntax_highlighter_opts`` key not followed."""
    opts = _mapping(_mapping(data.get("kramdown")).get("syntax_highlighter_opts"))
    where = ("kramdown", "syntax_highlighter_opts")
    notes: list[tuple[tuple[str, ...], str]] = []
    for group, values in (("", opts), ("block", _mapping(opts.get("block")))):
        for key in sorted(map(str, values)):
            if key in FOLLOWED or (not group and key in ("block", "span")):
                continue
            name = ".".join((*where, group, key) if group else (*where, key))
            notes.append(((*where, group) if group else where, f"{name} is not supported: ignored"))
    if _mapping(opts.get("span")):
        name = ".".join((*where, "span"))
        notes.append(((*where, "span"), f"{name} is not supported: ignored"))
    return notes
