"""Footnotes with kramdown's HTML instead of mistune's.

Markup from kramdown's HTML converter (``lib/kramdown/converter/html.rb``:
``convert_footnote``, ``footnote_content``, ``FOOTNOTE_BACKLINK_FMT``), with the footnote
*name* (``[^ieee]`` -> ``ieee``) in the ids, numbers in order of first reference, and a
no-break space (U+00A0, ``entity_output: as_char``) before the back link::

    <sup id="fnref:ieee" role="doc-noteref"><a href="#fn:ieee" class="footnote"
      rel="footnote">1</a></sup>
    ...
    <div class="footnotes" role="doc-endnotes">
      <ol>
        <li id="fn:ieee" role="doc-endnote">
          <p>The note.\u00a0<a href="#fnref:ieee" class="reversefootnote"
            role="doc-backlink">&#8617;</a></p>
        </li>
      </ol>
    </div>

(one line each in the output). A second reference to the same note gets the id
``fnref:ieee:1`` and the note an extra back link ``&#8617;<sup>2</sup>``.
The roles are where kramdown 2.4 (Jekyll 4.3's, GitHub Pages') puts them: ``doc-noteref`` on
the ``<sup>`` and ``doc-endnote`` on each ``<li>`` (2.0-2.3 had ``doc-noteref`` on the ``<a>``).
``make_kramdown_footnotes(legacy=True)`` gives kramdown 1.x markup (no ``rel``/``role``), which
is what the TVM site's published feeds contain.
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping
from typing import Any

import mistune
from mistune.core import BaseRenderer, BlockState
from mistune.inline_parser import InlineParser
from mistune.plugins import Plugin
from mistune.plugins.footnotes import (
    INLINE_FOOTNOTE,
    md_footnotes_hook,
    parse_inline_footnote,
)
from mistune.plugins.footnotes import footnotes as mistune_footnotes
from mistune.util import unikey

from deploybot.render.markdown.kramdown.attrs import escape_attribute

#: ``state.env`` key: footnote key (mistune's upper-cased label) -> name as first written.
NAMES_KEY = "kramdown_footnote_names"
#: ``state.env`` key: footnote key -> number of references seen so far.
REFS_KEY = "kramdown_footnote_refs"
_BACKLINK = "&#8617;"
_NBSP = "\u00a0"

Result = str | list[dict[str, Any]]

# kramdown 2.4's FOOTNOTE_DEFINITION_START (parser/kramdown/footnote.rb): the rest of the
# first line, then CODEBLOCK_MATCH (codeblock.rb): groups of lines indented by a tab or 4
# spaces (INDENT), after blank lines, each group followed by lazy non-blank lines (not an
# IAL, not an end-of-block marker). A line indented 1-3 spaces ends the definition. With
# mistune's group names (its parse_ref_footnote reads them); the key is mistune's; the
# repeats are possessive (see mistune_specs: no memory per line).
_LAZY_LINE = r"(?:(?!\{:|\^[ \t]*+\n)^[ \t]*+\S[^\n]*+\n)"
_CODEBLOCK_MATCH = (
    r"(?:(?:^[ \t\v\f]*+\n)*+(?:^(?:\t| {4})[ \t]*+\S[^\n]*+\n)++" + _LAZY_LINE + r"*+)*+"
)
REF_FOOTNOTE = (
    r"^ {0,3}\[\^(?P<footnote_key>(?:[^\\\[\]\s]|\\.){1,500})]:"
    r"(?P<footnote_text>[^\n]*+(?:\n|$)" + _CODEBLOCK_MATCH + r")"
)
"""The ``ref_footnote`` block rule as kramdown reads a footnote definition."""
_INDENT = re.compile(r"^(?:\t| {4})", re.M)
"""kramdown's ``INDENT``, taken once off each line of a definition."""


def make_kramdown_footnotes(*, legacy: bool = False) -> Plugin:
    """Return a mistune plugin rendering footnotes as kramdown 2.x (or 1.x if ``legacy``).

    The plugin registers mistune's ``footnotes`` plugin itself when it is missing, then
    replaces its reference parser, its after-render hook and its three renderers. Use it
    instead of ``"footnotes"`` or after it, never before it.
    """

    def plugin(md: mistune.Markdown) -> None:
        if "footnote" not in md.inline.rules:
            mistune_footnotes(md)
        md.block.specification["ref_footnote"] = REF_FOOTNOTE
        md.inline.register("footnote", INLINE_FOOTNOTE, _parse_reference, before="link")
        md.inline._methods["link"] = _no_link_before_caret(md.inline._methods["link"])
        md.after_render_hooks[:] = [
            _footnotes_hook if hook is md_footnotes_hook else hook for hook in md.after_render_hooks
        ]
        if md.renderer is not None and md.renderer.NAME == "html":
            md.renderer.register("footnote_ref", _ref_renderer(legacy))
            md.renderer.register("footnotes", _section_renderer(legacy))
            md.renderer.register("footnote_item", _item_renderer(legacy))

    return plugin


