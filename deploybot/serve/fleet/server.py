"""``deploybot serve`` with ``[queue] backend = "redis"``: receive, poll, queue; no builds.

:class:`FleetScheduler` stands where the local :class:`~deploybot.serve.scheduler.Scheduler`
stands: the webhook endpoint and the poller call :meth:`~FleetScheduler.trigger`, which
never waits for Redis. Triggers are kept in the daemon's memory, joined per site (the
newest commit), and a task hands them to Redis (:meth:`FleetStore.trigger`) at once.

**Redis unreachable**: a webhook is still answered 202 and its trigger kept here until
Redis answers again (every second it is tried; the log says how many wait, and
``/metrics`` shows ``deploybot_triggers_held``); ``/healthz`` answers 503 meanwhile. Why
not 503 to the webhook: GitHub and Gitea do not redeliver a failed delivery by
themselves, so a refusal would lose the push until the next poll. What a stop or a crash
of the daemon loses while Redis is away, the first poll after its start catches up.

Each second a task also runs the fleet's upkeep (:mod:`.sweep`) and counts the runs the
lease log reports (``deploybot_runs_total`` and the other run metrics are the fleet's);
it reads the fleet's state for ``/healthz``, ``/metrics`` and the poller (:mod:`.status`)
each second too, or every ``sites / 2000`` s when there are more than 2,000 sites.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from typing import Any

import redis

from deploybot.serve.backoff import FAILING_RUNS
from deploybot.serve.fleet import keys
from deploybot.serve.fleet.status import Overview, SiteStatus, iso, overview
from deploybot.serve.fleet.store import BUILD, FleetStore, Want
from deploybot.serve.fleet.sweep import SWEEP_EVERY, Sweeper
from deploybot.serve.metrics import Metrics
from deploybot.serve.settings import Settings, Site

log = logging.getLogger("deploybot.daemon")

LOOKS_PER_SECOND = 2000
"""Sites whose state the daemon reads per second, on average, for /healthz and /metrics."""


class FleetScheduler:
    """The daemon's queue on Redis (see the module doc)."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.gauges = metrics.fleet()
        self.client = keys.connect(settings.queue, settings.path, timeout=5.0)
        self.store = FleetStore(self.client, settings.queue)
        self.sweeper = Sweeper(self.store)
        self.sites: dict[str, Site] = {}
        self.held: dict[str, Want] = {}
        self.view: Overview | None = None
        self.redis_up = True
        self.stopping = False
        self._wake = asyncio.Event()
        self._registered = False
        self._log_from: str | None = None  # the last lease-log id counted
        self._tasks: list[asyncio.Task[None]] = []

    def set_sites(self, sites: Iterable[Site]) -> None:
        """Serve exactly ``sites`` (recorded in Redis at the next look)."""
        self.sites = {site.name: site for site in sites}
        self._registered = False
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._flush()), asyncio.create_task(self._upkeep())]
        self._wake.set()

    def trigger(
        self, name: str, why: str, commit: str | None = None, *, preview: bool = False
    ) -> bool:
        """Ask for a build of site ``name``; False when there is no such site or the
        daemon is stopping. Never waits for Redis (see the module doc). ``preview``: a
        previewed branch moved; the want then names no source commit, so no build of the
        production branch counts as having done it."""
        if name not in self.sites or self.stopping:
            return False
        want = Want(BUILD, None if preview else commit, why, time.time())
        self.held[name] = self.held[name].joined(want) if name in self.held else want
        self.gauges.held.set(len(self.held))
        self._wake.set()
        return True

    def polled(self, name: str, head: str | None, error: str | None) -> None:
        """The poller read ``head`` for ``name``'s source branch (or ``error``)."""
        if error:
            log.warning("site %s: poll: %s", name, error)
            return
        known = self.view.sites.get(name) if self.view else None
        if head is not None and (known is None or head != known.source_commit):
            self.trigger(name, f"poll: source at {head[:12]}", head)

    async def poll_targets(self) -> list[Site]:
        """The sites worth polling: neither pending nor building as last seen."""
        view = self.view.sites if self.view else {}
        return [
            site
            for name, site in self.sites.items()
            if not ((s := view.get(name)) and (s.pending or s.lease)) and name not in self.held
        ]

    async def look_at_outboxes(self) -> None:
        """Nothing: the workers report their sites' outboxes, and their retries are due
        through Redis (:mod:`.sweep`)."""

    async def stop(self, timeout: float) -> bool:
        """Stop: hand the kept triggers to Redis once more, end the tasks. True."""
        self.stopping = True
        with contextlib.suppress(redis.RedisError):
            await asyncio.to_thread(self._send, dict(self.held))
        if self.held:
            log.warning("stopping with %d trigger(s) Redis never got", len(self.held))
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.client.close()
        return True

    async def _flush(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self.held and self._registered:
                continue
            batch, self.held = self.held, {}
            try:
                await asyncio.to_thread(self._send, batch)
                self._up()
            except Exception as exc:  # Redis away (or a bug: logged): kept, tried again
                for name, want in batch.items():  # the batch is older than what came since
                    self.held[name] = want.joined(self.held.get(name))
                if isinstance(exc, redis.RedisError):
                    self._down(exc)
                else:
                    log.exception("handing triggers to Redis: %s", exc)
                await asyncio.sleep(SWEEP_EVERY)
                self._wake.set()
            self.gauges.held.set(len(self.held))

    def _send(self, batch: dict[str, Want]) -> None:
        if not self._registered:
            self.store.register({n: s.config.queue.name for n, s in self.sites.items()})
            self._registered = True
        for name in list(batch):
            job = self.store.trigger(name, batch[name])
            what = f"queued (job {job})" if job else "joins the build already queued"
            log.info("site %s: %s: %s", name, batch.pop(name).why, what)

    async def _upkeep(self) -> None:
        looked = 0.0
        while True:
            # Reading every site costs a few commands each: at most LOOKS_PER_SECOND sites
            # a second on average (100,000 sites: one look every 50 s).
            due = time.monotonic() - looked >= len(self.sites) / LOOKS_PER_SECOND
            try:
                view = await asyncio.to_thread(self._look, due)
                if view is not None:
                    self.view, looked = view, time.monotonic()
                self._up()
            except redis.RedisError as exc:
                self._down(exc)
            except Exception as exc:  # a bug: say so; the upkeep goes on
                log.exception("fleet upkeep: %s", exc)
            self._gauges()
            await asyncio.sleep(SWEEP_EVERY)

    def _look(self, full: bool) -> Overview | None:
        self.sweeper.sweep()
        self._count_runs()
        if not full:
            self.client.ping()
            return None
        return overview(self.client)

    def _count_runs(self) -> None:
        """Count the runs the lease log reported since the last look (since the daemon
        started, at the first look: the runs before are not this daemon's to count)."""
        if self._log_from is None:
            # Not XREAD's "$": without BLOCK it returns nothing, and gives no id to go on from.
            newest = self.client.xrevrange(keys.LEASE_LOG, count=1)
            self._log_from = newest[0][0].decode() if newest else "0-0"
        answer = self.client.xread({keys.LEASE_LOG: self._log_from}, count=10_000)
        for _, entries in answer or []:
            for entry_id, fields in entries:
                self._log_from = entry_id.decode()
                event = {k.decode(): v.decode() for k, v in fields.items()}
                if event.get("event") == "released" and event.get("result") != "delivered":
                    finished = int(self._log_from.split("-")[0]) / 1000
                    seconds = float(event.get("seconds") or 0)
                    self.metrics.run(event["site"], event.get("result", "?"), seconds, finished)

    def _up(self) -> None:
        if not self.redis_up:
            log.info("Redis answers again")
        self.redis_up = True

    def _down(self, exc: Exception) -> None:
        if self.redis_up:
            why = keys.unreachable(self.settings.queue, self.settings.path, exc)
            log.error("%s; %d trigger(s) kept until it is back", why, len(self.held))
        self.redis_up = False

    def _gauges(self) -> None:
        self.gauges.redis_up.set(1 if self.redis_up else 0)
        view = self.view
        if view is None:
            return
        for queue, length in view.queues.items():
            self.gauges.queue_length.labels(queue).set(length)
        self.gauges.leases_held.set(view.leases_held)
        self.gauges.leases_expired.set(view.leases_expired)
        self.gauges.workers.set(sum(view.workers.values()))
        self.metrics.queue_depth.set(view.pending + len(self.held))
        self.metrics.running.set(view.leases_held)
        for site in view.sites.values():
            self.metrics.outbox_waiting(site.name, site.outbox_emails, site.outbox_webhooks)

    def health(self) -> tuple[int, dict[str, Any]]:
        """``(HTTP status, JSON document)`` for ``/healthz``: each site as the fleet last
        recorded it; 503 while Redis is unreachable or when a site failed
        :data:`~deploybot.serve.backoff.FAILING_RUNS` times in a row."""
        view = self.view or Overview()
        sites = {name: _site_health(view.sites.get(name), name in self.held) for name in self.sites}
        failing = sorted(n for n, s in sites.items() if s["failures_in_a_row"] >= FAILING_RUNS)
        status = "failing" if failing else "ok"
        if not self.redis_up:
            status = "redis unreachable"
        document = {"status": status, "failing": failing, "redis": self.redis_up, "sites": sites}
        return (200 if status == "ok" else 503), document


def _site_health(site: SiteStatus | None, held: bool) -> dict[str, Any]:
    if site is None:
        site = SiteStatus("", "")
    run = None
    if site.result:
        run = {
            "time": iso(site.finished), "result": site.result,
            "source_commit": site.source_commit, "build_commit": site.build_commit,
            "seconds": site.seconds, "error": site.error, "worker": site.last_worker,
        }  # fmt: skip
    retry = site.retry_at if site.retry_at and site.retry_at > time.time() else None
    return {
        "last_run": run, "failures_in_a_row": site.failures, "building": bool(site.lease),
        "queued": bool(site.pending) or held, "lease": site.lease, "retry_at": iso(retry),
        "outbox": {"emails": site.outbox_emails, "webhooks": site.outbox_webhooks},
    }  # fmt: skip
