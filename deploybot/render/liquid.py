"""A small, safe subset of Liquid for post and page content (content is data, never code).

Jekyll runs Liquid over a document before converting it (Jekyll's docs, "Liquid", "Tags").
This module has its own scanner; nothing in a document can reach a Python object. It handles
what Jekyll blogs use and reports the rest as warnings with file and line:

- ``{% highlight LANG [linenos] %}…{% endhighlight %}`` -> Jekyll's ``<figure class="highlight">``
  (``tags/highlight.rb``; the language is the first word, lower-cased; Liquid inside the body
  is rendered first, as Jekyll does);
- ``{% raw %}…{% endraw %}`` -> its content, untouched;
  ``{% comment %}…{% endcomment %}`` -> nothing;
- ``{{ EXPR }}`` -> the value of a literal or ``site.*``/``page.*`` path with filters
  (:mod:`.liquid_filters`); an undefined variable renders empty, with a warning;
- ``{% post_url NAME %}``, ``{% link PATH %}`` -> the ``baseurl``-prefixed URL (Jekyll 4);
- ``{% toc %}`` -> the jekyll-toc plugin's list of the page's HTML headings when the page
  sets ``toc`` (:func:`~deploybot.render.jekyll_toc.toc_tag`), else nothing;
- ``{% include NAME %}`` -> ``_includes/NAME`` when it is plain HTML (no Liquid in it);
  otherwise nothing, with a warning (``JB/setup``: Jekyll-Bootstrap's setup include);
- any other tag -> removed, with a warning (a block tag's body stays).

Whitespace control (``{%-``/``-%}``) trims as Liquid does. Generated HTML is not put into the
text directly (Markdown would mangle it): each block becomes a placeholder word, and
:func:`restore_fragments` swaps the HTML in after conversion. Scanning is linear in the input.
With ``max_output``, the text and the fragments together may not pass that many characters:
the render stops with :class:`~deploybot.render.limits.LimitError` as soon as they would.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deploybot.errors import SourceError
from deploybot.render.highlight import figure_block
from deploybot.render.jekyll_toc import toc_tag
from deploybot.render.limits import LimitError, page_too_large
from deploybot.render.liquid_filters import (
    ExpressionError,
    TextTooLong,
    evaluate,
    parse_expression,
    relative_url,
    to_text,
)
from deploybot.render.liquid_links import find_url, post_url
from deploybot.render.model import RenderWarning

IncludeReader = Callable[[str], bytes | None]
"""``read(name) -> bytes`` of ``_includes/NAME``, or ``None`` when there is no such file."""

MAX_WARNINGS = 100
"""Warnings kept per document; one more line says how many were left out."""
_INCLUDE_NAME = re.compile(r"^[A-Za-z0-9_][\w.+-]*(?:/[A-Za-z0-9_][\w.+-]*)*$")
_OPENERS = ("{%", "{{")
_CLOSERS = {"{%": "%}", "{{": "}}"}


@dataclass(frozen=True)
class LiquidResult:
    """Content after Liquid: ``text`` with placeholder words, ``fragments`` mapping each
    placeholder to its HTML, and the ``warnings`` (file lines) for what was dropped."""

    text: str
    fragments: Mapping[str, str]
    warnings: tuple[RenderWarning, ...]


@dataclass
class _State:
    path: str
    source: str
    first_line: int
    variables: Mapping[str, Any]
    include: IncludeReader | None
    nonce: str
    limit: int | None = None
    out: list[str] = field(default_factory=list)
    size: int = 0  # characters in out and fragments
    fragments: dict[str, str] = field(default_factory=dict)
    warnings: list[RenderWarning] = field(default_factory=list)
    suppressed: int = 0
    _newlines: list[int] | None = None

    def room(self) -> int | None:
        """Return how many more characters may be emitted (``None``: no limit)."""
        return None if self.limit is None else self.limit - self.size

    def grow(self, count: int, offset: int) -> None:
        self.size += count
        if self.limit is not None and self.size > self.limit:
            raise LimitError(page_too_large(self.limit), self.line_at(offset))

    def emit(self, text: str, offset: int) -> None:
        """Append ``text`` (made at source ``offset``) to the output, within the limit."""
        self.grow(len(text), offset)
        self.out.append(text)

    def line_at(self, offset: int) -> int:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.source)]
        return self.first_line + bisect.bisect_left(self._newlines, offset)

    def warn(self, offset: int, message: str) -> None:
        if len(self.warnings) >= MAX_WARNINGS:
            self.suppressed += 1
            return
        self.warnings.append(RenderWarning(self.path, self.line_at(offset), message))

    def fragment(self, html: str, offset: int) -> str:
        self.grow(len(html), offset)
        key = f"DEPLOYBOTLIQUID{self.nonce}N{len(self.fragments)}X"
        self.fragments[key] = html
        return key

    def trim_left(self) -> None:
        if self.out:
            kept = self.out[-1].rstrip()
            self.size -= len(self.out[-1]) - len(kept)
            self.out[-1] = kept


@dataclass(frozen=True)
class _Markup:
    """One ``{% … %}`` or ``{{ … }}``: offsets, the inner text and the trim flags."""

    start: int
    end: int
    tag: bool
    inner: str
    trim_left: bool
    trim_right: bool


class _Scanner:
    """Finds markup left to right in linear time (each opener kind is searched once per
    position, and a kind whose closer never appears is not searched again)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.next_at: dict[str, int] = {o: -2 for o in _OPENERS}

    def find(self, pos: int) -> _Markup | None:
        while True:
            for opener in _OPENERS:
                at = self.next_at[opener]
                if at != -1 and at < pos:
                    self.next_at[opener] = self.text.find(opener, pos)
            found = [self.next_at[o] for o in _OPENERS if self.next_at[o] != -1]
            if not found:
                return None
            start = min(found)
            opener = self.text[start : start + 2]
            close = self.text.find(_CLOSERS[opener], start + 2)
            if close == -1:
                self.next_at[opener] = -1  # no closer at all after here: plain text
                continue
            inner = self.text[start + 2 : close]
            left, right = inner.startswith("-"), inner.endswith("-")
            inner = inner[1 if left else 0 : len(inner) - 1 if right else len(inner)].strip()
            return _Markup(start, close + 2, opener == "{%", inner, left, right)


