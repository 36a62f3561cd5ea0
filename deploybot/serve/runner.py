"""Start the daemon's build processes (:mod:`deploybot.serve.build_process`) and read their results.

Why a fresh ``python -m deploybot.serve.build_process`` process per job rather than a fork of the
daemon or a pool: nothing of the server (its event loop, sockets, threads) is inherited;
the memory a build takes goes back to the system when it ends, so a long-running daemon
does not grow with the biggest site it ever built; and each job's process group can be
ended alone. Each process starts in a session of its own, so the terminal's Ctrl-C (a
SIGINT to the foreground process group) reaches only the daemon, which then lets the
builds finish; under systemd, ``KillMode=mixed`` does the same for SIGTERM. The price,
an interpreter start and the build's imports per job (about 0.7 s on the test machine),
is paid once: each job process is forked from the warm builder (:mod:`deploybot.serve.zygote`,
a process that imported them and nothing of the server), and started cold as above only
while it is not ready (:mod:`deploybot.serve.warm`).

A job process never outlives the daemon (a ``kill -9`` of the daemon would leave it
holding the site's lock, and the restarted daemon waiting on it): it asks Linux for
SIGKILL when the daemon dies (``prctl(PR_SET_PDEATHSIG)``), and it holds the read end of a
pipe whose write end only the daemon holds, so when the daemon is gone, however it went,
the job sees end-of-file and ends itself with its process group
(:func:`deploybot.serve.build_process.die_with_daemon`). A build killed so is safe to kill (see
docs/how-it-works.md: "After a crash or kill -9").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploybot.serve.build_process import DAEMON_PID, LIFELINE_FD
from deploybot.serve.settings import Site
from deploybot.serve.warm import WarmBuilder, WarmProcess

log = logging.getLogger("deploybot.daemon")

EX_INPUT = 1  # bad input in the source: the same commit would fail the same way
_LINE_LIMIT = 64 * 1024 * 1024
"""Bytes a job's result line may take (asyncio's default, 64 KiB, is too few for the
list of emails waiting in a big outbox)."""
KILL_GRACE = 10.0
"""Seconds a build process has to end after SIGTERM before it is sent SIGKILL."""


@dataclass(frozen=True)
class JobResult:
    """One job of a site: ``job`` (``build``/``deliver``); ``status`` (``published``,
    ``unchanged``, ``up-to-date``, ``older``, ``delivered``, ``failed`` or ``locked``:
    another run held the site's lock); ``started`` (Unix time, s) and ``seconds``; the
    commits; ``error`` (one line) on a failure;
    ``emails_failed``: messages left in the outbox; ``emails_refused``: messages refused
    for good by this job (filed in the outbox's ``failed/``); ``mail``: what the job did with its
    messages, for the log (:func:`deploybot.serve.build_process.describe_mail`). ``temporary``:
    a failure that a retry of the same source commit may not meet (all but bad input in
    the source, exit 1). ``next_future``: the date (Unix seconds) of the first post the
    published build holds back (dated after its cut-off), or None: the site builds again
    then, with no push. ``previews``: the branch previews the build made or removed, as the
    build process tells them (``{branch, folder, status, source_commit, commit, url,
    error}``: :func:`deploybot.serve.build_process.run_loaded_job`)."""

    job: str
    status: str
    started: float
    seconds: float
    source_commit: str | None = None
    build_commit: str | None = None
    error: str | None = None
    temporary: bool = False
    exit_code: int = 0
    emails_failed: int = 0
    emails_refused: int = 0
    mail: str = ""
    next_future: float | None = None
    previews: tuple[dict[str, Any], ...] = ()

    @property
    def failed(self) -> bool:
        """True for a job that failed (a ``locked`` one did not: it was not its turn)."""
        return self.status == "failed"


class Runner:
    """Starts jobs as processes and keeps them, so a stop can end them."""

    def __init__(
        self, *, verbose: bool = False, started: Callable[[str], None] | None = None
    ) -> None:
        self.verbose = verbose
        self.started = started
        """Called with ``warm`` or ``cold`` as each job process starts (a metric)."""
        self.hidden: frozenset[str] = frozenset()
        """Environment variables the jobs do not get (the webhook secrets: a build never
        needs them, and it runs the source's layouts)."""
        self._running: dict[int, asyncio.subprocess.Process | WarmProcess] = {}
        # Never written, never closed: its read end sees end-of-file when the daemon is gone.
        # Both ends are non-inheritable; each job gets the read end alone (pass_fds).
        self._lifeline, self._lifeline_held = os.pipe()
        self.warm: WarmBuilder | None = None
        """The zygote builds fork from (:mod:`deploybot.serve.warm`); None: all start cold."""

    def start_warm(self, code: Path | None = None) -> None:
        """Start the warm builder (in the event loop); jobs start cold until it is ready.
        ``code``: as :class:`~deploybot.serve.warm.WarmBuilder` takes it."""
        if self.warm is None:
            self.warm = WarmBuilder(self._lifeline, code)
        self.warm.start()

    async def close(self) -> None:
        """Retire the warm builder and wait for it to end."""
        if self.warm is not None:
            await self.warm.close()

    def _env(self) -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if name not in self.hidden}
        if self.verbose:
            env["DEPLOYBOT_VERBOSE"] = "1"
        env[LIFELINE_FD], env[DAEMON_PID] = str(self._lifeline), str(os.getpid())
        return env

    async def _start(self, *args: str) -> asyncio.subprocess.Process | WarmProcess:
        talks = args[0] in ("heads", "build")
        if self.warm is not None:
            warm = await self.warm.start_job(list(args), self._env())
            if warm is not None:
                if not talks and warm.stdin is not None:
                    warm.stdin.close()
                    warm.stdin = None
                self._running[warm.pid] = warm
                self._count("warm")
                return warm
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "deploybot.serve.build_process", *args,
            stdin=subprocess.PIPE if talks else subprocess.DEVNULL,
            stdout=subprocess.PIPE, env=self._env(), start_new_session=True,
            pass_fds=(self._lifeline,), limit=_LINE_LIMIT,
        )  # fmt: skip
        self._running[proc.pid] = proc
        self._count("cold")
        return proc

    def _count(self, how: str) -> None:
        log.debug("a job process started %s", how)
        if self.started is not None:
            self.started(how)

    async def run(
        self, site: Site, job: str, gate: Callable[[], Awaitable[bool]] | None = None
    ) -> JobResult:
        """Run ``job`` for ``site`` in its own process; wait for its result (never raises
        for what the job does: a crash or a signal is a failed result).

        A ``build`` says when it has fetched and a build follows (see
        :mod:`deploybot.serve.build_process`): then ``gate()`` is awaited (the scheduler's wait
        for a worker slot) and the build goes on when it returns True, or ends there."""
        started, clock = time.time(), time.monotonic()
        proc = await self._start(job, str(site.path), site.name)
        assert proc.stdout is not None
        lines = []
        try:
            async for line in proc.stdout:
                if proc.stdin is not None and _is_fetched(line):
                    go = gate is None or await gate()
                    with contextlib.suppress(OSError):  # the job may be gone already
                        proc.stdin.write(b"go\n" if go else b"")
                        proc.stdin.close()
                    continue
                lines.append(line)
            await proc.wait()
        finally:
            self._running.pop(proc.pid, None)
        code = proc.returncode if proc.returncode is not None else -1
        return _result(job, b"".join(lines), code, started, time.monotonic() - clock)

    async def heads(self, sites: Sequence[Site]) -> AsyncIterator[dict[str, Any]]:
        """For the poller: each site's source branch head as a worker process reads the
        ref advertisements: ``{"site", "head", "error"}``, as each arrives."""
        proc = await self._start("heads")
        assert proc.stdin is not None and proc.stdout is not None
        query = [
            [s.name, s.config.source.url, s.config.source.branch, s.config.source.token_env,
             s.config.source.timeout]
            for s in sites
        ]  # fmt: skip
        proc.stdin.write(json.dumps(query).encode())
        proc.stdin.close()
        try:
            async for line in proc.stdout:
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue
                if isinstance(answer, dict):
                    yield answer
        finally:
            await proc.wait()
            self._running.pop(proc.pid, None)

    def running(self) -> int:
        """How many job processes run now."""
        return len(self._running)

    async def end_all(self) -> None:
        """End every job process: SIGTERM to its process group, SIGKILL after
        :data:`KILL_GRACE` s. A killed build leaves nothing to clean by hand (see
        docs/how-it-works.md: "After a crash or kill -9")."""
        procs = list(self._running.values())
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for proc in procs:
                if proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, sig)
            waits = [asyncio.ensure_future(p.wait()) for p in procs]
            if not waits:
                return
            _, pending = await asyncio.wait(waits, timeout=KILL_GRACE)
            if not pending:
                return


