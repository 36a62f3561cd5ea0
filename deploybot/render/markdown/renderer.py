"""Markdown to HTML with mistune 3, shaped like Jekyll's kramdown (GFM input) output.

- Fenced code: Pygments spans inside kramdown's Rouge wrapper
  (:mod:`deploybot.render.highlight.highlighter`); a fence without a language is
  ``language-plaintext`` (Jekyll >= 4.1, ``default_lang``).
- Inline code: ``<code class="language-plaintext highlighter-rouge">``.
- With another syntax highlighter than Rouge in ``_config.yml`` (``highlighter: none``;
  :func:`highlights`), kramdown highlights nothing: ``<pre><code class="language-X">`` (no
  class without a language) and a bare ``<code>``.
- kramdown extensions (:func:`deploybot.render.markdown.kramdown.plugins.kramdown_plugins`):
  attribute lists, GFM heading ids, kramdown tables, footnotes and typography.
- Text keeps ``"`` bare, as kramdown writes it (``escape_html(text, :text)`` escapes only
  ``& < >``); raw HTML passes through (``escape=False``).
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Literal, get_args
from weakref import WeakKeyDictionary

import mistune
from mistune.util import escape, unescape

from deploybot.render.highlight.highlighter import fenced_block
from deploybot.render.markdown.budget import markdown_budget, markdown_elements
from deploybot.render.markdown.kramdown.plugins import kramdown_plugins
from deploybot.render.markdown.mistune_linear import linear_parsing
from deploybot.render.markdown.mistune_specs import possessive_rules
from deploybot.render.model import RenderOptions
from deploybot.render.read.rouge_options import block_line_start

FootnoteStyle = Literal["kramdown", "kramdown1", "mistune", "none"]
"""``[render] footnotes``: kramdown 2.x markup, kramdown 1.x markup (no ``rel``/``role``),
mistune's own markup, or no footnote syntax at all (``[^x]`` stays text)."""
FOOTNOTE_STYLES: tuple[str, ...] = get_args(FootnoteStyle)


def highlights(config: Mapping[str, Any]) -> bool:
    """Return whether kramdown highlights code for the ``_config.yml`` mapping ``config``:
    whether its syntax highlighter is Rouge (Jekyll's ``KramdownParser#highlighter``:
    ``kramdown.syntax_highlighter``, else ``coderay`` for ``kramdown.enable_coderay``, else
    ``highlighter``, else ``rouge``: an empty ``highlighter:`` is Rouge too). kramdown knows
    no other highlighter here (``none``, ``pygments``...), so it highlights nothing."""
    kramdown = config.get("kramdown")
    kramdown = kramdown if isinstance(kramdown, Mapping) else {}
    name = kramdown.get("syntax_highlighter")
    if not name and kramdown.get("enable_coderay"):
        name = "coderay"
    return str(name or config.get("highlighter") or "rouge") == "rouge"


