"""``GET /metrics``: the daemon's numbers in Prometheus' text format (prometheus-client).

=========================================  ===================================================
``deploybot_runs_total{site,result}``       builds by result: ``published``, ``unchanged``,
                                            ``up_to_date``, ``older``, ``failed``, ``locked``
                                            (a ``run-once`` held the site's lock)
``deploybot_run_duration_seconds{site}``    histogram of build durations (s)
``deploybot_last_success_timestamp_seconds{site}``  Unix time of the last build that did
                                            not fail
``deploybot_webhook_deliveries_total{result}``  ``accepted``, ``bad_signature``,
                                            ``too_large``, ``ignored`` (ping, another branch,
                                            a tag, a deletion, no such repository),
                                            ``duplicate`` (a delivery id seen before),
                                            ``bad_request``, ``not_found`` (no such site),
                                            ``timeout`` (the body came too slowly)
``deploybot_queue_depth``                   sites with a build waiting (for a worker, their
                                            backoff, or their running build to end)
``deploybot_builds_running``                builds running now
``deploybot_outbox_waiting{site,kind}``     messages waiting in a site's outbox; ``kind``
                                            ``email`` or ``webhook``
=========================================  ===================================================

With ``[queue] backend = "redis"`` (:mod:`deploybot.serve.fleet`) the runs are the fleet's (read
from the lease log), ``deploybot_queue_depth`` counts the sites pending, and
``deploybot_builds_running`` the leases held; these come in addition:

=========================================  ===================================================
``deploybot_queue_length{queue}``           jobs waiting in each RQ queue (shared, per worker)
``deploybot_leases_held``                   site leases held now
``deploybot_leases_expired``                leases that expired (a worker died or stalled),
                                            counted in Redis
``deploybot_workers_up``                    workers present
``deploybot_triggers_held``                 triggers kept here while Redis is unreachable
``deploybot_redis_up``                      1 when the last look at Redis worked, else 0
=========================================  ===================================================

A registry of its own (not the process-wide default), so nothing else is exported.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

DELIVERY_RESULTS = (
    "accepted", "bad_signature", "too_large", "ignored", "duplicate", "bad_request",
    "not_found", "timeout",
)  # fmt: skip
CONTENT_TYPE = CONTENT_TYPE_LATEST
_DURATION_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


class Metrics:
    """The daemon's instruments; :meth:`render` gives the exposition text."""

    def __init__(self) -> None:
        # The *_created series are noise here (and this process exports nothing else).
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs = Counter(
            "deploybot_runs", "Builds by site and result.", ["site", "result"], registry=r
        )
        self.duration = Histogram(
            "deploybot_run_duration_seconds", "Build durations.", ["site"],
            buckets=_DURATION_BUCKETS, registry=r,
        )  # fmt: skip
        self.last_success = Gauge(
            "deploybot_last_success_timestamp_seconds",
            "Unix time of the last build that did not fail.", ["site"], registry=r,
        )  # fmt: skip
        self.deliveries = Counter(
            "deploybot_webhook_deliveries", "Webhook deliveries by result.", ["result"],
            registry=r,
        )  # fmt: skip
        for result in DELIVERY_RESULTS:
            self.deliveries.labels(result)  # every result shows, at 0 until it happens
        self.queue_depth = Gauge("deploybot_queue_depth", "Sites with a build waiting.", registry=r)
        self.running = Gauge("deploybot_builds_running", "Builds running now.", registry=r)
        self.outbox = Gauge(
            "deploybot_outbox_waiting", "Messages waiting in the outbox.", ["site", "kind"],
            registry=r,
        )  # fmt: skip
        self.starts = Counter(
            "deploybot_job_starts", "Job processes started: forked warm, or a cold start.",
            ["start"], registry=r,
        )  # fmt: skip
        for how in ("warm", "cold"):
            self.starts.labels(how)
        self._fleet: FleetGauges | None = None

    def fleet(self) -> FleetGauges:
        """The fleet's gauges, made at the first call (a local daemon has none)."""
        if self._fleet is None:
            self._fleet = FleetGauges(self.registry)
        return self._fleet

    def delivery(self, result: str) -> None:
        """Count one webhook delivery with ``result`` (one of :data:`DELIVERY_RESULTS`)."""
        self.deliveries.labels(result).inc()

    def run(self, site: str, result: str, seconds: float, finished_at: float) -> None:
        """Count one build of ``site``: its ``result`` and duration."""
        self.runs.labels(site, result.replace("-", "_")).inc()
        self.duration.labels(site).observe(seconds)
        if result != "failed":
            self.last_success.labels(site).set(finished_at)

    def job_start(self, how: str) -> None:
        """Count one job process started ``how`` (``warm``: the zygote forked it, or
        ``cold``: a new interpreter)."""
        self.starts.labels(how).inc()

    def outbox_waiting(self, site: str, emails: int, webhooks: int) -> None:
        """Set the number of messages waiting in ``site``'s outbox."""
        self.outbox.labels(site, "email").set(emails)
        self.outbox.labels(site, "webhook").set(webhooks)

    def render(self) -> bytes:
        """The exposition text (:data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


class FleetGauges:
    """The gauges of a fleet (see the module doc), in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.queue_length = Gauge(
            "deploybot_queue_length", "Jobs waiting in an RQ queue.", ["queue"], registry=r
        )
        self.leases_held = Gauge("deploybot_leases_held", "Site leases held now.", registry=r)
        self.leases_expired = Gauge(
            "deploybot_leases_expired", "Leases that expired (counted in Redis).", registry=r
        )
        self.workers = Gauge("deploybot_workers_up", "Workers present.", registry=r)
        self.held = Gauge(
            "deploybot_triggers_held", "Triggers kept while Redis is unreachable.", registry=r
        )
        self.redis_up = Gauge("deploybot_redis_up", "1 when Redis answered.", registry=r)
