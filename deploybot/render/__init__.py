"""The render stage: build a Jekyll-style site from a tree of blobs.

``build_site(tree, options) -> SiteBuild`` reads ``_config.yml``, ``_posts/``, pages and static
files from a :class:`~deploybot.render.source.SourceTree` and returns every output file as
bytes. Modules: :mod:`.siteconfig` and :mod:`.site` (reading, the site model in :mod:`.model`),
:mod:`.frontmatter`, :mod:`.dates`, :mod:`.permalink`, :mod:`.liquid` (python-liquid, with
:mod:`.liquid_tags`, :mod:`.liquid_filters`, :mod:`.jekyll_filters` and :mod:`.liquid_links`),
:mod:`.liquid_layouts` and :mod:`.sitetheme` (the site's own theme), :mod:`.data`
(``site.data``), :mod:`.paginate` (jekyll-paginate), :mod:`.document` (one page's render),
:mod:`.markdown` (mistune plus the kramdown plugins of :mod:`.kramdown`:
:mod:`.kramdown_attrs`, :mod:`.headings`, :mod:`.kramdown_tables`, :mod:`.kramdown_footnotes`,
:mod:`.typography`), :mod:`.highlight`, :mod:`.layouts`, :mod:`.excerpt`, :mod:`.feeds`,
:mod:`.sitemap`, and :mod:`.build` (joins them).
"""

from __future__ import annotations

from deploybot.config.load import RenderConfig
from deploybot.render.build import build_site
from deploybot.render.cache import BuildCache
from deploybot.render.engine import BuildReport, MemorySink, NeedFullBuild, OutputSink
from deploybot.render.incremental import build_into, open_cache, unread_changes
from deploybot.render.model import (
    LayoutLimits,
    LiquidLimits,
    RenderOptions,
    RenderWarning,
    SiteBuild,
)

__all__ = [
    "BuildCache",
    "BuildReport",
    "LayoutLimits",
    "LiquidLimits",
    "MemorySink",
    "NeedFullBuild",
    "OutputSink",
    "RenderOptions",
    "RenderWarning",
    "SiteBuild",
    "build_into",
    "build_site",
    "layout_limits",
    "liquid_limits",
    "open_cache",
    "unread_changes",
]


def layout_limits(config: RenderConfig) -> LayoutLimits:
    """Return the ``[render] layout_max_*`` keys of ``config`` as :class:`LayoutLimits`."""
    return LayoutLimits(
        max_steps=config.layout_max_steps,
        max_output=config.layout_max_output,
        max_depth=config.layout_max_depth,
    )


def liquid_limits(config: RenderConfig) -> LiquidLimits:
    """Return the ``[render] liquid_max_*`` keys of ``config`` as :class:`LiquidLimits`."""
    return LiquidLimits(
        max_loop_iterations=config.liquid_max_loop_iterations,
        max_local_bytes=config.liquid_max_local_bytes,
        max_depth=config.liquid_max_depth,
    )
