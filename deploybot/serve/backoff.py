"""The retry rules ``deploybot serve`` applies to a site, with either queue: the local one
(:mod:`deploybot.serve.scheduler`) and the fleet's (:mod:`deploybot.serve.fleet.store`), and when
``/healthz`` calls a site failing (:mod:`deploybot.serve.health`,
:mod:`deploybot.serve.fleet.server`). It imports nothing, so each of them may import it.

An outbox's own message retries follow the same curve but are the notify stage's
(:mod:`deploybot.notify.deliver.outbox`), which imports nothing from the daemon.
"""

from __future__ import annotations

BACKOFF_FIRST = 60.0
"""Seconds a site waits after its first failure in a row."""
BACKOFF_MAX = 3600.0
"""Seconds a site waits at most, however many failures came in a row."""
LOCKED_RETRY = 10.0
"""Seconds before a build that found the site's state directory locked (a ``run-once``
holds it) is tried again; not counted as a failure."""
FAILING_RUNS = 3
"""Failures in a row that make a site "failing" in ``/healthz`` (status 503)."""
POST_DUE_SPACING = 1.0
"""Seconds at least from a build to the one a held-back post's date starts (a timer that
fires a little before the date by the build's clock, or a worker whose clock is behind,
builds once more, not in a loop)."""


def backoff_delay(failures: int) -> float:
    """Seconds to wait after the ``failures``-th failure in a row:
    ``min(60 * 2**(failures - 1), 3600)``, i.e. 60, 120, 240, ... 3600."""
    return float(min(BACKOFF_FIRST * 2 ** max(failures - 1, 0), BACKOFF_MAX))
