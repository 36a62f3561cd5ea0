"""``deploybot worker``: take build jobs from the fleet's RQ queues and run them.

A worker listens on its own queue first (``deploybot@<name>``: builds of the sites it built
last, whose mirrors and render cache it has warm) and then on the shared queues
(``--queues``, default each site's ``[queue] name``). RQ's ``Worker`` forks a work horse
per job (:mod:`.job`), so a build's memory goes back to the system when it ends, and one
site's render never stalls the worker.

Beside RQ's loop, a thread keeps the worker's presence key (``deploybot:worker:<name>``,
which affinity looks at), records the sites, and runs the fleet's upkeep (:mod:`.sweep`).

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
from collections.abc import Sequence
from pathlib import Path

import redis
from rq import Queue, Worker
from rq.timeouts import UnixSignalDeathPenalty

from deploybot import statedir
from deploybot.daemon import logs
from deploybot.daemon.settings import Settings, load_settings
from deploybot.errors import ConfigError
from deploybot.fleet import job, keys
from deploybot.fleet.store import FleetStore
from deploybot.fleet.sweep import SWEEP_EVERY, Sweeper

log = logging.getLogger("deploybot.fleet")

ALIVE_TTL = 10.0
"""Seconds the presence key outlives the worker's last renewal of it."""
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
        ConfigError: a config is wrong, or ``queue.backend`` is not ``"redis"`` (exit 78).
        LockHeldError: another worker runs on ``state`` (exit 75).
    """
    global _MAIN_PID
    settings = load_settings(paths, secrets=False)
    if settings.queue.backend != "redis":
        raise ConfigError(
            f"{settings.path}: 'queue.backend' must be \"redis\" for deploybot worker "
            f'(it is "{settings.queue.backend}": deploybot serve builds by itself)'
        )
    name = name or socket.gethostname().split(".")[0]
    logs.setup(verbose=verbose, prefix=f"worker {name}: ")
    logging.getLogger("deploybot.fleet").setLevel(logging.DEBUG if verbose else logging.INFO)
    root = state.resolve() if state is not None else None
    held = (
        statedir.locked(root / "worker.lock", "another deploybot worker runs on") if root else None
    )
    with held or contextlib.nullcontext():
        _MAIN_PID = os.getpid()
        job.CONTEXT = job.Context(name, settings, root, _MAIN_PID)
        _preload()
        shared = list(queues) or sorted({site.config.queue.name for site in settings.sites})
        upkeep = Upkeep(settings, name)
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
            where = keys.where(settings.queue, settings.path)
            log.error("Redis unreachable (%s): %s: trying again in %g s", where, exc, pause)
            time.sleep(pause)
            pause = min(pause * 2, RESTART_PAUSE_MAX)
            continue
        if worker._shutdown_requested_date is not None:  # a stop signal: RQ has finished
            return
        log.warning("RQ's loop ended (Redis unreachable?): starting it again in %g s", pause)
        time.sleep(pause)
        pause = min(pause * 2, RESTART_PAUSE_MAX)


def _preload() -> None:
    """Import the build's modules once, so each forked horse starts with them."""
    import deploybot.pipeline
    import deploybot.render  # noqa: F401


class Upkeep:
    """The worker's thread: presence, the sites' record, the fleet's upkeep (module doc)."""

    def __init__(self, settings: Settings, name: str) -> None:
        self.settings = settings
        self.name = name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="upkeep", daemon=True)
        self._registered = False
        self._client = keys.connect(settings.queue, settings.path)  # not RQ's: this thread's own
        self.store = FleetStore(self._client, settings.queue)
        self.sweeper = Sweeper(self.store)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop; drop the presence key and hand this worker's queue to the shared one."""
        self._stop.set()
        self._thread.join(timeout=10)
        try:
            self._client.delete(keys.alive(self.name))
            moved = hand_over(self.store, self.name)
            if moved:
                log.info("%d job(s) of this worker's queue moved to the shared queue", moved)
        except redis.RedisError as exc:
            log.warning("at stop: %s (this worker's queue moves after affinity_timeout)", exc)

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
        """One round of the thread's work."""
        ttl = max(ALIVE_TTL, 3 * SWEEP_EVERY)
        self._client.set(keys.alive(self.name), str(os.getpid()), px=int(ttl * 1000))
        self._client.hset(keys.WORKERS, self.name, time.time())
        if not self._registered:
            self.store.register({s.name: s.config.queue.name for s in self.settings.sites})
            self._registered = True
        self.sweeper.sweep()


def hand_over(store: FleetStore, worker: str) -> int:
    """Move every job waiting in ``worker``'s own queue to its site's shared queue."""
    own = Queue(keys.affinity_queue(worker), connection=store.r)
    sweeper = Sweeper(store)
    moved = 0
    for job_id in own.get_job_ids():
        site = job_id.removeprefix("deploybot-").rsplit("-", 1)[0]
        sweeper.to_shared(site, job_id, own.name)
        moved += 1
    return moved
