"""The render stage: build a Jekyll-style site from a tree of blobs.

``build_site(tree, options) -> SiteBuild`` reads ``_config.yml``, ``_posts/``, pages and static
files from a :class:`~deploybot.render.read.source.SourceTree` and returns every output file as
bytes. The folders, in the order a page goes through them: :mod:`deploybot.render.read` (the
source as Jekyll reads it, into the site model of :mod:`.model`), :mod:`deploybot.render.markdown`
(mistune and the kramdown emulation), :mod:`deploybot.render.highlight` (Pygments),
:mod:`deploybot.render.liquid` (python-liquid with Jekyll's tags, filters and plugins),
:mod:`deploybot.render.theme` (the Jinja2 layouts and their sandbox, or the site's own Liquid
theme), :mod:`deploybot.render.outputs` (feeds, sitemap, sinks) and
:mod:`deploybot.render.engine` (full, incremental and parallel builds, the build cache).
"""

from __future__ import annotations

from deploybot.config.schema import RenderConfig
from deploybot.render.engine.build import build_site
from deploybot.render.engine.cache import BuildCache
from deploybot.render.engine.full import BuildReport, MemorySink, NeedFullBuild, OutputSink
from deploybot.render.engine.incremental import build_into, open_cache, unread_changes
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
