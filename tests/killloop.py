"""The kill -9 loop: runs killed at random moments, then plain runs; nothing may wedge, no
email may be lost or doubled.

``python -m tests.killloop --firsts 40 --changes 40 [--seed N] [--posts 30] [--keep DIR]``

- *firsts*: each iteration is a new site (:class:`tests.killsite.KillSite`: empty publish
  repo, empty state dir), whose first ``run-once`` is SIGKILLed after a random delay.
- *changes*: one site; each iteration commits a site-wide change (site title, a layout,
  posts added, deleted, renamed: see :meth:`KillSite.change`) and SIGKILLs the run after a
  random delay.

The delay is uniform between Python's start-up (``run-once --help``) and 1.2 x a clean
run's duration, both measured first, so some runs finish before their kill. After each kill
the loop runs ``run-once`` without kills until one says "up to date" with the outbox empty
(:meth:`KillSite.settle`): every such run must exit 0 or 75 and the last must succeed, with
no clean-up by hand (else the iteration is *wedged*); then the mbox must hold exactly one
email per build commit on the publish branch (:meth:`KillSite.audit`: none lost, none
doubled, none torn). Exit status 1 on any failure.

:func:`firsts` and :func:`changes` take the kill of each iteration as a function, so the test
suite runs a short loop with deterministic kill points (:mod:`tests.killpoints`) instead.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.killsite import Audit, KillSite, Run, read_mbox

Kill = Callable[[KillSite], Run]
"""One killed run of a site (a random delay, or a kill point)."""


@dataclass
class Tally:
    """What one phase of the loop saw."""

    name: str
    iterations: int = 0
    killed: int = 0
    wedged: list[str] = field(default_factory=list)
    lost: int = 0
    duplicated: int = 0
    torn: int = 0
    stray: int = 0
    builds: int = 0
    emails: int = 0
    exits: dict[int, int] = field(default_factory=dict)
    most_runs: int = 0
    moments: dict[str, int] = field(default_factory=dict)
    left_locks: int = 0

    @property
    def ok(self) -> bool:
        """No wedge, no lost, doubled, torn or stray email."""
        return not (self.wedged or self.lost or self.duplicated or self.torn or self.stray)

    def summary(self) -> str:
        """One line of numbers."""
        exits = ", ".join(f"{code}: {n}" for code, n in sorted(self.exits.items()))
        return (
            f"{self.name}: {self.iterations} iterations, {self.killed} runs killed, "
            f"{len(self.wedged)} wedged, {self.builds} build commits, {self.emails} commit "
            f"emails, {self.lost} lost, {self.duplicated} duplicate, {self.torn} torn, "
            f"{self.stray} stray; later runs exited {{{exits}}}, at most {self.most_runs} "
            f"runs to settle; killed {_counts(self.moments)}; {self.left_locks} kills left "
            "lock files behind"
        )

    def killed_run(self, site: KillSite, kill: Kill) -> None:
        """Run ``kill`` on ``site``; count it and when it died (from what it left)."""
        head, mails = site.publish_head(), len(read_mbox(site.mbox))
        killed = kill(site)
        self.iterations += 1
        if killed.code != -9:
            moment = "never (finished first)"
        elif site.publish_head() == head:
            moment = "before the push"
        elif len(read_mbox(site.mbox)) == mails:
            moment = "after the push, before the email"
        else:
            moment = "after the email"
        self.killed += killed.code == -9
        self.moments[moment] = self.moments.get(moment, 0) + 1
        self.left_locks += bool(site.lock_files())


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items(), key=lambda i: -i[1]))


def settle_and_audit(site: KillSite, tally: Tally, what: str) -> Audit:
    """Run without kills until settled; count what happened into ``tally``."""
    runs = site.settle()
    for one in runs:
        tally.exits[one.code] = tally.exits.get(one.code, 0) + 1
    tally.most_runs = max(tally.most_runs, len(runs))
    last = runs[-1]
    bad_exit = [one for one in runs if one.code not in (0, 75)]
    if bad_exit or last.code != 0 or "up to date" not in last.out or site.waiting():
        tally.wedged.append(f"{what}: {(bad_exit or [last])[0].out.strip()[-500:]}")
    return site.audit()


def firsts(root: Path, count: int, kill: Callable[[int], Kill], posts: int) -> Tally:
    """``count`` first builds from empty state, each killed by ``kill(i)``."""
    tally = Tally("first builds")
    for i in range(count):
        site = KillSite(root / f"first-{i}", posts=posts)
        tally.killed_run(site, kill(i))
        audit = settle_and_audit(site, tally, f"first build {i}")
        _count(tally, audit)
    return tally


def changes(root: Path, count: int, kill: Callable[[int], Kill], posts: int) -> Tally:
    """One site; ``count`` site-wide changes, each run killed by ``kill(i)``."""
    tally = Tally("site-wide changes")
    site = KillSite(root / "changes", posts=posts)
    assert site.run().code == 0
    audit = site.audit()
    for i in range(count):
        what = site.change()
        tally.killed_run(site, kill(i))
        audit = settle_and_audit(site, tally, f"change {i} ({what})")
        if not audit.ok:
            print(f"  change {i} ({what}): {audit}", file=sys.stderr)
    _count(tally, audit)
    return tally


def _count(tally: Tally, audit: Audit) -> None:
    tally.builds += audit.builds
    tally.emails += audit.emails
    tally.lost += len(audit.lost)
    tally.duplicated += len(audit.duplicated)
    tally.torn += audit.torn
    tally.stray += len(audit.stray)


def after_delay(delay: float) -> Kill:
    """Kill the run after ``delay`` seconds."""
    return lambda site: site.run_killed_after(delay)


def at_point(point: str) -> Kill:
    """Kill the run at the :mod:`tests.killpoints` point ``point``."""
    return lambda site: site.run(kill_at=point)


def clean_duration(root: Path, posts: int) -> tuple[float, float, float]:
    """Seconds of a clean first run, of a clean run after a site-wide change, and of the
    part of a run that is Python starting and importing (``run-once --help``)."""
    site = KillSite(root / "calibrate", posts=posts)
    start = time.perf_counter()
    assert site.run().code == 0
    first = time.perf_counter() - start
    site.change()
    start = time.perf_counter()
    assert site.run().code == 0
    change = time.perf_counter() - start
    start = time.perf_counter()
    assert site.run("--help").code == 0
    return first, change, time.perf_counter() - start


@contextmanager
def workdir(keep: Path | None) -> Iterator[Path]:
    """``keep`` (created), else a temp folder removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    root = Path(tempfile.mkdtemp(prefix="killloop-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0 when every check held)."""
    parser = argparse.ArgumentParser(prog="python -m tests.killloop", description=__doc__)
    parser.add_argument("--firsts", type=int, default=40, help="first builds (default 40)")
    parser.add_argument("--changes", type=int, default=40, help="site-wide changes (40)")
    parser.add_argument("--posts", type=int, default=30, help="posts in each site (30)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the sites in this folder")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    with workdir(args.keep) as root:
        first, change, startup = clean_duration(root, args.posts)
        print(
            f"seed {seed}; a clean first run takes {first:.2f} s, a change run {change:.2f} s, "
            f"of which {startup:.2f} s start-up; kills land uniformly in [start-up, 1.2 x run]"
        )
        random_first = lambda _: after_delay(rng.uniform(startup, 1.2 * first))  # noqa: E731
        random_change = lambda _: after_delay(rng.uniform(startup, 1.2 * change))  # noqa: E731
        tallies = [
            firsts(root, args.firsts, random_first, args.posts),
            changes(root, args.changes, random_change, args.posts),
        ]
    for tally in tallies:
        print(tally.summary())
        for wedge in tally.wedged:
            print(f"  wedged: {wedge}")
    ok = all(t.ok for t in tallies)
    print("OK: nothing wedged, no email lost or doubled" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