class JekyllRenderer(mistune.HTMLRenderer):
    """mistune's HTML renderer with kramdown/Rouge code markup and kramdown text escaping
    (``highlight=False``: kramdown's markup without a highlighter)."""

    def __init__(
        self, *args: Any, highlight: bool = True, line_start: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.highlight = highlight
        self.line_start = line_start

    def text(self, text: str) -> str:
        """Return text with ``& < >`` escaped and quotes left bare (kramdown's text output)."""
        return escape(unescape(text), quote=False)

    def block_code(self, code: str, info: str | None = None) -> str:
        """Return a fenced block; ``info``'s first word is the language (none: plaintext)."""
        lang = html.unescape(info).split(None, 1)[0] if info and info.strip() else None
        # kramdown keeps the last line's newline; mistune drops it from indented code.
        if code and not code.endswith("\n"):
            code += "\n"
        if not self.highlight:
            # kramdown's convert_codeblock: escape_html (& < >), chomp, one newline.
            cls = f' class="language-{html.escape(lang)}"' if lang else ""
            body = html.escape(code, quote=False).removesuffix("\n")
            return f"<pre><code{cls}>{body}\n</code></pre>\n"
        return fenced_block(code, lang, self.line_start)

    def list(self, text: str, ordered: bool, **attrs: Any) -> str:
        """Return ``<ol>``/``<ul>``: kramdown ignores the first item's number (no ``start``)."""
        tag = "ol" if ordered else "ul"
        return f"<{tag}>\n{text}</{tag}>\n"

    def codespan(self, text: str) -> str:
        """Return inline code with Jekyll's ``language-plaintext highlighter-rouge`` class."""
        escaped = html.escape(text, quote=False)
        if not self.highlight:
            return f"<code>{escaped}</code>"
        return f'<code class="language-plaintext highlighter-rouge">{escaped}</code>'


def make_markdown(
    *,
    typography: bool = True,
    footnotes: str = "kramdown",
    max_output: int | None = None,
    max_elements: int | None = None,
    highlight: bool = True,
    line_start: int | None = None,
) -> mistune.Markdown:
    """Return a fresh mistune ``Markdown`` (reusable across documents; not thread-safe).

    ``typography``: kramdown smart quotes and dashes; ``footnotes``: one of
    :data:`FOOTNOTE_STYLES`; ``max_output``: the most characters of HTML one document may
    render (:func:`~deploybot.render.markdown.budget.markdown_budget`: it raises ``LimitError`` as
    soon as it passes them); ``max_elements``: the most elements one document may make
    (:func:`~deploybot.render.markdown.budget.markdown_elements`, ``LimitError`` too);
    ``highlight``: Rouge's markup for code (else kramdown's without a highlighter);
    ``line_start``: code blocks numbered from it (:mod:`.rouge_options`). Raises
    ``ValueError`` for another ``footnotes`` value.
    """
    if footnotes not in FOOTNOTE_STYLES:
        raise ValueError(f"footnotes must be one of {', '.join(FOOTNOTE_STYLES)}: {footnotes!r}")
    mistune_plugins: list[mistune.plugins.PluginRef] = ["table", "strikethrough"]
    if footnotes != "none":
        mistune_plugins.append("footnotes")
    kramdown = kramdown_plugins(
        typography=typography,
        footnotes=footnotes in ("kramdown", "kramdown1"),
        legacy_footnotes=footnotes == "kramdown1",
    )
    budget = [] if max_output is None else [markdown_budget(max_output)]
    if max_elements is not None:
        budget.append(markdown_elements(max_elements))
    return mistune.create_markdown(
        escape=False,
        # kramdown keeps every URL scheme (rsync:, news:, javascript:): authors are trusted,
        # as raw HTML is.
        renderer=JekyllRenderer(
            escape=False,
            allow_harmful_protocols=True,
            highlight=highlight,
            line_start=line_start,
        ),
        plugins=[*mistune_plugins, possessive_rules, linear_parsing, *kramdown, *budget],
    )


def markdown_for(
    options: RenderOptions, config: Mapping[str, Any] | None = None
) -> mistune.Markdown:
    """Return :func:`make_markdown` for ``options.typography`` and ``options.footnotes``,
    bounded by ``options.max_page_bytes`` and ``options.markdown_max_elements``, with the
    highlighting of the site's ``_config.yml`` mapping ``config`` (:func:`highlights`,
    :func:`.rouge_options.block_line_start`)."""
    return make_markdown(
        typography=options.typography,
        footnotes=options.footnotes,
        max_output=options.max_page_bytes,
        max_elements=options.markdown_max_elements,
        highlight=highlights(config or {}),
        line_start=block_line_start(config or {}),
    )


def markdown_to_html(text: str, md: mistune.Markdown) -> str:
    """Render Markdown ``text`` to an HTML fragment (str) with ``md`` from :func:`make_markdown`.

    The HTML is a function of the text and ``md``'s options alone, so a text ``md`` has
    rendered lately is not rendered again (:class:`_Memo`), as Jekyll 4 keeps converted
    Markdown by content (``converters/markdown.rb``, ``@cache.getset(content)``). Raises what
    ``md`` raises (``LimitError``, a highlight timeout): nothing is kept then."""
    memo = _MEMOS.get(md)
    if memo is None:
        memo = _MEMOS[md] = _Memo(MEMO_CHARACTERS)
    found = memo.get(text)
    if found is not None:
        return found
    result = md(text)
    assert isinstance(result, str)
    if not result and not text.strip():  # kramdown writes a newline for "" or blanks
        result = "\n"
    memo.put(text, result)
    return result


MEMO_CHARACTERS = 4_000_000
"""How many characters (texts and their HTML) one process keeps per ``Markdown``."""


class _Memo:
    """Texts and their HTML, least recently used first, within ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[str, str] = OrderedDict()

    def get(self, text: str) -> str | None:
        found = self.items.get(text)
        if found is not None:
            self.items.move_to_end(text)
        return found

    def put(self, text: str, result: str) -> None:
        cost = len(text) + len(result)
        if cost > self.limit // 4:
            return  # one huge page would push out everything else
        self.items[text] = result
        self.size += cost
        while self.size > self.limit:
            old, html = self.items.popitem(last=False)
            self.size -= len(old) + len(html)


_MEMOS: WeakKeyDictionary[mistune.Markdown, _Memo] = WeakKeyDictionary()
