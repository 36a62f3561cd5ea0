"""The fleet end to end: a real redis-server, ``deploybot serve`` with ``[queue] backend =
"redis"``, ``deploybot worker`` processes with state directories of their own (two
"machines"), real repositories and real mboxes.

The invariants every test checks at its end: each site's publish branch was built from
its newest source commit; the lease log shows no site held by two workers at once; each
mbox holds exactly one commit email per build commit on the publish branch.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.daemonproc import Daemon, GatedSite, github, held_back_post, push_commit, wait_until
from tests.fleetproc import (
    WorkerProc,
    build_commits,
    builds_by_worker,
    emailed_commits,
    fleet_config,
    lease_log,
    make_sites,
    overlaps,
    running_workers,
)
from tests.gitrepo import read_branch
from tests.redisproc import RedisServer

Metrics = dict[tuple[str, tuple[tuple[str, str], ...]], float]
"""What :meth:`Daemon.metrics` returns: ``{(sample name, sorted labels): value}``."""


def _all_built(
    sites: dict[GatedSite, str], timeout: float = 90, daemon: Daemon | None = None
) -> None:
    for site, newest in sites.items():
        try:
            wait_until(lambda s=site, c=newest: s.published_source() == c, timeout, f"{site.root}")
        except AssertionError:
            config = site.root.parent.parent / "daemon.toml"
            argv = [sys.executable, "-m", "deploybot", "fleet", "status", "--config", str(config)]
            print(subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout)
            print("--- daemon:", *(daemon.log if daemon else []), sep="\n")
            raise


def _check_emails(site: GatedSite) -> None:
    """Exactly one commit email per build commit, once the outbox is empty."""
    builds = build_commits(site)
    wait_until(lambda: sorted(emailed_commits(site)) == sorted(builds), 30, f"{site.root} emails")
    assert sorted(emailed_commits(site)) == sorted(builds)


def test_twenty_sites_two_workers_a_hundred_pushes(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    sites = make_sites(tmp_path, [f"site{n:02d}" for n in range(20)])
    config = fleet_config(tmp_path, redis_server.url)
    rng = random.Random(11)
    newest: dict[GatedSite, str] = {}
    with Daemon(config) as daemon, running_workers(config, tmp_path, "w1", "w2"):
        started = time.monotonic()
        for n in range(100):
            site = sites[n % 20] if n < 20 else rng.choice(sites)
            newest[site] = push_commit(daemon, site, n)
        _all_built(newest, daemon=daemon)
        elapsed = time.monotonic() - started
        # A site can be live at its newest commit while a follow-up build (a push that
        # arrived during the last one) still waits or holds its lease: one read of the
        # daemon's metrics in which none does, checked below.
        metrics = wait_until(lambda: _idle(daemon.metrics()), 60, "builds waiting or running")
        events = lease_log(redis_server.client())
        assert overlaps(events) == []
        by_worker = builds_by_worker(events)
        assert set(by_worker) == {"w1", "w2"}, by_worker  # both machines built
        # The daemon counts the runs the lease log reports, about once a second.
        published = sum(by_worker.values())
        wait_until(lambda: _published_runs(daemon.metrics()) == published, 30, "runs counted")
        for site in sites:
            _check_emails(site)
        status = subprocess.run(
            [sys.executable, "-m", "deploybot", "fleet", "status", "--config", str(config)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert status.returncode == 0, status.stderr
        lines = {line.split()[0]: line for line in status.stdout.splitlines()[1:21]}
        assert sorted(lines) == [f"site{n:02d}" for n in range(20)]
        assert all(" published " in line for line in lines.values())
        assert metrics[("deploybot_workers_up", ())] == 2
        assert metrics[("deploybot_leases_held", ())] == 0
        assert ("deploybot_queue_length", (("queue", "deploybot"),)) in metrics
        rq = Path(sys.executable).parent / "rq"
        info = subprocess.run(
            [str(rq), "info", "--url", redis_server.url], capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert info.returncode == 0, info.stderr
        assert "deploybot@w1" in info.stdout and "deploybot@w2" in info.stdout
        assert "2 workers" in info.stdout
        builds = sum(by_worker.values())
        print(f"\n{builds} builds in {elapsed:.1f} s: {builds / elapsed * 60:.0f} builds/min")


def _idle(metrics: Metrics) -> Metrics | None:
    """``metrics`` when they show no site waiting and no lease held, else None."""
    waiting = metrics.get(("deploybot_queue_depth", ()))
    return metrics if waiting == 0 and metrics.get(("deploybot_leases_held", ())) == 0 else None


def _published_runs(metrics: Metrics) -> int:
    """The sum of ``deploybot_runs_total{result="published"}`` over the sites."""
    return int(
        sum(v for (name, labels), v in metrics.items()
            if name == "deploybot_runs_total" and ("result", "published") in labels)
    )  # fmt: skip


def _gate_after_the_update(site: GatedSite) -> None:
    """Hold pushes in ``post-receive`` instead: the branch has moved, the pusher waits."""
    hooks = site.publish / "hooks"
    (hooks / "pre-receive").rename(hooks / "post-receive")


def _events(server: RedisServer, site: str) -> list[tuple[str, str]]:
    return [(e["event"], e["worker"]) for e in lease_log(server.client()) if e["site"] == site]


@pytest.mark.parametrize("where", ["before the push lands", "after the branch moved"])
def test_kill_9_during_a_build_the_other_worker_builds_and_emails_once(
    tmp_path: Path, redis_server: RedisServer, where: str
) -> None:
    [site] = make_sites(tmp_path, ["s"], gated=True)
    if where == "after the branch moved":
        _gate_after_the_update(site)
    config = fleet_config(tmp_path, redis_server.url, lease_ttl=2)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1") as w1:
        commit = push_commit(daemon, site, 1)
        wait_until(lambda: site.pushes_reached() == 1)
        w1.kill9()
        site.open_gate()
        with WorkerProc(config, "w2", tmp_path / "w2"):
            _all_built({site: commit}, timeout=60)
            wait_until(lambda: ("released", "w2") in _events(redis_server, "s"), 60)
            _check_emails(site)
    events = _events(redis_server, "s")
    assert events[:2] == [("acquired", "w1"), ("expired", "w1")], events
    assert ("released", "w1") not in events
    if where == "after the branch moved":  # w1's build is published: w2 only owes its email
        results = [e["result"] for e in lease_log(redis_server.client()) if "result" in e]
        assert results == ["up-to-date"]
        assert len(build_commits(site)) == 1
    assert overlaps(lease_log(redis_server.client())) == []
    assert len(emailed_commits(site)) == len(build_commits(site)) >= 1


def test_affinity_sigterm_and_a_worker_that_never_saw_the_site(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    [site] = make_sites(tmp_path, ["s"])
    config = fleet_config(tmp_path, redis_server.url)
    with Daemon(config) as daemon, running_workers(config, tmp_path, "w1", "w2") as procs:
        workers = {w.name: w for w in procs}
        for n in range(1, 4):
            _all_built({site: push_commit(daemon, site, n)})
            wait_until(lambda k=n: len(_released(redis_server)) == k)
        first = _released(redis_server)[0]
        assert _released(redis_server) == [first] * 3  # affinity: the warm worker each time
        other = "w2" if first == "w1" else "w1"
        assert not (tmp_path / other / "s").exists()  # it never saw the site
        site.gate.unlink()
        site.reached.unlink()
        commit = push_commit(daemon, site, 4)
        wait_until(lambda: site.pushes_reached() == 1)  # the warm worker, inside its push
        proc = workers[first].proc
        assert proc is not None
        proc.send_signal(signal.SIGTERM)
        workers[first].wait_log("stopping: a running build finishes first")
        assert proc.poll() is None  # it finishes its build first
        site.open_gate()
        assert proc.wait(timeout=60) == 0
        assert site.published_source() == commit
        assert _released(redis_server) == [first] * 4
        assert redis_server.client().get("deploybot:lease:s") is None
        _all_built({site: push_commit(daemon, site, 5)})
        wait_until(lambda: len(_released(redis_server)) == 5)
        assert _released(redis_server)[-1] == other  # from the publish repo's record
    _check_emails(site)
    assert len(build_commits(site)) == 5


def _released(server: RedisServer) -> list[str]:
    return [e["worker"] for e in lease_log(server.client()) if e["event"] == "released"]


def test_a_build_waiting_for_a_busy_worker_goes_to_another_after_affinity_timeout(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    slow, quick = make_sites(tmp_path, ["slow", "quick"])
    config = fleet_config(tmp_path, redis_server.url, affinity_timeout=1)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1"):
        _all_built({quick: push_commit(daemon, quick, 1), slow: push_commit(daemon, slow, 1)})
        slow.gate.unlink(missing_ok=True)  # w1's next build of "slow" waits at its push
        slow.reached.unlink(missing_ok=True)
        push_commit(daemon, slow, 2)
        wait_until(lambda: slow.pushes_reached() == 1)
        with WorkerProc(config, "w2", tmp_path / "w2"):
            commit = push_commit(daemon, quick, 2)  # queued for w1, which built "quick" last
            _all_built({quick: commit}, timeout=30)
            assert slow.pushes_reached() == 1 and not slow.gate.exists()  # w1 still busy
            slow.open_gate()
            wait_until(lambda: _released(redis_server).count("w1") == 3)
    quick_builds = [e["worker"] for e in lease_log(redis_server.client())
                    if e["site"] == "quick" and e["event"] == "released"]  # fmt: skip
    assert quick_builds == ["w1", "w2"]
    for site in (slow, quick):
        _check_emails(site)


def test_redis_restarted_during_the_run_no_trigger_is_lost(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    sites = make_sites(tmp_path, [f"r{n}" for n in range(4)])
    config = fleet_config(tmp_path, redis_server.url, lease_ttl=3)
    newest: dict[GatedSite, str] = {}
    with Daemon(config) as daemon, running_workers(config, tmp_path, "w1", "w2"):
        for n, site in enumerate(sites):
            newest[site] = push_commit(daemon, site, n)
        redis_server.stop()
        for n, site in enumerate(sites[:2], start=10):  # accepted and kept while Redis is down
            newest[site] = push_commit(daemon, site, n)
        daemon.wait_log("Redis unreachable")
        assert daemon.health()[0] == 503
        redis_server.start()
        daemon.wait_log("Redis answers again")
        for n, site in enumerate(sites[2:], start=20):
            newest[site] = push_commit(daemon, site, n)
        _all_built(newest, daemon=daemon)
        wait_until(lambda: daemon.health()[0] == 200)
        for site in sites:
            _check_emails(site)
        assert overlaps(lease_log(redis_server.client())) == []


def test_a_held_back_post_is_built_by_the_fleet_when_its_date_passes(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    [site] = make_sites(tmp_path, ["soon"])
    config = fleet_config(tmp_path, redis_server.url)
    with Daemon(config) as daemon, running_workers(config, tmp_path, "w1") as [worker]:

        def push(commit: str) -> None:
            assert daemon.push("/webhook/soon", github(commit)).status_code == 202

        soon = held_back_post(site, push, seconds=6)
        wait_until(lambda: soon in read_branch(site.publish, "asf-site"))
        worker.wait_log("a held-back post came due")
