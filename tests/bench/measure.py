"""Run one measurement in its own process: wall time, CPU time, peak memory; keep every sample.

Two memory figures are taken of each command:

- ``ru_maxrss``, which ``wait4`` reports: on Linux the largest resident set of the command
  or of any one descendant it waited for (a ``sh -c`` running git, Jekyll's Ruby, Hugo's Go
  binary). It is the largest *single* process, so it understates a build whose work is
  spread over worker processes (deploybot's ``[render] jobs``). Linux counts in it the
  memory of the process image an ``exec`` replaced, so a command started straight from this
  (large) Python process would report at least this process's size. Each command is
  therefore started by a small launcher that reports its child's ``ru_maxrss`` and CPU
  time: GNU ``time -f`` (Debian package ``time``; about 1 MB of its own) when installed,
  else ``python3 -I -S`` (about 9 MB).
- the peak of the whole process tree (:func:`tree_memory`, sampled by :func:`sample_tree`
  every :data:`INTERVAL` seconds while the command runs, less often for a large tree, whose
  sample costs more CPU: see :func:`sample_tree`): the PSS (proportional set size)
  summed over the command and all its descendants, the launcher excluded. PSS splits each
  page among the processes that map it, so pages forked workers share with their parent
  count once, and the sum is the memory the build as a whole holds; the summed RSS is kept
  too (it counts shared pages once per process). This is the report's memory figure.

Standard output is read from a pipe and dropped, not sent to ``/dev/null``, so no program
can skip work because nobody reads its output.

A Python command can also report its imports (``run(..., imports=True)``): it runs with
``PYTHONPROFILEIMPORTTIME=1`` (``python -X importtime``), whose lines on stderr give the
modules its processes imported and the sum of their self times (:func:`import_profile`).
It is the measured run itself, not another one (a ``run-once`` that publishes cannot be run
twice the same); the profiling costs a few microseconds an import, within the noise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


class MeasureError(RuntimeError):
    """A measured command exited with a non-zero status (the message has its stderr tail)."""


@dataclass(frozen=True)
class Sample:
    """One run: wall and CPU seconds, and peak memory in MiB (see the module docstring).

    ``peak_mb`` is the command's ``ru_maxrss`` (its largest single process; None for a
    time that is no process of its own, such as a daemon's push to live);
    ``tree_pss_mb`` and ``tree_rss_mb`` the peak PSS and RSS summed over its process tree,
    None when no sample saw the command (it ended within the first sampling interval).
    ``cpu_seconds`` is the user + system time of the command and every descendant it
    waited for (None in results written before it was measured). ``import_ms`` and
    ``modules``: the sum of the self times (ms) of the modules the command's Python
    processes imported, and how many (:func:`import_profile`); None when not profiled.
    """

    seconds: float
    peak_mb: float | None
    tree_pss_mb: float | None = None
    tree_rss_mb: float | None = None
    cpu_seconds: float | None = None
    import_ms: float | None = None
    modules: float | None = None

    def then(self, other: Sample) -> Sample:
        """The sample of running this command, then ``other``: times add, peaks are the max."""
        return Sample(
            self.seconds + other.seconds,
            _max(self.peak_mb, other.peak_mb),
            _max(self.tree_pss_mb, other.tree_pss_mb),
            _max(self.tree_rss_mb, other.tree_rss_mb),
            None
            if self.cpu_seconds is None or other.cpu_seconds is None
            else self.cpu_seconds + other.cpu_seconds,
            _sum(self.import_ms, other.import_ms),
            _sum(self.modules, other.modules),
        )


def mb(value: float | None) -> str:
    """A memory figure (MiB) as the report and the log show it: ``"123 MB"``, ``"-"`` for
    None (not measured)."""
    return "-" if value is None else f"{value:.0f} MB"


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


IMPORT_TIME = "import time:"


def import_profile(stderr: str) -> tuple[float, int] | None:
    """``(self-time sum in ms, distinct modules)`` of the ``-X importtime`` lines in
    ``stderr`` (``import time: <self us> | <cumulative us> | <indented name>``, CPython's
    ``Python/import.c``; its header line skipped), or None when it has none."""
    total_us, names = 0, set()
    for line in stderr.splitlines():
        fields = line.removeprefix(IMPORT_TIME).split("|") if line.startswith(IMPORT_TIME) else []
        if len(fields) == 3 and fields[0].strip().isdigit():
            total_us += int(fields[0])
            names.add(fields[2].strip())
    return (total_us / 1000, len(names)) if names else None


INTERVAL = 0.02  # seconds between samples of the process tree, at least
BUDGET = 0.05  # the fraction of one core the sampling may take (see sample_tree)


def tree_memory(root: int, parents: dict[int, int] | None = None) -> tuple[int, int, int]:
    """Sum the memory of every descendant of process ``root`` (``root`` itself excluded).

    Returns (PSS KiB, RSS KiB, processes counted), read from ``/proc/<pid>/smaps_rollup``
    (Linux 4.14+; ``proc(5)``). Descendants are found through each process's parent in
    ``/proc/<pid>/stat`` (the 4th field, after the command name in parentheses): the
    ``/proc/<pid>/task/<tid>/children`` files need a kernel option not every kernel has.
    ``parents`` (pid -> parent pid), kept by the caller between calls, spares reading the
    ``stat`` of processes seen before; a pid gone from ``/proc`` leaves it. A process that
    ends while it is read is skipped; one whose parent ended (reparented to init, as a
    daemon detaches) is no longer reached from ``root`` and is not counted.
    """
    parents = {} if parents is None else parents
    alive = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
    for pid in set(parents) - alive:
        del parents[pid]
    for pid in alive - set(parents):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                parents[pid] = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
    children: dict[int, list[int]] = defaultdict(list)
    for pid, parent in parents.items():
        children[parent].append(pid)
    pss = rss = count = 0
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                fields = dict(line.split(b":", 1) for line in fh if line[:4] in (b"Pss:", b"Rss:"))
        except OSError:
            continue  # ended meanwhile
        if fields:  # a zombie's file is empty
            pss += int(fields[b"Pss"].split()[0])
            rss += int(fields[b"Rss"].split()[0])
            count += 1
    return pss, rss, count


@dataclass
class TreePeak:
    """The largest summed PSS and RSS (KiB) of a process tree seen so far, and how many
    samples saw at least one process of it."""

    pss_kib: int = 0
    rss_kib: int = 0
    samples: int = 0


@contextmanager
def sample_tree(
    root: int, interval: float = INTERVAL, budget: float = BUDGET
) -> Iterator[TreePeak]:
    """Sample :func:`tree_memory` of ``root`` at once, then in a thread every ``interval``
    seconds, or less often when a sample is costly, until the ``with`` block ends; the
    yielded :class:`TreePeak` then holds the peaks.

    The peak is of the sum at one instant (not a sum of each process's own peak); a peak
    shorter than the time between samples can be missed. A sample's cost is mostly the
    kernel walking the page tables for ``smaps_rollup``: about 5 ms of CPU per 300 MB
    resident on a 2-core VM, so the wait after a sample is at least its CPU time over
    ``budget`` (the fraction of one core the sampling may take): with the default, a tree of
    400 MB is sampled about every 0.2 s, and the measured command keeps ~95 % of a core.
    """
    peak = TreePeak()
    stop = threading.Event()
    parents: dict[int, int] = {}

    def sample() -> None:
        while True:
            started = time.thread_time()
            pss, rss, count = tree_memory(root, parents)
            if count:
                peak.pss_kib, peak.rss_kib = max(peak.pss_kib, pss), max(peak.rss_kib, rss)
                peak.samples += 1
            cost = time.thread_time() - started
            if stop.wait(max(interval, cost / budget - cost)):
                return

    thread = threading.Thread(target=sample, name="tree-memory", daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()


GNU_TIME = Path("/usr/bin/time")
# The fallback launcher: spawn argv[2:], write to argv[1] what GNU time's "%M %U %S"
# writes (the child's ru_maxrss in KiB, user and system CPU seconds), then its wall
# seconds, so that the launcher's own start-up (tens of ms) is not timed.
LAUNCHER = (
    "import os, sys, time\n"
    "start = time.perf_counter()\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "took = time.perf_counter() - start\n"
    "line = f'{usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime} {took}'\n"
    "open(sys.argv[1], 'w').write(line)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def launcher(report: Path) -> list[str]:
    """The launcher command prefix that writes the child's ru_maxrss (KiB), user and system
    CPU seconds (and, the Python launcher, its wall seconds) into ``report``."""
    if GNU_TIME.is_file() and os.access(GNU_TIME, os.X_OK):
        return [str(GNU_TIME), "-f", "%M %U %S", "-o", str(report)]
    return ["python3", "-I", "-S", "-c", LAUNCHER, str(report)]


def run(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    imports: bool = False,
) -> Sample:
    """Run ``argv`` to its end under :func:`launcher`, sampling its process tree's memory
    (:func:`sample_tree`); return its :class:`Sample`, with its imports if ``imports`` (a
    Python command: see the module docstring).

    Raises:
        MeasureError: the command failed; the message names it and ends with its stderr.
    """
    if imports:
        env = {**(os.environ if env is None else env), "PYTHONPROFILEIMPORTTIME": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        report, err_path = Path(tmp) / "rss", Path(tmp) / "stderr"
        # stderr goes to a file: a pipe could fill while stdout is being read
        with err_path.open("wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                [*launcher(report), *argv], stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd
            )
            assert proc.stdout is not None
            with sample_tree(proc.pid) as peak:
                while proc.stdout.read(1 << 20):
                    pass  # read and dropped
                proc.stdout.close()
                code = proc.wait()
                seconds = time.perf_counter() - start
        if code != 0:
            tail = err_path.read_text("utf-8", "replace").strip()[-2000:]
            raise MeasureError(f"{' '.join(argv[:4])} exited {code}: {tail}")
        words = report.read_text().split()
        if len(words) == 4:  # the Python launcher's own timing of the child
            seconds = float(words[3])
        profile = import_profile(err_path.read_text("utf-8", "replace")) if imports else None
    tree = peak.samples > 0
    return Sample(
        seconds,
        int(words[0]) / 1024,
        peak.pss_kib / 1024 if tree else None,
        peak.rss_kib / 1024 if tree else None,
        float(words[1]) + float(words[2]),
        None if profile is None else profile[0],
        None if profile is None else profile[1],
    )


@dataclass
class Results:
    """Every sample, by site size and measurement name, plus the lines of skipped peers."""

    samples: dict[int, dict[str, list[Sample]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    skipped: list[str] = field(default_factory=list)

    def add(self, size: int, name: str, sample: Sample) -> Sample:
        """Record ``sample`` under (``size``, ``name``) and return it."""
        self.samples[size][name].append(sample)
        return sample

    def median(self, size: int, name: str) -> Sample | None:
        """The median of each figure of a measurement's samples, or None if never run.

        A figure some samples lack (None) is the median of the others, None if all lack it.
        """
        runs = self.samples.get(size, {}).get(name)
        if not runs:
            return None
        return Sample(
            statistics.median(s.seconds for s in runs),
            _median([s.peak_mb for s in runs]),
            _median([s.tree_pss_mb for s in runs]),
            _median([s.tree_rss_mb for s in runs]),
            _median([s.cpu_seconds for s in runs]),
            _median([s.import_ms for s in runs]),
            _median([s.modules for s in runs]),
        )

    def to_json(self) -> dict[str, object]:
        """The results as JSON data: per size, per measurement, each figure's samples and
        median (``peak_mb``: ru_maxrss; ``tree_pss_mb``/``tree_rss_mb``: the process tree's
        peak; null where not measured)."""
        sizes: dict[str, object] = {}
        for size, table in self.samples.items():
            entry: dict[str, object] = {}
            for name, runs in table.items():
                med = self.median(size, name)
                assert med is not None
                figures: dict[str, object] = {}
                for key, digits in FIGURES:
                    figures[key] = [_round(getattr(s, key), digits) for s in runs]
                    figures[f"median_{key}"] = _round(getattr(med, key), digits)
                entry[name] = figures
            sizes[str(size)] = entry
        return {"sizes": sizes, "skipped": self.skipped}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Results:
        """Read back what :meth:`to_json` wrote (a figure missing from older files is None)."""
        results = cls()
        sizes = data["sizes"]
        assert isinstance(sizes, dict)
        for size, table in sizes.items():
            for name, entry in table.items():
                count = len(entry["seconds"])
                columns = [entry.get(key) or [None] * count for key, _ in FIGURES]
                for figures in zip(*columns, strict=True):
                    results.add(int(size), name, Sample(*figures))
        skipped = data.get("skipped", [])
        assert isinstance(skipped, list)
        results.skipped = [str(s) for s in skipped]
        return results


# Sample's fields in order, with the decimals each is written with.
FIGURES = (
    ("seconds", 4),
    ("peak_mb", 1),
    ("tree_pss_mb", 1),
    ("tree_rss_mb", 1),
    ("cpu_seconds", 3),
    ("import_ms", 1),
    ("modules", 1),
)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
