"""The RQ job: build (or deliver the outbox of) one site, holding its lease.

RQ's worker forks a work horse per job, which calls :func:`run` with the site's name. The
horse first makes sure it dies with its worker (``PR_SET_PDEATHSIG``: a worker killed with
``kill -9``, like a machine that died, takes its build with it, so its lease expires and
another worker builds the site), then:

1. takes the site's lease (:meth:`FleetStore.acquire`); a lease held by another worker, or
   nothing wanted, ends the job at once (the Want stays pending for the holder);
2. runs the build exactly as ``run-once`` does (:func:`deploybot.pipeline.run.run_once`, or
   the outbox delivery), on this worker's own state directory for the site, with the
   shared records fetched and stored at the checkpoints (:mod:`.shared`) and the lease
   renewed meanwhile (:mod:`.lease`);
3. records the outcome and releases the lease (:meth:`FleetStore.release`).

:data:`CONTEXT` is set by ``deploybot worker`` before RQ forks (the horse inherits it).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from rq import get_current_job

from deploybot.config.schema import Config, StateConfig
from deploybot.serve.build_process import (
    describe,
    failure,
    job_level,
    out_of_memory,
    run_loaded_job,
)
from deploybot.serve.fleet import keys
from deploybot.serve.fleet.lease import LeaseKeeper
from deploybot.serve.fleet.shared import SharedState
from deploybot.serve.fleet.store import FleetStore, Outcome, Want
from deploybot.serve.runner import unix_time
from deploybot.serve.settings import Settings
from deploybot.state import checkpoint
from deploybot.support.errors import DeploybotError, LockHeldError, TemporaryError, holds
from deploybot.support.parent_death import set_pdeathsig
from deploybot.support.redact import redact_text

log = logging.getLogger("deploybot.fleet")


@dataclass(frozen=True)
class Context:
    """What a worker's jobs need: its ``worker`` name, its ``settings`` (sites), the root
    of its own state directories (None: each site's configured ``state.dir``), the
    worker's process id and its ``instance`` id (its heartbeat's value, and part of each
    lease token it takes: :func:`keys.lease_token`)."""

    worker: str
    settings: Settings
    state_root: Path | None
    pid: int
    instance: str


CONTEXT: Context | None = None


def run(site: str) -> dict[str, Any]:
    """Build ``site`` (the RQ job function; see the module doc). Returns the outcome as
    a dict (RQ keeps it as the job's result); never raises for what the build does."""
    context = CONTEXT
    if context is None:
        raise RuntimeError("deploybot.serve.fleet.job.run runs inside deploybot worker only")
    _die_with(context.pid)
    settings = context.settings
    store = FleetStore(keys.connect(settings.queue, settings.path), settings.queue)
    job = get_current_job()
    job_id = job.id if job is not None else ""
    token = keys.lease_token(context.worker, context.instance)
    got = store.acquire(site, job_id, token, context.worker)
    if got.state != "acquired" or got.want is None:
        held = f": {got.holder} holds its lease" if got.holder else ""
        log.info("site %s: %s%s", site, got.state, held)
        return {"status": got.state}
    want = got.want
    log.info("site %s: %s started (%s)", site, want.job, want.why)
    outcome = Outcome("failed", error="the job ended before its result", temporary=True)
    try:
        with LeaseKeeper(store, site, token):
            outcome = _run(context, store, site, token, want)
    finally:
        try:
            if not store.release(site, token, context.worker, outcome):
                log.warning("site %s: the lease had expired: the result is not recorded", site)
        except redis.RedisError as exc:  # the lease expires; the sweep builds the site again
            log.error("site %s: cannot record the result: %s", site, keys.reason(exc))
    what = describe(
        outcome.status, outcome.seconds, outcome.source_commit, outcome.build_commit,
        error=outcome.error, waiting=outcome.outbox_emails + outcome.outbox_webhooks,
        mail=outcome.mail,
    )  # fmt: skip
    level = job_level(failed=outcome.status == "failed", refused=outcome.emails_refused)
    log.log(level, "site %s: %s", site, what)
    return dataclasses.asdict(outcome)


def _run(context: Context, store: FleetStore, site: str, token: str, want: Want) -> Outcome:
    from deploybot.serve import outboxes

    found = context.settings.site(site)
    if found is None:
        error = f"site {site} is not in the configs of worker {context.worker}"
        return Outcome("failed", error=error, temporary=True)
    config = site_config(found.config, context.state_root, site)
    shared = SharedState(store.r, site, token, config.state.dir)
    started = time.monotonic()
    with checkpoint.installed(shared.hook):
        try:
            result = run_loaded_job(want.job, config)
            shared.save()
        except DeploybotError as exc:
            result = failure(exc, exc.exit_code)
            if isinstance(exc, LockHeldError):
                result["status"] = "locked"
            _save_after_failure(shared)
        except redis.RedisError as exc:  # Redis went away at a checkpoint: try again later
            result = failure(TemporaryError(f"Redis: {keys.reason(exc)}"), 75)
        except Exception as exc:
            if not holds(exc, MemoryError):
                raise  # a bug: RQ keeps its traceback with the failed job
            result = out_of_memory(exc, want.job)  # as run-once says it
            _save_after_failure(shared)
    waiting = outboxes.waiting(config)
    return Outcome(
        status=str(result["status"]),
        seconds=time.monotonic() - started,
        source_commit=result.get("source_commit"),
        build_commit=result.get("build_commit"),
        error=redact_text(str(result["error"])) if result.get("error") else None,
        temporary=bool(result.get("temporary")),
        outbox_emails=waiting.emails,
        outbox_webhooks=waiting.webhooks,
        outbox_due=waiting.due,
        mail=str(result.get("mail") or ""),
        next_future=unix_time(result.get("next_future")),
        emails_refused=len(result.get("emails_refused") or ()),
    )


def _save_after_failure(shared: SharedState) -> None:
    """Store what a failed run left (a delivery's attempts and backoff), when the lease
    still allows it; a failed run never left anything half-written."""
    try:
        shared.save()
    except (DeploybotError, redis.RedisError) as exc:
        log.warning("site %s: the shared records were not stored: %s", shared.site, exc)


def site_config(config: Config, root: Path | None, site: str) -> Config:
    """``config`` with its state directory under this worker's ``root`` (``<root>/<site>``);
    unchanged when ``root`` is None."""
    if root is None:
        return config
    return dataclasses.replace(config, state=StateConfig(dir=root / site))


def _die_with(worker_pid: int) -> None:
    """Have the kernel kill this process when its parent (the worker) dies; exit at once
    when it already has (:func:`~deploybot.support.parent_death.set_pdeathsig`)."""
    set_pdeathsig()
    if os.getppid() != worker_pid:
        os._exit(1)
