"""Benchmark: a webhook push to the live publish branch, cold start against the warm builder.

Two copies of the small test site (:class:`tests.smallsite.SmallSite`: local source and
publish repositories, the email into an mbox), each served by its own ``deploybot serve``:
one with ``daemon.warm_builder = false`` (a new interpreter per build, as before) and one
with the warm builder (each build forked from the zygote). Then, ``--pushes`` times,
alternating the two daemons (so both see the same load on a shared machine): a new post is
committed, its signed GitHub push delivered, and the time taken from the ``202`` answer to
the publish branch's head moving (polled every 10 ms). Prints each side's median and the
ratio warm / cold.

    python -m tests.bench_daemon [--pushes 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tests.daemonproc import Daemon, daemon_table, github, wait_until
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

HOOK = "/webhook/deploybot"
POLL_S = 0.01


def push_to_live(daemon: Daemon, site: SmallSite, n: int) -> float:
    """Commit post ``n``, deliver its push; return seconds from the 202 to the publish
    branch's head moving (AssertionError when it did not within a minute)."""
    before = site.head()
    post = {f"_posts/2023-06-01-bench-{n}.md": f"---\ntitle: B{n}\n---\nPost {n}.\n".encode()}
    commit = commit_files(site.source, post)
    answer = daemon.push(HOOK, github(commit))
    clock = time.monotonic()
    assert answer.status_code == 202, answer.text
    while site.head() == before:
        if time.monotonic() - clock > 60:
            raise AssertionError(f"push {n} not live within 60 s: {daemon.log[-5:]}")
        time.sleep(POLL_S)
    seconds = time.monotonic() - clock
    wait_until(lambda: daemon.idle("deploybot"))  # its email written: the daemon is idle
    return seconds


def measure(root: Path, pushes: int) -> dict[str, list[float]]:
    """``{"cold": [s, ...], "warm": [s, ...]}``: ``pushes`` pushes to each, alternating."""
    for how in ("cold", "warm"):
        (root / how).mkdir(parents=True)
    sites = {
        "cold": SmallSite(root / "cold", extra=daemon_table(warm_builder=False)),
        "warm": SmallSite(root / "warm", extra=daemon_table()),
    }
    daemons = {how: Daemon(site.config, cwd=site.root).start() for how, site in sites.items()}
    times: dict[str, list[float]] = {"cold": [], "warm": []}
    try:
        daemons["warm"].wait_log("warm builder ready")
        for how in times:  # the first build (a full one) is not measured
            push_to_live(daemons[how], sites[how], 0)
        for n in range(1, pushes + 1):
            order = ("cold", "warm") if n % 2 else ("warm", "cold")
            for how in order:
                times[how].append(push_to_live(daemons[how], sites[how], n))
        starts = daemons["warm"].metrics()
        warm = starts.get(("deploybot_job_starts_total", (("start", "warm"),)), 0)
        assert warm >= pushes, f"the warm daemon forked {warm} builds of {pushes + 1}"
    finally:
        for daemon in daemons.values():
            daemon.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="build the sites here (kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        times = measure(root, args.pushes)
    cold, warm = (statistics.median(times[how]) for how in ("cold", "warm"))
    for how in ("cold", "warm"):
        shown = " ".join(f"{s:.3f}" for s in times[how])
        print(f"{how}: median {statistics.median(times[how]):.3f} s  ({shown})")
    print(f"push (202) to live branch, warm / cold: {warm / cold:.2f}x ({cold - warm:.3f} s saved)")


if __name__ == "__main__":
    main()
