"""Run one measurement in its own process: wall time and peak RSS, and keep every sample.

The peak RSS is the ``ru_maxrss`` that ``wait4`` reports for the command: on Linux the
largest resident set of the command or of any descendant it waited for (a ``sh -c`` running
git, Jekyll's Ruby, Hugo's Go binary). Linux counts in it the memory of the process image
an ``exec`` replaced, so a command started straight from this (large) Python process would
report at least this process's size. Each command is therefore started by a small
launcher that reports its child's ``ru_maxrss``: GNU ``time -f %M`` (Debian package
``time``; about 1 MB of its own) when installed, else ``python3 -I -S`` (about 9 MB).
Standard output is read from a pipe and dropped, not sent to ``/dev/null``, so no program
can skip work because nobody reads its output.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


class MeasureError(RuntimeError):
    """A measured command exited with a non-zero status (the message has its stderr tail)."""


@dataclass(frozen=True)
class Sample:
    """One run: wall seconds and peak resident set in MiB."""

    seconds: float
    peak_mb: float


GNU_TIME = Path("/usr/bin/time")
# The fallback launcher: spawn argv[2:], write to argv[1] the child's wall seconds and
# ru_maxrss (KiB), so that its own start-up (tens of ms) is not timed.
LAUNCHER = (
    "import os, sys, time\n"
    "start = time.perf_counter()\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "took = time.perf_counter() - start\n"
    "open(sys.argv[1], 'w').write(f'{took} {usage.ru_maxrss}')\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def launcher(report: Path) -> list[str]:
    """The launcher command prefix that writes the child's peak RSS (KiB) into ``report``."""
    if GNU_TIME.is_file() and os.access(GNU_TIME, os.X_OK):
        return [str(GNU_TIME), "-f", "%M", "-o", str(report)]
    return ["python3", "-I", "-S", "-c", LAUNCHER, str(report)]


def run(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> Sample:
    """Run ``argv`` to its end under :func:`launcher`; return its :class:`Sample`.

    Raises:
        MeasureError: the command failed; the message names it and ends with its stderr.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report, err_path = Path(tmp) / "rss", Path(tmp) / "stderr"
        # stderr goes to a file: a pipe could fill while stdout is being read
        with err_path.open("wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                [*launcher(report), *argv], stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd
            )
            assert proc.stdout is not None
            while proc.stdout.read(1 << 20):
                pass  # read and dropped
            proc.stdout.close()
            code = proc.wait()
            seconds = time.perf_counter() - start
        if code != 0:
            tail = err_path.read_text("utf-8", "replace").strip()[-2000:]
            raise MeasureError(f"{' '.join(argv[:4])} exited {code}: {tail}")
        # GNU time writes "Command exited with ..." lines before the number on failure
        words = report.read_text().split()
        if len(words) == 2:  # the Python launcher's own timing of the child
            seconds = float(words[0])
    return Sample(seconds, int(words[-1]) / 1024)


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
        """The median seconds and median peak MiB of a measurement, or None if never run."""
        runs = self.samples.get(size, {}).get(name)
        if not runs:
            return None
        return Sample(
            statistics.median(s.seconds for s in runs), statistics.median(s.peak_mb for s in runs)
        )

    def to_json(self) -> dict[str, object]:
        """The results as JSON data: per size, per measurement, the samples and medians."""
        sizes: dict[str, object] = {}
        for size, table in self.samples.items():
            entry: dict[str, object] = {}
            for name, runs in table.items():
                med = self.median(size, name)
                assert med is not None
                entry[name] = {
                    "seconds": [round(s.seconds, 4) for s in runs],
                    "peak_mb": [round(s.peak_mb, 1) for s in runs],
                    "median_seconds": round(med.seconds, 4),
                    "median_peak_mb": round(med.peak_mb, 1),
                }
            sizes[str(size)] = entry
        return {"sizes": sizes, "skipped": self.skipped}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Results:
        """Read back what :meth:`to_json` wrote."""
        results = cls()
        sizes = data["sizes"]
        assert isinstance(sizes, dict)
        for size, table in sizes.items():
            for name, entry in table.items():
                for sec, mb in zip(entry["seconds"], entry["peak_mb"], strict=True):
                    results.add(int(size), name, Sample(sec, mb))
        skipped = data.get("skipped", [])
        assert isinstance(skipped, list)
        results.skipped = [str(s) for s in skipped]
        return results
