"""What a run does with its build's broken links (``publish.broken_links``): tell, record, stop.

The render stage finds them (:mod:`deploybot.render.links`: every written page's links, kept in
the build cache); this module tells them in the run's log (one warning line each, at most
:data:`LOGGED`, then one summary line), writes them to the state folder's
``broken-links.json`` (:attr:`deploybot.state.statedir.StatePaths.links`: the last build's
whole list, at most :data:`deploybot.render.links.report.LISTED` links, for the status page,
also for a build ``"fail"`` stopped), gives the build record's fields (:data:`RECORD_COUNT`,
:data:`RECORD_FIRST`, which the email's "Broken links" section reads), and with ``"fail"``
stops the publish (:class:`BrokenLinksError`, exit 1), unless ``run-once --force``.

``broken-links.json``::

    {"source_commit": "<40 hex>", "mode": "warn", "published": true, "at": 1764680000,
     "total": 2, "pages": 1, "links": [{"page": "a.html", "link": "/gone/", "line": 12}, ...],
     "capped": [["huge.html", 5000]]}
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from deploybot.record import note
from deploybot.render.links.report import BrokenLink, LinkReport
from deploybot.support.errors import EX_INPUT, DeploybotError

log = logging.getLogger("deploybot.pipeline")

LOGGED = 50
"""The most broken links the log names one by one."""
NAMED = 5
"""The most broken links a ``"fail"`` error names."""
RECORD_COUNT = note.BROKEN_LINKS
RECORD_FIRST = note.BROKEN_LINKS_FIRST


class BrokenLinksError(DeploybotError):
    """``publish.broken_links = "fail"`` and the build has broken links: nothing was pushed.
    Exit 1: the source must be fixed (or the mode set to ``"warn"``)."""

    exit_code = EX_INPUT


def describe(link: BrokenLink) -> str:
    """``page:line: link`` (``page: link`` without a line)."""
    where = link.page if link.line is None else f"{link.page}:{link.line}"
    return f"{where}: {link.link}"


def tell(report: LinkReport | None, mode: str) -> dict[str, str]:
    """Log ``report``'s broken links (see the module docstring) and return the build record's
    fields for them (none when links were not checked)."""
    if report is None:
        return {}
    for page, dropped in report.capped[:LOGGED]:
        log.warning("%s: %d links past the cap were not checked", page, dropped)
    for link in report.listed[:LOGGED]:
        log.warning("broken link: %s", describe(link))
    if report.total > LOGGED:
        log.warning("... and %d more broken links", report.total - LOGGED)
    if report.total:
        links = f"{report.total} broken link{'s' if report.total != 1 else ''}"
        pages = f"{report.pages} page{'s' if report.pages != 1 else ''}"
        log.warning("%s on %s (publish.broken_links = %s)", links, pages, mode)
    first = [[k.page, k.link, k.line] for k in report.listed[: note.BROKEN_LINKS_LISTED]]
    fields = {RECORD_COUNT: str(report.total)}
    if first:
        fields[RECORD_FIRST] = json.dumps(first, separators=(",", ":"))
    return fields


def stops(report: LinkReport | None, mode: str, force: bool) -> bool:
    """Whether ``report``'s broken links stop the publish: ``mode`` ``"fail"``, some broken,
    and no ``force``."""
    return report is not None and report.total > 0 and mode == "fail" and not force


def stop_if_broken(report: LinkReport | None, mode: str, force: bool) -> None:
    """Raise :class:`BrokenLinksError` naming the first broken links when they stop the
    publish (:func:`stops`); with ``force``, say that it goes on past them."""
    if not stops(report, mode, force=False):
        return
    assert report is not None
    if force:
        log.warning("publishing past publish.broken_links = fail: --force given")
        return
    named = "; ".join(describe(k) for k in report.listed[:NAMED])
    more = f" (and {report.total - NAMED} more)" if report.total > NAMED else ""
    raise BrokenLinksError(
        f"{report.total} broken links, nothing published (publish.broken_links = fail): "
        f"{named}{more}"
    )


def record(
    path: Path, report: LinkReport | None, mode: str, source_commit: str, published: bool
) -> None:
    """Write ``report`` as the state folder's ``broken-links.json`` at ``path`` (the module
    docstring's shape, compact: up to a thousand links), atomically; nothing when links were
    not checked. Raises ``DiskFullError``, ``OSError`` as
    :func:`deploybot.notify.deliver.outbox.write_atomic`."""
    from deploybot.notify.deliver.outbox import write_atomic

    if report is None:
        return
    data = {
        "source_commit": source_commit,
        "mode": mode,
        "published": published,
        "at": int(time.time()),
        "total": report.total,
        "pages": report.pages,
        "links": [{"page": k.page, "link": k.link, "line": k.line} for k in report.listed],
        "capped": [list(c) for c in report.capped],
    }  # fmt: skip
    write_atomic(path, json.dumps(data, separators=(",", ":")).encode("utf-8") + b"\n")


def read_record(path: Path) -> dict[str, object] | None:
    """The state folder's ``broken-links.json`` (see the module docstring), or None when it is
    missing or unreadable (for the status page)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
