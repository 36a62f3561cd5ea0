"""A build's broken links, as data: what the render stage hands the pipeline
(:attr:`deploybot.render.outputs.sinks.BuildReport.links`)."""

from __future__ import annotations

from dataclasses import dataclass

LISTED = 1000
"""The most broken links a report lists (the others are counted)."""


@dataclass(frozen=True)
class BrokenLink:
    """A link of output ``page`` (as written: ``link``, on ``line``, 1-based or None) that
    the built tree does not serve."""

    page: str
    link: str
    line: int | None


@dataclass(frozen=True)
class LinkReport:
    """A build's broken links: the first ``listed`` (:class:`BrokenLink`, by page and line),
    how many in all (``total``), on how many ``pages``, and the pages whose links past the
    caps were not checked (``capped``: ``(page, dropped)``)."""

    listed: tuple[BrokenLink, ...] = ()
    total: int = 0
    pages: int = 0
    capped: tuple[tuple[str, int], ...] = ()
