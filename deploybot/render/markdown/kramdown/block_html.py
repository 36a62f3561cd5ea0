"""kramdown's block-level HTML for mistune 3: ``markdown="1"``, raw HTML re-written, ``^``.

kramdown reads HTML itself (``lib/kramdown/parser/kramdown/html.rb``, ``parser/html.rb``)
and writes it back out (``converter/html.rb``: ``convert_html_element``), unlike
CommonMark's seven kinds of HTML block that mistune follows:

- a line starting (up to three spaces in) with a start tag of an element that is not a span
  element (``a``, ``em``, ``img``, ``span``…) or with a comment is block HTML; the element
  runs to its matching close tag, nested elements counted, however many lines or blank
  lines that takes (to the end of the document when it is never closed);
- its content is raw by default: tags and text are re-written (``<br>`` -> ``<br />``,
  ``a=b`` -> ``a="b"``, names lower-cased, ``& < >`` in text escaped) but Markdown is not
  read. ``markdown="1"`` reads it with the element's content model (block for ``div``,
  ``section``, ``details``…; span for ``p``, ``h1``…), ``markdown="block"`` /
  ``"span"`` force one, ``markdown="0"`` keeps it raw; the attribute itself is dropped.
  Block content ends at the close tag at the start of a line. An element inside raw HTML
  may ask for Markdown too (kramdown's ``parse_raw_html`` reads the ``markdown`` attribute
  of every element it meets): its content is read as above, the HTML around it stays raw;
- a start tag of another element, or a close tag, at a line start ends a paragraph; a span
  element or a comment does not;
- ``^`` alone on a line ends the block before it (kramdown's end-of-block marker), so two
  lists, quotes or code blocks in a row stay apart.

Parsing stays linear: every search for a closer goes through a
:class:`~deploybot.render.markdown.kramdown.html_scan.NextFinder`, and block content is parsed in
place (a child state over the same text), never copied.
"""

from __future__ import annotations

import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BaseRenderer, BlockState

from deploybot.render.html_elements import KRAMDOWN_WITHOUT_BODY
from deploybot.render.markdown.budget import count_elements
from deploybot.render.markdown.kramdown.attrs import IAL_LINE_PATTERN
from deploybot.render.markdown.kramdown.extensions import option
from deploybot.render.markdown.kramdown.html_scan import (
    MARKDOWN_ATTR,
    SPAN_ELEMENTS,
    StartTag,
    attributes_html,
    close_tag,
    content_model,
    escape_text,
    finder,
    start_tag,
)

_HTML_START = r"^ {0,3}<(?:[^\W\d]|!--|/[^\W\d])"
_EOB = r"^\^[ \t]*(?:\n|$)"
_HTML_AT = re.compile(r" {0,3}<(?:[^\W\d]|!--|/[^\W\d])")
_COMMENT_END = re.compile("-->")
_RAW_START = re.compile(r"<(?:[^\W\d]|/|!--|\?)")
_PI_END = re.compile(r"\?>")
_TRAILING = re.compile(r"[ \t]*\n")
_STACK = "_kramdown_html_stack"
# mistune's indent_code starts at any line of 4+ spaces; a blank one must not start it.
_INDENT_PREFIX = r"^(?: {4}| *\t)[^\n]+"
_INDENT_NOT_BLANK = r"^(?: {4}| *\t)(?=[^\n]*\S)[^\n]+"
_STOP = "kramdown_stop"
# Elements whose start tag at a line start does not end a paragraph (LAZY_END_HTML_*).
_NO_INTERRUPT = SPAN_ELEMENTS | {"script"}
_CLOSERS: dict[str, re.Pattern[str]] = {}


