"""kramdown pipe tables for mistune 3: the cases mistune's GFM table plugin does not read.

kramdown's table syntax (https://kramdown.gettalong.org/syntax.html#tables; parser
``lib/kramdown/parser/kramdown/table.rb``) is looser than GFM's:

- separator lines (``|---|---|``, optional ``:`` for alignment) may appear anywhere: lines
  before the first separator form the ``<thead>``; a separator *before* any row is ignored;
  later separators start a new ``<tbody>``; a ``|===|`` line starts the ``<tfoot>``;
- rows may have fewer cells than the widest row: they are padded with empty cells;
- an empty cell is written as a no-break space (``convert_td``: ``ENTITY_NBSP``);
- alignment is written as ``style="text-align: left"`` (with a space).

:func:`kramdown_tables` handles tables whose every line starts with ``|`` and that contain a
separator line, and renders all table cells (mistune's tables too) the kramdown way. Tables
without a leading pipe are left to mistune's ``table``/``nptable`` rules.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState

_LINE = re.compile(r" {0,3}\|[^\n]*(?:\n|$)")
_SEP = re.compile(r"^ {0,3}[+|: \t-]*-[+|: \t-]*$")
_FOOT_SEP = re.compile(r"^ {0,3}[+|: \t]*=[+|: \t=]*$")
_ALIGN = re.compile(r"[ \t]?(:?)-+(:?)[ \t]*(?:\||\+|$)")
_CODE = re.compile(r"(`+)(?:.+?)\1")
_PIPE = re.compile(r"(?<!\\)\|")
_NBSP = "\u00a0"
_TABLE_PATTERN = r"^ {0,3}\|[^\n]*(?:\n|$)"


def kramdown_tables(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown pipe tables (see the module docstring).

    Register it after mistune's ``table`` plugin; it puts its rule before ``table``.
    """
    before = "table" if "table" in md.block.rules else "paragraph"
    md.block.register("kramdown_table", _TABLE_PATTERN, _parse_table, before=before)
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_table", _render_table)
        md.renderer.register("kramdown_table_section", _render_section)
        md.renderer.register("kramdown_table_row", _render_row)
        md.renderer.register("table_cell", render_cell)


def _parse_table(block: BlockParser, m: Any, state: BlockState) -> int | None:
    lines: list[str] = []
    pos: int = m.start()
    while pos < state.cursor_max:
        line = _LINE.match(state.src, pos)
        if line is None:
            break
        lines.append(line.group(0).rstrip("\n").rstrip(" \t"))
        pos = line.end()
    if not any(_SEP.match(text) for text in lines):
        return None  # no separator: not a table for this rule (mistune or a paragraph)
    sections = table_sections(lines)
    if sections is None:
        return None
    state.append_token(sections)
    return pos


def table_sections(lines: list[str]) -> dict[str, Any] | None:
    """Return a ``kramdown_table`` token for the table ``lines`` (no newlines), or ``None``
    when kramdown would not make a table of them (no body rows).

    Follows ``parse_table`` in kramdown's ``table.rb``: sections, alignment, padding.
    """
    sections: list[tuple[str, list[list[str]]]] = []
    rows: list[list[str]] = []
    aligns: list[str | None] = []
    footer = False
    for text in lines:
        if _FOOT_SEP.match(text):
            if rows:
                sections.append(("tbody", rows))
                rows = []
            footer = True
        elif _SEP.match(text):
            if rows and not sections:
                aligns = _alignments(text)
                sections.append(("thead", rows))
            elif rows:
                sections.append(("tbody", rows))
            rows = []
        else:
            rows.append(split_cells(text))
    if rows:
        sections.append(("tfoot" if footer else "tbody", rows))
    if not any(kind == "tbody" for kind, _ in sections):
        return None
    width = max(len(row) for _, section in sections for row in section)
    aligns = (aligns + [None] * width)[:width]
    children = [_section(kind, section, aligns, width) for kind, section in sections]
    return {"type": "kramdown_table", "children": children}


def split_cells(text: str) -> list[str]:
    """Return the cell texts of one table row (kramdown: code spans keep their pipes, ``\\|``
    is a literal pipe, an empty first cell before a leading pipe and an empty last cell are
    dropped)."""
    masked = _CODE.sub(lambda m: "\x00" * len(m.group(0)), text)
    cells: list[str] = []
    start = 0
    for pipe in _PIPE.finditer(masked):
        cells.append(text[start : pipe.start()])
        start = pipe.end()
    cells.append(text[start:])
    if text.lstrip().startswith("|") and cells and not cells[0].strip():
        cells.pop(0)
    if cells and not cells[-1].strip():
        cells.pop()
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _alignments(text: str) -> list[str | None]:
    found: list[str | None] = []
    for left, right in _ALIGN.findall(text.strip().lstrip("|+")):
        if left and right:
            found.append("center")
        elif left:
            found.append("left")
        elif right:
            found.append("right")
        else:
            found.append(None)
    return found


def _section(
    kind: str, rows: list[list[str]], aligns: list[str | None], width: int
) -> dict[str, Any]:
    head = kind == "thead"
    children = [
        {
            "type": "kramdown_table_row",
            "children": [
                {"type": "table_cell", "text": text, "attrs": {"align": aligns[i], "head": head}}
                for i, text in enumerate(row + [""] * (width - len(row)))
            ],
        }
        for row in rows
    ]
    return {"type": "kramdown_table_section", "attrs": {"tag": kind}, "children": children}


def _render_table(renderer: BaseRenderer, text: str) -> str:
    return "<table>\n" + text + "</table>\n"


def _render_section(renderer: BaseRenderer, text: str, tag: str) -> str:
    return f"  <{tag}>\n{text}  </{tag}>\n"


def _render_row(renderer: BaseRenderer, text: str) -> str:
    return "    <tr>\n" + text + "    </tr>\n"


def render_cell(
    renderer: BaseRenderer, text: str, align: str | None = None, head: bool = False
) -> str:
    """Return one ``<th>``/``<td>`` as kramdown writes it (``text-align: X``; an empty cell
    holds a no-break space)."""
    tag = "th" if head else "td"
    style = f' style="text-align: {align}"' if align else ""
    return f"      <{tag}{style}>{text or _NBSP}</{tag}>\n"
