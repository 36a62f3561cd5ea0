"""The render stage: build a Jekyll-style site from a tree of blobs.

``build_site(tree, options) -> SiteBuild`` reads ``_config.yml``, ``_posts/``, pages and static
files from a :class:`~deploybot.render.source.SourceTree` and returns every output file as
bytes. Modules: :mod:`.siteconfig` and :mod:`.site` (reading, the site model in :mod:`.model`),
:mod:`.frontmatter`, :mod:`.dates`, :mod:`.permalink`, :mod:`.liquid`, :mod:`.markdown`,
:mod:`.highlight`, :mod:`.layouts`, :mod:`.feeds`, and :mod:`.build` (joins them).
"""

from __future__ import annotations

from deploybot.render.build import build_site
from deploybot.render.model import RenderOptions, RenderWarning, SiteBuild

__all__ = ["RenderOptions", "RenderWarning", "SiteBuild", "build_site"]