#: The kramdown 2.x footnote plugin (see :func:`make_kramdown_footnotes`).
kramdown_footnotes = make_kramdown_footnotes()


def _no_link_before_caret(inner: Callable[..., Any]) -> Callable[..., Any]:
    """mistune's link rule, refusing a bracket followed by ``^`` as kramdown's
    ``LINK_START`` (``!?\\[(?=[^^])``) does: ``directory![^1]`` is ``!`` then the
    footnote marker, where mistune would open an image and leave ``![^1]`` as text."""

    def parse(m: Any, state: Any) -> Any:
        if state.src.startswith("^", m.end()):
            return None
        return inner(m, state)

    return parse


def _parse_reference(inline: InlineParser, m: Any, state: Any) -> int:
    end: int = parse_inline_footnote(inline, m, state)
    token = state.tokens[-1]
    if token["type"] == "footnote_ref":
        env: MutableMapping[str, Any] = state.env
        key = unikey(m.group("footnote_key"))
        env.setdefault(NAMES_KEY, {}).setdefault(key, m.group("footnote_key"))
        refs: dict[str, int] = env.setdefault(REFS_KEY, {})
        token["attrs"]["name"] = env[NAMES_KEY][key]
        token["attrs"]["repeat"] = refs.get(key, 0)
        refs[key] = refs.get(key, 0) + 1
    return end


def _footnotes_hook(md: mistune.Markdown, result: Result, state: BlockState) -> Result:
    """mistune's ``md_footnotes_hook`` with the name and reference count on each item."""
    notes: list[str] = state.env.get("footnotes") or []
    if not notes:
        return result
    names: dict[str, str] = state.env.get(NAMES_KEY, {})
    refs: dict[str, int] = state.env.get(REFS_KEY, {})
    items = []
    for index, key in enumerate(notes, start=1):
        item = _footnote_item(md, key, index, state)
        item["attrs"].update(name=names.get(key, key), refs=refs.get(key, 1))
        items.append(item)
    child = BlockState(parent=state)
    child.tokens = [{"type": "footnotes", "children": items}]
    output = md.render_state(child)
    assert isinstance(result, str) and isinstance(output, str)
    return result + output


def _footnote_item(md: mistune.Markdown, key: str, index: int, state: BlockState) -> Any:
    """The ``footnote_item`` token of the definition ``key``: its text with kramdown's
    ``INDENT`` taken off each line, parsed as blocks (``parse_footnote_definition``)."""
    text = _INDENT.sub("", state.env["ref_footnotes"][key])
    child = state.child_state(text if text.endswith("\n") else text + "\n")
    md.block.parse(child)
    attrs = {"key": key, "index": index}
    return {"type": "footnote_item", "children": child.tokens, "attrs": attrs}


def _ref_renderer(legacy: bool) -> Callable[..., str]:
    def render(renderer: BaseRenderer, key: str, index: int, name: str, repeat: int = 0) -> str:
        ident = escape_attribute(name)
        ref_id = f"fnref:{ident}" + (f":{repeat}" if repeat else "")
        extra, role = ("", "") if legacy else (' rel="footnote"', ' role="doc-noteref"')
        link = f'<a href="#fn:{ident}" class="footnote"{extra}>{index}</a>'
        return f'<sup id="{ref_id}"{role}>{link}</sup>'

    return render


def _section_renderer(legacy: bool) -> Callable[..., str]:
    def render(renderer: BaseRenderer, text: str) -> str:
        role = "" if legacy else ' role="doc-endnotes"'
        return f'<div class="footnotes"{role}>\n  <ol>\n{text}  </ol>\n</div>\n'

    return render


def _item_renderer(legacy: bool) -> Callable[..., str]:
    def render(
        renderer: BaseRenderer, text: str, key: str, index: int, name: str, refs: int = 1
    ) -> str:
        ident = escape_attribute(name)
        role = "" if legacy else ' role="doc-backlink"'
        links = [f'<a href="#fnref:{ident}" class="reversefootnote"{role}>{_BACKLINK}</a>']
        links += [
            f'{_NBSP}<a href="#fnref:{ident}:{n}" class="reversefootnote"{role}>'
            f"{_BACKLINK}<sup>{n + 1}</sup></a>"
            for n in range(1, refs)
        ]
        body = text.strip()
        if body.endswith("</p>"):
            body = body[:-4] + _NBSP + "".join(links) + "</p>"
        else:
            body = body + "\n<p>" + "".join(links) + "</p>"
        item_role = "" if legacy else ' role="doc-endnote"'
        return f'    <li id="fn:{ident}"{item_role}>\n      {body}\n    </li>\n'

    return render
