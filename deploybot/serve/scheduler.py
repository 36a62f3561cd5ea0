"""The queue: which site builds when, one build per site, up to ``workers`` at once.

Each site has a loop (an asyncio task) that waits for its site to want something, then
runs the job in processes (:class:`~deploybot.serve.runner.Runner`):

- **Fetch outside the workers.** A build process starts in one of up to :data:`FETCHES`
  (or ``workers``, if more) fetch slots, apart from the ``workers`` slots: it takes the
  site's lock and fetches (network only). Only when the fetch succeeded and a build
  follows does it wait for a worker slot (giving its fetch slot back), then build, in
  the same process and under the same lock. So a source that hangs (a server that accepts
  and never answers, until the fetch's idle timeout) or is unreachable never holds a
  build slot, even with ``workers = 1``; nor does a run that finds the site up to date.
  Outbox retries (``deliver``) run in the fetch slots too.

- **Coalescing.** A trigger (a push, the poller) only marks the site as wanting a build.
  However many arrive while a build runs, one more build follows, and it fetches the
  branch head then, so it builds the newest source commit.
- **One build per site**, since one loop runs its jobs in turn; and the build process takes
  the state directory's lock as ``run-once`` does, so a cron run and the daemon never build
  one site at once either (a build that finds the lock held is ``locked``: retried after
  :data:`~deploybot.serve.backoff.LOCKED_RETRY` s, not counted as a failure).
- **Parallel sites**: a semaphore of ``workers`` slots, taken for the build only; a site
  waiting for its backoff, or for its source, does not hold one, so a failing site never
  blocks the others.
- **Backoff.** After the n-th failure in a row a site waits ``min(60 * 2**(n-1), 3600)`` s
  (1 min doubling to 1 h) before its next build. A failure that a retry may not meet (all
  but bad input in the source) is retried then; bad input waits for a new commit. A
  trigger naming a source commit other than the one that failed (a new push: maybe the
  fix) lifts the backoff at once.
- **Outbox.** Emails (and chat posts) waiting in a site's outbox are retried by a
  ``deliver`` job when their own backoff expires, with no push needed.
- **Held-back posts.** A build whose published tree holds back a post dated in the
  future (:attr:`~deploybot.serve.runner.JobResult.next_future`) sets a timer: at that date
  the site is triggered ("a held-back post came due") and builds the same source again,
  as ``run-once`` from cron would, so the post appears with no push.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from deploybot.serve import outboxes
from deploybot.serve.backoff import LOCKED_RETRY, POST_DUE_SPACING, backoff_delay
from deploybot.serve.build_process import describe, describe_preview, job_level
from deploybot.serve.health import health
from deploybot.serve.metrics import Metrics
from deploybot.serve.runner import JobResult, Runner
from deploybot.serve.settings import Site
from deploybot.serve.site_state import SiteState

log = logging.getLogger("deploybot.daemon")

DELIVER_SPACING = 30.0
"""Seconds at least between two ``deliver`` jobs of one site (their outbox's own backoff
sets the real pace; this only stops a loop when a retry cannot even start)."""
FETCHES = 8
"""Fetches and outbox retries running at once (at least ``workers``), apart from the
``workers`` slots: they wait on the network, not the CPU."""


class Scheduler:
    """The per-site loops (see the module doc)."""

    def __init__(self, runner: Runner, metrics: Metrics, workers: int) -> None:
        self.runner = runner
        self.metrics = metrics
        self.slots = asyncio.Semaphore(workers)
        self.fetches = asyncio.Semaphore(max(FETCHES, workers))
        self._stopped = asyncio.Event()
        self.states: dict[str, SiteState] = {}
        self.tasks: set[asyncio.Task[None]] = set()  # every loop, also of removed sites
        self.stopping = False

    def set_sites(self, sites: Iterable[Site]) -> None:
        """Serve exactly ``sites``: start loops for new ones, take the new config of the
        others, and let removed ones finish what runs (their loops then end)."""
        sites = list(sites)
        names = {site.name for site in sites}
        for name in [n for n in self.states if n not in names]:
            state = self.states.pop(name)
            state.removed = True
            self._build_at(state, None)
            state.wake.set()
            log.info("site %s: no longer served", name)
        for site in sites:
            if site.name in self.states:
                self.states[site.name].site = site
                continue
            state = self.states[site.name] = SiteState(site)
            state.task = asyncio.create_task(self._loop(state), name=f"site {site.name}")
            self.tasks.add(state.task)
            state.task.add_done_callback(self.tasks.discard)
        self._gauges()

    def trigger(
        self, name: str, why: str, commit: str | None = None, *, preview: bool = False
    ) -> bool:
        """Ask for a build of site ``name`` (``why``: for the log; ``commit``: the source
        commit the trigger names, if known; ``preview``: a previewed branch moved, which a
        build that started before cannot have seen, so the build asked for is never dropped
        as done by it). False when there is no such site or the daemon is stopping."""
        state = self.states.get(name)
        if state is None or self.stopping:
            return False
        if state.failures and commit is not None and commit != state.failed_for:
            if state.backoff_until > time.time():
                log.info("site %s: %s names a new commit: backoff lifted", name, why)
            state.backoff_until = 0.0
        if state.wanted:
            log.info("site %s: %s: joins the build already queued", name, why)
        elif state.building:
            log.info("site %s: %s: one more build follows the running one", name, why)
        state.wanted = True
        state.wanted_preview = state.wanted_preview or preview
        state.wanted_for = commit or state.wanted_for
        state.wanted_why = why
        state.wake.set()
        self._gauges()
        return True

    def polled(self, name: str, head: str | None, error: str | None) -> None:
        """The poller read ``head`` for site ``name``'s source branch (or ``error``)."""
        state = self.states.get(name)
        if state is None:
            return
        if error:
            log.warning("site %s: poll: %s", name, error)
        elif (
            head is not None
            and head != state.known_head
            and _pollable(state)
            and (not state.wanted or head != state.failed_for)  # queued: only a new commit
        ):
            self.trigger(name, f"poll: source at {head[:12]}", head)

    async def poll_targets(self) -> list[Site]:
        """The sites the poller reads: those neither building nor queued, and those queued
        behind a backoff after a failure (a new commit lifts it: :meth:`trigger`)."""
        return [s.site for s in self.states.values() if _pollable(s)]

    def health(self) -> tuple[int, dict[str, Any]]:
        """``(HTTP status, JSON document)`` for ``/healthz`` (:mod:`.health`)."""
        return health(self.states)

    def outbox_seen(self, name: str, waiting: outboxes.Waiting) -> None:
        """Record what waits in site ``name``'s outbox; wake its loop when a retry is due."""
        state = self.states.get(name)
        if state is None:
            return
        state.outbox = waiting
        self.metrics.outbox_waiting(name, waiting.emails, waiting.webhooks)
        if waiting.due is not None:
            self._wake_at(state, max(waiting.due, state.last_deliver + DELIVER_SPACING))

    async def stop(self, timeout: float) -> bool:
        """Stop: no job starts any more; wait up to ``timeout`` s for the running ones, then
        end them. True when every running job finished by itself."""
        self.stopping = True
        self._stopped.set()
        running = [s.site.name for s in self.states.values() if s.building]
        for state in self.states.values():
            if state.wanted and not state.building:
                log.info("site %s: queued build dropped at stop", state.site.name)
            state.wake.set()
        tasks = list(self.tasks)
        if running:
            log.info("stopping: waiting up to %g s for %s", timeout, ", ".join(running))
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        if not pending:
            return True
        log.warning(
            "stopping: %d build(s) still running after %g s: ending them", len(pending), timeout
        )
        await self.runner.end_all()
        await asyncio.wait(pending, timeout=5)
        return False

    def _wake_at(self, state: SiteState, when: float) -> None:
        """Wake ``state``'s loop at Unix time ``when`` (replacing an earlier timer)."""
        if state.timer is not None:
            state.timer.cancel()
        delay = max(0.0, when - time.time())
        state.timer = asyncio.get_running_loop().call_later(delay, state.wake.set)

    def _build_at(self, state: SiteState, when: float | None) -> None:
        """Trigger ``state``'s site at Unix time ``when`` (the date of the first post its
        published build holds back; None: no such post), replacing an earlier such timer."""
        if state.post_timer is not None:
            state.post_timer.cancel()
            state.post_timer = None
        if when is None:
            return
        delay = max(when - time.time(), POST_DUE_SPACING)
        state.post_timer = asyncio.get_running_loop().call_later(
            delay, self.trigger, state.site.name, "a held-back post came due"
        )

    def _next_job(self, state: SiteState) -> str | None:
        """``build``, ``deliver`` or None (nothing now; a timer wakes the loop later)."""
        now = time.time()
        if state.wanted:
            if state.backoff_until > now:
                self._wake_at(state, state.backoff_until)
                return None
            return "build"
        due = state.outbox.due
        if due is not None and due <= now and now >= state.last_deliver + DELIVER_SPACING:
            return "deliver"
        return None

    async def _loop(self, state: SiteState) -> None:
        while True:
            await state.wake.wait()
            state.wake.clear()
            if self.stopping or state.removed:
                return
            job = self._next_job(state)
            if job is None:
                continue
            if job == "build":
                await self._build(state)
            else:
                await self._deliver(state)
            await self._look_at_outbox(state)
            if state.wanted:
                state.wake.set()

    def _gone(self, state: SiteState) -> bool:
        return self.stopping or state.removed

    async def _build(self, state: SiteState) -> None:
        """Run a build: its fetch in a fetch slot, the rest in a worker slot (module doc)."""
        name = state.site.name
        await self.fetches.acquire()
        held: asyncio.Semaphore | None = self.fetches
        gated = started = False

        async def gate() -> bool:
            """The build has fetched: trade the fetch slot for a worker slot."""
            nonlocal held, gated, started
            gated = True
            self.fetches.release()
            held = None
            if not await self._acquire_unless_stopping(self.slots):
                log.info("site %s: build dropped at stop (fetched)", name)
                return False
            held, started = self.slots, not self._gone(state)
            state.fetching = False
            self._gauges()
            return started

        try:
            if self._gone(state) or self._next_job(state) != "build":
                return  # the wait for a slot may have changed it
            commit, why = state.wanted_for, state.wanted_why
            state.wanted, state.wanted_for, state.wanted_preview = False, None, False
            state.building = state.fetching = True
            self._gauges()
            log.info("site %s: build started (%s)", name, why)
            result = await self.runner.run(state.site, "build", gate)
        finally:
            if held is not None:
                held.release()
            state.building = state.fetching = False
        if gated and not started:
            self._gauges()
            return  # stopped at the gate: nothing was built
        self._finished(state, result, commit)

    async def _acquire_unless_stopping(self, slots: asyncio.Semaphore) -> bool:
        """Take one of ``slots``; False (and none taken) when the daemon stops first."""
        take = asyncio.ensure_future(slots.acquire())
        stop = asyncio.ensure_future(self._stopped.wait())
        await asyncio.wait({take, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if take.done() and not take.cancelled():
            if not self.stopping:
                return True
            slots.release()
        take.cancel()
        return False

    async def _deliver(self, state: SiteState) -> None:
        """Retry what waits in the site's outbox (a ``deliver`` job, outside the workers)."""
        async with self.fetches:
            if self._gone(state) or self._next_job(state) != "deliver":
                return
            state.building = True
            self._gauges()
            log.info("site %s: deliver started (outbox retry due)", state.site.name)
            try:
                result = await self.runner.run(state.site, "deliver")
            finally:
                state.building = False
        self._finished(state, result, None)

    def _finished(self, state: SiteState, result: JobResult, commit: str | None) -> None:
        """Log and record a job's result; set the backoff after a failure."""
        name = state.site.name
        if result.job == "deliver":
            state.last_deliver = time.time()
            how = f"failed: {result.error}" if result.failed else "done"
            if result.mail:
                how += f": {result.mail}"
            log.log(
                logging.WARNING if result.failed else logging.INFO,
                "site %s: outbox retry %s",
                name,
                how,
            )
            return
        state.runs.append(result)
        self.metrics.run(name, result.status, result.seconds, result.started + result.seconds)
        if result.status == "locked":
            log.info(
                "site %s: another run holds the lock: building again in %g s", name, LOCKED_RETRY
            )
            state.wanted, state.wanted_why = True, "retry: the lock was held"
            state.backoff_until = time.time() + LOCKED_RETRY
            self._wake_at(state, state.backoff_until)
        elif result.failed:
            state.failures += 1
            state.failed_for = result.source_commit or commit
            delay = backoff_delay(state.failures)
            state.backoff_until = time.time() + delay
            retry = f"retried in {delay:g} s" if result.temporary else "next build on a new commit"
            log.error(
                "site %s: build failed (%d in a row; %s): %s",
                name,
                state.failures,
                retry,
                result.error,
            )
            if result.temporary:
                state.wanted, state.wanted_why = True, f"retry after {state.failures} failure(s)"
                self._wake_at(state, state.backoff_until)
        else:
            state.failures, state.failed_for, state.backoff_until = 0, None, 0.0
            state.known_head = result.source_commit or state.known_head
            self._build_at(state, result.next_future)
            what = describe(
                result.status, result.seconds, result.source_commit, result.build_commit,
                waiting=result.emails_failed, mail=result.mail,
            )  # fmt: skip
            log.log(
                job_level(failed=False, refused=result.emails_refused), "site %s: %s", name, what
            )
            for preview in result.previews:
                log.log(
                    logging.ERROR if preview.get("error") else logging.INFO,
                    "site %s: %s", name, describe_preview(preview),
                )  # fmt: skip
            built = state.wanted_for == result.source_commit and not state.wanted_preview
            if state.wanted and state.wanted_for and built:
                # Every trigger since named a commit, the newest this build already built.
                state.wanted, state.wanted_for = False, None
                log.info("site %s: the pushes during the build are built by it", name)
        self._gauges()

    async def _look_at_outbox(self, state: SiteState) -> None:
        waiting = await asyncio.to_thread(outboxes.waiting, state.site.config)
        self.outbox_seen(state.site.name, waiting)

    async def look_at_outboxes(self) -> None:
        """Read every site's outbox (``/metrics``; retries falling due)."""
        for state in list(self.states.values()):
            await self._look_at_outbox(state)

    def _gauges(self) -> None:
        states = self.states.values()
        self.metrics.queue_depth.set(sum(1 for s in states if s.wanted))
        self.metrics.running.set(sum(1 for s in states if s.building and not s.fetching))


def _pollable(state: SiteState) -> bool:
    """Whether the poller reads ``state``'s source: not while it builds; not while a build
    is queued, unless that build waits out a failure's backoff (a build queued during the
    failing one waited for it, and the poller, skipping a queued site, never saw the fix
    that would have lifted it)."""
    if state.building:
        return False
    return not state.wanted or (state.failures > 0 and state.backoff_until > time.time())
