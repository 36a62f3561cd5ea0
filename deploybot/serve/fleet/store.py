"""The per-site rules across machines, as Redis transactions: coalescing, the lease, results.

A site's life in Redis (keys in :mod:`.keys`):

1. **A trigger** (:meth:`FleetStore.trigger`: a push, the poller, a retry falling due) joins
   the site's one pending :class:`Want` (a newer commit replaces an older one; a build
   outranks an outbox delivery) and, when no RQ job is queued for the site yet, queues one
   in the same transaction: so however many pushes arrive, one job waits per site.
2. **A job** (:meth:`FleetStore.acquire`) takes the site's lease (``SET NX PX``: a token of
   its worker) and moves the pending Want to ``building``. When the lease is held, the
   job does nothing and leaves the Want pending: the holder queues the next job when it
   releases the lease, so two workers never build one site at once and no trigger is
   dropped. The holder renews the lease while it builds (:meth:`FleetStore.renew`).
3. **The end** (:meth:`FleetStore.release`): the result is recorded, the lease and the
   building record go, and a Want that came meanwhile gets its job, queued for this
   worker (it has the site's state warm). A failure backs off as ``deploybot serve``
   does (1 min doubling to 1 h; a push of another commit lifts it).
4. **A dead holder**: its worker's heartbeat expires (or its lease does); :mod:`.sweep`
   takes the lease over, makes the building record pending again and queues a job, so
   another worker builds the site.

Every step is one ``MULTI``/``EXEC`` under ``WATCH`` of the site's keys (redis-py's
``transaction``: retried when another client changed one of them meanwhile), so a crash
at any point leaves either the state before or the state after. RQ's job is written in
the same transaction (``Queue.enqueue_job(pipeline=...)``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from rq import Queue
from rq.job import Job

from deploybot.config.schema import QueueConfig
from deploybot.serve.backoff import LOCKED_RETRY, POST_DUE_SPACING, backoff_delay
from deploybot.serve.fleet import keys

log = logging.getLogger("deploybot.fleet")

JOB_FUNCTION = "deploybot.serve.fleet.job.run"
RESULT_TTL = 600
FAILURE_TTL = 86400
BUILD, DELIVER = "build", "deliver"

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


@dataclass(frozen=True)
class Want:
    """What a site waits for: ``job`` :data:`BUILD` or :data:`DELIVER` (only an outbox
    retry), ``commit`` the newest source commit a trigger named (None: unknown, the build
    fetches the branch head anyway), ``why`` the last trigger (for the log) and ``since``
    the first trigger's Unix time (s)."""

    job: str
    commit: str | None
    why: str
    since: float

    def joined(self, newer: Want | None) -> Want:
        """This Want and a ``newer`` one as one: the newer commit and reason, a build if
        either is one, the older time."""
        if newer is None:
            return self
        job = BUILD if BUILD in (self.job, newer.job) else DELIVER
        return Want(job, newer.commit or self.commit, newer.why, min(self.since, newer.since))

    def dumps(self) -> str:
        """The JSON stored in Redis."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, raw: bytes | str | None) -> Want | None:
        """The Want stored as ``raw`` (None for None, or for what is no Want)."""
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            return cls(str(data["job"]), data.get("commit"), str(data["why"]), float(data["since"]))
        except (ValueError, KeyError, TypeError):
            log.warning("dropped an unreadable pending record: %.80r", raw)
            return None


@dataclass(frozen=True)
class Outcome:
    """How a job ended, as the worker tells :meth:`FleetStore.release`: ``status``
    (``published``, ``unchanged``, ``up-to-date``, ``older``, ``delivered``, ``failed``,
    ``locked``), ``seconds``, the commits, ``error`` (one line), ``temporary`` (a retry of
    the same commit may succeed), what waits in the site's outbox (``outbox_due``: Unix
    time of the earliest retry, None when nothing waits), ``mail``, what the job did
    with its messages, for the log (:func:`deploybot.serve.build_process.describe_mail`),
    and ``next_future``: the date (Unix s) of the first post the published build holds
    back, or None (:attr:`deploybot.serve.runner.JobResult.next_future`); ``emails_refused``:
    how many messages the job found refused for good (its log line is then a warning)."""

    status: str
    seconds: float = 0.0
    source_commit: str | None = None
    build_commit: str | None = None
    error: str | None = None
    temporary: bool = False
    outbox_emails: int = 0
    outbox_webhooks: int = 0
    outbox_due: float | None = None
    mail: str = ""
    next_future: float | None = None
    emails_refused: int = 0


@dataclass(frozen=True)
class Acquired:
    """:meth:`FleetStore.acquire`'s answer: ``state`` ``acquired`` (``want`` is the job),
    ``busy`` (``holder`` holds the lease) or ``idle`` (nothing is wanted)."""

    state: str
    want: Want | None = None
    holder: str | None = None


def as_str(value: Any) -> str | None:
    """A Redis reply as text: bytes decoded as UTF-8, anything else (None, str) as it is."""
    return value.decode() if isinstance(value, bytes) else value


class FleetStore:
    """The fleet's records for ``client``'s Redis; ``queue``: the ``[queue]`` settings
    (timeouts; the default shared queue)."""

    def __init__(self, client: keys.Client, queue: QueueConfig) -> None:
        self.r = client
        self.config = queue
        self._renew = client.register_script(_RENEW)

    def register(self, sites: Mapping[str, str]) -> None:
        """Record the served ``sites`` (name -> shared queue), for the sweep and status."""
        if sites:
            self.r.hset(keys.SITES, mapping=dict(sites))

    def trigger(self, site: str, want: Want, *, now: float | None = None) -> str | None:
        """Join ``want`` into ``site``'s pending Want; queue an RQ job for it when none is
        queued and the site does not wait for a backoff of the same commit. Returns the
        new job's id, or None. Raises redis' ConnectionError when Redis is unreachable."""
        now = time.time() if now is None else now

        def transaction(pipe: keys.Pipe) -> str | None:
            old = Want.loads(pipe.get(keys.pending(site)))
            joined = old.joined(want) if old is not None else want
            marker = pipe.get(keys.queued(site))
            wait = self._held_back(pipe, site, joined, now)
            target = self.target_queue(pipe, site) if marker is None and wait is None else ""
            pipe.multi()
            pipe.set(keys.pending(site), joined.dumps())
            if wait is not None:
                pipe.zadd(keys.DELAYED, {site: wait})
            return self.enqueue(pipe, site, target, now) if target else None

        watched = (keys.pending(site), keys.queued(site), keys.site(site))
        job: str | None = self.r.transaction(transaction, *watched, value_from_callable=True)
        return job

    def acquire(self, site: str, job_id: str, token: str, worker: str) -> Acquired:
        """Job ``job_id`` of ``worker`` asks for ``site``'s lease (``token``, for
        ``lease_ttl``); see the module doc. A building record left by a dead holder is
        taken over (joined into the Want)."""
        now = time.time()
        ttl = int(self.config.lease_ttl * 1000)

        def transaction(pipe: keys.Pipe) -> Acquired:
            holder = as_str(pipe.get(keys.lease(site)))
            ours = as_str(pipe.get(keys.queued(site))) == job_id
            pending = Want.loads(pipe.get(keys.pending(site)))
            orphan = Want.loads(pipe.get(keys.building(site)))
            pipe.multi()
            if ours:  # this job has run: a new trigger may queue the next one
                pipe.delete(keys.queued(site))
                pipe.zrem(keys.QUEUED_AT, site)
            if holder is not None:
                return Acquired("busy", holder=holder)
            want = orphan.joined(pending) if orphan is not None else pending
            if want is None:
                return Acquired("idle")
            pipe.set(keys.lease(site), token, px=ttl)
            pipe.delete(keys.pending(site))
            pipe.set(keys.building(site), want.dumps())
            pipe.sadd(keys.ACTIVE, site)
            pipe.hset(keys.site(site), mapping={"worker": worker, "started": now})
            event = {"event": "acquired", "worker": worker, "token": token, "job": want.job}
            if orphan is not None:
                event["took_over"] = "1"
            self.log_event(pipe, site, event)
            return Acquired("acquired", want)

        watched = [keys.lease(site), keys.queued(site), keys.pending(site), keys.building(site)]
        got: Acquired = self.r.transaction(transaction, *watched, value_from_callable=True)
        return got

    def renew(self, site: str, token: str) -> bool:
        """Extend ``site``'s lease by ``lease_ttl`` if ``token`` still holds it."""
        ttl = int(self.config.lease_ttl * 1000)
        return bool(self._renew(keys=[keys.lease(site)], args=[token, ttl]))

    def holds(self, site: str, token: str) -> bool:
        """True while ``token`` holds ``site``'s lease."""
        return as_str(self.r.get(keys.lease(site))) == token

    def release(self, site: str, token: str, worker: str, outcome: Outcome) -> bool:
        """Record ``outcome`` and give ``site``'s lease up; queue the next job (for this
        worker) when a Want came meanwhile or a retry is due at once. False, and nothing
        written, when ``token`` no longer holds the lease (it expired: the one who took
        it over owns the records now)."""
        now = time.time()

        def transaction(pipe: keys.Pipe) -> bool:
            if as_str(pipe.get(keys.lease(site))) != token:
                return False
            built = Want.loads(pipe.get(keys.building(site)))
            pending = Want.loads(pipe.get(keys.pending(site)))
            failures = int(pipe.hget(keys.site(site), "failures") or 0)
            marker = pipe.get(keys.queued(site))
            fields, retry, pending = _result(outcome, built, pending, failures, now)
            wait = None
            if pending is not None and retry is not None:
                failed = fields.get("failed_for") or None
                held = outcome.status == "locked" or pending.commit in (None, failed)
                wait = retry if held else None
            target = (
                self.target_queue(pipe, site) if pending and marker is None and not wait else ""
            )
            pipe.multi()
            pipe.delete(keys.lease(site), keys.building(site))
            pipe.srem(keys.ACTIVE, site)
            pipe.hset(keys.site(site), mapping=fields)
            if pending is not None:
                pipe.set(keys.pending(site), pending.dumps())
            else:  # built already by this build, or never wanted
                pipe.delete(keys.pending(site))
            if wait is not None:
                pipe.zadd(keys.DELAYED, {site: wait})
            if outcome.outbox_due is not None:
                pipe.zadd(keys.DELAYED, {site: outcome.outbox_due}, lt=True)  # LT also adds
            _post_due(pipe, site, outcome, now)
            if target:
                self.enqueue(pipe, site, target, now)
            self.log_event(pipe, site, {"event": "released", "worker": worker, "token": token,
                                   "result": outcome.status, "seconds": f"{outcome.seconds:.3f}",
                                   "source": outcome.source_commit or "",
                                   "build": outcome.build_commit or ""})  # fmt: skip
            return True

        watched = [keys.lease(site), keys.pending(site), keys.queued(site), keys.building(site)]
        done: bool = self.r.transaction(transaction, *watched, value_from_callable=True)
        return done

    def _held_back(self, pipe: keys.Pipe, site: str, want: Want, now: float) -> float | None:
        """When the site waits for a backoff after failing on ``want.commit``: the Unix
        time it is tried again (a push of another commit is not held back)."""
        failed, retry_at = pipe.hmget(keys.site(site), "failed_for", "retry_at")
        if want.commit is None or as_str(failed) != want.commit:
            return None
        when = float(retry_at or 0)
        return when if when > now else None

    def target_queue(self, pipe: keys.Pipe, site: str) -> str:
        """The queue for ``site``'s next job: the affinity queue of the worker that last
        held its lease while that worker runs, else the site's shared queue."""
        worker = as_str(pipe.hget(keys.site(site), "worker"))
        if worker and pipe.exists(keys.alive(worker)):
            return keys.affinity_queue(worker)
        return as_str(pipe.hget(keys.SITES, site)) or self.config.name

    def enqueue(self, pipe: keys.Pipe, site: str, queue: str, now: float) -> str:
        """Queue an RQ job for ``site`` on ``queue`` inside the transaction ``pipe``, marked
        as the site's queued job since ``now`` (Unix time, s); returns the job's id."""
        job_id = f"deploybot-{site}-{uuid.uuid4().hex[:16]}"
        job = Job.create(
            JOB_FUNCTION, args=(site,), id=job_id, connection=self.r,
            timeout=int(self.config.job_timeout), result_ttl=RESULT_TTL,
            failure_ttl=FAILURE_TTL, description=f"deploybot: build {site}",
        )  # fmt: skip
        Queue(queue, connection=self.r).enqueue_job(job, pipeline=pipe)
        pipe.set(keys.queued(site), job_id)
        pipe.zadd(keys.QUEUED_AT, {site: now})
        return job_id

    @staticmethod
    def log_event(pipe: keys.Pipe, site: str, fields: dict[str, str]) -> None:
        """Append ``{"site": site, **fields}`` to the lease log (:data:`keys.LEASE_LOG`,
        trimmed to about :data:`keys.LEASE_LOG_LENGTH` entries) inside ``pipe``."""
        pipe.xadd(
            keys.LEASE_LOG, {"site": site, **fields}, maxlen=keys.LEASE_LOG_LENGTH,
            approximate=True,
        )  # fmt: skip


