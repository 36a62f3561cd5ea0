"""A fleet job that runs out of memory is one log line and a 'failed' result that says so,
try again later, as ``run-once`` reports it (the MemoryError escaped to RQ: a traceback,
and no result).

Real redis-server, ``deploybot serve`` and ``deploybot worker`` processes, as in
:mod:`tests.test_fleet_run`; the worker's address space is capped (prlimit(2)) once it
has built the site once, so its work horse, forked per job, builds under the cap twenty
long posts whose feeds need more (as in :mod:`tests.test_out_of_memory`).
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemonproc import Daemon, github, wait_until
from tests.fleetproc import WorkerProc, fleet_config, make_sites
from tests.gitrepo import commit_files
from tests.redisproc import RedisServer

HEADROOM = 100_000_000
"""Bytes of address space the work horse may add to the worker's: enough to render the
twenty posts, not their feeds (over 300 MB). Anything from 25 to 200 MB gave the same."""


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def _address_space(pid: int) -> int:
    """The ``VmSize`` of process ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmSize for {pid}")


def test_a_fleet_job_out_of_memory_is_one_line_and_a_temporary_failure(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    (site,) = make_sites(tmp_path, ["big"])
    config = fleet_config(tmp_path, redis_server.url)
    with Daemon(config) as daemon, WorkerProc(config, "w1", tmp_path / "w1") as worker:
        first = site.commit(1)
        assert daemon.push("/webhook/big", github(first)).status_code == 202
        wait_until(lambda: site.published_source() == first, message="first build")
        published = site.head()
        assert worker.proc is not None
        cap = _address_space(worker.proc.pid) + HEADROOM
        resource.prlimit(worker.proc.pid, resource.RLIMIT_AS, (cap, cap))
        body = b"---\ntitle: P\n---\n" + b"a " * 1_000_000 + b"\n"
        posts = {f"_posts/2024-01-{day}-p.md": body for day in range(10, 30)}
        big = commit_files(site.source, posts, "Twenty long posts")
        assert daemon.push("/webhook/big", github(big)).status_code == 202
        line = worker.wait_log("site big: failed")
        assert "out of memory while running the build job" in line, worker.log
        assert not any("Traceback" in entry for entry in worker.log), worker.log
        assert site.head() == published
