"""Whether a post, page, document or static file is published: Jekyll's ``Publisher``, in one
home.

Jekyll (``publisher.rb``) publishes a thing when ``can_be_published?`` (its front matter's
``published`` is not false, or the build runs with ``--unpublished``, which deploybot does not
offer) and it is not ``hidden_in_the_future?`` (it has a date, ``site.future`` is off, and
``date.to_i > site.time.to_i``). Here :func:`published` is the first test,
:func:`future_cutoff` the moment the second compares with, and :func:`in_the_future` (aware
dates) and :func:`in_the_future_us` (the build cache's microseconds) the comparison itself.
The build cache's queries (:mod:`deploybot.render.engine.cache`) hold the same rule in SQL
(``published = 1 AND date_us <= ?``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from deploybot.render.model import RenderOptions, SiteConfig


def published(data: Mapping[str, Any]) -> bool:
    """Jekyll's ``can_be_published?``: ``data.fetch("published", true)``, for front matter
    merged with its defaults. Only a YAML false hides (a quoted ``'false'`` is a true-ish
    string in Ruby too)."""
    return data.get("published", True) is not False


def future_cutoff(config: SiteConfig, options: RenderOptions) -> datetime | None:
    """The future cut-off in whole seconds (Jekyll compares ``date.to_i > site.time.to_i``),
    or ``None`` for none: ``future: true``; else ``_config.yml``'s ``time``; else
    ``options.cutoff``; else ``options.build_time``. Raises ``ValueError`` for a naive
    one."""
    if config.future:
        return None
    moment = config.time or options.cutoff or options.build_time
    if moment is None:
        return None
    if moment.tzinfo is None:
        raise ValueError("RenderOptions.cutoff must be timezone-aware")
    return moment.replace(microsecond=0)


def in_the_future(date: datetime, cutoff: datetime | None) -> bool:
    """Jekyll's ``hidden_in_the_future?`` for an aware ``date``: after ``cutoff``
    (:func:`future_cutoff`; ``None``, none: nothing is held back)."""
    return cutoff is not None and date > cutoff


def in_the_future_us(date_us: int, cut_us: int) -> bool:
    """:func:`in_the_future` in the build cache's terms: microseconds since the epoch, the
    cut-off as :class:`deploybot.render.engine.full.Engine` keeps it (its ``NEVER`` for
    none)."""
    return date_us > cut_us
