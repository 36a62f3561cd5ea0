"""Markdown to HTML with mistune 3, shaped like Jekyll's kramdown (GFM input) output.

- Fenced code: Pygments spans inside kramdown's Rouge wrapper (:mod:`.highlight`); a fence
  without a language is ``language-plaintext`` (Jekyll >= 4.1, ``default_lang``).
- Inline code: ``<code class="language-plaintext highlighter-rouge">``.
- kramdown extensions (:func:`deploybot.render.kramdown.kramdown_plugins`): attribute lists,
  GFM heading ids, kramdown tables, footnotes and typography.
- Text keeps ``"`` bare, as kramdown writes it (``escape_html(text, :text)`` escapes only
  ``& < >``); raw HTML passes through (``escape=False``).
"""

from __future__ import annotations

import html
from typing import Any, Literal, get_args

import mistune
from mistune.util import escape, unescape

from deploybot.render.highlight import fenced_block
from deploybot.render.kramdown import kramdown_plugins
from deploybot.render.limits import markdown_budget
from deploybot.render.model import RenderOptions

FootnoteStyle = Literal["kramdown", "kramdown1", "mistune", "none"]
"""``[render] footnotes``: kramdown 2.x markup, kramdown 1.x markup (no ``rel``/``role``),
mistune's own markup, or no footnote syntax at all (``[^x]`` stays text)."""
FOOTNOTE_STYLES: tuple[str, ...] = get_args(FootnoteStyle)


class JekyllRenderer(mistune.HTMLRenderer):
    """mistune's HTML renderer with kramdown/Rouge code markup and kramdown text escaping."""

    def text(self, text: str) -> str:
        """Return text with ``& < >`` escaped and quotes left bare (kramdown's text output)."""
        return escape(unescape(text), quote=False)

    def block_code(self, code: str, info: str | None = None) -> str:
        """Return a fenced block; ``info``'s first word is the language (none: plaintext)."""
        lang = html.unescape(info).split(None, 1)[0] if info and info.strip() else None
        # kramdown keeps the last line's newline; mistune drops it from indented code.
        if code and not code.endswith("\n"):
            code += "\n"
        return fenced_block(code, lang)

    def list(self, text: str, ordered: bool, **attrs: Any) -> str:
        """Return ``<ol>``/``<ul>``: kramdown ignores the first item's number (no ``start``)."""
        tag = "ol" if ordered else "ul"
        return f"<{tag}>\n{text}</{tag}>\n"

    def codespan(self, text: str) -> str:
        """Return inline code with Jekyll's ``language-plaintext highlighter-rouge`` class."""
        escaped = html.escape(text, quote=False)
        return f'<code class="language-plaintext highlighter-rouge">{escaped}</code>'


def make_markdown(
    *, typography: bool = True, footnotes: str = "kramdown", max_output: int | None = None
) -> mistune.Markdown:
    """Return a fresh mistune ``Markdown`` (reusable across documents; not thread-safe).

    ``typography``: kramdown smart quotes and dashes; ``footnotes``: one of
    :data:`FOOTNOTE_STYLES`; ``max_output``: the most characters of HTML one document may
    render (:func:`~deploybot.render.limits.markdown_budget`: it raises ``LimitError`` as
    soon as it passes them). Raises ``ValueError`` for another ``footnotes`` value.
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
    return mistune.create_markdown(
        escape=False,
        # kramdown keeps every URL scheme (rsync:, news:, javascript:): authors are trusted,
        # as raw HTML is.
        renderer=JekyllRenderer(escape=False, allow_harmful_protocols=True),
        plugins=[*mistune_plugins, *kramdown, *budget],
    )


def markdown_for(options: RenderOptions) -> mistune.Markdown:
    """Return :func:`make_markdown` for ``options.typography`` and ``options.footnotes``,
    bounded by ``options.max_page_bytes``."""
    return make_markdown(
        typography=options.typography,
        footnotes=options.footnotes,
        max_output=options.max_page_bytes,
    )


def markdown_to_html(text: str, md: mistune.Markdown) -> str:
    """Render Markdown ``text`` to an HTML fragment (str) with ``md`` from :func:`make_markdown`."""
    result = md(text)
    assert isinstance(result, str)
    return result
