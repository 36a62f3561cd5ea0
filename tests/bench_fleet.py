"""Benchmark of the fleet (``[queue] backend = "redis"``), for docs/fleet.md's capacity model.

Three measurements, each with a real redis-server, ``deploybot serve`` and ``deploybot
worker`` processes on this machine:

1. ``--workers 1,2``: the 20-site test of ``tests/test_fleet_run.py`` (100 signed pushes
   over 20 small sites) with 1 and then 2 workers: builds, seconds from the first push to
   the last site live, builds per minute.
2. ``--posts 1000``: one worker, one site of that many posts (the tvm posts repeated, as
   ``tests.bench`` makes them): ``--rounds`` one-post edits one after another (the worker
   has the site warm), then as many edits each on a cold worker (its state directory for
   the site deleted first: what a worker that never saw the site does). The job's own
   seconds come from the lease log; builds per worker-core per minute = 60 / mean.
3. Redis memory (``MEMORY USAGE`` of each key, ``INFO memory``) after run 1: bytes per
   site, per queued RQ job, per lease-log entry.
4. ``--kill``: ``kill -9`` of a worker in the middle of a build, with the default
   ``[queue]`` timings (``--heartbeat``: that ``heartbeat_timeout``): seconds from the
   kill until ``fleet status`` shows the worker down, until the killed build's site is
   live again (its build commit on the publish branch, built by the other worker), and
   until a site pushed right after the kill, whose builds go to the killed worker
   (affinity), is live. The killed worker's ``git receive-pack``
   is killed with it (a machine that died takes its push along).

    python -m tests.bench_fleet [--workers 1,2] [--posts 1000] [--rounds 5] [--kill N]
        [--heartbeat S]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import tempfile
import time
from pathlib import Path

import redis

from deploybot.serve.fleet.status import overview
from tests.bench_fast import edit, make_site, write_config
from tests.daemonproc import Daemon, GatedSite, github, wait_until
from tests.fleetproc import WorkerProc, fleet_config, lease_log, make_sites, running_workers
from tests.gitrepo import head
from tests.redisproc import RedisServer


def twenty_sites(tmp: Path, workers: int) -> tuple[int, float, redis.Redis]:
    """Run the 20-site scenario with ``workers`` workers; return (builds, seconds, client);
    Redis is left running for the memory measurement (the caller stops it)."""
    server = RedisServer(tmp / "redis").start()
    sites = make_sites(tmp, [f"site{n:02d}" for n in range(20)])
    config = fleet_config(tmp, server.url)
    rng = random.Random(11)
    newest: dict[GatedSite, str] = {}
    names = [f"w{n}" for n in range(1, workers + 1)]
    with Daemon(config) as daemon, running_workers(config, tmp, *names):
        started = time.monotonic()
        for n in range(100):
            site = sites[n % 20] if n < 20 else rng.choice(sites)
            commit = site.commit(n)
            assert daemon.push(f"/webhook/{site.root.name}", github(commit)).status_code == 202
            newest[site] = commit
        for site, commit in newest.items():
            wait_until(lambda s=site, c=commit: s.published_source() == c, 600)
        elapsed = time.monotonic() - started
    builds = sum(1 for e in lease_log(server.client()) if e.get("result") == "published")
    return builds, elapsed, server.client()


def memory(client: redis.Redis, sites: int) -> dict[str, float]:
    """Bytes of Redis memory per site, per RQ job kept, per lease-log entry."""
    per_site = 0
    for pattern in ("deploybot:site:*", "deploybot:files:*", "deploybot:pending:*"):
        for key in client.scan_iter(pattern):
            per_site += client.memory_usage(key) or 0
    per_site += client.memory_usage("deploybot:sites") or 0
    jobs = list(client.scan_iter("rq:job:*"))
    job_bytes = sum(client.memory_usage(k) or 0 for k in jobs)
    log_bytes = client.memory_usage("deploybot:lease-log") or 0
    entries = client.xlen("deploybot:lease-log")
    info = client.info("memory")
    sent, sent_bytes = 0, 0
    for key in client.scan_iter("deploybot:files:*"):
        for field, value in client.hgetall(key).items():
            if field.startswith(b"outbox/sent/"):
                sent += field.endswith(b".json")
                sent_bytes += len(field) + len(value) + 16  # + a hash entry's own bytes
    return {
        "per_sent": sent_bytes / max(sent, 1),
        "per_site": per_site / sites,
        "per_job": job_bytes / max(len(jobs), 1),
        "per_log_entry": log_bytes / max(entries, 1),
        "used_memory": float(info["used_memory"]),
        "used_memory_startup": float(info["used_memory_startup"]),
    }


def one_site(tmp: Path, posts: int, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per job: ``rounds`` one-post edits on a warm worker, then on a cold one."""
    server = RedisServer(tmp / "redis").start()
    root = tmp / "sites" / "big"
    root.mkdir(parents=True)
    make_site(root, posts)
    write_config(root, "mbox")
    with (root / "deploybot.toml").open("a") as config_file:
        config_file.write('[daemon]\nname = "big"\n')
    site = GatedSite.__new__(GatedSite)  # only its read helpers: the site exists already
    site.publish, site.root = root / "publish.git", root
    config = fleet_config(tmp, server.url)
    warm: list[float] = []
    cold: list[float] = []
    try:
        with Daemon(config) as daemon, running_workers(config, tmp, "w1"):
            for n in range(2 * rounds + 1):
                if n > rounds:  # a cold worker: it never saw the site
                    shutil.rmtree(tmp / "w1" / "big", ignore_errors=True)
                edit(root, posts, n)
                commit = head(root / "source.git", "main")
                assert commit is not None
                answer = daemon.push("/webhook/big", github(commit))
                assert answer.status_code == 202
                wait_until(lambda c=commit: site.published_source() == c, 600)
                wait_until(lambda k=n: len(
                    [e for e in lease_log(server.client()) if e["event"] == "released"]
                ) == k + 1, 60)  # fmt: skip
                done = [e for e in lease_log(server.client()) if e["event"] == "released"]
                seconds = float(done[-1]["seconds"])
                if n == 0:
                    continue  # the first build of all (and its email of every file)
                (warm if n <= rounds else cold).append(seconds)
    finally:
        server.stop()
    return warm, cold


