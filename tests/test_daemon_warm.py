"""The daemon's warm builder (:mod:`deploybot.serve.zygote`): builds are forked from it,
a killed zygote falls back to cold starts and comes back, SIGHUP and new code on disk
restart it, and a ``kill -9`` of the daemon leaves no process of it behind.

Real processes throughout: a real ``deploybot serve``, its zygote and its builds.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from deploybot.serve.runner import Runner
from deploybot.serve.warm import WarmProcess
from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until
from tests.fleetproc import process_children
from tests.test_daemon_kill import _alive

HOOK = "/webhook/deploybot"


def _starts(daemon: Daemon, how: str) -> int:
    return int(daemon.metrics().get(("deploybot_job_starts_total", (("start", how),)), 0))


def _zygote(daemon: Daemon) -> int:
    """The pid of the daemon's ready zygote (as its last ready line says)."""
    line = [x for x in daemon.log if "warm builder ready" in x][-1]
    return int(line.split("(pid ")[1].split(",")[0])


def _publish(daemon: Daemon, site: GatedSite, n: int) -> str:
    commit = site.commit(n)
    assert daemon.push(HOOK, github(commit)).status_code == 202
    wait_until(lambda: site.published_source() == commit)
    wait_until(lambda: daemon.idle("deploybot"))
    return commit


def test_builds_fork_from_the_warm_builder(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        daemon.wait_log("warm builder ready")
        zygote = _zygote(daemon)
        _publish(daemon, site, 1)
        _publish(daemon, site, 2)
        assert _starts(daemon, "warm") == 2 and _starts(daemon, "cold") == 0
        run = daemon.last_run("deploybot")
        assert run is not None and run["result"] == "published", run
        hook_env = (tmp_path / "hook.env").read_text()  # as a cold build's: no secret
        assert "GIT_DIR=" in hook_env and "DEPLOYBOT_TEST_WEBHOOK_SECRET" not in hook_env
        assert _alive(zygote)
    assert site.build_commits() == 2 and len(site.emails()) == 2
    wait_until(lambda: not _alive(zygote), timeout=20)  # a stopped daemon's zygote ends


def test_a_killed_zygote_is_told_once_and_comes_back(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        daemon.wait_log("warm builder ready")
        first = _zygote(daemon)
        os.kill(first, signal.SIGKILL)
        daemon.wait_log(r"warm builder: the zygote ended \(exit code -9\); builds start cold")
        wait_until(lambda: len([x for x in daemon.log if "warm builder ready" in x]) == 2)
        assert _zygote(daemon) != first and not _alive(first)
        _publish(daemon, site, 1)
        assert _starts(daemon, "warm") == 1 and _starts(daemon, "cold") == 0
        warned = [x for x in daemon.log if "builds start cold" in x]
        assert len(warned) == 1, warned  # told once


def test_a_job_starts_cold_when_the_zygote_is_gone(tmp_path: Path) -> None:
    """Killed, the zygote is noticed either by its exit or by the next request failing:
    either way that job starts cold, and a new zygote comes."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[source\n")

    async def jobs() -> tuple[str, tuple[bytes, int]]:
        runner = Runner()
        runner.start_warm()
        warm = runner.warm
        assert warm is not None
        await wait_async(lambda: warm._ready)
        first = warm._proc
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        proc = await runner._start("deliver", str(bad), "bad")
        answer = await _job(proc)
        await wait_async(lambda: warm._ready and warm._proc is not first)
        await runner.close()
        return type(proc).__name__, answer

    how, (out, code) = asyncio.run(jobs())
    assert how == "Process" and code == 78 and b"ConfigError" in out


def test_sighup_restarts_the_warm_builder(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        daemon.wait_log("warm builder ready")
        first = _zygote(daemon)
        daemon.signal(signal.SIGHUP)
        daemon.wait_log("warm builder restarts: SIGHUP")
        wait_until(lambda: len([x for x in daemon.log if "warm builder ready" in x]) == 2)
        wait_until(lambda: not _alive(first), timeout=20)  # retired, with no build: ended
        _publish(daemon, site, 1)
        assert _starts(daemon, "warm") == 1


def test_kill_9_of_the_daemon_leaves_no_zygote_nor_build(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, extra=daemon_table())
    daemon = Daemon(site.config).start()
    try:
        daemon.wait_log("warm builder ready")
        zygote = _zygote(daemon)
        assert daemon.push(HOOK, github(site.commit(1))).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)  # the build is inside its push
        builds = process_children().get(zygote, [])
        assert builds, "no build forked from the zygote"
        assert daemon.proc is not None
        daemon.proc.kill()
        daemon.proc.wait(timeout=30)
        wait_until(lambda: not any(_alive(p) for p in [zygote, *builds]), timeout=20)
    finally:
        site.open_gate()
        daemon.stop()


def test_a_forked_job_answers_as_a_cold_one(tmp_path: Path) -> None:
    """The same job through the warm builder and as a new interpreter: the same result
    line and exit code (here a config that does not load: 78); and a forked child holds
    no fd of the zygote's: only 0, 1, 2, its result's and the daemon's lifeline (a
    ``heads`` job, waiting on stdin)."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[source\n")

    async def both() -> tuple[tuple[bytes, int], tuple[bytes, int], tuple[bytes, int]]:
        runner = Runner()
        runner.start_warm()
        assert runner.warm is not None
        cold = await _job(await runner._start("deliver", str(bad), "bad"))
        await wait_async(lambda: runner.warm is not None and runner.warm._ready)
        warm = await runner._start("deliver", str(bad), "bad")
        assert isinstance(warm, WarmProcess)
        answer = await _job(warm)
        heads = await runner._start("heads")
        assert isinstance(heads, WarmProcess) and heads.stdin is not None
        # 3: build_process.main's copy of stdout for its result (a cold job has it too)
        allowed = {"0", "1", "2", "3", str(runner._lifeline)}
        await wait_async(lambda: set(os.listdir(f"/proc/{heads.pid}/fd")) <= allowed)
        heads.stdin.write(b"[]")
        heads.stdin.close()
        polled = await _job(heads)
        await runner.close()
        return cold, answer, polled

    cold, warm, heads = asyncio.run(both())
    assert warm == cold and cold[1] == 78, (cold, warm)
    assert json.loads(cold[0])["error_kind"] == "ConfigError"
    assert heads == (b"", 0)


