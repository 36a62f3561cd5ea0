"""The fleet's upkeep, run about once a second by every worker and by ``deploybot serve``
(one of them at a time: a ``SET NX PX`` lock), so the fleet heals with any one of them up:

- **Expired leases** (a worker died, or stalled past ``lease_ttl``): the site's building
  record becomes pending again, joined with any newer Want, and a job is queued, so another
  worker builds the site. The lease log records ``expired``.
- **Affinity**: a job waiting in a worker's own queue moves to the site's shared queue after
  ``affinity_timeout`` s, or at once when that worker no longer runs.
- **Lost jobs**: a site whose queued job no longer exists, ended, or was taken from its
  queue but never took the lease (its worker died, or lost Redis, right after taking it)
  gets a new one, ``lease_ttl`` s after it was queued.
- **Delayed wants**: a backoff or an outbox retry falling due triggers the site again.
"""

from __future__ import annotations

import logging
import time

from rq import Queue
from rq.job import Job

from deploybot.fleet import keys
from deploybot.fleet.store import DELIVER, FleetStore, Want, as_str

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
        self.queued_jobs(now)
        self.delayed(now)
        return True

    def expired_leases(self) -> list[str]:
        """Sites whose lease expired while building: made pending again; returns them."""
        found = []
        for raw in self.r.smembers(keys.ACTIVE):
            site = raw.decode()
            if not self.r.exists(keys.lease(site)) and self._recover(site):
                found.append(site)
        return found

    def _recover(self, site: str) -> bool:
        store = self.store
        now = time.time()

        def transaction(pipe: keys.Pipe) -> bool:
            if pipe.exists(keys.lease(site)):
                return False
            orphan = Want.loads(pipe.get(keys.building(site)))
            pending = Want.loads(pipe.get(keys.pending(site)))
            marker = pipe.get(keys.queued(site))
            worker = as_str(pipe.hget(keys.site(site), "worker")) or "?"
            # Not the holder's own queue: it failed to finish, and may be gone.
            shared = as_str(pipe.hget(keys.SITES, site)) or store.config.name
            target = shared if orphan is not None and marker is None else ""
            pipe.multi()
            pipe.srem(keys.ACTIVE, site)
            if orphan is None:
                return False
            why = f"the lease of {worker} expired"
            again = Want(orphan.job, orphan.commit, why, orphan.since).joined(pending)
            pipe.set(keys.pending(site), again.dumps())
            pipe.delete(keys.building(site))
            pipe.hincrby(keys.STATS, "leases_expired", 1)
            store.log_event(pipe, site, {"event": "expired", "worker": worker})
            if target:
                store.enqueue(pipe, site, target, now)
            return True

        watched = [keys.lease(site), keys.building(site), keys.pending(site), keys.queued(site)]
        done: bool = self.r.transaction(transaction, *watched, value_from_callable=True)
        if done:
            log.warning("site %s: a worker's lease expired during a build: built again", site)
        return done

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

    def to_shared(self, site: str, job_id: str, origin: str) -> None:
        """Move job ``job_id`` of ``site`` from the queue ``origin`` (a worker's own) to the
        site's shared queue, when it still waits there (one Lua script: atomic)."""
        shared = as_str(self.r.hget(keys.SITES, site)) or self.store.config.name
        moved = self._move(
            keys=[Queue(origin, connection=self.r).key, Queue(shared, connection=self.r).key,
                  Job.key_for(job_id)],
            args=[job_id, shared],
        )  # fmt: skip
        if moved:
            log.info("site %s: its build waited for %s: moved to %s", site, origin, shared)

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
        """Trigger the sites whose backoff or outbox retry fell due."""
        for raw in self.r.zrangebyscore(keys.DELAYED, "-inf", now):
            site = raw.decode()
            if self.r.zrem(keys.DELAYED, site):
                self.store.trigger(site, Want(DELIVER, None, "retry due", now), now=now)