def _post_due(pipe: keys.Pipe, site: str, outcome: Outcome, now: float) -> None:
    """After a good build, in ``pipe``: its held-back post's date (``next_future``, at
    least :data:`~deploybot.serve.backoff.POST_DUE_SPACING` from ``now``) is when the
    sweep triggers ``site`` again (:data:`keys.POSTS_DUE`); none held back, no such date."""
    if outcome.status in ("failed", "locked", "delivered"):
        return  # says nothing of what the published build holds back
    if outcome.next_future is None:
        pipe.zrem(keys.POSTS_DUE, site)
    else:
        pipe.zadd(keys.POSTS_DUE, {site: max(outcome.next_future, now + POST_DUE_SPACING)})


def _result(
    outcome: Outcome, built: Want | None, pending: Want | None, failures: int, now: float
) -> tuple[dict[str, str | float | int], float | None, Want | None]:
    """The status fields for ``outcome``, when a retry is due (None: not before a trigger)
    and the Want left pending (a failed build's own retry joined in)."""
    fields: dict[str, str | float | int] = {
        "result": outcome.status, "finished": now, "seconds": round(outcome.seconds, 3),
        "error": outcome.error or "", "outbox_emails": outcome.outbox_emails,
        "outbox_webhooks": outcome.outbox_webhooks,
    }  # fmt: skip
    for name, value in (("source_commit", outcome.source_commit),
                        ("build_commit", outcome.build_commit)):  # fmt: skip
        if value:
            fields[name] = value
    if outcome.status == "locked":
        again = Want(BUILD, built.commit if built else None, "retry: the lock was held", now)
        return fields, now + LOCKED_RETRY, again.joined(pending)
    if outcome.status != "failed":
        fields.update(failures=0, retry_at=0, failed_for="")
        if outcome.status != "delivered":
            fields["last_success"] = now
        if pending and pending.commit and pending.commit == outcome.source_commit:
            pending = None  # every push since named the commit this build built
        return fields, None, pending
    failures += 1
    retry_at = now + backoff_delay(failures)
    failed_for = outcome.source_commit or (built.commit if built else None) or ""
    fields.update(failures=failures, retry_at=retry_at, failed_for=failed_for)
    if outcome.temporary:
        again = Want(BUILD, failed_for or None, f"retry after {failures} failure(s)", now)
        pending = again.joined(pending)
    return fields, retry_at, pending
