"""Benchmark: full builds of the bench's site against ``jekyll build``, in one script.

The site is :mod:`tests.bench.site`'s (``--posts`` posts: the tvm posts repeated, the bench's
Liquid theme), as ``make bench`` makes it. Then, ``--rounds`` times, in turn: ``jekyll build``
(``--disable-disk-cache``, as the bench runs it), ``deploybot build`` of the folder (no config:
no highlight cache, no broken-link check) and ``run-once --full`` of a published copy (the
pipeline's full build: the broken-link check on, the highlight cache warm, nothing to
publish). Each run is its own process, timed by :func:`tests.bench.measure.run` (wall, and
CPU of the process and its render workers); medians are printed with the ratios to Jekyll.

``--old DIR`` also times a checkout of an earlier deploybot in DIR (``git worktree add DIR
REV``; run as ``python -m deploybot`` with ``PYTHONPATH=DIR``, its own published copy), in the
same rounds.

``--profile DIR`` also runs each deploybot command once under cProfile (the parent process
only: the render workers are forked and not profiled) and writes ``DIR/build.prof`` and
``DIR/full.prof`` (``python -m pstats``).

    python -m tests.bench_full [--posts 1000] [--rounds 3] [--keep DIR] [--old DIR] [--profile DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench import site as sitemod
from tests.bench.measure import run
from tests.bench.peers import python_env
from tests.bench.scenarios import Instance, deploybot_argv

ROOT = Path(__file__).resolve().parents[1]


def _commands(root: Path, inst: Instance, prefix: list[str], tag: str = "") -> dict[str, list[str]]:
    return {
        f"deploybot build{tag}": [*prefix, "build", "site", "deploybot-out"],
        f"run-once --full{tag}": [*prefix, "run-once", "--config", str(inst.config), "--full"],
    }


def _jekyll(root: Path) -> list[str]:
    program = shutil.which("jekyll")
    if program is None:
        raise SystemExit("jekyll is not installed")
    return [program, "build", "-q", "--disable-disk-cache", "-s", "site", "-d", "jekyll-out"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--old", type=Path)
    args = parser.parse_args()
    for tree in (ROOT, *([args.old] if args.old else [])):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "deploybot")], check=True
        )
    env = {**python_env(), "JEKYLL_NO_BUNDLER_REQUIRE": "1"}
    old_env = {**env, "PYTHONPATH": str(args.old.resolve()) if args.old else ""}
    with tempfile.TemporaryDirectory() as tmp_name:
        root = args.keep or Path(tmp_name)
        root.mkdir(parents=True, exist_ok=True)
        site = sitemod.make_site(root, args.posts)
        inst = Instance(root / "run", site)
        run(inst.run_once(), env=env, cwd=root)  # the first publish: the state to build from
        commands = {"jekyll build": _jekyll(root), **_commands(root, inst, deploybot_argv())}
        envs = dict.fromkeys(commands, env)
        if args.old is not None:
            old = Instance(root / "run-old", site)
            old_argv = [sys.executable, "-m", "deploybot"]
            run([*old_argv, *old.run_once()[len(deploybot_argv()) :]], env=old_env, cwd=root)
            olds = _commands(root, old, old_argv, " (old)")
            commands.update(olds)
            envs.update(dict.fromkeys(olds, old_env))
        if args.profile is not None:
            args.profile.mkdir(parents=True, exist_ok=True)
            for name, out in (("deploybot build", "build"), ("run-once --full", "full")):
                shutil.rmtree(root / "deploybot-out", ignore_errors=True)
                prof = str(args.profile.resolve() / f"{out}.prof")
                prefix = [sys.executable, "-m", "cProfile", "-o", prof, "-m", "deploybot"]
                run(_commands(root, inst, prefix)[name], env=env, cwd=root)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                shutil.rmtree(root / "deploybot-out", ignore_errors=True)
                shutil.rmtree(root / "jekyll-out", ignore_errors=True)
                sample = run(argv, env=envs[name], cwd=root)
                cpu = sample.cpu_seconds or 0.0
                times[name].append((sample.seconds, cpu))
                print(f"  {name}: {sample.seconds:.3f} s (CPU {cpu:.2f} s)", flush=True)
    print(f"{args.posts} posts, {args.rounds} rounds, medians of whole processes:")
    jekyll = [statistics.median(x) for x in zip(*times["jekyll build"], strict=True)]
    for name, samples in times.items():
        wall, cpu = (statistics.median(x) for x in zip(*samples, strict=True))
        print(
            f"  {name:24} {wall:6.3f} s  CPU {cpu:6.2f} s  "
            f"ratio to Jekyll {wall / jekyll[0]:.2f}x wall, {cpu / jekyll[1]:.2f}x CPU"
        )


if __name__ == "__main__":
    main()