def kramdown_html(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown's block HTML and end-of-block marker (module docstring).

    Replaces mistune's ``raw_html`` rule, and makes lists and block quotes end where
    kramdown ends them: before an HTML line, an IAL line or ``^``.
    """
    block = md.block
    block.register("kramdown_html", _HTML_START, _parse_html, before="raw_html")
    block.register("kramdown_eob", _EOB, _parse_eob, before="blank_line")
    for rules in (block.rules, block.block_quote_rules, block.list_rules):
        for name in ("kramdown_html", "kramdown_eob"):
            if name not in rules:
                rules.insert(0, name)
        if "raw_html" in rules:
            rules.remove("raw_html")
    # Lists and quotes end at what their "block_html" pattern finds (mistune's list_parser
    # and extract_block_quote): kramdown's LAZY_END lines.
    block.specification["block_html"] = f"(?:{_HTML_START}|{_EOB}|{IAL_LINE_PATTERN})"
    block._methods["block_html"] = lambda m, state: _parse_break(block, m, state)
    inner = block._parse_indent_code_fast

    def indent_code(state: BlockState) -> int | None:
        # A line of only spaces is blank in kramdown, never an indented code block.
        if not state.get_line(state.cursor).strip():
            return None
        return inner(state)

    setattr(block, "_parse_indent_code_fast", indent_code)  # noqa: B010
    spec = block.specification["indent_code"]
    if spec.startswith(_INDENT_PREFIX):
        block.specification["indent_code"] = _INDENT_NOT_BLANK + spec[len(_INDENT_PREFIX) :]
    if md.renderer is not None and md.renderer.NAME == "html":
        md.renderer.register("kramdown_html", _render_raw)
        md.renderer.register("kramdown_html_block", _render_block)
        md.renderer.register("kramdown_html_span", _render_span)
        md.renderer.register(_MIXED, _render_raw)
        md.renderer.register("kramdown_eob", _render_nothing)
        md.renderer.register(_STOP, _render_nothing)


def _parse_break(block: BlockParser, m: re.Match[str], state: BlockState) -> int | None:
    line = m.group(0).lstrip(" ")
    if line.startswith("<"):
        return _parse_html(block, m, state)
    if line.startswith("^"):
        return _parse_eob(block, m, state)
    rule = block._methods.get("kramdown_block_ial")
    if rule is None:
        return None
    start = m.start()
    before = state.src.rfind("\n", 0, max(0, start - 1))
    if start > 0 and not state.src[before + 1 : start].strip():
        # The list took the blank lines before this IAL: keep them, so that it applies to
        # the next block rather than to the list (kramdown's blank element).
        state.append_token({"type": "blank_line"})
    return rule(m, state)


def _parse_eob(block: BlockParser, m: re.Match[str], state: BlockState) -> int:
    state.append_token({"type": "kramdown_eob"})
    end: int = m.end()
    return end + 1 if state.src.startswith("\n", end) else end


def _parse_html(block: BlockParser, m: re.Match[str], state: BlockState) -> int | None:
    end = _parse_html_at(block, m, state)
    # kramdown reads the rest of a line after block HTML as if it started a line: more
    # block HTML (``<center>x</center> <p></p>``) is block HTML too.
    while end is not None and 0 < end < state.cursor_max and state.src[end - 1] != "\n":
        more = _HTML_AT.match(state.src, end)
        if more is None or state.cursor_max <= end:
            break
        after = _parse_html_at(block, more, state)
        if after is None:
            break
        end = after
    return end


def _parse_html_at(block: BlockParser, m: re.Match[str], state: BlockState) -> int | None:
    src, env = state.src, state.env
    lt = src.index("<", m.start())
    if src.startswith("<!--", lt):
        close = finder(env, src, _COMMENT_END).search(lt + 4)
        if close is None or _in_paragraph(state):
            return None
        state.append_token({"type": "kramdown_html", "raw": src[lt : close.end()] + "\n"})
        return _skip_trailing(src, close.end())
    if src.startswith("</", lt):
        return _parse_close(m, state, lt)
    tag = start_tag(src, lt, env)
    # Not block HTML: text, which joins the paragraph before it (kramdown's parse_paragraph
    # appends to a paragraph that is the last block, even after LAZY_END stopped it).
    if tag is None or tag.name in SPAN_ELEMENTS:
        return None
    if _in_paragraph(state) and tag.name in _NO_INTERRUPT:
        return None
    return _element(block, state, tag)


def _in_paragraph(state: BlockState) -> bool:
    last = state.last_token()
    return bool(last and last["type"] == "paragraph")


def _parse_close(m: re.Match[str], state: BlockState, lt: int) -> int | None:
    close = close_tag(state.src, lt)
    if close is None:
        return None
    name = close.group(1).lower()
    if name in SPAN_ELEMENTS:
        return None
    stack: list[tuple[str, BlockState, list[int]]] = state.env.get(_STACK, [])
    if stack and stack[-1][0] == name and stack[-1][1] is state:
        # The close tag of the element whose content this state parses: stop here.
        stack[-1][2].append(close.end())
        state.cursor_max = m.start()
        state.append_token({"type": _STOP})
        return m.start()
    return None


def _skip_trailing(src: str, pos: int) -> int:
    trailing = _TRAILING.match(src, pos)
    return trailing.end() if trailing else pos


def _model(tag: StartTag, state: BlockState, block: BlockParser) -> str:
    wanted = MARKDOWN_ATTR.get(tag.attrs.pop("markdown", ""))
    # {::options parse_block_html="true" /} reads HTML with its content model by default.
    model = content_model(tag.name) if option(state.env, "parse_block_html") == "true" else "raw"
    if wanted is not None:
        model = content_model(tag.name) if wanted == "default" else wanted
    if model != "raw" and state.depth() >= block.max_nested_level - 1:
        model = "raw"  # as deep as mistune nests: the rest stays raw HTML
    return model


def _element(block: BlockParser, state: BlockState, tag: StartTag) -> int:
    """Parse the element ``tag`` opens; append its token; return where it ends."""
    src = state.src
    attrs = attributes_html(tag.attrs)
    if tag.name in ("script", "style"):
        body, end = _until_close(state, tag.name, tag.end)
        html = f"<{tag.name}{attrs}>{body}</{tag.name}>\n"
        state.append_token({"type": "kramdown_html", "raw": html})
        return _skip_trailing(src, end)
    model = _model(tag, state, block)
    attrs = attributes_html(tag.attrs)
    if tag.closed or tag.name in KRAMDOWN_WITHOUT_BODY:
        empty = model == "raw" or tag.name in KRAMDOWN_WITHOUT_BODY
        html = f"<{tag.name}{attrs} />" if empty else f"<{tag.name}{attrs}></{tag.name}>"
        state.append_token({"type": "kramdown_html", "raw": html + "\n"})
        return tag.end
    token: dict[str, Any]
    if model == "block":
        children, end = _block_content(block, state, tag.name, _skip_trailing(src, tag.end))
        token = {"type": "kramdown_html_block", "children": children}
        token["attrs"] = {"tag": tag.name, "attrs": attrs}
    elif model == "span":
        body, end = _until_close(state, tag.name, tag.end)
        stripped = body.strip(" \r\n\t\f")
        lead = body[: len(body) - len(body.lstrip(" \r\n\t\f"))]
        trail = body[len(lead) + len(stripped) :]
        token = {"type": "kramdown_html_span", "text": stripped}
        token["attrs"] = {"tag": tag.name, "attrs": attrs, "lead": lead, "trail": trail}
    else:
        pieces, end = raw_content(state, tag, attrs, block)
        pieces[-1]["raw"] += "\n"
        token = pieces[0] if len(pieces) == 1 else {"type": _MIXED, "children": pieces}
    state.append_token(token)
    return _skip_trailing(src, end)


def _closer(name: str) -> re.Pattern[str]:
    pattern = _CLOSERS.get(name)
    if pattern is None:
        pattern = _CLOSERS[name] = re.compile(r"</" + re.escape(name) + r"\s*>", re.I)
    return pattern


def _until_close(state: BlockState, name: str, pos: int) -> tuple[str, int]:
    """Return the text from ``pos`` to the close tag of ``name`` and the position after that
    tag; without one, the rest of the text (kramdown auto-closes at the end)."""
    found = finder(state.env, state.src, _closer(name)).search(pos)
    if found is None:
        return state.src[pos:], len(state.src)
    return state.src[pos : found.start()], found.end()


def _block_content(
    block: BlockParser, state: BlockState, name: str, pos: int
) -> tuple[list[dict[str, Any]], int]:
    """Parse blocks from ``pos`` up to the close tag of ``name`` at a line start; return the
    tokens and the position after the close tag (the end of the text when there is none)."""
    child = type(state)(state)  # the document's own kind of state (it counts elements)
    child.src, child.cursor, child.cursor_max = state.src, pos, state.cursor_max
    ends: list[int] = []
    stack: list[tuple[str, BlockState, list[int]]] = state.env.setdefault(_STACK, [])
    stack.append((name, child, ends))
    try:
        block.parse(child, block.rules)
    finally:
        stack.pop()
    tokens = [t for t in child.tokens if t["type"] != _STOP]
    return tokens, ends[0] if ends else state.cursor_max


_MIXED = "kramdown_html_mixed"


def raw_content(
    state: BlockState, tag: StartTag, attrs: str, block: BlockParser
) -> tuple[list[dict[str, Any]], int]:
    """Return the raw HTML of the element ``tag`` opens (kramdown's ``parse_raw_html``,
    re-written by ``convert_html_element``) as tokens, and where it ends: one
    ``kramdown_html`` token, or raw pieces around the content of each element inside that
    asks for Markdown (``markdown="1"``, read with ``block``). Nested elements are counted
    with a stack (no recursion but for those); a close tag that does not close the innermost
    open element is text."""
    src, env = state.src, state.env
    out: list[str] = [f"<{tag.name}{attrs}>"]
    pieces: list[dict[str, Any]] = []
    stack = [tag.name]
    pos = tag.end
    starts = finder(env, src, _RAW_START)
    while stack:
        found = starts.search(pos)
        if found is None:
            out.append(escape_text(src[pos:]))
            pos = len(src)
            out.extend(f"</{name}>" for name in reversed(stack))
            break
        lt = found.start()
        out.append(escape_text(src[pos:lt]))
        nested = _markdown_inside(block, state, lt)
        if nested is None:
            pos = _raw_markup(state, lt, out, stack)
            continue
        token, pos = nested
        pieces += [{"type": "kramdown_html", "raw": "".join(out)}, token]
        out = []
    pieces.append({"type": "kramdown_html", "raw": "".join(out)})
    return pieces, pos


def _markdown_inside(
    block: BlockParser, state: BlockState, lt: int
) -> tuple[dict[str, Any], int] | None:
    """The token of an element inside raw HTML at ``lt`` whose ``markdown`` attribute asks
    for its content to be read (block or span), and where it ends; ``None`` otherwise."""
    tag = start_tag(state.src, lt, state.env)
    if tag is None or tag.closed or tag.name in KRAMDOWN_WITHOUT_BODY:
        return None
    if tag.name in ("script", "style") or MARKDOWN_ATTR.get(tag.attrs.get("markdown", "")) in (
        None,
        "raw",
    ):
        return None
    model = _model(tag, state, block)
    if model == "raw":
        return None
    count_elements(state.env)
    attrs = attributes_html(tag.attrs)
    if model == "block":
        children, end = _block_content(block, state, tag.name, _skip_trailing(state.src, tag.end))
        # the raw HTML after it carries its own line break
        block_attrs = {"tag": tag.name, "attrs": attrs, "end": ""}
        return {"type": "kramdown_html_block", "children": children, "attrs": block_attrs}, end
    body, end = _until_close(state, tag.name, tag.end)
    stripped = body.strip(" \r\n\t\f")
    lead = body[: len(body) - len(body.lstrip(" \r\n\t\f"))]
    trail = body[len(lead) + len(stripped) :]
    span_attrs = {"tag": tag.name, "attrs": attrs, "lead": lead, "trail": trail, "end": ""}
    return {"type": "kramdown_html_span", "text": stripped, "attrs": span_attrs}, end


def _raw_markup(state: BlockState, lt: int, out: list[str], stack: list[str]) -> int:
    src, env = state.src, state.env
    for opener, closer in (("<!--", _COMMENT_END), ("<?", _PI_END)):
        if src.startswith(opener, lt):
            end = finder(env, src, closer).search(lt + len(opener))
            if end is not None:
                out.append(src[lt : end.end()])
                return end.end()
    close = close_tag(src, lt)
    if close is not None:
        if close.group(1).lower() == stack[-1] or close.group(1) == stack[-1]:
            out.append(f"</{stack.pop()}>")
        else:
            out.append(escape_text(close.group(0)))
        return close.end()
    tag = start_tag(src, lt, env)
    if tag is None:
        out.append("&lt;")
        return lt + 1
    tag.attrs.pop("markdown", None)
    attrs = attributes_html(tag.attrs)
    if tag.name in ("script", "style"):
        body, after = _until_close(state, tag.name, tag.end)
        out.append(f"<{tag.name}{attrs}>{body}</{tag.name}>")
        return after
    if tag.closed or tag.name in KRAMDOWN_WITHOUT_BODY:
        out.append(f"<{tag.name}{attrs} />")
        return tag.end
    count_elements(env)  # an element in kramdown's tree, as a token would be
    out.append(f"<{tag.name}{attrs}>")
    stack.append(tag.name)
    return tag.end


def _render_raw(renderer: BaseRenderer, text: str) -> str:
    return text


def _render_block(renderer: BaseRenderer, text: str, tag: str, attrs: str, end: str = "\n") -> str:
    if not text:
        return f"<{tag}{attrs}></{tag}>{end}"
    return f"<{tag}{attrs}>\n{text.rstrip(chr(10))}\n</{tag}>{end}"


def _render_span(
    renderer: BaseRenderer,
    text: str,
    tag: str,
    attrs: str,
    lead: str,
    trail: str,
    end: str = "\n",
) -> str:
    return f"<{tag}{attrs}>{lead}{text}{trail}</{tag}>{end}"


def _render_nothing(renderer: BaseRenderer, *args: Any, **kwargs: Any) -> str:
    return ""
