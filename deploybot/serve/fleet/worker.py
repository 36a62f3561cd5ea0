"""``deploybot worker``: take build jobs from the fleet's RQ queues and run them.

A worker listens on its own queue first (``deploybot@<name>``: builds of the sites it built
last, whose mirrors and render cache it has warm) and then on the shared queues
(``--queues``, default each site's ``[queue] name``). RQ's ``Worker`` forks a work horse
per job (:mod:`.job`), so a build's memory goes back to the system when it ends, and one
site's render never stalls the worker.

Beside RQ's loop, a thread sends the worker's heartbeat: every fifth of
``heartbeat_timeout`` it sets ``deploybot:worker:<name>`` to this process's instance id,
for ``heartbeat_timeout`` s. While it is there the worker is up (affinity sends it its
sites' builds); when it expires (the worker died, or stalled) or names another instance
(the worker restarted), the worker is down: its own queue goes to the shared queue and the
lease of the build it ran is taken over, at once (:mod:`.sweep`). Another thread records
the sites and runs the fleet's upkeep. And when a build's work horse ended without giving
its lease back (it was killed: the OOM killer, a signal), the worker gives it back for it,
as a failed build (:func:`left_behind`).

Redis going away: RQ retries its wait for jobs with a growing pause; when RQ gives up on
anything else, the worker starts RQ's loop again after a pause, so it reconnects by
itself. SIGTERM or SIGINT: RQ's warm shutdown (the running build finishes and releases
its lease; no new job starts), then the worker's own queue is handed to the shared queue
and the process exits 0. A second signal ends the running build at once (its lease then
expires and another worker builds the site).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import redis
from rq import Queue, Worker
from rq.job import Job
from rq.timeouts import UnixSignalDeathPenalty

from deploybot.serve.fleet import job, keys
from deploybot.serve.fleet.store import JOB_FUNCTION, FleetStore, Outcome, as_str
from deploybot.serve.fleet.sweep import SWEEP_EVERY, Sweeper
from deploybot.serve.settings import Settings, load_settings
from deploybot.state import statedir
from deploybot.support import logs
from deploybot.support.errors import ConfigError

log = logging.getLogger("deploybot.fleet")

HEARTBEATS = 5
"""Heartbeats per ``heartbeat_timeout``: a worker counts as down after missing five."""
RESTART_PAUSE_MAX = 30.0
_MAIN_PID = 0


class _HorseFreeDeathPenalty(UnixSignalDeathPenalty):
    """RQ's job timeout, kept by the worker alone (it ends a horse that runs past
    ``job_timeout`` + 60 s): in the horse, SIGALRM is the render's highlighting clock."""

    def setup_death_penalty(self) -> None:
        if os.getpid() == _MAIN_PID:
            super().setup_death_penalty()  # type: ignore[no-untyped-call]

    def cancel_death_penalty(self) -> None:
        if os.getpid() == _MAIN_PID:
            super().cancel_death_penalty()  # type: ignore[no-untyped-call]


class _Worker(Worker):
    death_penalty_class = _HorseFreeDeathPenalty

    def handle_warm_shutdown_request(self) -> None:
        # RQ says so at INFO on its own logger, which runs at WARNING here.
        log.info("stopping: a running build finishes first (a second signal ends it)")
        super().handle_warm_shutdown_request()  # type: ignore[no-untyped-call]

    def execute_job(self, job_: Job, queue: Queue) -> None:
        super().execute_job(job_, queue)
        if job_.func_name == JOB_FUNCTION and job_.args:
            try:
                left_behind(self.connection, str(job_.args[0]))
            except redis.RedisError as exc:  # the lease expires; the sweep takes it then
                log.warning("site %s: cannot look at its lease: %s", job_.args[0], keys.reason(exc))


def work(
    paths: Sequence[Path],
    *,
    name: str | None = None,
    state: Path | None = None,
    queues: Sequence[str] = (),
    verbose: bool = False,
) -> int:
    """Run a worker until SIGTERM or SIGINT (see the module doc); return the exit code.

    Args:
        paths: the configs, as ``deploybot serve`` takes them (the daemon's, then sites).
        name: the worker's name (default: the host name); one per worker of the fleet.
        state: the folder holding this worker's state directory of each site
            (``<state>/<site>``); default each site's own ``state.dir``.
        queues: the shared queues to take jobs from (default: those of the sites).

    Raises:
        ConfigError: a config is wrong (a site's file that does not load is logged and
            its site not built, while another loads), or ``queue.backend`` is not
            ``"redis"`` (exit 78).
        LockHeldError: another worker runs on ``state`` (exit 75).
    """
    global _MAIN_PID
    settings = load_settings(paths, secrets=False, partial=True)
    if settings.queue.backend != "redis":
        raise ConfigError(
            f"{settings.path}: 'queue.backend' must be \"redis\" for deploybot worker "
            f'(it is "{settings.queue.backend}": deploybot serve builds by itself)'
        )
    name = name or socket.gethostname().split(".")[0]
    logs.setup(verbose=verbose, prefix=f"worker {name}: ")
    logging.getLogger("deploybot.fleet").setLevel(logging.DEBUG if verbose else logging.INFO)
    for broken in settings.broken:  # its jobs fail, naming this worker; the others run
        log.error("not building a site: %s", broken.error)
    root = state.resolve() if state is not None else None
    held = (
        statedir.locked(root / "worker.lock", "another deploybot worker runs on") if root else None
    )
    with held or contextlib.nullcontext():
        _MAIN_PID = os.getpid()
        job.CONTEXT = job.Context(name, settings, root, _MAIN_PID, uuid.uuid4().hex[:16])
        _preload()
        shared = list(queues) or sorted({site.config.queue.name for site in settings.sites})
        upkeep = Upkeep(settings, name, job.CONTEXT.instance)
        upkeep.start()
        try:
            _loop(settings, name, [keys.affinity_queue(name), *shared], verbose)
        finally:
            upkeep.stop()
    log.info("stopped")
    return 0


