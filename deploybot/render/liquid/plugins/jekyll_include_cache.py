"""jekyll-include-cache 0.2: ``{% include_cached FILE [k=v …] %}``.

The tag (``lib/jekyll-include-cache/tag.rb``) is Jekyll's ``include`` (same file rules,
parameters and ``include`` variable: :class:`~deploybot.render.liquid.tags.IncludeNode`)
whose output is kept by a key made of the include's path and its parameters' *values*
(sorted by name, the names themselves not in the key; a Jekyll drop counts by identity):
a second call with the same key writes the kept output again without rendering, so what
the include assigns happens only the first time.

Jekyll keeps the outputs for the whole build (the cache is emptied at ``:pre_render``),
so a cached include that reads ``page`` gives every page the output of the first page
Jekyll rendered with that key. Here a page's renders (its body and its layouts) share
the kept outputs and each page renders its own first one: the same output wherever the
include depends on ``site`` and its parameters only, as the plugin asks of its users
(just-the-docs' navigation, minimal-mistakes' sidebar), and each page's own output
where Jekyll would repeat another page's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import IncludeNode, IncludeTag

    class IncludeCachedNode(IncludeNode):
        """``include_cached``: the include's output, kept per page by :func:`cache_key`."""

        def render_to_output(self, context: Any, buffer: Any) -> int:
            state = self.state(context)
            path = self.resolve_path(context)
            key = cache_key(path, self._params(context) if self.params else {})
            kept = state.include_cache.get(key)
            if kept is None:
                inner = context.get_buffer(buffer)
                super().render_to_output(context, inner)
                kept = state.include_cache[key] = inner.getvalue()
            return int(buffer.write(kept))

    class IncludeCachedTag(IncludeTag):
        """jekyll-include-cache's ``include_cached`` tag."""

        name = "include_cached"
        node_class = IncludeCachedNode

    return [IncludeCachedTag]


PLUGIN = Plugin(
    NAME, "{% include_cached FILE %}: an include rendered once per page and key", tags=_tags
)
