"""A worker of the fleet that dies, stalls or loses its work horse: its heartbeat
(``heartbeat_timeout``, default 10 s) tells, and its sites go to another worker at once, long
before its lease (``lease_ttl``) or its sites' affinity (``affinity_timeout``) would expire:
both are 600 s here, so a test passes only if the take-over did not wait for them.

Real redis-server, ``deploybot serve``, ``deploybot worker`` processes, repositories and
mboxes, as in :mod:`tests.test_fleet_run`; each test ends with its invariants: every site
built from its newest source commit, no site held by two workers at once, one email per
build commit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.daemonproc import Daemon, GatedSite, push_commit, wait_until
from tests.fleetproc import (
    WorkerProc,
    build_commits,
    descendants,
    emailed_commits,
    fleet_config,
    lease_log,
    make_sites,
    overlaps,
)
from tests.redisproc import RedisServer

LONG = {"lease_ttl": 600, "affinity_timeout": 600}


def _built(site: GatedSite, commit: str) -> None:
    wait_until(lambda: site.published_source() == commit, message=f"{site.root} at {commit}")


def _check_emails(site: GatedSite) -> None:
    builds = build_commits(site)
    wait_until(lambda: sorted(emailed_commits(site)) == sorted(builds), 30, f"{site.root} emails")


def _events(server: RedisServer, site: str) -> list[dict[str, str]]:
    return [e for e in lease_log(server.client()) if e["site"] == site]


def _status(config: Path) -> str:
    argv = [sys.executable, "-m", "deploybot", "fleet", "status", "--config", str(config)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kill_9_of_a_worker_its_build_and_its_sites_go_to_another_at_once(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    held, other = make_sites(tmp_path, ["held", "other"])
    config = fleet_config(tmp_path, redis_server.url, **LONG)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1") as w1:
        for site in (held, other):  # built by w1: their next builds wait for w1 (affinity)
            _built(site, push_commit(daemon, site, 1))
        with WorkerProc(config, "w2", tmp_path / "w2") as w2:
            held.gate.unlink()
            held.reached.unlink()
            commit = push_commit(daemon, held, 2)
            wait_until(lambda: held.pushes_reached() == 1)  # w1 is in its push
            w1.kill_machine()  # its receive-pack too: the push never lands
            held.open_gate()
            pushed = push_commit(daemon, other, 2)  # queued for w1: its heartbeat is still there
            _built(held, commit)
            _built(other, pushed)
            status = _status(config)
            line = w2.wait_log(f"site other: published {build_commits(other)[-1][:12]}")
            wait_until(lambda: ("released", "w2") in [
                (e["event"], e["worker"]) for e in _events(redis_server, "other")
            ])  # fmt: skip
    assert "workers: w1 (down: last heartbeat " in status and "w2 (up)" in status, status
    assert line.endswith(f"; email for {build_commits(other)[-1][:12]} sent to "
                         "commits@example.org (mbox)"), line  # fmt: skip
    events = _events(redis_server, "held")
    kinds = [(e["event"], e["worker"]) for e in events]
    assert kinds[2:] == [("acquired", "w1"), ("expired", "w1"), ("acquired", "w2"),
                         ("released", "w2")], kinds  # fmt: skip
    assert "worker w1 is down (no heartbeat for 10 s)" in events[3]["why"]
    assert [e["result"] for e in events if e["event"] == "released"] == ["published"] * 2
    built_by = [e["worker"] for e in _events(redis_server, "other") if e["event"] == "released"]
    assert built_by == ["w1", "w2"]
    assert overlaps(lease_log(redis_server.client())) == []
    for site in (held, other):
        _check_emails(site)
        assert len(build_commits(site)) == 2


def test_a_stalled_worker_declared_down_then_resumed_publishes_and_sends_nothing(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """SIGSTOP of a worker (its horse and its ``git receive-pack`` too) inside its push:
    after ``heartbeat_timeout`` another worker builds and publishes the site; SIGCONT then
    lets the stalled push go on, and it is refused (the publish branch moved: the push is a
    compare-and-swap), the stalled worker's lease is gone, and it emails nothing."""
    [site] = make_sites(tmp_path, ["s"])
    config = fleet_config(tmp_path, redis_server.url, **LONG)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1") as w1:
        _built(site, push_commit(daemon, site, 1))
        site.gate.unlink()
        site.reached.unlink()
        commit = push_commit(daemon, site, 2)
        wait_until(lambda: site.pushes_reached() == 1)
        stopped = w1.pause()
        try:
            with WorkerProc(config, "w2", tmp_path / "w2"):
                wait_until(lambda: site.pushes_reached() == 2)  # w2 took the build over
                site.open_gate()  # w2's push lands; w1's receive-pack is stopped
                wait_until(lambda: ("released", "w2") in [
                    (e["event"], e["worker"]) for e in _events(redis_server, "s")
                ])  # fmt: skip
                assert site.published_source() == commit
                built = build_commits(site)
                _check_emails(site)
        finally:
            w1.resume(stopped)
        w1.wait_log("the lease had expired: the result is not recorded")
        assert w1.proc is not None and w1.proc.poll() is None  # w1 runs on, up again
        wait_until(lambda: "w1 (up)" in _status(config))
    assert build_commits(site) == built and len(built) == 2
    assert site.published_source() == commit
    _check_emails(site)
    assert sorted(emailed_commits(site)) == sorted(built)
    kinds = [(e["event"], e["worker"]) for e in _events(redis_server, "s")]
    assert kinds == [("acquired", "w1"), ("released", "w1"), ("acquired", "w1"),
                     ("expired", "w1"), ("acquired", "w2"), ("released", "w2")], kinds  # fmt: skip
    assert overlaps(lease_log(redis_server.client())) == []


def test_a_killed_work_horse_gives_its_lease_back_at_once(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The OOM killer (here SIGKILL) takes a build's work horse; its worker lives on, sees
    the horse end without a result, and releases its lease as a failed build: retried
    after the backoff (a horse killed each time backs off), at once for a new commit."""
    [site] = make_sites(tmp_path, ["s"], gated=True)
    config = fleet_config(tmp_path, redis_server.url, **LONG)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1") as w1:
        push_commit(daemon, site, 1)
        wait_until(lambda: site.pushes_reached() == 1)
        assert w1.proc is not None
        [horse] = [pid for pid in descendants(w1.proc.pid)[1:] if _parent(pid) == w1.proc.pid]
        for pid in descendants(horse):  # the horse and its git receive-pack
            os.kill(pid, signal.SIGKILL)
        w1.wait_log("site s: the work horse of w1 ended without a result")
        assert redis_server.client().get("deploybot:lease:s") is None  # not in 600 s
        record = redis_server.client().hgetall("deploybot:site:s")
        assert record[b"result"] == b"failed" and record[b"failures"] == b"1"
        site.open_gate()
        _built(site, push_commit(daemon, site, 2))  # a new commit: no backoff
    events = _events(redis_server, "s")
    assert [(e["event"], e["worker"], e.get("result")) for e in events] == [
        ("acquired", "w1", None), ("released", "w1", "failed"), ("acquired", "w1", None),
        ("released", "w1", "published"),
    ]  # fmt: skip
    _check_emails(site)
    assert len(build_commits(site)) == 1


def _parent(pid: int) -> int | None:
    """The parent of process ``pid``, or None when it has ended since it was listed (a
    short-lived git process of the build)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])
