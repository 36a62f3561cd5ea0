"""The render stage's options for a run: ``[render]`` and the source commit, as one record.

The production build (:mod:`deploybot.pipeline.run`) and branch previews
(:mod:`deploybot.pipeline.preview`) build with the same options (a preview adds its ``baseurl``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from deploybot.config.schema import Config
from deploybot.git.rev_parse import commit_datetime
from deploybot.watch import fetch

if TYPE_CHECKING:
    from deploybot.render.model import RenderOptions


def render_options(config: Config, snap: fetch.SourceSnapshot, cutoff: datetime) -> RenderOptions:
    """The render stage's options for building ``snap`` with the future cut-off ``cutoff``
    (aware), from ``config``'s ``[render]`` (and the source's GitHub repository, when
    ``source.url`` names one); ``site.time`` is the source commit's committer date."""
    from deploybot.render.liquid.plugins.jekyll_github_metadata import nwo_of_url
    from deploybot.render.model import RenderOptions, layout_limits, liquid_limits

    when = commit_datetime(snap.commit_time, snap.commit_tz_offset, snap.commit)
    return RenderOptions(
        theme=config.render.theme,
        timezone=config.render.timezone,
        feed_limit=config.render.feed_limit,
        build_time=when,
        cutoff=cutoff,
        typography=config.render.typography,
        footnotes=config.render.footnotes,
        layout_limits=layout_limits(config.render),
        liquid_limits=liquid_limits(config.render),
        max_file_bytes=config.render.max_file_bytes,
        max_page_bytes=config.render.max_page_bytes,
        max_yaml_size=config.render.max_yaml_size,
        markdown_max_elements=config.render.markdown_max_elements,
        highlight_timeout=config.render.highlight_timeout,
        max_site_bytes=config.render.max_site_bytes,
        jobs=config.render.jobs,
        highlight_cache_bytes=config.render.highlight_cache_bytes,
        repository=nwo_of_url(config.source.url),
        check_links=config.publish.broken_links != "off",
        kept=tuple(config.publish.keep),
    )
