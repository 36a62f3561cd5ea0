"""``GET /healthz``: each site's last run, and whether some site keeps failing.

The answer is JSON::

    {"status": "ok" | "failing", "failing": [site, ...],
     "sites": {"<site>": {"last_run": {"time": ISO 8601 UTC, "result": str,
                                       "source_commit": str|null, "build_commit": str|null,
                                       "seconds": float, "error": str|null} | null,
                          "failures_in_a_row": int, "building": bool,
                          "fetching": bool, "queued": bool,
                          "retry_at": ISO 8601 UTC | null,
                          "outbox": {"emails": int, "webhooks": int}}},
     "broken": [{"config": path, "error": str}, ...]}

(``building`` from the build's fetch on; ``fetching`` until the build has a worker:
while it fetches, and while it waits for a worker after its fetch), with status 503 when
a site's last :data:`FAILING_RUNS` runs all failed (a monitor then pages someone), else
200. ``last_run`` is null until the site's first run since the
daemon started. ``broken`` lists the site files that did not load, not served
(:attr:`deploybot.serve.settings.Settings.broken`): any makes it 503 and ``"failing"``.

With ``[queue] backend = "redis"`` the document is the fleet's
(:meth:`deploybot.serve.fleet.server.FleetScheduler.health`), as the fleet last recorded each
site in Redis: the same keys, except that a site has no ``fetching`` (the daemon does not
know when a worker fetches), its ``last_run`` is the last one of the fleet (not only since
this daemon started) and names its ``"worker"``, ``building`` is true while a worker
holds the site's lease, and ``"lease"`` is the holder's token
(``"<worker>/<instance>/<random>"``)
or null. The document adds ``"redis": bool`` and
``"status"`` may be ``"redis unreachable"`` (503) while the daemon cannot reach Redis;
it answers 503 too when a site failed :data:`FAILING_RUNS` times in a row.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from deploybot.serve.backoff import FAILING_RUNS
from deploybot.serve.runner import JobResult
from deploybot.serve.settings import BrokenSite
from deploybot.serve.site_state import SiteState


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _run(result: JobResult) -> dict[str, Any]:
    return {
        "time": _iso(result.started + result.seconds),
        "result": result.status,
        "source_commit": result.source_commit,
        "build_commit": result.build_commit,
        "seconds": round(result.seconds, 3),
        "error": result.error,
    }


def is_failing(state: SiteState) -> bool:
    """True when the site's last :data:`FAILING_RUNS` runs all failed."""
    last = list(state.runs)[-FAILING_RUNS:]
    return len(last) == FAILING_RUNS and all(r.failed for r in last)


def health(states: Mapping[str, SiteState]) -> tuple[int, dict[str, Any]]:
    """``(HTTP status, JSON document)`` for ``/healthz`` (see the module doc)."""
    sites: dict[str, Any] = {}
    failing = []
    for name, state in sorted(states.items()):
        if is_failing(state):
            failing.append(name)
        retry = state.backoff_until if state.backoff_until > time.time() else None
        sites[name] = {
            "last_run": _run(state.runs[-1]) if state.runs else None,
            "failures_in_a_row": state.failures,
            "building": state.building,
            "fetching": state.fetching,
            "queued": state.wanted,
            "retry_at": _iso(retry) if retry else None,
            "outbox": {"emails": state.outbox.emails, "webhooks": state.outbox.webhooks},
        }
    document = {"status": "failing" if failing else "ok", "failing": failing, "sites": sites}
    return (503 if failing else 200), document


def with_broken(
    answer: tuple[int, dict[str, Any]], broken: Sequence[BrokenSite]
) -> tuple[int, dict[str, Any]]:
    """``answer`` (a ``/healthz`` status and document) with the site files that did not
    load: a ``broken`` list (see the module doc); any makes it 503 and ``"failing"``,
    since pushes to those sites are not built."""
    status, document = answer
    document = {**document, "broken": [{"config": str(b.path), "error": b.error} for b in broken]}
    if broken:
        status = 503
        document["status"] = "failing"
    return status, document
