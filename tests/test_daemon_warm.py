"""The daemon's warm builder (:mod:`deploybot.serve.zygote`): builds are forked from it,
a killed zygote falls back to cold starts and comes back, SIGHUP and new code on disk
restart it, and a ``kill -9`` of the daemon leaves no process of it behind.

Real processes throughout: a real ``deploybot serve``, its zygote and its builds.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

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


def test_a_killed_zygote_falls_back_to_a_cold_start_and_comes_back(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        daemon.wait_log("warm builder ready")
        first = _zygote(daemon)
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: not _alive(first), timeout=20)
        _publish(daemon, site, 1)  # cold: the zygote is gone
        assert _starts(daemon, "cold") == 1
        daemon.wait_log("warm builder: .*builds start cold")
        wait_until(lambda: len([x for x in daemon.log if "warm builder ready" in x]) == 2)
        assert _zygote(daemon) != first
        _publish(daemon, site, 2)
        assert _starts(daemon, "warm") == 1 and _starts(daemon, "cold") == 1
        warned = [x for x in daemon.log if "builds start cold" in x]
        assert len(warned) == 1, warned  # told once


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