def _is_fetched(line: bytes) -> bool:
    """True for a build's ``{"fetched": commit}`` line."""
    if not line.startswith(b'{"fetched"'):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _result(job: str, out: bytes, code: int, started: float, seconds: float) -> JobResult:
    """The job's result from its last stdout line and exit code."""
    data: dict[str, Any] = {}
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if lines:
        try:
            data = json.loads(lines[-1])
        except ValueError:
            data = {}
    status = str(data.get("status") or "failed")
    if not data or (code != 0 and status != "failed"):
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        data = {"error": f"the {job} process ended with {how} and no result", "temporary": True}
        status = "failed"
    if data.get("error_kind") == "LockHeldError":
        status = "locked"
    return JobResult(
        job=job,
        status=status,
        started=started,
        seconds=seconds,
        source_commit=data.get("source_commit"),
        build_commit=data.get("build_commit"),
        error=data.get("error"),
        temporary=status == "failed" and code != EX_INPUT,
        exit_code=code,
        emails_failed=len(data.get("emails_failed") or ()),
        emails_refused=len(data.get("emails_refused") or ()),
        mail=str(data.get("mail") or ""),
        next_future=unix_time(data.get("next_future")),
        previews=tuple(p for p in data.get("previews") or () if isinstance(p, dict)),
    )


def unix_time(value: Any) -> float | None:
    """A job result's Unix time ``value`` (JSON), or None when it is none (or no finite
    number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