def _kill_receive_pack(repo: Path) -> int:
    """SIGKILL every ``git receive-pack`` into ``repo`` (this machine's own); how many."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"receive-pack" in a for a in argv) and str(repo).encode() in argv:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def kill_worker(tmp: Path, **queue: float) -> dict[str, float | str]:
    """``kill -9`` of the worker building a site (see the module doc, measurement 4), with
    the ``[queue]`` keys ``queue`` (default: none, the defaults): seconds from the kill to
    each event, and who built the killed site again."""
    server = RedisServer(tmp / "redis").start()
    held, other = make_sites(tmp, ["held", "other"])
    config = fleet_config(tmp, server.url, **queue)
    try:
        with Daemon(config) as daemon, WorkerProc(config, "w1", tmp / "w1") as w1:
            for site in (held, other):  # both built by w1 first: their affinity is w1's
                commit = site.commit(1)
                assert daemon.push(f"/webhook/{site.root.name}", github(commit)).status_code == 202
                wait_until(lambda s=site, c=commit: s.published_source() == c, 120)
            with WorkerProc(config, "w2", tmp / "w2"):
                held.gate.unlink()
                held.reached.unlink()
                commit = held.commit(2)
                assert daemon.push("/webhook/held", github(commit)).status_code == 202
                wait_until(lambda: held.pushes_reached() == 1, 120)  # w1 is in its push
                w1.kill9()
                killed = time.monotonic()
                _kill_receive_pack(held.publish)
                held.open_gate()
                pushed = other.commit(2)
                assert daemon.push("/webhook/other", github(pushed)).status_code == 202
                times: dict[str, float | str] = {}
                client = server.client()
                while len(times) < 3:
                    now = time.monotonic() - killed
                    if "status_down" not in times and not overview(client).workers.get("w1"):
                        times["status_down"] = now
                    if "held_live" not in times and held.published_source() == commit:
                        times["held_live"] = now
                    if "other_live" not in times and other.published_source() == pushed:
                        times["other_live"] = now
                    if now > 600:
                        raise AssertionError(f"not all within 600 s: {times}")
                    time.sleep(0.05)
                wait_until(lambda: any(
                    e["site"] == "held" and e["event"] == "released" and e["worker"] == "w2"
                    for e in lease_log(client)
                ), 120)  # fmt: skip
                builders = [e for e in lease_log(client)
                            if e["site"] == "held" and e["event"] == "released"]  # fmt: skip
                times["held_rebuilt_by"] = f"{builders[-1]['worker']} ({builders[-1]['result']})"
    finally:
        server.stop()
    return times


def main() -> None:
    """Run the measurements named by the arguments and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kill", type=int, default=0, help="times to measure a kill -9")
    parser.add_argument(
        "--heartbeat", type=float, default=None, help="queue.heartbeat_timeout for --kill"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for count in (int(w) for w in args.workers.split(",") if w):
            builds, seconds, client = twenty_sites(tmp / f"twenty-{count}", count)
            print(
                f"20 sites, 100 pushes, {count} worker(s): {builds} builds in {seconds:.1f} s "
                f"= {builds / seconds * 60:.0f} builds/min",
                flush=True,
            )
            mem = memory(client, 20)
            print(
                "  Redis: {per_site:.0f} B per site ({per_sent:.0f} B per sent message shared), "
                "{per_job:.0f} B per RQ job kept, "
                "{per_log_entry:.0f} B per lease-log entry; used_memory {used_memory:.0f} B "
                "(at start {used_memory_startup:.0f} B)".format(**mem),
                flush=True,
            )
            client.shutdown(nosave=True)
        if args.posts:
            warm, cold = one_site(tmp / "one", args.posts, args.rounds)
            for name, values in (("one-post edit, warm worker", warm),
                                 ("full build, cold worker", cold)):  # fmt: skip
                mean = statistics.mean(values)
                print(
                    f"{args.posts} posts, {name}: {mean:.2f} s per job "
                    f"(min {min(values):.2f}, max {max(values):.2f}) = "
                    f"{60 / mean:.1f} builds per worker-core per minute",
                    flush=True,
                )
        timings = {} if args.heartbeat is None else {"heartbeat_timeout": args.heartbeat}
        for n in range(args.kill):
            got = kill_worker(tmp / f"kill-{n}", **timings)
            print(
                "kill -9 of a worker during a build: down in fleet status after "
                "{status_down:.1f} s; its site live again after {held_live:.1f} s (rebuilt "
                "by {held_rebuilt_by}); a site pushed then, with affinity to it, live after "
                "{other_live:.1f} s".format(**got),
                flush=True,
            )


if __name__ == "__main__":
    main()
