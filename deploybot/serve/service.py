"""The daemon's life: start, serve, re-read on SIGHUP, stop on SIGTERM or SIGINT.

Start: read the configs (:mod:`.settings`; a ConfigError ends it with exit 78 before
anything listens), take the daemon's own lock (``<state.dir>/daemon/lock``: a second
daemon on the same state is exit 75), listen, tell systemd ``READY=1`` (``Type=notify``),
poll every source once (catching up on pushes made while no daemon ran; then every
``poll_interval`` s) and look into every outbox (then every :data:`OUTBOX_LOOK` s).

Stop (SIGTERM, SIGINT): stop listening at once, start no new job, let running builds
finish for up to ``stop_timeout`` s, then end them (SIGTERM, then SIGKILL: a killed build
leaves nothing to clean); exit 0. A second signal ends running builds at once. Queued
builds are dropped (the next start's poll catches up).

SIGHUP: read the configs again. Sites, secrets, ``poll_interval``, ``max_body_bytes`` and
``stop_timeout`` change at once; ``listen``, ``workers`` and ``read_timeout`` need a
restart (a warning says so). A config that no longer loads is logged and the running
one kept.

With ``[queue] backend = "redis"`` the daemon builds nothing itself: its triggers go to
Redis, and ``deploybot worker`` processes build (:mod:`deploybot.serve.fleet.server`); a change
of ``[queue]`` needs a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import signal
import socket
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from deploybot.config.checks import parse_listen
from deploybot.serve.app import Endpoints
from deploybot.serve.deliveries import DeliveryStore
from deploybot.serve.metrics import Metrics
from deploybot.serve.runner import Runner
from deploybot.serve.scheduler import Scheduler
from deploybot.serve.settings import Settings, load_settings
from deploybot.serve.status.access import gate_of
from deploybot.state import statedir
from deploybot.support import logs
from deploybot.support.errors import (
    ConfigError,
    DeploybotError,
    LockHeldError,
    TemporaryError,
    one_line,
)

if TYPE_CHECKING:
    from deploybot.serve.fleet.server import FleetScheduler

log = logging.getLogger("deploybot.daemon")

OUTBOX_LOOK = 30.0
"""Seconds between two looks into every site's outbox (for retries and ``/metrics``)."""
_RESTART_KEYS = ("listen", "workers", "read_timeout", "warm_builder")


def serve(paths: Sequence[Path], *, verbose: bool = False) -> int:
    """Run ``deploybot serve`` until a stop signal; return the exit code (0).

    Raises:
        ConfigError: a config file or key is wrong (exit 78).
        LockHeldError: another daemon runs on the same state directory (exit 75).
    """
    settings = load_settings(paths, partial=True)
    logs.setup(verbose=verbose)
    return asyncio.run(Service(list(paths), settings, verbose=verbose).run())


class Service:
    """One daemon: its settings, its queue, its HTTP server."""

    def __init__(self, paths: list[Path], settings: Settings, *, verbose: bool) -> None:
        self.paths = paths
        self.settings = settings
        self.metrics = Metrics()
        self.runner = Runner(verbose=verbose, started=self.metrics.job_start)
        self.runner.hidden = secret_variables(settings)
        self.scheduler: Scheduler | FleetScheduler
        if settings.queue.backend == "redis":
            from deploybot.serve.fleet.server import FleetScheduler

            self.scheduler = FleetScheduler(settings, self.metrics)
        else:
            self.scheduler = Scheduler(self.runner, self.metrics, settings.daemon.workers)
        self.stopping = asyncio.Event()
        self.signals = 0

    async def run(self) -> int:
        """Serve until stopped (see the module doc); return 0."""
        state = self.settings.state_dir
        with statedir.locked(state / "lock", "another deploybot serve runs on"):
            store = DeliveryStore(state / "deliveries.sqlite")
            try:
                await self._serve(store)
            finally:
                store.close()
        log.info("stopped")
        return 0

    async def _serve(self, store: DeliveryStore) -> None:
        daemon = self.settings.daemon
        endpoints = Endpoints(lambda: self.settings, self.scheduler, store, self.metrics)
        runner = web.AppRunner(
            endpoints.application(), handle_signals=False, access_log=None,
            keepalive_timeout=daemon.read_timeout, lingering_time=0, shutdown_timeout=5.0,
        )  # fmt: skip
        await runner.setup()
        site, address = await _listen(runner, daemon.listen, self.settings.path)
        self.scheduler.set_sites(self.settings.sites)
        names = ", ".join(s.name for s in self.settings.sites)
        log.info("listening on %s for %d site(s): %s", address, len(self.settings.sites), names)
        for broken in self.settings.broken:
            log.error("not serving a site: %s", broken.error)
        log.info("%s", gate_of(self.settings).why)
        for site_ in self.settings.sites:
            if site_.secret is None:
                log.warning("site %s: no webhook secret (daemon.secret_env): poll only", site_.name)
        if daemon.warm_builder and self.settings.queue.backend != "redis":
            self.runner.start_warm()
        _sd_notify("READY=1")
        self._signals()
        tasks = [asyncio.create_task(self._poll()), asyncio.create_task(self._outboxes())]
        await self.stopping.wait()
        _sd_notify("STOPPING=1")
        await site.stop()  # no new connection from here on
        await self.scheduler.stop(self.settings.daemon.stop_timeout)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await runner.cleanup()
        await self.runner.close()
        _remove_socket(daemon.listen)

    def _signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop, sig.name)
        loop.add_signal_handler(signal.SIGHUP, self._reload)

    def _stop(self, name: str) -> None:
        self.signals += 1
        if self.signals == 1:
            log.info("%s: stopping", name)
            self.stopping.set()
        else:
            log.warning("%s again: ending running builds now", name)
            asyncio.get_running_loop().create_task(self.runner.end_all())

    def _reload(self) -> None:
        try:
            new = load_settings(self.paths, partial=True)
        except ConfigError as exc:
            errors = "; ".join(str(exc).split("\n"))  # a file's errors, one log line
            log.error("SIGHUP: %s; the running configuration stays", errors)
            return
        old = self.settings.daemon
        kept = {}
        for key in _RESTART_KEYS:
            if getattr(new.daemon, key) != getattr(old, key):
                log.warning("SIGHUP: daemon.%s changed: it takes effect at the next start", key)
                kept[key] = getattr(old, key)
        if new.queue != self.settings.queue:
            log.warning("SIGHUP: [queue] changed: it takes effect at the next start")
        self.settings = dataclasses.replace(
            new, daemon=dataclasses.replace(new.daemon, **kept), queue=self.settings.queue
        )
        self.runner.hidden = secret_variables(new)
        for broken in new.broken:  # its builds would read the file: not served until fixed
            log.error("SIGHUP: not serving a site: %s", broken.error)
        self.scheduler.set_sites(new.sites)
        if self.runner.warm is not None:
            self.runner.warm.restart("SIGHUP")
        log.info("SIGHUP: configuration read again: %d site(s)", len(new.sites))

    async def _poll(self) -> None:
        """Poll the sources: at start, then every ``poll_interval`` s (0: never)."""
        while not self.stopping.is_set():
            interval = self.settings.daemon.poll_interval
            if interval:
                await self._poll_once()
            await self._sleep(interval or 60.0)

    async def _poll_once(self) -> None:
        """Read the source branch head of every site not building or queued already."""
        idle = await self.scheduler.poll_targets()
        if not idle:
            return
        try:
            async for answer in self.runner.heads(idle):
                site, head, error = answer.get("site"), answer.get("head"), answer.get("error")
                self.scheduler.polled(str(site), head, error)
        except OSError as exc:
            log.error("poll: %s", exc)

    async def _outboxes(self) -> None:
        while not self.stopping.is_set():
            await self.scheduler.look_at_outboxes()
            await self._sleep(OUTBOX_LOOK)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)


