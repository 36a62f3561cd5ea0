"""Benchmark: parse time of pathological post bodies at growing sizes (``make bench``).

Each case of :data:`tests.pathological.CASES` is rendered (Liquid, Markdown) at each size
in a child process killed after ``--timeout`` seconds; the best of ``--repeat`` runs is kept.
The growth ratio between consecutive sizes is about the size ratio (2 for the default
sizes) when parsing is linear; 4 is quadratic, 8 cubic.

    python -m tests.bench.render_limits [--sizes 5000,10000,20000,40000] [--timeout 60]
"""

from __future__ import annotations

import argparse
import time

from tests.pathological import CASES, render_case, run_bounded


def _best(name: str, size: int, repeat: int, timeout: float) -> float | None:
    best: float | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        if run_bounded(timeout, render_case, name, size) is None:
            return None
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best


def main() -> None:
    """Parse the arguments and print one Markdown table row per case."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="5000,10000,20000,40000")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.cases.split(",") if args.cases else sorted(CASES)
    print("| case | " + " | ".join(f"{n:,}" for n in sizes) + " | growth |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for name in names:
        times: list[float | None] = []
        for size in sizes:
            times.append(_best(name, size, args.repeat, args.timeout))
            if times[-1] is None:
                break
        cells = [f"{t:.3f} s" if t is not None else f"> {args.timeout:g} s" for t in times]
        cells += ["-"] * (len(sizes) - len(cells))
        done = [t for t in times if t is not None]
        growth = f"x{done[-1] / done[-2]:.1f}" if len(done) > 1 and done[-2] > 0 else "-"
        label = name.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
        print(f"| {label} | " + " | ".join(cells) + f" | {growth} |", flush=True)


if __name__ == "__main__":
    main()
