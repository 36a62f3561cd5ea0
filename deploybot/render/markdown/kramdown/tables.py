"""kramdown pipe tables for mistune 3: the cases mistune's GFM table plugin does not read.

kramdown's table syntax (https://kramdown.gettalong.org/syntax.html#tables; parser
``lib/kramdown/parser/kramdown/table.rb``) is looser than GFM's:

- separator lines (``|---|---|``, optional ``:`` for alignment) may appear anywhere: lines
  before the first separator form the ``<thead>``; a separator *before* any row is ignored;
  later separators start a new ``<tbody>``; a ``|===|`` line starts the ``<tfoot>``;
- rows may have fewer cells than the widest row: they are padded with empty cells;
- an empty cell is written as a no-break space (``convert_td``: ``ENTITY_NBSP``);
- alignment is written as ``style="text-align: left"`` (with a space).

:func:`kramdown_tables` handles tables whose every line starts with ``|``, with or without a
separator line (rows with none are all body: a headerless table), after a block boundary
(not inside a paragraph), and renders all table cells (mistune's tables too) the kramdown
way. Tables without a leading pipe whose second line is a separator take mistune's
``nptable`` rule, read the kramdown way (:func:`_parse_nptable`); without a separator
they are paragraphs here, where kramdown makes a table of any lines holding a pipe.

Parsing is linear in the input: a run of pipe lines is read once, and whether a table
starts at each of its lines is worked out for all of them in one backward pass (the block
parser asks again at every line of a run that is not a table); code spans in a row are
found with kramdown's rule in one pass over its backtick runs.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState

from deploybot.render.markdown.budget import count_elements

_LINE = re.compile(r" {0,3}\|[^\n]*(?:\n|$)")
# A separator line is kramdown's TABLE_SEP_LINE, [+|: \t-]*?-[+|: \t-]*?: only those
# characters, with a "-" (a footer separator: "=" instead). Written as a class check, as the
# regex backtracks quadratically over a long run of "-" that ends in another character.
_SEP_CHARS = re.compile(r"[+|: \t-]*")
_FOOT_SEP_CHARS = re.compile(r"[+|: \t=]*")
# TABLE_HSEP_ALIGN; possessive, and a run of "-" is only entered at its start (a try from
# inside it ends where the try from its start failed), so findall is linear.
_ALIGN = re.compile(r"[ \t]?(:?)(?<!-)-++(:?)[ \t]*+(?:\||\+|$)")
_BACKTICKS = re.compile(r"`+")
_PIPE = re.compile(r"(?<!\\)\|")
_NBSP = "\u00a0"
_TABLE_PATTERN = r"^ {0,3}\|[^\n]*(?:\n|$)"


def kramdown_tables(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown pipe tables (see the module docstring).

    Register it after mistune's ``table`` plugin; it puts its rule before ``table``.
    """
    before = "table" if "table" in md.block.rules else "paragraph"
    md.block.register("kramdown_table", _TABLE_PATTERN, _parse_table, before=before)
    if "nptable" in md.block.rules:  # mistune's pattern (a first line holding a pipe), ours
        md.block.register("nptable", md.block.specification["nptable"], _parse_nptable)
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_table", _render_table)
        md.renderer.register("kramdown_table_section", _render_section)
        md.renderer.register("kramdown_table_row", _render_row)
        md.renderer.register("table_cell", render_cell)


def _parse_table(block: BlockParser, m: Any, state: BlockState) -> int | None:
    start: int = m.start()
    last = state.last_token()
    if last is not None and last["type"] == "paragraph":
        return None  # kramdown starts a table only after a block boundary
    starts = _table_starts(state, start)
    if not starts.get(start):
        return None  # not a table for this rule (mistune's table, or a paragraph)
    lines: list[str] = []
    pos = start
    while pos < state.cursor_max:
        line = _LINE.match(state.src, pos)
        if line is None:
            break
        lines.append(line.group(0).rstrip("\n").rstrip(" \t"))
        pos = line.end()
    sections = table_sections(lines, state.env)
    assert sections is not None  # _table_starts said so
    state.append_token(sections)
    return pos


