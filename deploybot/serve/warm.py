"""The daemon's side of the warm builder (:mod:`deploybot.serve.zygote`): start it, ask it
for a build process, and fall back to a cold start when it cannot give one.

:meth:`WarmBuilder.start_job` returns a :class:`WarmProcess`, which the runner uses as it
uses an :class:`asyncio.subprocess.Process` (``pid``, ``stdin``, ``stdout``, ``wait()``,
``returncode``), or None: then the runner starts the job cold. The zygote is retired
(it takes no more requests, and ends when its builds have) and a new one started when the
code on disk changes (:func:`code_fingerprint`) or the daemon reloads (SIGHUP); when it
dies or does not answer, the daemon logs it once, starts the job cold, and starts a new
zygote.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import deploybot
from deploybot.serve.build_process import DAEMON_PID, LIFELINE_FD
from deploybot.serve.zygote import CONTROL_FD

log = logging.getLogger("deploybot.daemon")

READY_TIMEOUT = 60.0
"""Seconds a new zygote has to import the build's modules and say it is ready."""
FORK_TIMEOUT = 10.0
"""Seconds the zygote has to answer a request with the child's pid."""
RESTART_AFTER = 5.0
"""Seconds between two starts of a zygote that keeps failing."""


def code_fingerprint(root: Path | None = None) -> tuple[tuple[str, int, int], ...]:
    """The installed deploybot's code as ``(path, size, mtime_ns)`` of each ``.py`` file
    under ``root`` (the package's folder): a change means a zygote runs stale code."""
    base = root or Path(deploybot.__file__).parent
    found = []
    for folder, _, files in os.walk(base):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    found.append((path, st.st_size, st.st_mtime_ns))
    return tuple(sorted(found))


class WarmProcess:
    """A build process the zygote forked: what the runner needs of a process."""

    def __init__(
        self,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        status: asyncio.StreamReader,
        closers: list[asyncio.StreamWriter],
    ) -> None:
        self.pid, self.stdout = pid, stdout
        self.stdin: asyncio.StreamWriter | None = stdin
        self._status, self._closers = status, closers
        self.returncode: int | None = None

    async def wait(self) -> int:
        """Its exit code as the zygote reaped it (``-9`` when the zygote died first: the
        child died with it, ``PR_SET_PDEATHSIG``)."""
        if self.returncode is None:
            line = await self._status.readline()
            words = line.decode("ascii", "replace").split()
            code = -9
            if len(words) == 2 and words[0] == "exit":
                with contextlib.suppress(ValueError):
                    code = int(words[1])
            self.returncode = code
            for closer in self._closers:
                closer.close()
        return self.returncode


