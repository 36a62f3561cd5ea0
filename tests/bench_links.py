"""Benchmark: what the broken-link check costs a one-post edit (``publish.broken_links``).

Two copies of one site of ``--posts`` posts (:mod:`tests.bench_fast`'s: the tvm posts
repeated), published by this tree, one with ``publish.broken_links = "off"`` and one with
``"warn"`` (the default). Then, ``--rounds`` times, alternating the copies: the same post's
body is edited in both sources and each runs ``python -m deploybot run-once`` (fetch,
render, the check, commit, push, the email into an mbox). Each run is its own process; wall
and CPU times of the whole process, medians printed, and the ratio with / without.

    python -m tests.bench_links [--posts 1000] [--rounds 7] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench_fast import ROOT, edit, make_site, run, write_config

MODES = ("off", "warn")


def _set_mode(site: Path, mode: str) -> None:
    config = site / "deploybot.toml"
    text = config.read_text().replace("[publish]\n", f'[publish]\nbroken_links = "{mode}"\n')
    config.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "deploybot")])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"]
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = args.keep or Path(tmp_name)
        sites = {mode: tmp / f"site-{mode}" for mode in MODES}
        for mode, site in sites.items():
            site.mkdir(parents=True)
            make_site(site, args.posts)
            _set_mode(site, mode)
            run(argv, site, env)
            write_config(site, "mbox")
            _set_mode(site, mode)
            edit(site, args.posts, 0)
            run(argv, site, env)
        for n in range(1, args.rounds + 1):
            for mode, site in sites.items():
                edit(site, args.posts, n)
                times[mode].append(run(argv, site, env))
    print(f"{args.posts} posts, {args.rounds} rounds, one-post edit, medians of whole processes:")
    med = {
        mode: (statistics.median(v[0] for v in got), statistics.median(v[1] for v in got))
        for mode, got in times.items()
    }
    for mode, (wall, cpu) in med.items():
        print(f"  broken_links = {mode:<5} wall {wall:7.3f} s   CPU {cpu:7.3f} s")
    (off_wall, off_cpu), (on_wall, on_cpu) = med["off"], med["warn"]
    print(
        f"  with / without the check = {on_wall / off_wall:.3f}x wall, {on_cpu / off_cpu:.3f}x CPU"
    )


if __name__ == "__main__":
    main()
