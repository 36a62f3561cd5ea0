"""``python -m tests.bench``: run the benchmark, write the JSON, the report and the plot.

    python -m tests.bench [--sizes 1000,10000] [--repeat 3] [--peers jekyll,hugo,pelican]
        [--peers-at 10000=hugo] [--pushes 10] [--json docs/bench.json] [--plot docs/bench.png]
        [--update-doc] [--keep DIR]
    python -m tests.bench --from-json docs/bench.json --update-doc   # report only

Each site size is made afresh (``--keep DIR`` keeps them), then measured in rounds (see
:mod:`tests.bench.scenarios`); after the sizes, the daemon's push to the live branch is
timed ``--pushes`` times with the warm builder and with a cold start (0: not at all; see
:mod:`tests.bench.daemon`). Progress goes to stderr, the Markdown report (the targets of
issue 21 first: :func:`tests.bench.report.targets`) to stdout and, with ``--update-doc``,
between the bench markers of ``--doc`` (docs/performance.md).
``make bench`` compiles deploybot's bytecode first (``python -m compileall -q deploybot``):
without it (and with ``PYTHONDONTWRITEBYTECODE`` set), every measured run would compile
every module it imports.
``--peers-at SIZE=NAMES`` (repeatable) measures only those peers at that size: Jekyll takes
about 265 s a build at 10,000 posts and no target of issue 21 compares with it there.
A peer that is missing is skipped with one line saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from tests.bench.daemon import measure_push_to_live
from tests.bench.measure import Results
from tests.bench.peers import ROOT, find_peers
from tests.bench.plot import plot
from tests.bench.report import markdown, update_doc
from tests.bench.scenarios import SizeBench
from tests.bench.site import posts_source


def log(line: str) -> None:
    """Print a progress line on stderr at once."""
    print(line, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="posts per site, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are taken")
    parser.add_argument("--peers", default="jekyll,hugo,pelican", help='or "none"')
    parser.add_argument(
        "--peers-at",
        action="append",
        default=[],
        metavar="SIZE=NAMES",
        help="the peers of one size (e.g. 10000=hugo, or 100000=none); repeatable",
    )
    parser.add_argument(
        "--pushes", type=int, default=10, help="daemon pushes to live, each way (0: none)"
    )
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "bench.json")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "bench.png")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--update-doc", action="store_true", help="write the report into --doc")
    parser.add_argument("--keep", type=Path, help="make the sites in this folder and keep them")
    parser.add_argument("--from-json", type=Path, help="report on an earlier run's JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.pushes < 0:
        parser.error("--pushes must be 0 or more")
    try:
        args.peers_at = peers_at(args.peers_at)
    except ValueError as exc:
        parser.error(f"--peers-at: {exc}")
    return args


def peer_names(text: str) -> list[str]:
    """The peer names of a ``--peers`` value (``"none"``: no peer)."""
    return [] if text == "none" else text.split(",")


def peers_at(values: list[str]) -> dict[int, list[str]]:
    """``--peers-at`` values (``SIZE=NAMES``) as {size: peer names}; ValueError when one
    is not of that form."""
    found: dict[int, list[str]] = {}
    for value in values:
        size, sep, names = value.partition("=")
        if not sep or not size.strip().isdigit():
            raise ValueError(f"{value!r} is not SIZE=NAMES (e.g. 10000=hugo)")
        found[int(size)] = peer_names(names.strip())
    return found


def measure_all(args: argparse.Namespace) -> tuple[Results, dict[str, object]]:
    """Run every size; return the results and the run's description.

    The JSON file is written after every round, so a run stopped part way keeps its samples.
    """
    sizes = [int(s) for s in args.sizes.split(",")]
    default = peer_names(args.peers)
    names = list(dict.fromkeys(default + [n for ns in args.peers_at.values() for n in ns]))
    peers = find_peers(names)
    results = Results()
    run = {
        "date": f"{datetime.now(UTC):%Y-%m-%d}",
        "command": "python -m tests.bench " + " ".join(sys.argv[1:]),
        "sizes": sizes,
        "repeat": args.repeat,
        "pushes": args.pushes,
        "machine": f"{platform.machine()}, {_cores()} cores, Python {platform.python_version()}",
        "posts": posts_source(),
        "peers": {p.name: p.version() for p in peers if p.program},
    }
    for peer in peers:
        if peer.missing:
            log(peer.missing)
            results.skipped.append(peer.missing)
    with tempfile.TemporaryDirectory(prefix="deploybot-bench-") as tmp:
        for size in sizes:
            root = (args.keep or Path(tmp)) / str(size)
            root.mkdir(parents=True)
            log(f"{size} posts: making the site")
            wanted = args.peers_at.get(size, default)
            for peer in peers:
                if peer.name not in wanted and peer.missing is None:
                    results.skipped.append(f"{peer.name}: not run at {size:,} posts (--peers-at)")
            here = [p for p in peers if p.name in wanted]
            bench = SizeBench(root, size, here, results, log)
            for r in range(args.repeat):
                log(f"{size} posts: round {r + 1} of {args.repeat}")
                bench.round(r)
                save(args.json, run, results)
    if args.pushes:
        measure_push_to_live(results, min(sizes), args.pushes, log)
        save(args.json, run, results)
    return results, run


def save(path: Path, run: dict[str, object], results: Results) -> None:
    """Write the run's description and every sample so far as JSON into ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"run": run, **results.to_json()}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def main(argv: list[str] | None = None) -> None:
    """Measure (or read ``--from-json``), then write the JSON, the plot and the report."""
    args = parse_args(argv)
    if args.from_json:
        data = json.loads(args.from_json.read_text(encoding="utf-8"))
        results, run = Results.from_json(data), data["run"]
    else:
        results, run = measure_all(args)
        log(f"results: {args.json}")
    link = None
    if not args.no_plot:
        title = f"make bench, {run['date']}: median of {run['repeat']} runs"
        if plot(results, args.plot, title):
            link = _relative(args.plot, args.doc.parent)
            log(f"plot: {args.plot}")
        else:
            log("no plot: matplotlib is missing (pip install -e '.[bench]')")
    versions = run.get("peers") or {}
    assert isinstance(versions, dict)
    header = (
        f"Measured {run['date']} by `{run['command']}` ({run['machine']}; "
        + (f"{run['posts']}; " if run.get("posts") else "")
        + f"medians of {run['repeat']} alternating rounds"
        + "".join(f"; {v}" for v in versions.values())
        + ")."
    )
    text = markdown(results, header, link)
    print(text)
    if args.update_doc:
        update_doc(args.doc, text)
        log(f"updated {args.doc}")


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


if __name__ == "__main__":
    main()
