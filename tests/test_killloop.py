"""A short kill -9 loop for ``make test``: the loop of :mod:`tests.killloop` with a kill
point (:mod:`tests.killpoints`) per iteration instead of a random delay, so every stage
boundary where a kill used to wedge the bot or lose an email is hit on every run.

The full random loop: ``python -m tests.killloop --firsts 40 --changes 40``.
"""

from __future__ import annotations

from pathlib import Path

from tests.killloop import at_point, changes, firsts

FIRST_POINTS = ["lock:/objects/:8", "lock:/pack/:1", "pushed", "mbox", "handed"]
CHANGE_POINTS = ["lock:/objects/:3", "lock:/refs/:3", "cache", "mbox", "handed", "pushed"]


def test_short_kill_loop(tmp_path: Path) -> None:
    first = firsts(tmp_path, len(FIRST_POINTS), lambda i: at_point(FIRST_POINTS[i]), posts=8)
    change = changes(tmp_path, len(CHANGE_POINTS), lambda i: at_point(CHANGE_POINTS[i]), posts=8)
    for tally in (first, change):
        assert tally.killed == tally.iterations, tally.summary()  # every point was reached
        assert tally.ok, tally.summary() + "".join(f"\n  {w}" for w in tally.wedged)
        assert tally.emails == tally.builds, tally.summary()