def render_liquid(
    text: str,
    *,
    path: str,
    first_line: int = 1,
    variables: Mapping[str, Any] | None = None,
    include: IncludeReader | None = None,
    max_output: int | None = None,
) -> LiquidResult:
    """Apply the Liquid subset to ``text`` (the body of ``path``, starting at file line
    ``first_line``). ``variables`` maps ``site`` and ``page`` to mappings (``site.posts``,
    ``site.pages``, ``site.static_files`` serve ``post_url`` and ``link``); ``include`` reads
    ``_includes/`` files (``None``: every include warns).

    Raises ``SourceError`` (path, line) for a block tag that is never closed, and
    :class:`~deploybot.render.limits.LimitError` (with the line) when the text and the
    fragments pass ``max_output`` characters.
    """
    nonce = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    state = _State(path, text, first_line, variables or {}, include, nonce, max_output)
    _render_into(state)
    if state.suppressed:
        last = RenderWarning(path, None, f"{state.suppressed} more Liquid warnings not shown")
        state.warnings.append(last)
    return LiquidResult("".join(state.out), dict(state.fragments), tuple(state.warnings))


def _render_into(state: _State) -> None:
    text, scanner, pos = state.source, _Scanner(state.source), 0
    while (m := scanner.find(pos)) is not None:
        state.emit(text[pos : m.start], pos)
        if m.trim_left:
            state.trim_left()
        pos = _tag(state, m) if m.tag else _output(state, m)
        if m.trim_right:
            while pos < len(text) and text[pos].isspace():
                pos += 1
    state.emit(text[pos:], pos)


def _output(state: _State, m: _Markup) -> int:
    room = state.room()
    try:
        value = evaluate(
            parse_expression(m.inner),
            state.variables,
            lambda msg: state.warn(m.start, msg),
            max_text=room,
        )
        state.emit(to_text(value, room), m.start)
    except TextTooLong:
        assert state.limit is not None
        raise LimitError(page_too_large(state.limit), state.line_at(m.start)) from None
    except ExpressionError as exc:
        state.warn(m.start, f"Liquid output {{{{ {_short(m.inner)} }}}} rendered empty: {exc}")
    return m.end


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _block_end(state: _State, name: str, m: _Markup) -> re.Match[str]:
    end_re = re.compile(r"\{%-?\s*end" + re.escape(name) + r"\s*-?%\}")
    end = end_re.search(state.source, m.end)
    if end is None:
        raise SourceError(f"{{% {name} %}} is never closed", state.path, state.line_at(m.start))
    return end


