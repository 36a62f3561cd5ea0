"""kramdown's links for mistune 3: autolinks and ``[text] [ref]``.

- Autolinks (``lib/kramdown/parser/kramdown/autolink.rb``, ``AUTOLINK_START``): only
  ``<mailto:…>``, ``<http(s):…>``, ``<ftp(s):…>`` and ``<user@host>``; a ``mailto:`` link
  shows the address without ``mailto:``, an address gets ``mailto:`` in its ``href``. Any
  other ``<scheme:…>`` (``<rsync://…>``) stays text, as kramdown leaves it.
- An image's ``alt`` is the text between its brackets as written (``link.rb``:
  ``alt_text``, backslash escapes removed): code spans and emphasis keep their markers.
- Reference links (``link.rb``, ``LINK_INLINE_ID_RE = /\\s*?\\[([^\\]]+)?\\]/``) may have
  whitespace, a line break included, between ``[text]`` and ``[ref]``: ``[text] [ref]`` is
  ``[text][ref]`` when ``ref`` (or, for ``[text] []``, ``text``) is defined.

- An inline link's URL is kept as written (``link.rb``): not percent-encoded (``ü.html``,
  ``my file.html``), only escaped as an attribute. It may hold spaces: kramdown takes
  everything up to the ``)`` that balances the ``(`` (or up to whitespace before a quoted
  title), stripped, so ``[a](my file.html)`` is a link; such a URL is put in angle
  brackets before mistune parses the text (:func:`angle_spaced_urls`), and the URL of each
  inline link or image mistune makes is read again from the source (:func:`source_url`).
- Link definitions (``LINK_DEFINITION_START``) are kramdown's too: the URL as written,
  spaces allowed (``[id]: my file.html``), not percent-encoded, a later definition of an id
  replacing an earlier one (kramdown warns "Duplicate link ID ... overwriting").

URLs of every scheme are kept (``rsync:``, ``news:``, ``irc:``…): the renderer is made with
``allow_harmful_protocols=True`` (:mod:`deploybot.render.markdown.renderer`), as kramdown filters
none.
"""

from __future__ import annotations

import html
import re
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BlockState, InlineState
from mistune.inline_parser import InlineParser
from mistune.util import unikey

from deploybot.render.markdown.kramdown.attrs import escape_attribute
from deploybot.render.markdown.kramdown.tables import code_spans
from deploybot.render.markdown.mistune_hooks import RenderNext, Token, walk, wrap_render_token

_AUTOLINK = r"<(?:(?:mailto|https?|ftps?):[^>\n]+|[\w.-]+@[\w.-]+)>"
# [text] <whitespace> [ref]: the text has no brackets; the gap is what \s*? allows.
# (not the id of a ``[text][id]`` before it: ``[a][b] [c][]`` keeps its space)
_SPACED_REF = re.compile(r"(?<![\\\]])\[([^\[\]]*)\](\s+)\[([^\]]*)\]")


