"""What waits in a site's outbox, read without its lock (for ``/metrics`` and the retries).

The outbox's files are written atomically (:mod:`deploybot.notify.deliver.outbox`), so reading
them while a build runs sees each message either before or after a change; a file that
vanishes between the listing and the reading (delivered meanwhile) is simply read again
at the next look.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from deploybot.config.schema import Config
from deploybot.notify import stage as notify
from deploybot.notify.deliver.outbox import EMAIL
from deploybot.state import statedir

log = logging.getLogger("deploybot.daemon")


@dataclass(frozen=True)
class Waiting:
    """``emails`` and ``webhooks`` waiting (the HTTP posts: webhook entries and commit
    statuses, which the daemon and the fleet retry alike); ``due``: the Unix time (s) the
    earliest of them may be retried (None: nothing waits)."""

    emails: int = 0
    webhooks: int = 0
    due: float | None = None


def waiting(config: Config) -> Waiting:
    """Look into ``config``'s outbox (blocking file reads: run it in a thread)."""
    try:
        items = notify.list_outbox(statedir.state_paths(config).outbox)
    except (OSError, ValueError) as exc:  # a status file replaced while read: look later
        log.debug("outbox of %s not read: %s", config.path, exc)
        return Waiting()
    if not items:
        return Waiting()
    emails = sum(1 for item in items if item.kind == EMAIL)
    due = min(item.next_attempt or 0.0 for item in items)
    return Waiting(emails, len(items) - emails, due)
