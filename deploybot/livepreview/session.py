"""``deploybot preview``: build, serve, watch, rebuild, reload, until Ctrl-C.

The whole life of a preview on one screen (:func:`run_preview`):

1. make a temporary folder (the served build and its cache; removed on the way out, by
   Ctrl-C or SIGTERM too);
2. listen on ``host:port`` (:mod:`deploybot.livepreview.server`; a port in use fails at once),
   then build the site fully (:class:`~deploybot.livepreview.builder.PreviewBuilder`);
3. for each burst of saves (:mod:`deploybot.livepreview.watch`), rebuild incrementally in a
   worker thread (the server answers meanwhile, from the last good build) and tell the open
   pages (:mod:`deploybot.livepreview.livereload`): a new build reloads them, a failed one shows
   its error over the last good build.

What it prints is the caller's: ``on_ready(url)`` once the server listens and the first
build ended, and ``on_build(outcome, saved)`` after each build (``saved``: the source paths
it was for; None for the first build).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import shutil
import signal
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web
from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from deploybot.livepreview import watch
from deploybot.livepreview.builder import BuildOutcome, PreviewBuilder, PreviewSettings
from deploybot.livepreview.livereload import LiveReload
from deploybot.livepreview.server import PreviewSite
from deploybot.support.errors import UsageError

DEFAULT_PORT = 4000
"""``jekyll serve``'s port."""
DEFAULT_HOST = "127.0.0.1"
"""``jekyll serve``'s host: this machine only."""


@dataclass(frozen=True)
class Preview:
    """One preview: the site's ``source`` folder, where to listen (``port`` 0: any free
    one) and how to build."""

    source: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    settings: PreviewSettings = field(default_factory=PreviewSettings)


OnReady = Callable[[str], None]
OnBuild = Callable[[BuildOutcome, "set[str] | None"], None]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_preview(preview: Preview, on_ready: OnReady, on_build: OnBuild) -> None:
    """Run ``preview`` until SIGINT (Ctrl-C) or SIGTERM (module docstring).

    Raises:
        UsageError: ``source`` is not a folder, or is a bare repository (no working tree),
            or the port cannot be listened on (in use, or not allowed).
    """
    if not preview.source.is_dir():
        raise UsageError(f"SOURCE ({preview.source}) is not a folder")
    if _is_bare(preview.source):
        raise UsageError(
            f"SOURCE ({preview.source}) is a bare repository, with no working tree to preview "
            "('deploybot build SOURCE OUT --rev REV' renders a revision)"
        )
    work = Path(tempfile.mkdtemp(prefix="deploybot-preview-"))
    try:
        asyncio.run(_serve(preview, work, on_ready, on_build))
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def _serve(preview: Preview, work: Path, on_ready: OnReady, on_build: OnBuild) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    builder = PreviewBuilder(preview.source, work, preview.settings)
    live = LiveReload()
    # one thread for every build: the build cache's sqlite connection belongs to it
    builds = ThreadPoolExecutor(1, thread_name_prefix="preview-build")
    site = PreviewSite(builder.site, live, lambda: builder.baseurl, lambda: bool(builder.outputs))
    runner = web.AppRunner(site.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    saves: asyncio.Queue[set[str] | None] = asyncio.Queue()
    watching = asyncio.create_task(_watch(preview.source, stop, work, saves))
    try:
        await asyncio.sleep(0)  # the watcher starts: a save during the first build counts
        port = await _listen(runner, preview.host, preview.port)  # a port in use fails first
        first = await loop.run_in_executor(builds, builder.build, None)
        _told(live, first, None, on_build)
        if not stop.is_set():  # Ctrl-C during the first build: it stops instead
            on_ready(_url(preview.host, port, builder.baseurl))
        while (saved := await _next_saves(saves)) is not None:
            outcome = await loop.run_in_executor(builds, builder.build, saved)
            _told(live, outcome, saved, on_build)
    finally:
        stop.set()
        await watching
        live.close()
        await runner.cleanup()
        await loop.run_in_executor(builds, builder.close)
        builds.shutdown()


async def _watch(
    source: Path, stop: asyncio.Event, work: Path, saves: asyncio.Queue[set[str] | None]
) -> None:
    """Put each burst of saves under ``source`` into ``saves``, then None once ``stop`` is
    set (or the watcher fails: it is re-raised)."""
    try:
        async for saved in watch.saves(source, stop, skip=[work]):
            saves.put_nowait(saved)
    finally:
        saves.put_nowait(None)


async def _next_saves(saves: asyncio.Queue[set[str] | None]) -> set[str] | None:
    """The paths of every burst waiting (waiting for one), or None when watching ended."""
    first = await saves.get()
    if first is None:
        return None
    paths = set(first)
    while not saves.empty():
        more = saves.get_nowait()
        if more is None:
            saves.put_nowait(None)
            break
        paths |= more
    return paths


def _told(
    live: LiveReload, outcome: BuildOutcome, saved: set[str] | None, on_build: OnBuild
) -> None:
    """Tell the pages and the caller what a build did."""
    if outcome.ok:
        live.built(bool(outcome.changed))
    else:
        live.failed(outcome.error or "the build failed")
    on_build(outcome, saved)


async def _listen(runner: web.AppRunner, host: str, port: int) -> int:
    """Start listening on ``host:port``; return the port (the one chosen for 0). Raises
    UsageError when it cannot."""
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    with contextlib.suppress(IndexError, TypeError):
        return int(runner.addresses[0][1])  # the socket's (host, port, ...)
    return port


def _is_bare(folder: Path) -> bool:
    """Whether ``folder`` is a bare git repository."""
    try:
        with Repo(str(folder)) as repo:
            return bool(repo.bare)
    except NotGitRepository:
        return False


def _url(host: str, port: int, baseurl: str) -> str:
    """The address to open: ``http://HOST:PORT/BASEURL/``."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{baseurl}/"
