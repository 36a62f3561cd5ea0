"""kramdown compatibility for mistune 3: attribute lists, and the plugin bundle.

Posts written for Jekyll's kramdown use inline attribute lists (IALs) and attribute list
definitions (ALDs) (https://kramdown.gettalong.org/syntax.html#inline-attribute-lists):

    {:center: style="text-align: center"}      <- ALD: defines "center", renders nothing
    ![plot](/images/plot.png){: width="35%"}   <- span IAL: on the <img>
    {:center}                                  <- block IAL: on the paragraph above

which kramdown renders as ``<p style="text-align: center"><img src="/images/plot.png"
alt="plot" width="35%" /></p>``. :func:`kramdown_attributes` does the same in mistune.

Integration (order matters)::

    md = mistune.create_markdown(
        escape=False,
        renderer=JekyllRenderer(escape=False),
        plugins=["table", "strikethrough", "footnotes", *kramdown_plugins()],
    )

- mistune's own plugins first: ``kramdown_plugins()`` wraps the renderer and the inline
  parser of the instance it is given, and its footnote plugin overrides the renderers that
  mistune's ``footnotes`` registers (it registers ``footnotes`` itself when it is missing).
- Keep ``kramdown_plugins()`` in its own order (attributes, heading ids, tables, footnotes,
  typography): typography must see span IALs already removed from the text.
- Drop any other heading-id hook: :func:`deploybot.render.markdown.kramdown.headings.heading_ids`
  assigns ids at render time and leaves headings that already carry an id alone.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

import mistune
from mistune.block_parser import BlockParser
from mistune.core import BlockState, InlineState
from mistune.inline_parser import InlineParser
from mistune.plugins import Plugin

from deploybot.render.markdown.kramdown.abbr import kramdown_abbreviations
from deploybot.render.markdown.kramdown.attrs import (
    ALD_LINE,
    ALDS_KEY,
    ATTRS_KEY,
    IAL_LINE,
    IAL_LINE_PATTERN,
    AttributeList,
    inject_attributes,
    parse_attribute_list,
    resolve_attributes,
)
from deploybot.render.markdown.kramdown.block_html import kramdown_html
from deploybot.render.markdown.kramdown.deflists import kramdown_definition_lists
from deploybot.render.markdown.kramdown.emphasis import kramdown_strong_emphasis
from deploybot.render.markdown.kramdown.extensions import kramdown_extensions
from deploybot.render.markdown.kramdown.footnotes import make_kramdown_footnotes
from deploybot.render.markdown.kramdown.headings import heading_ids
from deploybot.render.markdown.kramdown.lazy_fences import kramdown_lazy_fences
from deploybot.render.markdown.kramdown.links import kramdown_links
from deploybot.render.markdown.kramdown.list_ials import kramdown_list_item_ials
from deploybot.render.markdown.kramdown.lists import kramdown_lists
from deploybot.render.markdown.kramdown.math_blocks import kramdown_math
from deploybot.render.markdown.kramdown.span_html import kramdown_span_html
from deploybot.render.markdown.kramdown.tables import kramdown_tables
from deploybot.render.markdown.kramdown.tasks import kramdown_task_lists
from deploybot.render.markdown.kramdown.toc import TOC_KEY, kramdown_toc
from deploybot.render.markdown.kramdown.typography import typography
from deploybot.render.markdown.mistune_hooks import (
    RenderNext,
    Token,
    walk,
    wrap_inline_render,
    wrap_render_token,
)

_IAL = "kramdown_ial"
_ALD = "kramdown_ald"
_SPAN_IAL = "kramdown_span_ial"
_PENDING = "_kramdown_ial"
# Only the opener: the closing brace is found by _span_ial_end, in amortised constant time
# (a regex for the whole span rescans to the end from every "{:" that has no closer).
_SPAN_OPEN = r"\{:(?![:/])"
_UNESCAPED_CLOSE = re.compile(r"(?<!\\)\}")
_CLOSERS = "_kramdown_span_closers"
# Rendered without a tag of their own: attributes on them have nowhere to go (kramdown's
# transparent <p> in tight list items drops them too).
_NO_TAG = frozenset({"block_text", "blank_line", "text", "softbreak", "linebreak"})


def kramdown_attributes(md: mistune.Markdown) -> None:
    """mistune plugin: kramdown block IALs, span IALs and ALDs.

    - A line ``{: …}`` right after a block (no blank line between) sets that block's
      attributes; after a blank line, an ALD line or at the start, it applies to the next
      block instead, if no blank line follows (kramdown ``parse_block_extensions``).
    - ``{: …}`` right after a link, image, emphasis, code span… sets that element's
      attributes; after plain text it is left as text, as kramdown does.
    - ``{:name: …}`` lines define ALDs for the whole document; they render nothing.

    Attributes are resolved before rendering and written into the element's first tag by
    :func:`~deploybot.render.markdown.kramdown.attrs.inject_attributes`, so this works with any
    renderer methods (e.g. a Pygments ``block_code``).
    """
    md.block.register(
        "kramdown_block_ial", IAL_LINE_PATTERN, _parse_block_line, before="blank_line"
    )
    for rules in (md.block.block_quote_rules, md.block.list_rules):
        if "kramdown_block_ial" not in rules:
            rules.append("kramdown_block_ial")
    md.inline.register("kramdown_span_ial", _SPAN_OPEN, _parse_span_ial, start_chars="{")
    # First, so that heading ids and other hooks already see the attributes.
    md.before_render_hooks.insert(0, _attach_block_ials)
    wrap_inline_render(md, _attach_span_ials)
    wrap_render_token(md, _render_with_attributes)


def kramdown_plugins(
    *, typography: bool = True, footnotes: bool = True, legacy_footnotes: bool = False
) -> list[Plugin]:
    """Return the mistune plugins that make output look like Jekyll's kramdown (GFM input).

    In order: :func:`kramdown_attributes`,
    :func:`~deploybot.render.markdown.kramdown.headings.heading_ids`,
    :func:`~deploybot.render.markdown.kramdown.tables.kramdown_tables`, the kramdown footnotes (2.x
    markup, or 1.x with ``legacy_footnotes``; none when ``footnotes`` is False) and
    :func:`~deploybot.render.markdown.kramdown.typography.typography` (unless ``typography`` is
    False). Pass them after mistune's own plugins, in this order; see the module docstring.
    """
    plugins: list[Plugin] = [
        kramdown_attributes,
        kramdown_html,
        kramdown_span_html,
        kramdown_links,
        kramdown_list_item_ials,
        kramdown_lazy_fences,
        kramdown_task_lists,
        kramdown_lists,
        kramdown_definition_lists,
        kramdown_math,
        kramdown_extensions,
        kramdown_abbreviations,
        kramdown_strong_emphasis,
        heading_ids,
        kramdown_toc,
        kramdown_tables,
    ]
    if footnotes:
        plugins.append(make_kramdown_footnotes(legacy=legacy_footnotes))
    if typography:
        plugins.append(_typography)
    return plugins


def _typography(md: mistune.Markdown) -> None:
    typography(md)


def _parse_block_line(block: BlockParser, m: Any, state: BlockState) -> int:
    line: str = m.group(0)
    end: int = m.end()
    if state.src.startswith("\n", end):
        end += 1
    ald = ALD_LINE.match(line)
    if ald is not None:
        _define_ald(state.env, ald.group("name"), parse_attribute_list(ald.group("body")))
        state.append_token({"type": _ALD})
        return end
    ial = IAL_LINE.match(line)
    assert ial is not None  # IAL_LINE_PATTERN only matches IAL-shaped lines
    lazy = m.start() in state.lazy_line_starts
    state.append_token({"type": _IAL, "ial": parse_attribute_list(ial.group("body")), "lazy": lazy})
    return end


def _define_ald(env: MutableMapping[str, Any], name: str, ald: AttributeList) -> None:
    alds: dict[str, AttributeList] = env.setdefault(ALDS_KEY, {})
    if name in alds:
        alds[name].update(ald)
    else:
        alds[name] = ald


def _parse_span_ial(inline: InlineParser, m: Any, state: InlineState) -> int | None:
    start: int = m.start()
    end = _span_ial_end(state, start)
    if end is None:
        return None
    raw = state.src[start:end]
    state.append_token({"type": _SPAN_IAL, "raw": raw, "ial": parse_attribute_list(raw[2:-1])})
    return end


def _span_ial_end(state: InlineState, start: int) -> int | None:
    r"""Return the end of the span IAL whose ``{:`` is at ``start`` in ``state.src``, or
    ``None``: where kramdown's ``\{:((?:\\\}|[^}])+)\}`` would end. The body runs to the
    first ``}`` not after a backslash; with none, to the last ``}`` (each one after a
    backslash); it is never empty.

    The inline parser asks at increasing offsets of one text, so the last answer (kept in
    ``state.env`` per text) answers every later start up to it: linear in all.
    """
    src = state.src
    body = start + 2
    if body >= len(src) or src[body] == "}":
        return None
    texts: dict[str, list[int]] = state.env.setdefault(_CLOSERS, {})
    # [searched from, first unescaped "}" found there (-1: none), last "}"]
    known = texts.get(src)
    if known is None:
        known = texts[src] = [len(src) + 1, -1, src.rfind("}")]
    if not (known[0] <= body and (known[1] == -1 or body <= known[1])):
        found = _UNESCAPED_CLOSE.search(src, body)
        known[0], known[1] = body, -1 if found is None else found.start()
    close = known[1] if known[1] != -1 else known[2]
    return close + 1 if close > body else None


def _attach_block_ials(md: mistune.Markdown, state: BlockState) -> None:
    state.tokens = _attach_in(state.tokens)
    alds: dict[str, AttributeList] = state.env.get(ALDS_KEY, {})
    for token in walk(state.tokens):
        ial = token.pop(_PENDING, None)
        if ial is not None:
            token[ATTRS_KEY] = resolve_attributes(ial, alds)
            if "toc" in ial.refs and token["type"] == "list":
                token[TOC_KEY] = True


def _attach_in(tokens: list[Token]) -> list[Token]:
    """Remove IAL/ALD tokens from ``tokens``, recording each IAL on the block it belongs to."""
    out: list[Token] = []
    pending: AttributeList | None = None
    target: Token | None = None
    for token in _lift_lazy(tokens):
        kind = token["type"]
        if kind == _IAL:
            if target is not None:
                _ial_of(target).update(token["ial"])
            else:
                pending = _merge(pending, token["ial"])
            continue
        if kind == "kramdown_eob":
            # kramdown's :eob: the block before is no IAL's target, a pending IAL stays.
            target = None
            continue
        if kind in (_ALD, "blank_line"):
            # kramdown's :eob / :blank elements take a pending IAL and end the target.
            pending, target = None, None
            if kind == "blank_line":
                out.append(token)
            continue
        if pending is not None:
            _ial_of(token).update(pending)
            pending = None
        children = token.get("children")
        if isinstance(children, list):
            token["children"] = _attach_in(children)
        out.append(token)
        target = token
    return out


def _lift_lazy(tokens: list[Token]) -> list[Token]:
    """Move IAL lines that were lazy continuations of a block quote to after the quote."""
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        children = token.get("children")
        if token["type"] != "block_quote" or not isinstance(children, list):
            continue
        lifted: list[Token] = []
        while children and children[-1]["type"] == _IAL and children[-1].get("lazy"):
            lifted.insert(0, children.pop())
        out.extend(lifted)
    return out


def _merge(first: AttributeList | None, second: AttributeList) -> AttributeList:
    merged = AttributeList() if first is None else first
    merged.update(second)
    return merged


def _ial_of(token: Token) -> AttributeList:
    ial: AttributeList = token.setdefault(_PENDING, AttributeList())
    return ial


def _attach_span_ials(tokens: list[Token], env: MutableMapping[str, Any]) -> list[Token]:
    alds: dict[str, AttributeList] = env.get(ALDS_KEY, {})
    out: list[Token] = []
    for token in tokens:
        children = token.get("children")
        if isinstance(children, list):
            token["children"] = _attach_span_ials(children, env)
        if token["type"] != _SPAN_IAL:
            out.append(token)
        elif out and out[-1]["type"] != "text":
            resolve_attributes(token["ial"], alds, out[-1].setdefault(ATTRS_KEY, {}))
        else:
            # kramdown: "Found span IAL after text - ignoring it"; the text stays.
            out.append({"type": "text", "raw": token["raw"]})
    return out


def _render_with_attributes(token: Token, state: BlockState, render_next: RenderNext) -> str:
    if token["type"] == "block_code" and token.get(ATTRS_KEY):
        _code_language(token)
    html = render_next(token, state)
    attrs = token.get(ATTRS_KEY)
    if attrs and token["type"] not in _NO_TAG:
        return inject_attributes(html, attrs)
    return html


_LANGUAGE_CLASS = re.compile(r"\blanguage-(\S+)")


def _code_language(token: Token) -> None:
    """Take a ``language-X`` class of a code block's IAL as its language, as kramdown's
    ``extract_code_language!`` does (a fenced block's own language wins)."""
    attrs: dict[str, str] = token[ATTRS_KEY]
    m = _LANGUAGE_CLASS.search(attrs.get("class", ""))
    if m is None:
        return
    rest = (attrs["class"][: m.start()] + attrs["class"][m.end() :]).strip()
    if rest:
        attrs["class"] = rest
    else:
        del attrs["class"]
    info = token.setdefault("attrs", {}).get("info")
    if not info or not str(info).strip():
        token["attrs"]["info"] = m.group(1)
