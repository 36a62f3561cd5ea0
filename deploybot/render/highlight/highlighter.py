"""Code highlighting with Pygments, in the HTML wrappers Jekyll (kramdown + Rouge) emits.

Rouge's classes are "CSS-compatible to Pygments" (kramdown's ``syntax_highlighter/rouge.rb``),
so a Pygments stylesheet for ``.highlight`` styles either. The wrappers come from kramdown's
``convert_codeblock`` (fenced blocks) and Jekyll's ``tags/highlight.rb`` (``{% highlight %}``).

Some Pygments lexers backtrack catastrophically (``systemd`` on 2 KB of blanks: a minute), so
highlighting is timed (:mod:`.clock`): past a page's budget it raises
:class:`~.clock.HighlightTimeout` rather than falling back to plain text, so the
output never depends on the machine's speed.

Pygments' lexers and formatter are imported at the first code block, not with this module:
most pages of most sites have none.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from deploybot.render.highlight.cache import block_key, cached, kind_key
from deploybot.render.highlight.clock import timed_tokens

if TYPE_CHECKING:
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer
    from pygments.token import _TokenType


@cache
def _spans_formatter() -> HtmlFormatter:
    """The formatter of every block (highlight_cache.FORMATTER: change both together)."""
    from pygments.formatters import HtmlFormatter  # lazy on purpose (module docstring)

    return HtmlFormatter(nowrap=True)


LEXER_OPTIONS = {"stripnl": False}
"""The options of every lexer: ``stripnl=False`` keeps leading blank lines, as Rouge does."""


@lru_cache(maxsize=256)
def lexer_for(lang: str) -> Lexer | None:
    """Return a (cached, reusable) Pygments lexer for ``lang`` (:data:`LEXER_OPTIONS`), or
    ``None`` when unknown."""
    from pygments.lexers import get_lexer_by_name  # lazy on purpose (module docstring)
    from pygments.util import ClassNotFound

    try:
        lexer: Lexer = get_lexer_by_name(lang.lower(), **LEXER_OPTIONS)
    except ClassNotFound:
        return None
    return lexer


@lru_cache(maxsize=256)
def builtin_lexer(lang: str) -> str | None:
    """Return the class path (``pygments.lexers.python.PythonLexer``) of the built-in lexer
    :func:`lexer_for` gives for ``lang``, read from Pygments' table of lexers
    (``pygments.lexers._mapping``, which ``get_lexer_by_name`` searches first, in the same
    order) without importing the lexer's module; None when no built-in lexer has that alias
    (a plugin's lexer, or none: ask :func:`lexer_for`)."""
    from pygments.lexers._mapping import LEXERS  # lazy on purpose (module docstring)

    alias = lang.lower()
    for class_name, (module, _name, aliases, _files, _types) in LEXERS.items():
        if alias in aliases:
            return f"{module}.{class_name}"
    return None


def code_spans(code: str, lang: str | None) -> str:
    """Return ``code`` as HTML: Pygments token spans, or escaped text for unknown languages.

    Only ``& < >`` are escaped in the fallback, like Rouge's plain-text output. A block
    the running build's highlight cache holds is taken from it (:mod:`.cache`), found by
    the lexer's class path, so that its lexer is made only to highlight a block anew.
    Raises
    :class:`~.clock.HighlightTimeout` when highlighting passes the page's budget.
    """
    kind = builtin_lexer(lang) if lang else None
    if kind is not None and lang is not None:
        return cached(
            lambda: kind_key(kind, LEXER_OPTIONS, code),
            lambda: _spans(_known_lexer(lang), code, lang),
        )
    lexer = lexer_for(lang) if lang else None
    if lang is None or lexer is None:
        return html.escape(code, quote=False)
    return cached(lambda: block_key(lexer, code), lambda: _spans(lexer, code, lang))


def _known_lexer(lang: str) -> Lexer:
    """The lexer of a language :func:`builtin_lexer` found (so :func:`lexer_for` has one)."""
    lexer = lexer_for(lang)
    if lexer is None:
        raise AssertionError(f"Pygments lists a lexer for {lang!r} but gives none")
    return lexer


def _spans(lexer: Lexer, code: str, lang: str) -> str:
    out = io.StringIO()
    with timed_tokens(lexer, code, lang) as tokens:
        # pygments.highlight, the tokens timed
        _spans_formatter().format(rouge_whitespace(tokens), out)
    spans = out.getvalue()
    if not code.endswith("\n") and spans.endswith("\n"):
        spans = spans[:-1]  # Pygments ensures a final newline; keep the source's ending
    return spans


def rouge_whitespace(
    tokens: Iterable[tuple[_TokenType, str]],
) -> Iterator[tuple[_TokenType, str]]:
    """Yield ``tokens`` with whitespace as plain text: Pygments' lexers mark it
    ``Text.Whitespace`` (written ``<span class="w">``), Rouge's write it bare (Rouge 3.30:
    ``def f`` is ``<span class="k">def</span> <span class="nf">f</span>``)."""
    from pygments.token import Text, Whitespace  # lazy on purpose (module docstring)

    for kind, value in tokens:
        yield (Text if kind in Whitespace else kind), value


def fenced_block(code: str, lang: str | None, line_start: int | None = None) -> str:
    """Return kramdown's HTML for a fenced code block (``lang=None``: ``language-plaintext``).

    Shape: ``<div class="language-X highlighter-rouge"><div class="highlight"><pre
    class="highlight"><code>…</code></pre></div></div>`` plus a newline. With
    ``line_start`` (kramdown's ``line_numbers``), the spans are in Rouge 3.30's
    ``HTMLTable`` as ``HTMLLegacy`` makes it: a ``rouge-gutter gl`` cell numbering each
    line from ``line_start`` (a last line without a newline counts), a ``rouge-code`` cell.
    """
    label = html.escape(lang or "plaintext")
    spans = code_spans(code, lang)
    if line_start is not None:
        lines = code.count("\n") + (1 if code and not code.endswith("\n") else 0)
        numbers = "\n".join(str(n) for n in range(line_start, line_start + lines)) + "\n"
        spans = (
            '<table class="rouge-table"><tbody><tr><td class="rouge-gutter gl">'
            f'<pre class="lineno">{numbers}</pre></td><td class="rouge-code"><pre>{spans}'
            "</pre></td></tr></tbody></table>"
        )
    return (
        f'<div class="language-{label} highlighter-rouge"><div class="highlight">'
        f'<pre class="highlight"><code>{spans}</code></pre></div></div>\n'
    )


def figure_block(code: str, lang: str, *, linenos: bool = False) -> str:
    """Return Jekyll's ``{% highlight LANG [linenos] %}`` HTML.

    Shape: ``<figure class="highlight"><pre><code class="language-L" data-lang="LANG">…
    </code></pre></figure>``; ``+`` in the class becomes ``-`` (``c++`` -> ``language-c--``),
    and leading/trailing line breaks of ``code`` are dropped as Jekyll does. ``linenos`` puts
    the code in Rouge's ``HTMLTable`` (``<table class="rouge-table">`` with a ``gutter gl``
    cell of line numbers and a ``code`` cell).
    """
    body = code.strip("\r\n")
    spans = code_spans(body, lang).rstrip("\n")
    if linenos:
        numbers = "".join(f"{n}\n" for n in range(1, body.count("\n") + 2))
        spans = (
            '<table class="rouge-table"><tbody><tr><td class="gutter gl">'
            f'<pre class="lineno">{numbers}</pre></td><td class="code"><pre>{spans}\n</pre>'
            "</td></tr></tbody></table>"
        )
    css = html.escape(lang.replace("+", "-"))
    return (
        f'<figure class="highlight"><pre><code class="language-{css}" '
        f'data-lang="{html.escape(lang)}">{spans}</code></pre></figure>'
    )


def stylesheet(style: str = "default") -> str:
    """Return Pygments CSS rules for ``.highlight`` in ``style`` (a Pygments style name)."""
    from pygments.formatters import HtmlFormatter  # lazy on purpose (module docstring)

    rules: str = HtmlFormatter(style=style).get_style_defs(".highlight")
    return rules


def block_line(body: str, lang: str, code: str) -> int | None:
    """Return the 1-based line of ``body`` (a document's source text) where the code block
    of language ``lang`` holding ``code`` opens: a fence (```` ```lang ````, ``~~~lang``)
    or a ``{% highlight lang %}`` tag whose next non-blank line is ``code``'s first; the
    first such opening when none matches; ``None`` when there is none (the block came from
    an include)."""
    word = re.escape(lang)
    opening = re.compile(
        rf"^ {{0,3}}(?:`{{3,}}|~{{3,}})[ \t]*{word}(?![^\s{{}}])"
        rf"|\{{%-?[ \t]*highlight[ \t]+{word}(?![^\s%-])",
        re.IGNORECASE,
    )
    lines = body.split("\n")
    first = next((text.strip() for text in code.split("\n") if text.strip()), "")
    found: int | None = None
    for index, text in enumerate(lines):
        m = opening.search(text)
        if m is None:
            continue
        same_line = text[m.end() :].split("%}", 1)[1:] if "highlight" in m.group(0) else []
        following = [*same_line, *lines[index + 1 : index + 50]]
        if next((t.strip() for t in following if t.strip()), "") == first:
            return index + 1
        found = index + 1 if found is None else found
    return found