async def _job(proc: asyncio.subprocess.Process | WarmProcess) -> tuple[bytes, int]:
    assert proc.stdout is not None
    out = await proc.stdout.read()
    return out, await proc.wait()


async def wait_async(what: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        await asyncio.sleep(0.05)


def test_new_code_on_disk_restarts_the_warm_builder(tmp_path: Path) -> None:
    """A ``.py`` file of the code that changed (an upgrade in place): the next job starts
    cold, never from the stale zygote, and a new zygote takes the jobs after it."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "module.py").write_text("A = 1\n")
    bad = tmp_path / "bad.toml"
    bad.write_text("[source\n")

    async def jobs() -> list[str]:
        runner = Runner()
        runner.start_warm(code)
        warm = runner.warm
        assert warm is not None
        await wait_async(lambda: warm._ready)
        first = warm._proc
        how = [type(await runner._start("deliver", str(bad), "bad")).__name__]
        (code / "module.py").write_text("A = 22\n")  # another size: a new fingerprint
        how.append(type(await runner._start("deliver", str(bad), "bad")).__name__)
        await wait_async(lambda: warm._ready and warm._proc is not first)
        how.append(type(await runner._start("deliver", str(bad), "bad")).__name__)
        assert first is not None
        await asyncio.wait_for(first.wait(), 20)  # retired, with no build: it ended
        for proc in list(runner._running.values()):
            await _job(proc)
        await runner.close()
        return how

    assert asyncio.run(jobs()) == ["WarmProcess", "Process", "WarmProcess"]


def test_a_zygote_killed_during_a_build_fails_it_as_killed_and_the_next_push_builds(
    tmp_path: Path,
) -> None:
    site = GatedSite(tmp_path, extra=daemon_table())
    with Daemon(site.config) as daemon:
        daemon.wait_log("warm builder ready")
        zygote = _zygote(daemon)
        assert daemon.push(HOOK, github(site.commit(1))).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)  # the build is inside its push
        builds = process_children().get(zygote, [])
        os.kill(zygote, signal.SIGKILL)
        wait_until(lambda: not any(_alive(p) for p in [zygote, *builds]), timeout=20)
        run = wait_until(lambda: daemon.last_run("deploybot"))
        assert run["result"] == "failed" and "signal 9" in run["error"], run
        site.open_gate()
        wait_until(lambda: len([x for x in daemon.log if "warm builder ready" in x]) == 2)
        newer = site.commit(2)
        assert daemon.push(HOOK, github(newer)).status_code == 202  # lifts the backoff
        wait_until(lambda: site.published_source() == newer)
        assert _starts(daemon, "warm") == 2


def test_a_zygote_whose_daemon_left_while_it_warmed_up_ends_quietly() -> None:
    """The daemon stopped (or retired it) before it was ready: its 'ready' meets a closed
    socket; it ends with 0 and writes nothing (it shares the daemon's stderr: a traceback
    there was a log line with no priority under journald, after 'stopped')."""
    import socket
    import subprocess
    import sys

    from deploybot.serve.zygote import CONTROL_FD

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.close()  # gone before the zygote has imported anything
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEPLOYBOT_")}
    env[CONTROL_FD] = str(theirs.fileno())
    proc = subprocess.run(
        [sys.executable, "-m", "deploybot.serve.zygote"],
        env=env, pass_fds=[theirs.fileno()], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    theirs.close()
    assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", "")