def kramdown_links(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown autolinks and spaced reference links (module docstring)."""
    inline = md.inline
    inline.register(
        "kramdown_autolink", _AUTOLINK, _parse_autolink, before="auto_link", start_chars="<"
    )
    for name in ("auto_link", "auto_email"):
        if name in inline.rules:
            inline.rules.remove(name)
    md.before_render_hooks.append(_join_spaced_refs)
    wrap_render_token(md, _image_alt)
    close = inline._methods["link_close"]

    def link_close(parser: InlineParser, m: Any, state: InlineState) -> int | None:
        count = len(state.tokens)
        end: int | None = close(m, state)
        if end is not None and end > m.end() and len(state.tokens) <= count and state.tokens:
            token = state.tokens[-1]
            url = source_url(state.src, m.end(), end)
            if token.get("type") in ("link", "image") and url is not None:
                token.setdefault("attrs", {})["url"] = url
        return end

    inline.register("link_close", inline.specification["link_close"], link_close)
    md.block.register("kramdown_link_def", _LINK_DEF, _parse_link_def, before="ref_link")
    inner = inline.render

    def render(state: InlineState) -> list[Any]:
        if "](" in state.src:
            state.src = angle_spaced_urls(state.src)
        tokens: list[Any] = inner(state)
        return tokens

    setattr(inline, "render", render)  # noqa: B010


_PAREN_STOP = re.compile(r"(\()|(\))|\s(?=['\"])")


_LINK_DEF = (
    r"^ {0,3}\[(?P<kd_id>[^\n\]^][^\n\]]*)\]:[ \t]*(?P<kd_rest>[^\n]*\S)[ \t]*"
    r"(?:\n(?:(?P<kd_next>[ \t]*[\"'][^\n]*)(?:\n|\Z))?|\Z)"
)
"""kramdown's ``LINK_DEFINITION_START`` (named groups: mistune joins the block rules), but
for an id starting with ``^`` (kramdown reads footnote definitions before it): the line's
rest, and a next line that may hold the title. kramdown's own pattern (a lazy URL, then an
optional quoted title) backtracks quadratically on a line of many `` "`` (96 kB: 55 s), so
the URL and title are split from the rest in one pass (:func:`split_definition`)."""
_TITLE_LINE = re.compile(r"[ \t]*([\"'])(.+)\1[ \t]*")


def split_definition(rest: str) -> tuple[str, str | None, bool] | None:
    """Return ``(url, title, angle)`` of a link definition's text after ``[id]:`` (``rest``,
    stripped), as kramdown's lazy pattern reads it: ``<url>`` or a URL, then optionally
    whitespace and a title in matching quotes ending the line; ``None`` when kramdown's
    ``parse_link_definition`` refuses it (a URL with whitespace before a quote). Linear in
    ``rest``."""
    if rest.startswith("<"):
        close = rest.find(">")
        after = rest[close + 1 :] if close >= 0 else ""
        if close >= 0 and (not after.strip() or re.fullmatch(r"[ \t]+([\"']).+\1", after)):
            return rest[1:close], after.strip()[1:-1] or None, True
    title: str | None = None
    url = rest
    quote = rest[-1]
    if quote in "\"'":
        gap = re.compile(rf"[ \t]+{quote}")
        for m in gap.finditer(rest, 1):
            inner = rest[m.end() : -1]
            if inner and rest[: m.start()].strip():
                url, title = rest[: m.start()], inner
                break
    if re.search(r"[ \t]+[\"']", url):
        return None
    return url, title, False


def _parse_link_def(block: BlockParser, m: Any, state: BlockState) -> int | None:
    """Store a kramdown link definition in mistune's ``ref_links``; return where it ends
    (``None``: not one, as kramdown's ``parse_link_definition`` refuses a URL with a space
    before a quote)."""
    split = split_definition(m.group("kd_rest"))
    if split is None:
        return None
    end_pos = state.append_paragraph()
    if end_pos:
        return end_pos
    label = m.group("kd_id")
    key = unikey(label)
    if not key:
        return None
    url, title, _angle = split
    end: int = m.end()
    following = m.group("kd_next")
    if following is not None:
        line = _TITLE_LINE.fullmatch(following) if title is None else None
        if line is not None:
            title = line.group(2)
        else:
            end = m.start("kd_next")  # the next line is not this definition's
    data = {"url": html.unescape(url), "label": label}
    if title:
        data["title"] = title
    state.env.setdefault("ref_links", {})[key] = data
    return end


URL_SCAN = 500
"""How far past its ``(`` an inline link's URL is looked for (kramdown: to the end of the
text), so that many unclosed ``](`` in one paragraph cost linear time."""
URL_NESTING = 8
"""The deepest ``(`` nesting looked through in such a URL (kramdown: any); with
:data:`URL_SCAN`, each scan passes at most this many other ``](``."""


def _paren_url(src: str, start: int) -> tuple[int, int] | None:
    """kramdown's scan of an inline link's URL from the ``(`` at ``start``: the ``[start,
    end)`` of what precedes the balancing ``)`` (or whitespace before a quoted title), or
    ``None`` when the parentheses do not balance within :data:`URL_SCAN` characters and
    :data:`URL_NESTING` levels."""
    level, pos, stop = 0, start, start + URL_SCAN
    while True:
        m = _PAREN_STOP.search(src, pos, stop)
        if m is None:
            return None
        pos = m.end()
        if m.group(2):
            level -= 1
            if level == 0:
                return start + 1, m.start()
        elif m.group(1):
            level += 1
            if level > URL_NESTING:
                return None
        else:
            return (start + 1, m.start()) if level == 1 else None


def source_url(src: str, start: int, end: int) -> str | None:
    """Return the URL of the inline link whose ``(...)`` is ``src[start:end]``, as kramdown
    keeps it (backslashes kept; entities resolved: the renderer escapes them again), or
    ``None`` when it cannot tell."""
    if not src.startswith("(", start):
        return None
    angle = re.compile(r"\(\s*<([^<>\n]*)>").match(src, start, end)
    if angle is not None:
        raw = angle.group(1)
    else:
        found = _paren_url(src[:end], start)
        if found is None:
            return None
        raw = src[found[0] : found[1]].strip()
    return html.unescape(raw)


def angle_spaced_urls(text: str) -> str:
    """Return ``text`` with each inline link URL that holds whitespace (kramdown's rule:
    :func:`_paren_url`) put in angle brackets, which mistune reads; outside code spans.

    Linear: the next ``)`` and the next whitespace are found once per stretch of text, and
    only a ``](`` with whitespace before the next ``)`` is scanned (at most
    :data:`URL_SCAN` characters)."""
    spans = code_spans(text)
    out: list[str] = []
    last, span, pos = 0, 0, 0
    close, space = -2, -2
    while (at := text.find("](", pos)) >= 0:
        pos = at + 2
        if close != -1 and close < pos:
            close = text.find(")", pos)
        if close == -1:
            break  # no ``)`` after here: no more inline links
        if space != -1 and space < pos:
            found_space = _SPACE.search(text, pos)
            space = -1 if found_space is None else found_space.start()
        if space == -1 or space > close:
            continue
        while span < len(spans) and spans[span][1] <= at:
            span += 1
        if span < len(spans) and spans[span][0] <= at:
            continue
        found = _paren_url(text, at + 1)
        if found is None:
            continue
        url = text[found[0] : found[1]].strip()
        if not _SPACE.search(url) or url.startswith("<") or _ANGLE_OR_BREAK.search(url):
            continue
        lead = found[0] + text[found[0] : found[1]].index(url)
        out.append(text[last:lead] + "<" + url + ">")
        last = lead + len(url)
        pos = last
    out.append(text[last:])
    return "".join(out)


_SPACE = re.compile(r"\s")
_ANGLE_OR_BREAK = re.compile(r"[<>\n]")


def _parse_autolink(inline: InlineParser, m: Any, state: InlineState) -> int:
    target: str = m.group(0)[1:-1]
    end: int = m.end()
    if state.in_link:
        inline.process_text(m.group(0), state)
        return end
    href = target if ":" in target.split("@", 1)[0] else "mailto:" + target
    text = target[len("mailto:") :] if target.startswith("mailto:") else target
    state.append_token(
        {"type": "link", "children": [{"type": "text", "raw": text}], "attrs": {"url": href}}
    )
    return end


def _join_spaced_refs(md: mistune.Markdown, state: BlockState) -> None:
    refs: dict[str, Any] = state.env.get("ref_links") or {}
    if not refs:
        return
    for token in walk(state.tokens):
        text = token.get("text")
        if isinstance(text, str) and "]" in text:
            token["text"] = join_spaced_refs(text, refs)


def join_spaced_refs(text: str, refs: dict[str, Any]) -> str:
    """Return ``text`` with the whitespace of each ``[text] [ref]`` whose reference is
    defined in ``refs`` (mistune's ``ref_links``, keyed by ``unikey``) removed, outside code
    spans. Linear: one regex pass, one pass over the code spans."""
    spans = code_spans(text)
    out: list[str] = []
    last, span = 0, 0
    for m in _SPACED_REF.finditer(text):
        while span < len(spans) and spans[span][1] <= m.start():
            span += 1
        if span < len(spans) and spans[span][0] < m.end():
            continue  # inside (or across) a code span
        label = m.group(3) or m.group(1)
        if unikey(label) not in refs:
            continue
        out.append(text[last : m.start(2)])
        last = m.end(2)
    out.append(text[last:])
    return "".join(out)


_MARKERS = {"emphasis": "*", "strong": "**", "strikethrough": "~~"}
_ALT = '<img src="'


def _image_alt(token: Token, state: BlockState, render_next: RenderNext) -> str:
    html = render_next(token, state)
    if token["type"] != "image" or not html.startswith(_ALT):
        return html
    alt = escape_attribute(raw_text(token.get("children", [])))
    start = html.find(' alt="')
    end = html.find('"', start + 6) if start >= 0 else -1
    return html if end < 0 else html[: start + 6] + alt + html[end:]


def raw_text(tokens: list[Token]) -> str:
    """Return the Markdown a list of inline tokens was read from, as far as the tokens tell:
    text, code spans in one backtick, emphasis in ``*``/``**`` (mistune keeps neither the
    delimiter nor the backtick count, so ``_x_`` comes back as ``*x*``)."""
    parts: list[str] = []
    for token in tokens:
        kind, children = token["type"], token.get("children")
        if kind == "codespan":
            parts.append("`" + str(token.get("raw", "")) + "`")
        elif kind in ("softbreak", "linebreak"):
            parts.append("\n")
        elif isinstance(children, list):
            marker = _MARKERS.get(kind, "")
            parts.append(marker + raw_text(children) + marker)
        else:
            parts.append(str(token.get("raw", "")))
    return "".join(parts)
