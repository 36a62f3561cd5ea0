"""GFM task lists as kramdown-parser-gfm writes them.

``lib/kramdown/parser/gfm.rb`` (``parse_list``): in a list item whose first block is a
paragraph starting with ``[ ]`` or ``[x]`` (any case) and whitespace, that marker becomes
``<input type="checkbox" class="task-list-item-checkbox" disabled="disabled" />`` (plus
``checked="checked"`` for ``[x]``), the whitespace after it dropped. Once one item of a list
is a task, it and every later item get ``class="task-list-item"`` and the list
``class="task-list"`` (earlier items do not: the plugin's ``is_tasklist ||=``).
"""

from __future__ import annotations

import re

import mistune
from mistune.core import BlockState

from deploybot.render.markdown.kramdown.attrs import ATTRS_KEY
from deploybot.render.markdown.mistune_hooks import Token, walk

_BOX = '<input type="checkbox" class="task-list-item-checkbox" disabled="disabled" />'
_CHECKED = (
    '<input type="checkbox" class="task-list-item-checkbox" disabled="disabled" '
    'checked="checked" />'
)
_UNCHECKED_RE = re.compile(r"\A\s*\[ \]\s+")
_CHECKED_RE = re.compile(r"\A\s*\[x\]\s+", re.I)


def kramdown_task_lists(md: mistune.Markdown) -> None:
    """mistune plugin: GFM task list items (module docstring). Register it after the
    attribute plugin (its classes join an IAL's)."""
    md.before_render_hooks.append(_task_lists)


def _task_lists(md: mistune.Markdown, state: BlockState) -> None:
    for token in walk(state.tokens):
        if token["type"] == "list":
            _mark(token)


def _mark(token: Token) -> None:
    tasks = False
    for item in token.get("children", []):
        first = (item.get("children") or [None])[0]
        if first is not None and first["type"] in ("paragraph", "block_text"):
            text = first.get("text")
            if isinstance(text, str):
                text, unchecked = _UNCHECKED_RE.subn(_BOX, text, count=1)
                text, checked = _CHECKED_RE.subn(_CHECKED, text, count=1)
                first["text"] = text
                tasks = tasks or bool(unchecked or checked)
        if tasks:
            _add_class(item, "task-list-item")
    if tasks:
        _add_class(token, "task-list")


def _add_class(token: Token, name: str) -> None:
    attrs: dict[str, str] = token.setdefault(ATTRS_KEY, {})
    attrs["class"] = f"{attrs['class']} {name}" if attrs.get("class") else name
