"""Full-build speed against Jekyll, side by side: ``python -m tests.bench_full``.

Makes one site of ``--posts`` tvm posts (as :mod:`tests.bench` does: a bare source repo for
``run-once`` and the same files in a folder for ``deploybot build`` and ``jekyll build``),
then runs each contender in turn, ``--rounds`` times alternately, each in its own
subprocess, and prints the median wall time and CPU time, the peak memory of the whole
process tree (the build and its render workers, sampled from ``/proc`` every 20 ms: RSS
summed, which counts the pages forked workers share with their parent once per process,
and PSS, which splits them), and each median as a ratio to Jekyll's. Contenders:

- ``build``: ``deploybot build SITE OUT`` into a fresh OUT, with no highlight cache: the
  whole render; ``build-warm``: the same with the highlight cache the previous runs left;
- ``build-before``: ``deploybot build`` of an earlier checkout (``--before DIR``);
- ``run-once``: ``deploybot run-once --full`` (render and publish; the render cache of the
  previous round stays, so highlighted code blocks come from it);
- ``jekyll``: ``jekyll build`` into a fresh folder, its ``.jekyll-cache`` removed first;
  skipped with a line when ``jekyll`` is not installed.

No speed is asserted: this is a measurement (issue 12), not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.bench import make_site

ROOT = Path(__file__).resolve().parents[1]


def _family(pid: int) -> set[int]:
    """Return ``pid`` and its descendants, from ``/proc``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
    family = {pid}
    grew = True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in family and child not in family:
                family.add(child)
                grew = True
    return family


def _tree_memory_kb(pid: int) -> tuple[int, int]:
    """Return the summed RSS and PSS (KB) of ``pid`` and its descendants: RSS counts pages
    forked workers share with their parent once per process, PSS splits them."""
    rss = pss = 0
    for member in _family(pid):
        try:
            with open(f"/proc/{member}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith(b"Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def run(args: list[str], cwd: Path) -> tuple[float, float, float, float]:
    """Run ``args``; return (seconds, CPU seconds of the whole tree, peak tree RSS and PSS
    in MB). Raises on a non-zero exit."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        peak = peak_pss = 0
        while True:
            # wait4 reaps the child with its rusage: CPU time of it and the workers it reaped
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            rss, pss = _tree_memory_kb(proc.pid)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            text = err.read().decode()[-2000:]
            raise RuntimeError(f"{args[:3]} exited {proc.returncode}: {text}")
    return elapsed, usage.ru_utime + usage.ru_stime, peak / 1024, peak_pss / 1024


def make(root: Path, posts: int) -> Path:
    """Make the site under ``root``: source.git, publish.git, deploybot.toml and ``site/``."""
    make_site(root, posts)
    site = root / "site"
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(root / "source.git"), str(site)], check=True
    )
    return site


def jekyll_site(root: Path, site: Path) -> Path:
    """Return a copy of ``site`` Jekyll can build: the posts' ``{% include JB/setup %}``
    (empty, as in Jekyll-Bootstrap) and a ``post`` layout wrapping the content in a page,
    as the bundled theme does for deploybot."""
    jsite = root / "jsite"
    if not jsite.is_dir():
        shutil.copytree(site, jsite, ignore=shutil.ignore_patterns(".git"))
        (jsite / "_includes" / "JB").mkdir(parents=True)
        (jsite / "_includes" / "JB" / "setup").write_text("")
        (jsite / "_layouts").mkdir()
        (jsite / "_layouts" / "post.html").write_text(JEKYLL_LAYOUT)
    return jsite


JEKYLL_LAYOUT = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{ page.title }} | {{ site.title }}</title></head>
<body><article><h1>{{ page.title }}</h1><p>{{ page.date | date_to_string }}</p>
{{ content }}</article></body></html>
"""


def contenders(
    root: Path, site: Path, jobs: str | None, before: Path | None
) -> dict[str, Callable[[], list[str]]]:
    """Return name -> a function preparing a fresh run and returning its command.
    ``before``: a checkout of an earlier deploybot, run as ``build-before`` (``deploybot
    build`` from that checkout's package, with this venv)."""
    bot = str(ROOT / ".venv" / "bin" / "deploybot")
    config = root / "deploybot.toml"
    if jobs is not None:
        text = config.read_text()
        if "[render]" not in text:
            config.write_text(text + f"[render]\njobs = {jobs}\n")

    def build() -> list[str]:
        shutil.rmtree(root / ".deploybot" / "cache", ignore_errors=True)  # no highlight cache
        return build_warm()

    def build_warm() -> list[str]:
        shutil.rmtree(root / "out", ignore_errors=True)
        return [bot, "build", str(site), str(root / "out"), "--config", str(config)]

    def run_once() -> list[str]:
        return [bot, "run-once", "--full", "--config", str(config)]

    def jekyll() -> list[str]:
        shutil.rmtree(root / "jout", ignore_errors=True)
        jsite = jekyll_site(root, site)
        shutil.rmtree(jsite / ".jekyll-cache", ignore_errors=True)
        return ["jekyll", "build", "-q", "-s", str(jsite), "-d", str(root / "jout")]

    def build_before() -> list[str]:
        shutil.rmtree(root / "out-before", ignore_errors=True)
        command = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1));"]
        command[-1] += " from deploybot.cli import main; sys.argv[0] = 'deploybot'; main()"
        out = str(root / "out-before")
        return [*command, str(before), "build", str(site), out, "--config", str(config)]

    found: dict[str, Callable[[], list[str]]] = {
        "build": build,
        "build-warm": build_warm,
        "run-once": run_once,
    }
    if before is not None:
        found["build-before"] = build_before
    if shutil.which("jekyll"):
        found["jekyll"] = jekyll
    else:
        print("jekyll: skipped (not installed)")
    return found


def main() -> None:
    """Parse the arguments and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated contenders")
    parser.add_argument("--jobs", help="write [render] jobs = JOBS into the config")
    parser.add_argument("--keep", type=Path, help="make the site here and keep it")
    parser.add_argument("--before", type=Path, help="an earlier checkout to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        site = root / "site" if (root / "site").is_dir() else make(root, args.posts)
        runs = contenders(root, site, args.jobs, args.before)
        if args.only:
            runs = {k: v for k, v in runs.items() if k in args.only.split(",")}
        if "run-once" in runs:  # the first run-once publishes; later ones rebuild fully
            run(runs["run-once"](), root)
        results: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in runs}
        for _ in range(args.rounds):
            for name, prepare in runs.items():
                seconds, cpu, peak, pss = run(prepare(), root)
                results[name].append((seconds, cpu, peak, pss))
                line = f"  {name}: {seconds:.2f} s (cpu {cpu:.2f} s), {peak:.0f} MB ({pss:.0f} PSS)"
                print(line, file=sys.stderr, flush=True)
        medians = {
            name: [statistics.median(r[i] for r in rows) for i in range(2)]
            for name, rows in results.items()
        }
        print(f"{args.posts} posts, medians of {args.rounds} (load {os.getloadavg()[0]:.1f}):")
        for name, (wall, cpu) in medians.items():
            ratio = ""
            if "jekyll" in medians:
                base = medians["jekyll"]
                ratio = f"  wall {wall / base[0]:.2f}x jekyll, cpu {cpu / base[1]:.2f}x"
            peak = max(r[2] for r in results[name])
            pss = max(r[3] for r in results[name])
            print(
                f"  {name:9} {wall:7.2f} s  cpu {cpu:7.2f} s  peak RSS {peak:5.0f} MB "
                f"(PSS {pss:5.0f} MB){ratio}"
            )


if __name__ == "__main__":
    main()
