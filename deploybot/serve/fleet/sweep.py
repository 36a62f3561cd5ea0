"""The fleet's upkeep, run about once a second by every worker and by ``deploybot serve``
(one of them at a time: a ``SET NX PX`` lock), so the fleet heals with any one of them up:

- **Leases without a holder**: a lease that expired (a worker stalled past ``lease_ttl``),
  or whose worker is down (its heartbeat, renewed every fifth of ``heartbeat_timeout``,
  expired: it died, or stalled; or it restarted since, as another instance), is taken
  over: the site's building record becomes pending again, joined with any newer Want, and
  a job is queued, so another worker builds the site at once. The lease log records
  ``expired`` (with ``why`` for a worker down).
- **Affinity**: a job waiting in a worker's own queue moves to the site's shared queue after
  ``affinity_timeout`` s, or at once when that worker is down.
- **Lost jobs**: a site whose queued job no longer exists, ended, or was taken from its
  queue but never took the lease (its worker died, or lost Redis, right after taking it)
  gets a new one, ``lease_ttl`` s after it was queued.
- **Delayed wants**: a backoff or an outbox retry falling due triggers the site again;
  so does the date of a post its published build holds back (a build then).
"""

from __future__ import annotations

import logging
import time

from rq import Queue
from rq.job import Job

from deploybot.serve.fleet import keys
from deploybot.serve.fleet.store import BUILD, DELIVER, FleetStore, Want, as_str

log = logging.getLogger("deploybot.fleet")

SWEEP_EVERY = 1.0
_ENDED = {"finished", "failed", "stopped", "canceled"}
_MOVE = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 1 then
  redis.call('HSET', KEYS[3], 'origin', ARGV[2])
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('SADD', 'rq:queues', KEYS[2])
  return 1
