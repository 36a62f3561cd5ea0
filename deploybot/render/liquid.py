"""A small, safe subset of Liquid for post and page content (content is data, never code).

Jekyll runs Liquid over a document before converting it (Jekyll's docs, "Liquid"). This module
handles what Jekyll blogs use most and reports the rest:

- ``{% highlight LANG [opts] %}…{% endhighlight %}`` -> Jekyll's ``<figure class="highlight">``
  block (``tags/highlight.rb``); the language is the first word, lower-cased.
- ``{% raw %}…{% endraw %}`` -> its content, untouched.
- ``{% include JB/setup %}`` -> nothing, with a warning (Jekyll-Bootstrap's setup include).
- ``{{ site.x.y }}`` / ``{{ page.x }}`` -> the value (``None`` -> empty); anything with filters
  or other names -> removed, with a warning.
- Any other ``{% … %}`` tag -> removed, with a warning.

Whitespace control (``{%-``/``-%}``) trims as Liquid does. Generated HTML is not put into the
text directly (Markdown would mangle it): each block becomes a placeholder word, and
:func:`restore_fragments` swaps the HTML in after conversion.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from deploybot.errors import SourceError
from deploybot.render.highlight import figure_block
from deploybot.render.model import RenderWarning

_MARKUP_RE = re.compile(r"\{%(-?)\s*(.*?)\s*(-?)%\}|\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.DOTALL)
_VARIABLE_RE = re.compile(r"^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*$")


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
    nonce: str
    out: list[str]
    fragments: dict[str, str]
    warnings: list[RenderWarning]

    def line_at(self, offset: int) -> int:
        return self.first_line + self.source.count("\n", 0, offset)

    def warn(self, offset: int, message: str) -> None:
        self.warnings.append(RenderWarning(self.path, self.line_at(offset), message))

    def fragment(self, html: str) -> str:
        key = f"DEPLOYBOTLIQUID{self.nonce}N{len(self.fragments)}X"
        self.fragments[key] = html
        return key

    def trim_left(self) -> None:
        if self.out:
            self.out[-1] = self.out[-1].rstrip()


BlockHandler = Callable[[_State, str, str, int], str]


def _highlight(state: _State, args: str, body: str, offset: int) -> str:
    words = args.split()
    if not words:
        raise SourceError("{% highlight %} needs a language", state.path, state.line_at(offset))
    return state.fragment(figure_block(body, words[0].lower()))


def _raw(state: _State, args: str, body: str, offset: int) -> str:
    return body


BLOCK_TAGS: dict[str, BlockHandler] = {"highlight": _highlight, "raw": _raw}
"""Block tags: name -> handler(state, arguments, body, offset) returning replacement text."""


def render_liquid(
    text: str, *, path: str, first_line: int = 1, variables: Mapping[str, Any] | None = None
) -> LiquidResult:
    """Apply the Liquid subset to ``text`` (the body of ``path``, starting at file line
    ``first_line``). ``variables`` maps top-level names (``site``, ``page``) to mappings.

    Raises ``SourceError`` (path, line) for a block tag that is never closed.
    """
    nonce = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    state = _State(path, text, first_line, variables or {}, nonce, [], {}, [])
    pos = 0
    while (m := _MARKUP_RE.search(text, pos)) is not None:
        state.out.append(text[pos : m.start()])
        if m.group(1) or m.group(4):
            state.trim_left()
        if m.group(0).startswith("{%"):
            pos = _tag(state, m)
            trim_right = bool(m.group(3))
        else:
            state.out.append(_output(state, m.group(5), m.start()))
            pos = m.end()
            trim_right = bool(m.group(6))
        if trim_right:
            while pos < len(text) and text[pos].isspace():
                pos += 1
    state.out.append(text[pos:])
    return LiquidResult("".join(state.out), dict(state.fragments), tuple(state.warnings))


def _tag(state: _State, m: re.Match[str]) -> int:
    name, _, args = m.group(2).partition(" ")
    args = args.strip()
    if name in BLOCK_TAGS:
        end_re = re.compile(r"\{%-?\s*end" + re.escape(name) + r"\s*-?%\}")
        end = end_re.search(state.source, m.end())
        if end is None:
            raise SourceError(
                f"{{% {name} %}} is never closed", state.path, state.line_at(m.start())
            )
        body = state.source[m.end() : end.start()]
        state.out.append(BLOCK_TAGS[name](state, args, body, m.start()))
        return end.end()
    if name == "include" and args == "JB/setup":
        state.warn(m.start(), "{% include JB/setup %} (Jekyll-Bootstrap setup) renders nothing")
    else:
        state.warn(m.start(), f"unsupported Liquid tag {{% {m.group(2)} %}} removed")
    return m.end()


def _output(state: _State, expression: str, offset: int) -> str:
    if not _VARIABLE_RE.match(expression):
        state.warn(offset, f"unsupported Liquid output {{{{ {expression} }}}} removed")
        return ""
    value: Any = state.variables
    for part in expression.split("."):
        if not isinstance(value, Mapping) or part not in value:
            state.warn(offset, f"Liquid variable {expression} is not defined; rendered empty")
            return ""
        value = value[part]
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def restore_fragments(html: str, fragments: Mapping[str, str]) -> str:
    """Replace each placeholder in converted ``html`` by its fragment; a placeholder that
    Markdown wrapped alone in ``<p>…</p>`` loses the paragraph, as block HTML does."""
    for key, fragment in fragments.items():
        html = html.replace(f"<p>{key}</p>", fragment).replace(key, fragment)
    return html
