"""Write ``tests/slow.txt`` from a pytest run's ``--durations=0`` report.

``python -m pytest -q -n auto --durations=0 > run.log; python -m tests.slowlist run.log``
lists every test whose setup, call and teardown took 0.5 s or more together: ``make test-fast``
leaves those out (``-m "not slow"``, marked by ``tests/conftest.py``), ``make test`` runs them.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

SLOW_SECONDS = 0.5
"""A test at or over this many seconds (setup + call + teardown) is slow."""

LIST = Path(__file__).with_name("slow.txt")

_LINE = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(.+)$")


def slow_tests(report: str, seconds: float = SLOW_SECONDS) -> dict[str, float]:
    """The node ids of ``report`` (a ``--durations=0`` report) that took ``seconds`` or more,
    with their total seconds."""
    total: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = _LINE.match(line.rstrip())
        if match:
            total[match[2]] += float(match[1])
    return {node: took for node, took in total.items() if took >= seconds}


def main(argv: list[str]) -> int:
    """Write :data:`LIST` from the report file ``argv[0]``."""
    found = slow_tests(Path(argv[0]).read_text(encoding="utf-8"))
    lines = [f"{node}  # {took:.1f} s" for node, took in sorted(found.items())]
    header = (
        f"# Tests of {SLOW_SECONDS:g} s or more, left out of `make test-fast`: written by\n"
        "# `python -m tests.slowlist RUN.LOG` from a `pytest -n auto --durations=0` run.\n"
    )
    LIST.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(found)} slow tests written to {LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
