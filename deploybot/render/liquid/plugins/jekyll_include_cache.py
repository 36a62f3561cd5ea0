"""jekyll-include-cache 0.2: ``{% include_cached FILE [k=v …] %}``.

The tag (``lib/jekyll-include-cache/tag.rb``) is Jekyll's ``include`` (same file rules,
parameters and ``include`` variable: :class:`~deploybot.render.liquid.tags.IncludeNode`)
whose output is kept by a key made of the include's path and its parameters' *values*
(sorted by name, the names themselves not in the key; a Jekyll drop counts by identity):
a second call with the same key writes the kept output again without rendering, so what
the include assigns happens only the first time.

Jekyll keeps the outputs for the whole build (the cache is emptied at ``:pre_render``),
so a cached include that reads ``page`` gives every page the output of the first page
Jekyll rendered with that key. Here an include that reads nothing of the page
(:func:`.include_scope.page_independent`) is kept for the build too (per process of a
parallel build: the same output whichever page renders it first), with the dependencies
its render recorded, replayed into each page that reuses it so an incremental build
re-renders them when what it read changes (one whose render warns is not: each page
renders it and keeps its warnings). Any other is kept per page (its body and
layouts): the same output wherever the include depends on ``site`` and its parameters
only, as the plugin asks of its users, and each page's own output where Jekyll would
repeat another page's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deploybot.render.liquid.plugins.include_scope import page_independent
from deploybot.render.liquid.plugins.registry import Plugin

NAME = "jekyll-include-cache"


def cache_key(path: str, params: Mapping[str, Any]) -> tuple[object, ...]:
    """Return the plugin's cache key for the include at ``path`` with ``params``: the
    path and the values sorted by parameter name (``quick_hash``: a value's ``hash``,
    content for strings, numbers, booleans and nil; identity for anything else, as
    Ruby's for a drop)."""
    values = tuple(
        v if v is None or isinstance(v, str | int | float | bool) else ("id", id(v))
        for _, v in sorted(params.items())
    )
    return (path, values)


@dataclass
class _Shared:
    """What a build's renders share (kept on its Liquid): whether each include is
    page-independent (:func:`.include_scope.page_independent`), and the outputs of those
    that are, by :func:`cache_key`, with the dependencies their render recorded."""

    independent: dict[str, bool] = field(default_factory=dict)
    outputs: dict[tuple[object, ...], tuple[str, dict[str, str]]] = field(default_factory=dict)


_SHARED = "_include_cache_shared"


def _shared(liquid: Any) -> _Shared:
    """The :class:`_Shared` of the build ``liquid`` renders (made on first use)."""
    found = getattr(liquid, _SHARED, None)
    if found is None:
        found = _Shared()
        setattr(liquid, _SHARED, found)
    return found


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import IncludeNode, IncludeTag

    class IncludeCachedNode(IncludeNode):
        """``include_cached``: the include's output, kept per page by :func:`cache_key`."""

        def render_to_output(self, context: Any, buffer: Any) -> int:
            state = self.state(context)
            path = self.resolve_path(context)
            key = cache_key(path, self._params(context) if self.params else {})
            kept = state.include_cache.get(key)
            if kept is not None:
                return int(buffer.write(kept))
            shared = _shared(state.liquid)
            recorder = getattr(state.liquid.tree, "recorder", None)
            across = shared.independent.get(path)
            if across is None:
                across = shared.independent[path] = page_independent(state.liquid, path)
            if across and key in shared.outputs:
                kept, reads = shared.outputs[key]
                for dependency, fingerprint in reads.items():  # what rendering it read
                    if recorder is not None:
                        recorder.add(dependency, fingerprint)
            else:
                warned = len(state.warnings) + state.suppressed
                if recorder is not None:
                    recorder.push()
                try:
                    inner = context.get_buffer(buffer)
                    super().render_to_output(context, inner)
                finally:
                    reads = recorder.pop() if recorder is not None else {}
                kept = inner.getvalue()
                # one that warns is rendered on each page: each page keeps its warnings, so
                # an incremental build warns as a full one does
                if across and len(state.warnings) + state.suppressed == warned:
                    shared.outputs[key] = (kept, reads)
            state.include_cache[key] = kept
            return int(buffer.write(kept))

    class IncludeCachedTag(IncludeTag):
        """jekyll-include-cache's ``include_cached`` tag."""

        name = "include_cached"
        node_class = IncludeCachedNode

    return [IncludeCachedTag]


PLUGIN = Plugin(
    NAME, "{% include_cached FILE %}: an include rendered once per page and key", tags=_tags
)
