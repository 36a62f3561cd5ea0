"""The site's own Liquid layouts (``_layouts/``), applied as Jekyll's ``Renderer`` does.

Sources: Jekyll 4.3 ``readers/layout_reader.rb`` (a layout's name is its path below
``_layouts/`` without the last extension) and ``renderer.rb`` (``place_in_layouts``,
``render_layout``, ``assign_layout_data!``):

- a document with ``layout: NAME`` is rendered into that layout, whose own front matter
  ``layout:`` names the next one, until a layout has none (or names one already used);
- each layout sees ``content`` (what was made so far), ``page``, ``site``, ``paginator``
  and ``layout``: the layouts' front matter merged, the inner layout's keys winning;
- no ``layout`` key (or ``layout: none``/``null``) -> no layout; a name with no file -> no
  layout and a warning ("Layout 'X' requested in Y does not exist").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from deploybot.render.liquid.templates import Liquid, RenderState
from deploybot.render.model import MAX_YAML_SIZE, RenderWarning
from deploybot.render.read.frontmatter import parse_front_matter
from deploybot.render.read.layered import layout_name
from deploybot.render.read.source import SourceTree

NameRead = Callable[[str, str], None]
"""``note(name, path)``: called on every layout name looked up (``path`` '' when none)."""


def layout_map(paths: Iterable[str]) -> dict[str, str]:
    """Return ``{layout name: source path}`` for the layout files among ``paths`` (for two
    files of one name, the first in path order)."""
    found: dict[str, str] = {}
    for path in sorted(paths):
        name = layout_name(path)
        if name is not None:
            found.setdefault(name, path)
    return found


@dataclass(frozen=True)
class Layout:
    """One layout file: its ``name``, source ``path``, front matter ``data``, and the Liquid
    ``body`` starting at file line ``first_line``."""

    name: str
    path: str
    data: Mapping[str, Any]
    body: str
    first_line: int


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Jekyll's ``Utils.deep_merge_hashes(base, over)``: ``over`` wins, mappings merged."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = _merge(old, value)
        else:
            merged[key] = value
    return merged


class LiquidLayouts:
    """The layouts of ``_layouts/`` (``names``: name -> path), read through ``tree`` on use
    (so a tracking tree records each), with their front matter within ``max_yaml_size``.
    ``note`` is told every name looked up (the dependency on a layout's existence)."""

    def __init__(
        self,
        tree: SourceTree,
        names: Mapping[str, str],
        max_yaml_size: int = MAX_YAML_SIZE,
        note: NameRead | None = None,
    ) -> None:
        self.tree = tree
        self.names = dict(names)
        self.max_yaml_size = max_yaml_size
        self.note = note
        self._parsed: dict[tuple[str, bytes], Layout] = {}

    def get(self, name: str) -> Layout | None:
        """Return the layout ``name`` (``None`` when there is none). Raises
        ``SourceError`` for broken front matter."""
        path = self.names.get(name, "")
        if self.note is not None:
            self.note(name, path)
        if not path:
            return None
        try:
            raw = self.tree.read(path)
        except KeyError:
            return None
        layout = self._parsed.get((path, raw))
        if layout is None:
            front = parse_front_matter(raw, path, self.max_yaml_size)
            if front is None:
                text = raw.decode("utf-8-sig", errors="replace")
                layout = Layout(name, path, {}, text, 1)
            else:
                layout = Layout(name, path, dict(front.data), front.body, front.body_line)
            self._parsed[(path, raw)] = layout
        return layout

    def first(self, wanted: object, doc_path: str) -> tuple[Layout | None, RenderWarning | None]:
        """Return the layout a document's front-matter ``layout`` names, and the warning
        when it names one that does not exist."""
        if wanted is None or wanted is False:
            return None, None
        name = str(wanted)
        if name in ("", "none", "null"):
            return None, None
        layout = self.get(name)
        if layout is None:
            message = f"Layout '{name}' requested in {doc_path} does not exist"
            return None, RenderWarning(doc_path, None, message)
        return layout, None

    def layout_data(self, wanted: object, doc_path: str) -> dict[str, Any]:
        """Return the ``layout`` variable a document's body sees (its layout's data)."""
        layout, _ = self.first(wanted, doc_path)
        return dict(layout.data) if layout is not None else {}

    def apply(
        self,
        liquid: Liquid,
        state: RenderState,
        content: str,
        wanted: object,
        variables: Mapping[str, Any],
    ) -> tuple[str, tuple[RenderWarning, ...]]:
        """Return ``content`` placed in the layout chain starting at ``wanted`` (the
        document's ``layout``), with ``variables`` (``site``, ``page``, ``paginator``),
        and the warnings. Raises ``SourceError`` naming the layout file and line."""
        layout, warning = self.first(wanted, state.page_path)
        used: set[str] = set()
        data: dict[str, Any] = {}
        output = content
        while layout is not None and layout.path not in used:
            used.add(layout.path)
            data = _merge(layout.data, data)
            scope = {**variables, "content": output, "layout": data}
            output = liquid.render(
                state, layout.body, layout.path, scope, layout.first_line, keep=True
            )
            parent = layout.data.get("layout")
            layout = self.get(str(parent)) if parent not in (None, "") else None
        return output, (warning,) if warning else ()