def _loop(settings: Settings, name: str, queues: list[str], verbose: bool) -> None:
    """RQ's loop, started again after it gave up on Redis, until a stop signal."""
    pause = 1.0
    for attempt in itertools.count(1):
        try:
            worker = _Worker(
                queues, name=f"{name}.{os.getpid()}.{attempt}",
                connection=keys.connect(settings.queue, settings.path), worker_ttl=60,
                job_monitoring_interval=5,
            )  # fmt: skip
            log.info("taking jobs from %s", ", ".join(queues))
            worker.work(logging_level="DEBUG" if verbose else "WARNING")
        except redis.RedisError as exc:
            why = keys.unreachable(settings.queue, settings.path, exc)
            log.error("%s: trying again in %g s", why, pause)
            time.sleep(pause)
            pause = min(pause * 2, RESTART_PAUSE_MAX)
            continue
        if worker._shutdown_requested_date is not None:  # a stop signal: RQ has finished
            return
        log.warning("RQ's loop ended (Redis unreachable?): starting it again in %g s", pause)
        time.sleep(pause)
        pause = min(pause * 2, RESTART_PAUSE_MAX)


def _preload() -> None:
    """Import the build's modules once, so each forked horse starts with them: the
    daemon's warm builder's list (:data:`deploybot.serve.zygote.WARM_MODULES`), which
    holds what a run imports only when it needs it (Liquid, highlighting, the email)."""
    import deploybot.render.engine.incremental  # noqa: F401
    from deploybot.serve.zygote import warm_up

    seconds = warm_up()
    log.debug("the build's modules imported in %.2f s", seconds)


class Upkeep:
    """The worker's threads: its heartbeat; the sites' record and the fleet's upkeep (the
    module doc). Each has a Redis client of its own (not RQ's), so a slow sweep never
    delays a heartbeat."""

    def __init__(self, settings: Settings, name: str, instance: str) -> None:
        self.settings = settings
        self.name = name
        self.instance = instance
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._beat, name="heartbeat", daemon=True),
            threading.Thread(target=self._run, name="upkeep", daemon=True),
        ]
        self._registered = False
        self._client = keys.connect(settings.queue, settings.path)
        self._beat_client = keys.connect(settings.queue, settings.path)
        self.store = FleetStore(self._client, settings.queue)
        self.sweeper = Sweeper(self.store)

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop; drop the heartbeat and hand this worker's queue to the shared one."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        try:
            if as_str(self._client.get(keys.alive(self.name))) == self.instance:
                self._client.delete(keys.alive(self.name))
            moved = hand_over(self.store, self.name)
            if moved:
                log.info("%d job(s) of this worker's queue moved to the shared queue", moved)
        except redis.RedisError as exc:
            log.warning(
                "at stop: %s (this worker's queue moves when its heartbeat expires)",
                keys.reason(exc),
            )

    def _beat(self) -> None:
        timeout = self.settings.queue.heartbeat_timeout
        while not self._stop.is_set():
            try:
                self.heartbeat()
            except redis.RedisError as exc:
                log.debug("heartbeat: %s", exc)
            self._stop.wait(timeout / HEARTBEATS)

    def heartbeat(self) -> None:
        """Say this worker is up for ``heartbeat_timeout`` s more."""
        ttl = int(self.settings.queue.heartbeat_timeout * 1000)
        pipe = self._beat_client.pipeline(transaction=False)
        pipe.set(keys.alive(self.name), self.instance, px=ttl)
        pipe.hset(keys.WORKERS, self.name, time.time())
        pipe.execute()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.beat()
            except redis.RedisError as exc:
                log.debug("upkeep: %s", exc)
            except Exception as exc:  # a bug: say so; the upkeep goes on
                log.exception("upkeep: %s", exc)
            self._stop.wait(SWEEP_EVERY)

    def beat(self) -> None:
        """One round of the upkeep: record the sites once, sweep."""
        if not self._registered:
            self.store.register({s.name: s.config.queue.name for s in self.settings.sites})
            self._registered = True
        self.sweeper.sweep()


def left_behind(client: keys.Client, site: str) -> bool:
    """After a work horse of this worker ended: when ``site``'s lease is still held by this
    worker's instance, the horse was killed before it could release it (the OOM killer, a
    signal, a crash). Release it now, as a failed build (a retry after the backoff, at once
    for a push of another commit), rather than leave the site waiting ``lease_ttl`` for it
    to expire; a horse that is killed each time (a site too big for the machine) so backs
    off like any failing build. True when it did."""
    context = job.CONTEXT
    assert context is not None
    token = as_str(client.get(keys.lease(site)))
    if token is None or keys.holder(token) != (context.worker, context.instance):
        return False
    error = f"the work horse of {context.worker} ended without a result (killed? out of memory?)"
    store = FleetStore(client, context.settings.queue)
    released = store.release(
        site, token, context.worker, Outcome("failed", error=error, temporary=True)
    )
    if released:
        log.error("site %s: %s", site, error)
    return released


def hand_over(store: FleetStore, worker: str) -> int:
    """Move every job waiting in ``worker``'s own queue to its site's shared queue."""
    own = Queue(keys.affinity_queue(worker), connection=store.r)
    sweeper = Sweeper(store)
    moved = 0
    for job_id in own.get_job_ids():
        site = job_id.removeprefix("deploybot-").rsplit("-", 1)[0]
        moved += sweeper.to_shared(site, job_id, own.name)
    return moved