end
return 0
"""


class Sweeper:
    """The upkeep of ``store``'s fleet (see the module doc)."""

    def __init__(self, store: FleetStore) -> None:
        self.store = store
        self.r = store.r
        self._move = self.r.register_script(_MOVE)

    def sweep(self, *, now: float | None = None, force: bool = False) -> bool:
        """One round, unless another process swept less than :data:`SWEEP_EVERY` s ago
        (``force``: anyway). True when it ran. Raises redis' errors."""
        lock = int(SWEEP_EVERY * 900)
        if not force and not self.r.set(keys.SWEEP_LOCK, "1", nx=True, px=lock):
            return False
        now = time.time() if now is None else now
        self.expired_leases()
        self.down_queues()
        self.queued_jobs(now)
        self.delayed(now)
        return True

    def expired_leases(self) -> list[str]:
        """Sites whose build lost its holder: the lease expired, or its worker is down (no
        heartbeat for ``heartbeat_timeout`` s, or restarted since: see
        :func:`keys.is_down`); each is made pending again (:meth:`take_over`). Returns
        them. Two pipelined round trips read every building site's lease and every holder's
        heartbeat."""
        sites = sorted(raw.decode() for raw in self.r.smembers(keys.ACTIVE))
        if not sites:
            return []
        pipe = self.r.pipeline(transaction=False)
        for site in sites:
            pipe.get(keys.lease(site))
        tokens = {site: as_str(t) for site, t in zip(sites, pipe.execute(), strict=True)}
        workers = sorted({keys.holder(t)[0] for t in tokens.values() if t is not None})
        pipe = self.r.pipeline(transaction=False)
        for worker in workers:
            pipe.get(keys.alive(worker))
        beats = {w: as_str(b) for w, b in zip(workers, pipe.execute(), strict=True)}
        found = []
        for site, token in tokens.items():
            if token is None:
                why = None
            else:
                worker, instance = keys.holder(token)
                if not keys.is_down(beats.get(worker), instance):
                    continue
                why = self._down_why(worker, beats.get(worker))
            if self.take_over(site, token, why):
                found.append(site)
        return found

    def _down_why(self, worker: str, heartbeat: str | None) -> str:
        if heartbeat is None:
            timeout = self.store.config.heartbeat_timeout
            return f"worker {worker} is down (no heartbeat for {timeout:g} s)"
        return f"worker {worker} restarted since it took the lease"

    def take_over(self, site: str, token: str | None = None, why: str | None = None) -> bool:
        """Build ``site`` again, on another worker: its building record becomes pending
        (joined with any newer Want) and a job is queued on the shared queue. With
        ``token`` (the lease's holder is down, for reason ``why``), that lease is deleted in
        the same transaction, if ``token`` still holds it and the holder's heartbeat still
        says it is down; without, only when the lease has expired. The holder can then no
        longer renew the lease nor store the shared records (:mod:`.shared`: it stops
        before its next push or send); a push it already has under way is a
        compare-and-swap on the publish branch (:func:`deploybot.git.repository.push_refs`), so
        it lands only if no build landed since its fetch. True when the site was taken over.
        """
        store = self.store
        now = time.time()
        worker_of = keys.holder(token)[0] if token is not None else None

        def transaction(pipe: keys.Pipe) -> bool:
            lease = as_str(pipe.get(keys.lease(site)))
            if token is None and lease is not None:
                return False
            if token is not None:
                assert worker_of is not None
                beat = as_str(pipe.get(keys.alive(worker_of)))
                if lease != token or not keys.is_down(beat, keys.holder(token)[1]):
                    return False
            orphan = Want.loads(pipe.get(keys.building(site)))
            pending = Want.loads(pipe.get(keys.pending(site)))
            marker = pipe.get(keys.queued(site))
            worker = worker_of or as_str(pipe.hget(keys.site(site), "worker")) or "?"
            # Not the holder's own queue: it failed to finish, and may be gone.
            shared = as_str(pipe.hget(keys.SITES, site)) or store.config.name
            target = shared if orphan is not None and marker is None else ""
            pipe.multi()
            if token is not None:
                pipe.delete(keys.lease(site))
            pipe.srem(keys.ACTIVE, site)
            if orphan is None:
                return False
            reason = why or f"the lease of {worker} expired"
            again = Want(orphan.job, orphan.commit, reason, orphan.since).joined(pending)
            pipe.set(keys.pending(site), again.dumps())
            pipe.delete(keys.building(site))
            pipe.hincrby(keys.STATS, "leases_expired", 1)
            event = {"event": "expired", "worker": worker}
            if why:
                event["why"] = why
            store.log_event(pipe, site, event)
            if target:
                store.enqueue(pipe, site, target, now)
            return True

        watched = [keys.lease(site), keys.building(site), keys.pending(site), keys.queued(site)]
        if worker_of is not None:
            watched.append(keys.alive(worker_of))
        done: bool = self.r.transaction(transaction, *watched, value_from_callable=True)
        if done:
            what = why or "a worker's lease expired during a build"
            log.warning("site %s: %s: its build is taken over", site, what)
        return done

    def down_queues(self) -> int:
        """Move the jobs waiting in the own queue of every worker that is down (no
        heartbeat) to their sites' shared queues, at once; how many moved. (New jobs go
        to a worker's own queue only while its heartbeat is there:
        :meth:`FleetStore.target_queue`.)"""
        workers = sorted(w.decode() for w in self.r.hkeys(keys.WORKERS))
        pipe = self.r.pipeline(transaction=False)
        for worker in workers:
            pipe.exists(keys.alive(worker))
            pipe.llen(Queue(keys.affinity_queue(worker), connection=self.r).key)
        answers = pipe.execute()
        moved = 0
        for i, worker in enumerate(workers):
            up, waiting = answers[2 * i : 2 * i + 2]
            if up or not waiting:
                continue
            own = Queue(keys.affinity_queue(worker), connection=self.r)
            for job_id in own.get_job_ids():
                site = job_id.removeprefix("deploybot-").rsplit("-", 1)[0]
                moved += self.to_shared(site, job_id, own.name)
        return moved

    def queued_jobs(self, now: float) -> None:
        """Move jobs past their affinity wait; replace lost ones (see the module doc)."""
        config = self.store.config
        oldest = now - min(config.affinity_timeout, config.lease_ttl)
        for raw, at in self.r.zrangebyscore(keys.QUEUED_AT, "-inf", oldest, withscores=True):
            site = raw.decode()
            job_id = as_str(self.r.get(keys.queued(site)))
            if job_id is None:
                self.r.zrem(keys.QUEUED_AT, site)
                continue
            status, origin = (
                as_str(v) for v in self.r.hmget(Job.key_for(job_id), "status", "origin")
            )
            waiting = status == "queued" and origin is not None and self._in_queue(origin, job_id)
            if waiting and origin is not None and origin.startswith(keys.AFFINITY_PREFIX):
                worker = origin.removeprefix(keys.AFFINITY_PREFIX)
                late = now - at > config.affinity_timeout
                if late or not self.r.exists(keys.alive(worker)):
                    self.to_shared(site, job_id, origin)
            elif waiting:
                continue
            elif status is None or status in _ENDED or now - at > config.lease_ttl:
                # Also "queued" but in no queue: a worker took it and died (or lost Redis)
                # before it could even mark it started.
                self._replace(site, job_id, now)

    def _in_queue(self, queue: str, job_id: str) -> bool:
        """True when ``job_id`` waits in ``queue`` (or RQ's step between queue and worker)."""
        key = Queue(queue, connection=self.r).key
        return any(self.r.lpos(k, job_id) is not None for k in (key, key + ":intermediate"))

    def to_shared(self, site: str, job_id: str, origin: str) -> bool:
        """Move job ``job_id`` of ``site`` from the queue ``origin`` (a worker's own) to the
        site's shared queue, when it still waits there (one Lua script: atomic); True when
        it did."""
        shared = as_str(self.r.hget(keys.SITES, site)) or self.store.config.name
        moved = self._move(
            keys=[Queue(origin, connection=self.r).key, Queue(shared, connection=self.r).key,
                  Job.key_for(job_id)],
            args=[job_id, shared],
        )  # fmt: skip
        if moved:
            log.info("site %s: its build waited for %s: moved to %s", site, origin, shared)
        return bool(moved)

    def _replace(self, site: str, job_id: str, now: float) -> None:
        store = self.store

        def transaction(pipe: keys.Pipe) -> None:
            if as_str(pipe.get(keys.queued(site))) != job_id:
                return
            wanted = pipe.exists(keys.pending(site))
            target = store.target_queue(pipe, site) if wanted else ""
            pipe.multi()
            pipe.delete(keys.queued(site))
            pipe.zrem(keys.QUEUED_AT, site)
            if target:
                store.enqueue(pipe, site, target, now)

        self.r.transaction(transaction, keys.queued(site), keys.pending(site))
        log.info("site %s: job %s was lost: queued again", site, job_id)

    def delayed(self, now: float) -> None:
        """Trigger the sites whose backoff or outbox retry fell due, and build those whose
        held-back post came due."""
        for raw in self.r.zrangebyscore(keys.DELAYED, "-inf", now):
            site = raw.decode()
            if self.r.zrem(keys.DELAYED, site):
                self.store.trigger(site, Want(DELIVER, None, "retry due", now), now=now)
        for raw in self.r.zrangebyscore(keys.POSTS_DUE, "-inf", now):
            site = raw.decode()
            if self.r.zrem(keys.POSTS_DUE, site):
                want = Want(BUILD, None, "a held-back post came due", now)
                self.store.trigger(site, want, now=now)
