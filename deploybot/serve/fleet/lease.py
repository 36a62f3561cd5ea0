"""Keeping a site's lease while a job runs: a thread renews it every third of ``lease_ttl``.

A renewal that Redis refuses (the token no longer holds the lease: it expired while this
process was stopped, it was taken over while this worker's heartbeat was missing, or
Redis lost it) ends the renewals, and so does a Redis that stays
unreachable for longer than the lease lasts; both are logged. The build itself is not
interrupted here: its next push or send is refused by the fenced store of the shared state
(:class:`deploybot.serve.fleet.shared.LeaseLostError`), which is what keeps two workers from
acting on one site at once.
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from deploybot.serve.fleet import keys
from deploybot.serve.fleet.store import FleetStore

log = logging.getLogger("deploybot.fleet")


class LeaseKeeper:
    """Renews ``site``'s lease held with ``token`` until :meth:`stop`."""

    def __init__(self, store: FleetStore, site: str, token: str) -> None:
        self.store = store
        self.site = site
        self.token = token
        self.ttl = store.config.lease_ttl
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease {site}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop renewing (the caller then releases the lease)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.ttl)

    def _run(self) -> None:
        renewed = time.monotonic()
        interval = self.ttl / 3
        while not self._stop.wait(interval):
            try:
                if not self.store.renew(self.site, self.token):
                    log.error(
                        "site %s: the lease was lost (it expired, or was taken over)", self.site
                    )
                    return
                renewed = time.monotonic()
                interval = self.ttl / 3
            except redis.RedisError as exc:
                log.warning("site %s: cannot renew the lease: %s", self.site, keys.reason(exc))
                if time.monotonic() - renewed > self.ttl:
                    log.error("site %s: not renewed for longer than the lease: expired", self.site)
                    return
                interval = min(self.ttl / 10, 1.0)
