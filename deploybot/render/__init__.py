"""The render stage: build a Jekyll-style site from a tree of blobs.

``build_site(tree, options) -> SiteBuild`` reads ``_config.yml``, ``_posts/``, pages and static
files from a :class:`~deploybot.render.source.SourceTree` and returns every output file as
bytes. Modules: :mod:`.siteconfig` and :mod:`.site` (reading, the site model in :mod:`.model`),
:mod:`.frontmatter`, :mod:`.dates`, :mod:`.permalink`, :mod:`.liquid` (with
:mod:`.liquid_filters` and :mod:`.liquid_links`), :mod:`.markdown` (mistune plus the kramdown
plugins of :mod:`.kramdown`: :mod:`.kramdown_attrs`, :mod:`.headings`, :mod:`.kramdown_tables`,
:mod:`.kramdown_footnotes`, :mod:`.typography`), :mod:`.highlight`, :mod:`.layouts`,
:mod:`.excerpt`, :mod:`.feeds`, :mod:`.sitemap`, and :mod:`.build` (joins them).
"""

from __future__ import annotations

from deploybot.config import RenderConfig
from deploybot.render.build import build_site
from deploybot.render.cache import BuildCache
from deploybot.render.engine import BuildReport, MemorySink, NeedFullBuild, OutputSink
from deploybot.render.incremental import build_into, open_cache
from deploybot.render.model import LayoutLimits, RenderOptions, RenderWarning, SiteBuild

__all__ = [
    "BuildCache",
    "BuildReport",
    "LayoutLimits",
    "MemorySink",
    "NeedFullBuild",
    "OutputSink",
    "RenderOptions",
    "RenderWarning",
    "SiteBuild",
    "build_into",
    "build_site",
    "layout_limits",
    "open_cache",
]


def layout_limits(config: RenderConfig) -> LayoutLimits:
    """Return the ``[render] layout_max_*`` keys of ``config`` as :class:`LayoutLimits`."""
    return LayoutLimits(
        max_steps=config.layout_max_steps,
        max_output=config.layout_max_output,
        max_depth=config.layout_max_depth,
    )