_BOUNDARY = re.compile(r"[ \t]*(?:\n|$)| {0,3}(?:\^[ \t]*(?:\n|$)|\{:)")
"""What may follow a table (kramdown's ``before_block_boundary?``: a blank line, the
end-of-block marker ``^``, a block IAL, the end)."""


def _parse_nptable(block: BlockParser, m: Any, state: BlockState) -> int | None:
    """A table whose first line has no leading pipe, read as kramdown reads it (``table.rb``)
    where mistune's ``nptable`` reads GFM's: after a block boundary, its second line a
    separator, then every following line holding an unescaped pipe; rows of any number of
    cells (a trailing pipe dropped, short rows padded: :func:`table_sections`); and a block
    boundary after it, else the lines are a paragraph."""
    last = state.last_token()
    if last is not None and last["type"] == "paragraph":
        return None
    lines: list[str] = []
    pos: int = m.start()
    while pos < state.cursor_max:
        line = state.get_line(pos)
        text = line.rstrip("\n").rstrip(" \t")
        if not text.strip() or _PIPE.search(text) is None:
            break
        lines.append(text)
        pos += len(line)
        if len(lines) == 2 and not is_separator(text.strip()):
            return None
    if len(lines) < 2:
        return None
    if pos < state.cursor_max and not _BOUNDARY.match(state.src, pos):
        return None
    sections = table_sections([line.strip() for line in lines], state.env)
    if sections is None:
        return None
    state.append_token(sections)
    return pos


def _table_starts(state: BlockState, start: int) -> dict[int, bool]:
    """Return ``{line offset: whether a table starts there}`` for the run of pipe lines of
    ``state.src`` that holds the line at ``start``, reading the run only once per document
    (kept in ``state.env``)."""
    cached: tuple[str, int, dict[int, bool]] | None = state.env.get(_STARTS_KEY)
    if cached and cached[0] is state.src and cached[1] == state.cursor_max and start in cached[2]:
        return cached[2]
    offsets: list[int] = []
    kinds: list[str] = []
    pos = start
    while pos < state.cursor_max:
        line = _LINE.match(state.src, pos)
        if line is None:
            break
        offsets.append(pos)
        kinds.append(_kind(line.group(0).rstrip("\n").rstrip(" \t")))
        pos = line.end()
    starts = dict(zip(offsets, _tables_from(kinds), strict=True))
    state.env[_STARTS_KEY] = (state.src, state.cursor_max, starts)
    return starts


_STARTS_KEY = "_kramdown_table_starts"


def _kind(text: str) -> str:
    """A table line's kind: ``"F"`` footer separator, ``"S"`` separator, ``"R"`` row."""
    if is_footer_separator(text):
        return "F"
    return "S" if is_separator(text) else "R"


def is_separator(text: str) -> bool:
    """Return whether a table line (no newline) separates sections (``|---|:-:|``)."""
    return "-" in text and _SEP_CHARS.fullmatch(text) is not None


def is_footer_separator(text: str) -> bool:
    """Return whether a table line (no newline) starts the footer (``|===|``)."""
    return "=" in text and _FOOT_SEP_CHARS.fullmatch(text) is not None


# table_sections as a machine over line kinds. State: (rows pending, a section made,
# footer seen); step -> (next state, whether a tbody was made).
_State = tuple[bool, bool, bool]
_STATES: list[_State] = [
    (r, s, f) for r in (False, True) for s in (False, True) for f in (False, True)
]


def _step(state: _State, kind: str) -> tuple[_State, bool]:
    rows, sections, footer = state
    if kind == "R":
        return (True, sections, footer), False
    if kind == "F":
        return (False, sections or rows, True), rows
    return (False, sections or rows, footer), rows and sections


def _tables_from(kinds: list[str]) -> list[bool]:
    """Return, for each ``i``, whether ``table_sections`` of the lines ``i:`` (of these kinds)
    makes a table: it makes a ``tbody``. One backward pass over
    the 8 machine states, so a run of n lines costs O(n), not O(n²)."""
    makes = {state: state[0] and not state[2] for state in _STATES}  # after the last line
    found = [False] * len(kinds)
    for i in range(len(kinds) - 1, -1, -1):
        steps = {state: _step(state, kinds[i]) for state in _STATES}
        makes = {state: made or makes[after] for state, (after, made) in steps.items()}
        found[i] = makes[(False, False, False)]
    return found


