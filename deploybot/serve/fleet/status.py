"""What the fleet is doing, read from Redis: ``deploybot fleet status``, and the numbers the
server shows on ``/healthz`` and ``/metrics``.

Per site: its last result (time, source and build commit, error), failures in a row and
when it is retried, who holds its lease (and for how much longer), what is pending, what
waits in its outbox. For the fleet: the length of every deploybot queue (RQ's own lists:
``rq info`` shows the same), the workers present, leases held and expired.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from rq import Queue

from deploybot.serve.fleet import keys
from deploybot.serve.fleet.store import Want, as_str
from deploybot.support.errors import ConfigError, TemporaryError


@dataclass(frozen=True)
class SiteStatus:
    """One site (see the module doc); times are Unix seconds, ``lease_left`` seconds."""

    name: str
    queue: str
    result: str | None = None
    finished: float | None = None
    seconds: float | None = None
    source_commit: str | None = None
    build_commit: str | None = None
    error: str | None = None
    failures: int = 0
    retry_at: float | None = None
    last_worker: str | None = None
    lease: str | None = None
    lease_left: float | None = None
    pending: str | None = None
    outbox_emails: int = 0
    outbox_webhooks: int = 0
    last_success: float | None = None


@dataclass(frozen=True)
class Overview:
    """The whole fleet: ``sites`` by name, ``queues`` (name -> jobs waiting), ``workers``
    (name -> up: its heartbeat has not expired), ``leases_expired`` (counted since the
    keys were made: leases that expired or were taken over), ``heartbeats`` (name -> its
    last heartbeat, Unix s, by the worker's clock)."""

    sites: dict[str, SiteStatus] = field(default_factory=dict)
    queues: dict[str, int] = field(default_factory=dict)
    workers: dict[str, bool] = field(default_factory=dict)
    leases_expired: int = 0
    heartbeats: dict[str, float] = field(default_factory=dict)

    @property
    def leases_held(self) -> int:
        """Sites whose lease is held now."""
        return sum(1 for s in self.sites.values() if s.lease)

    @property
    def pending(self) -> int:
        """Sites with a build or delivery pending."""
        return sum(1 for s in self.sites.values() if s.pending)


def overview(client: keys.Client) -> Overview:
    """Read the fleet's state (a few pipelined round trips). Raises redis' errors."""
    sites = {k.decode(): v.decode() for k, v in client.hgetall(keys.SITES).items()}
    names = sorted(sites)
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.hgetall(keys.site(name))
        pipe.get(keys.lease(name))
        pipe.pttl(keys.lease(name))
        pipe.get(keys.pending(name))
    answers = pipe.execute()
    out = {}
    for i, name in enumerate(names):
        record, lease, ttl, pending = answers[4 * i : 4 * i + 4]
        out[name] = _site(name, sites[name], record, lease, ttl, pending)
    beats = {w.decode(): float(t) for w, t in client.hgetall(keys.WORKERS).items()}
    workers = sorted(beats)
    pipe = client.pipeline(transaction=False)
    for worker in workers:
        pipe.exists(keys.alive(worker))
    present = dict(zip(workers, (bool(x) for x in pipe.execute()), strict=True))
    queue_names = sorted({*sites.values(), *(keys.affinity_queue(w) for w in workers)})
    queues = {q: Queue(q, connection=client).count for q in queue_names}
    expired = int(client.hget(keys.STATS, "leases_expired") or 0)
    return Overview(out, queues, present, expired, beats)


def _site(
    name: str, queue: str, record: dict[bytes, bytes], lease: Any, ttl: int, pending: Any
) -> SiteStatus:
    def text(key: str) -> str | None:
        return as_str(record.get(key.encode())) or None

    def number(key: str) -> float | None:
        value = text(key)
        return float(value) if value else None

    want = Want.loads(pending)
    return SiteStatus(
        name=name, queue=queue, result=text("result"), finished=number("finished"),
        seconds=number("seconds"), source_commit=text("source_commit"),
        build_commit=text("build_commit"), error=text("error"),
        failures=int(number("failures") or 0), retry_at=number("retry_at") or None,
        last_worker=text("worker"), lease=as_str(lease), lease_left=ttl / 1000 if lease else None,
        pending=f"{want.job} ({want.why})" if want else None,
        outbox_emails=int(number("outbox_emails") or 0),
        outbox_webhooks=int(number("outbox_webhooks") or 0),
        last_success=number("last_success"),
    )  # fmt: skip


def iso(when: float | None) -> str | None:
    """``when`` (Unix s) as ISO 8601 UTC, or None."""
    if not when:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def as_json(view: Overview) -> str:
    """The overview as JSON (``deploybot fleet status --json``)."""
    data = asdict(view)
    data["leases_held"] = view.leases_held
    return json.dumps(data, indent=1, sort_keys=True)


def as_text(view: Overview, now: float | None = None) -> str:
    """The overview as a table, one line per site, then the queues and the workers."""
    now = time.time() if now is None else now
    head = ("site", "last result", "finished", "source", "build", "lease", "pending")
    rows = [head]
    for site in view.sites.values():
        ago = f"{now - site.finished:.0f} s ago" if site.finished else "-"
        result = site.result or "-"
        if site.failures:
            result += f" ({site.failures} in a row)"
        lease = f"{site.lease.split('/')[0]} ({site.lease_left:.0f} s)" if site.lease else "-"
        rows.append((site.name, result, ago, (site.source_commit or "-")[:12],
                     (site.build_commit or "-")[:12], lease, site.pending or "-"))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for site in view.sites.values():
        if site.result == "failed" and site.error:
            lines.append(f"{site.name}: {site.error}")
    lines.append("queues: " + (", ".join(f"{q} {n}" for q, n in view.queues.items()) or "none"))
    shown = [f"{w} ({_worker_state(view, w, now)})" for w in sorted(view.workers)]
    lines.append("workers: " + (", ".join(shown) or "none"))
    lines.append(f"leases: {view.leases_held} held, {view.leases_expired} expired")
    return "\n".join(lines)


def _worker_state(view: Overview, worker: str, now: float) -> str:
    """``up``, or ``down: last heartbeat N s ago`` (a worker stopped, died or stalled)."""
    if view.workers.get(worker):
        return "up"
    last = view.heartbeats.get(worker)
    return f"down: last heartbeat {now - last:.0f} s ago" if last else "down"


def read(paths: Sequence[Path]) -> Overview:
    """The overview of the fleet the configs at ``paths`` name (``[queue]``).

    Raises:
        ConfigError: a config is wrong, or ``queue.backend`` is not ``"redis"`` (78).
        TemporaryError: Redis is unreachable (75).
    """
    from deploybot.serve.settings import load_settings

    settings = load_settings(paths, secrets=False)
    if settings.queue.backend != "redis":
        raise ConfigError(f"{settings.path}: 'queue.backend' is not \"redis\": there is no fleet")
    client = keys.connect(settings.queue, settings.path)
    try:
        return overview(client)
    except redis.RedisError as exc:
        raise TemporaryError(f"cannot reach Redis at {settings.queue.url}: {exc}") from None
    finally:
        client.close()