class WarmBuilder:
    """One zygote at a time, started from ``lifeline`` (the daemon's pipe read end);
    ``code``: the folder whose ``.py`` files are the code it runs (default the package's)."""

    def __init__(self, lifeline: int, code: Path | None = None) -> None:
        self.lifeline, self.code = lifeline, code
        self._proc: asyncio.subprocess.Process | None = None
        self._control: socket.socket | None = None
        self._ready = False
        self._starting: asyncio.Task[None] | None = None
        self._fingerprint: tuple[tuple[str, int, int], ...] = ()
        self._failed_at = 0.0
        self._told = False
        self._retired: list[asyncio.subprocess.Process] = []
        self._watch: asyncio.Task[None] | None = None
        self._died_at = -RESTART_AFTER - 1.0

    def start(self) -> None:
        """Start a zygote in the background (none while one starts)."""
        if self._starting is None or self._starting.done():
            self._starting = asyncio.get_running_loop().create_task(self._start())

    async def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        env[LIFELINE_FD], env[DAEMON_PID] = str(self.lifeline), str(os.getpid())
        env[CONTROL_FD] = str(theirs.fileno())
        fingerprint = await asyncio.to_thread(code_fingerprint, self.code)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "deploybot.serve.zygote", env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
                pass_fds=(self.lifeline, theirs.fileno()),
            )  # fmt: skip
        except OSError as exc:
            self._failed(f"cannot start: {exc}")
            ours.close()
            return
        finally:
            theirs.close()
        ours.setblocking(False)
        loop = asyncio.get_running_loop()
        try:
            data = await asyncio.wait_for(loop.sock_recv(ours, 4096), READY_TIMEOUT)
            ready = json.loads(data) if data else {}
        except (TimeoutError, OSError, ValueError) as exc:
            ready = {"error": str(exc) or type(exc).__name__}
        if "ready" not in ready:
            ours.close()
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            self._failed(f"it did not start: {ready.get('error') or 'it ended'}")
            return
        self._retire()
        self._proc, self._control, self._ready = proc, ours, True
        self._fingerprint = fingerprint
        self._watch = loop.create_task(self._watched(proc))
        log.info(
            "warm builder ready (pid %d, imports took %.2f s)", proc.pid, ready.get("seconds", 0)
        )
        self._told = False

    async def _watched(self, proc: asyncio.subprocess.Process) -> None:
        """Wait for ``proc`` (the zygote) to end; when it was still the one in use (not
        retired), say so once and start another: at once, unless the one before also
        ended less than :data:`RESTART_AFTER` s ago (then at a later job: no loop of
        restarts)."""
        code = await proc.wait()
        if proc is not self._proc:
            return
        self._retire()
        self._failed(f"the zygote ended (exit code {code})")
        if self._failed_at - self._died_at > RESTART_AFTER:
            self.start()
        self._died_at = self._failed_at

    def _failed(self, why: str) -> None:
        self._failed_at = time.monotonic()
        if not self._told:  # once, until a zygote is ready again
            log.warning("warm builder: %s; builds start cold until it is back", why)
            self._told = True

    def _retire(self) -> None:
        """Close the running zygote's control socket: it ends when its builds have."""
        if self._control is not None:
            self._control.close()
        if self._proc is not None:
            self._retired.append(self._proc)
        self._proc, self._control, self._ready = None, None, False

    def restart(self, why: str) -> None:
        """Retire the zygote and start a new one (SIGHUP, new code on disk)."""
        if self._proc is not None:
            log.info("warm builder restarts: %s", why)
        self._retire()
        self.start()

    async def start_job(self, argv: list[str], env: dict[str, str]) -> WarmProcess | None:
        """Have the zygote fork the build process of ``argv`` in ``env``; None when it
        cannot (none ready, stale, dead): the caller starts it cold."""
        if not self._ready:
            if time.monotonic() - self._failed_at > RESTART_AFTER:
                self.start()
            return None
        if await asyncio.to_thread(code_fingerprint, self.code) != self._fingerprint:
            self.restart("deploybot's code changed on disk")
            return None
        if not self._ready or self._control is None:
            return None  # it ended while the code was checked (its watcher retired it): cold
        try:
            return await self._fork(argv, env)
        except (OSError, TimeoutError, ValueError) as exc:
            self._retire()
            self._failed(f"the zygote failed ({exc or type(exc).__name__})")
            self.start()
            return None

    async def _fork(self, argv: list[str], env: dict[str, str]) -> WarmProcess | None:
        assert self._control is not None
        loop = asyncio.get_running_loop()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
        try:
            socket.send_fds(self._control, [request], [stdin_r, stdout_w, 2, theirs.fileno()])
        finally:
            for fd in (stdin_r, stdout_w):
                os.close(fd)
            theirs.close()
        status, status_writer = await asyncio.open_unix_connection(sock=ours)
        stdout = asyncio.StreamReader(limit=64 * 1024 * 1024, loop=loop)
        read_end = os.fdopen(stdout_r, "rb", 0)
        reader, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout), read_end
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(stdin_w, "wb", 0)
        )
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            line = await asyncio.wait_for(status.readline(), FORK_TIMEOUT)
        except TimeoutError:
            line = b""
        words = line.decode("ascii", "replace").split()
        if len(words) == 2 and words[0] == "pid":
            return WarmProcess(int(words[1]), stdin, stdout, status, [status_writer])
        # No child (or one we will not talk to): its stdin at end-of-file ends it at its gate.
        for writer in (stdin, status_writer):
            writer.close()
        reader.close()
        raise ValueError(line.decode("utf-8", "replace").strip() or "no answer in time")

    async def close(self) -> None:
        """Retire the zygote and wait (briefly) for every zygote to end."""
        if self._watch is not None:
            self._watch.cancel()
        if self._starting is not None:
            self._starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._starting
        self._retire()
        for proc in self._retired:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5.0)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        self._retired.clear()