def table_sections(lines: list[str], env: Any = None) -> dict[str, Any] | None:
    """Return a ``kramdown_table`` token for the table ``lines`` (no newlines), or ``None``
    when kramdown would not make a table of them (no body rows).

    Follows ``parse_table`` in kramdown's ``table.rb``: sections, alignment, padding. Each
    row is padded to the widest, so 2,000 rows under a row of 2,000 cells (20 KB) make 4
    million cells: they are counted as elements of the document whose ``state.env`` is
    ``env`` before they are made (:func:`~deploybot.render.markdown.budget.count_elements`:
    ``LimitError``).
    """
    sections: list[tuple[str, list[list[str]]]] = []
    rows: list[list[str]] = []
    aligns: list[str | None] = []
    footer = False
    for text in lines:
        if is_footer_separator(text):
            if rows:
                sections.append(("tbody", rows))
                rows = []
            footer = True
        elif is_separator(text):
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
    if env is not None:
        count_elements(env, sum(len(section) for _, section in sections) * (width + 1))
    aligns = (aligns + [None] * width)[:width]
    children = [_section(kind, section, aligns, width) for kind, section in sections]
    return {"type": "kramdown_table", "children": children}


def split_cells(text: str) -> list[str]:
    """Return the cell texts of one table row (kramdown: code spans keep their pipes, ``\\|``
    is a literal pipe, an empty first cell before a leading pipe and an empty last cell are
    dropped)."""
    masked = list(text)
    for start, end in code_spans(text):
        masked[start:end] = "\x00" * (end - start)
    cells: list[str] = []
    start = 0
    for pipe in _PIPE.finditer("".join(masked)):
        cells.append(text[start : pipe.start()])
        start = pipe.end()
    cells.append(text[start:])
    if text.lstrip().startswith("|") and cells and not cells[0].strip():
        cells.pop(0)
    if cells and not cells[-1].strip():
        cells.pop()
    return [cell.strip().replace("\\|", "|") for cell in cells]


def code_spans(text: str) -> list[tuple[int, int]]:
    """Return the ``[start, end)`` offsets of the code spans in one table row, by kramdown's
    rule (``parser/kramdown/codespan.rb``): a run of N backticks opens a span that the next
    N backticks close (which may be the start of a longer run; its rest is a new run); a
    lone backtick between whitespace is text; a run with no closer is text.

    Linear: each opening run looks for the next run at least as long through a
    next-not-shorter chain, and a length once found unclosed is not looked for again.
    """
    runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(text)]
    chain = _next_not_shorter([length for _, length in runs])
    spans: list[tuple[int, int]] = []
    unclosed = len(text) + 1  # the shortest run length known to have no closer after here
    index, pending = 0, None
    while pending is not None or index < len(runs):
        if pending is not None:
            (pos, length), source = pending
            pending = None
        else:
            (pos, length), source = runs[index], index
            index += 1
        if length >= unclosed or _lone_backtick(text, pos, length):
            continue
        closer = source + 1
        while closer < len(runs) and runs[closer][1] < length:
            closer = chain[closer]
        if closer >= len(runs):
            unclosed = length
            continue
        close_pos, close_length = runs[closer]
        spans.append((pos, close_pos + length))
        index = closer + 1
        if close_length > length:
            pending = ((close_pos + length, close_length - length), closer)
    return spans


def _next_not_shorter(lengths: list[int]) -> list[int]:
    """Return, for each run, the index of the next run at least as long (``len`` if none)."""
    found = [len(lengths)] * len(lengths)
    stack: list[int] = []
    for i in range(len(lengths) - 1, -1, -1):
        while stack and lengths[stack[-1]] < lengths[i]:
            stack.pop()
        if stack:
            found[i] = stack[-1]
        stack.append(i)
    return found


def _lone_backtick(text: str, pos: int, length: int) -> bool:
    # kramdown: a single backtick after whitespace (or at the start) and before whitespace.
    before = pos == 0 or text[pos - 1] in _RUBY_SPACE
    return length == 1 and before and pos + 1 < len(text) and text[pos + 1] in _RUBY_SPACE


_RUBY_SPACE = frozenset(" \t\r\n\f\v")


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