def _tag(state: _State, m: _Markup) -> int:
    name, _, args = m.inner.partition(" ")
    name, args = name.strip(), args.strip()
    if name in ("raw", "comment", "highlight"):
        end = _block_end(state, name, m)
        body = state.source[m.end : end.start()]
        if name == "raw":
            state.emit(body, m.start)
        elif name == "highlight":
            state.emit(_highlight(state, args, body, m), m.start)
        return end.end()
    handler = _SIMPLE_TAGS.get(name)
    if handler is not None:
        state.emit(handler(state, args, m), m.start)
    else:
        state.warn(m.start, f"unsupported Liquid tag {{% {_short(m.inner)} %}} removed")
    return m.end


def _highlight(state: _State, args: str, body: str, m: _Markup) -> str:
    words = args.split()
    if not words:
        raise SourceError("{% highlight %} needs a language", state.path, state.line_at(m.start))
    inner = render_liquid(
        body,
        path=state.path,
        first_line=state.line_at(m.end),
        variables=state.variables,
        include=state.include,
        max_output=state.room(),
    )
    state.warnings.extend(inner.warnings)
    linenos = any(w == "linenos" or w.startswith("linenos=") for w in words[1:])
    html = figure_block(inner.text, words[0].lower(), linenos=linenos)
    return state.fragment(html, m.start)


def _include(state: _State, args: str, m: _Markup) -> str:
    name = args.split(None, 1)[0] if args else ""
    if not _INCLUDE_NAME.match(name):
        state.warn(m.start, f"{{% include {_short(args)} %}}: not a file name in _includes/")
        return ""
    data = state.include(name) if state.include is not None else None
    if data is None:
        if name == "JB/setup":
            state.warn(m.start, "{% include JB/setup %} (Jekyll-Bootstrap setup) renders nothing")
        else:
            state.warn(m.start, f"{{% include {name} %}}: no file _includes/{name}")
        return ""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        state.warn(m.start, f"{{% include {name} %}}: _includes/{name} is not UTF-8")
        return ""
    if "{{" in text or "{%" in text:
        state.warn(m.start, f"{{% include {name} %}}: _includes/{name} uses Liquid; not rendered")
        return ""
    return text


def _post_url(state: _State, args: str, m: _Markup) -> str:
    url = post_url(state.variables.get("site", {}), args.strip())
    if url is None:
        state.warn(m.start, f"{{% post_url {_short(args)} %}}: no such post")
        return ""
    return relative_url(url, [], state.variables.get("site", {}))


def _link(state: _State, args: str, m: _Markup) -> str:
    url = find_url(state.variables.get("site", {}), args.strip())
    if url is None:
        state.warn(m.start, f"{{% link {_short(args)} %}}: no such file in the site")
        return ""
    return relative_url(url, [], state.variables.get("site", {}))


def _toc(state: _State, args: str, m: _Markup) -> str:
    # jekyll-toc's TocTag: the headings of page.content, which during the page's own Liquid
    # pass is its source text (deploybot.render.jekyll_toc.toc_tag).
    page: Mapping[str, Any] = state.variables.get("page", {})
    site: Mapping[str, Any] = state.variables.get("site", {})
    if page.get("toc") in (None, False):
        return ""
    html = toc_tag({"toc": True, "content": state.source}, site.get("toc"))
    return state.fragment(html, m.start)


_SIMPLE_TAGS: Mapping[str, Callable[[_State, str, _Markup], str]] = {
    "include": _include,
    "post_url": _post_url,
    "link": _link,
    "toc": _toc,
}


_PLACEHOLDER = re.compile(r"(<p>)?(DEPLOYBOTLIQUID[0-9a-f]+N[0-9]+X)(</p>)?")


def restore_fragments(
    html: str, fragments: Mapping[str, str], max_output: int | None = None
) -> str:
    """Replace each placeholder in converted ``html`` by its fragment; a placeholder that
    Markdown wrapped alone in ``<p>…</p>`` loses the paragraph, as block HTML does.

    One pass over ``html`` (a placeholder copied many times by Markdown costs each copy,
    not each copy times the page). Raises :class:`~deploybot.render.limits.LimitError`
    when the result would pass ``max_output`` characters.
    """
    if not fragments:
        return html
    size = len(html)

    def swap(m: re.Match[str]) -> str:
        nonlocal size
        fragment = fragments.get(m.group(2))
        if fragment is None:
            return m.group(0)
        if not (m.group(1) and m.group(3)):
            fragment = (m.group(1) or "") + fragment + (m.group(3) or "")
        size += len(fragment) - len(m.group(0))
        if max_output is not None and size > max_output:
            raise LimitError(page_too_large(max_output))
        return fragment

    return _PLACEHOLDER.sub(swap, html)