def secret_variables(settings: Settings) -> frozenset[str]:
    """The environment variables holding webhook secrets (kept from the build processes)."""
    names = {settings.daemon.secret_env} | {s.config.daemon.secret_env for s in settings.sites}
    return frozenset(name for name in names if name)


async def _listen(runner: web.AppRunner, listen: str, config: Path) -> tuple[web.BaseSite, str]:
    """Start listening on ``listen`` (``HOST:PORT`` or ``unix:PATH``); return the site and
    the address for the log (the real port when the config said 0).

    Raises:
        TemporaryError: the port is taken (another server, or this one not yet gone).
        ConfigError: any other reason (no such address here, a privileged port, a socket
            path whose folder is missing or that is a file), naming ``daemon.listen`` and
            the daemon's ``config`` file.
    """
    where = parse_listen(listen)
    site: web.BaseSite
    if isinstance(where, Path):
        site = web.UnixSite(runner, str(where))
    else:
        site = web.TCPSite(runner, where[0], where[1], reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        raise _listen_error(exc, listen, where, config) from exc
    if isinstance(where, Path):
        return site, f"unix:{where}"
    bound = runner.addresses[0]
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    return site, f"http://{shown}:{bound[1]}"


def _listen_error(
    exc: OSError, listen: str, where: tuple[str, int] | Path, config: Path
) -> DeploybotError:
    """The one-line error for a listen address that could not be taken (see :func:`_listen`)."""
    head = f"{config}: 'daemon.listen': cannot listen on {listen}"
    if isinstance(where, Path):
        if not where.parent.is_dir():
            return ConfigError(f"{head}: no such folder {where.parent}")
        if where.exists() and not stat.S_ISSOCK(os.lstat(where).st_mode):
            return ConfigError(f"{head}: {where} is a file, not a socket")
        return ConfigError(f"{head}: {exc.strerror or one_line(exc)}")
    if exc.errno == errno.EADDRINUSE:
        return TemporaryError(f"{head}: the address is already in use (another server?)")
    if isinstance(exc, socket.gaierror) and exc.errno == socket.EAI_AGAIN:
        return TemporaryError(f"{head}: {exc.strerror}")
    return ConfigError(f"{head}: {exc.strerror or one_line(exc)}")


def _remove_socket(listen: str) -> None:
    where = parse_listen(listen)
    if isinstance(where, Path):
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.lstat(where).st_mode):
                os.unlink(where)


def _sd_notify(state: str) -> None:
    """Tell systemd ``state`` (``READY=1``...) on ``$NOTIFY_SOCKET``, when it is set
    (sd_notify(3); an ``@`` starts an abstract socket name)."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall(state.encode("ascii"))
    except OSError as exc:
        log.warning("cannot tell systemd %s: %s", state, exc)


__all__ = ["LockHeldError", "Service", "serve"]
