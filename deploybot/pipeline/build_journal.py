"""Each run's line in the build journal (:mod:`deploybot.state.builds`): its result, its
duration, its source commit and subject, its build commit, the output files it changed,
its error, and its log lines, so the daemon's status page shows them after a restart and
for runs ``run-once`` made.

:func:`recording` wraps the run inside the state folder's lock: what the run logs at INFO
and above is caught (:func:`deploybot.support.capture.capture`; the terminal and the log
show what they showed before), and when the run ends, built or failed, its entry is
appended. A run that was up to date built nothing and adds no entry. The journal is a
record, never a reason to fail: an entry that cannot be written (a full disk) is one
warning line, and the run's own result or error stands.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from deploybot.notify.gitlog.message import read_commit_subject
from deploybot.state import builds
from deploybot.support.capture import capture
from deploybot.support.errors import DeploybotError, one_line
from deploybot.support.redact import redact_text

log = logging.getLogger("deploybot.pipeline")

EX_SOFTWARE = 70
"""The exit code recorded for a run that crashed (an exception that is no DeploybotError)."""


class RunResult(Protocol):
    """What the journal reads of a run's result (:class:`deploybot.pipeline.run.RunResult`)."""

    @property
    def status(self) -> str: ...
    @property
    def source_commit(self) -> str | None: ...
    @property
    def build_commit(self) -> str | None: ...
    @property
    def changed_paths(self) -> tuple[str, ...]: ...


@dataclass
class Recording:
    """What :func:`recording` learns as the run goes: ``result`` (set by the run when it
    ends), ``source_commit`` (the commit the run builds, from its ``before_build`` hook:
    known to a run that fails while it builds)."""

    result: RunResult | None = None
    source_commit: str | None = None

    def hook(self, then: Callable[[str], None] | None) -> Callable[[str], None]:
        """A ``before_build`` that notes the source commit, then calls ``then``."""

        def before_build(commit: str) -> None:
            self.source_commit = commit
            if then is not None:
                then(commit)

        return before_build


@contextlib.contextmanager
def recording(state_dir: Path, source_mirror: Path, started: float) -> Iterator[Recording]:
    """Record the run inside the block in ``state_dir``'s journal (see the module doc);
    ``source_mirror`` gives the source commit's subject; ``started``: Unix s."""
    rec = Recording()
    with capture() as captured:
        try:
            yield rec
        except Exception as exc:
            _append(state_dir, _failed(rec, exc, started, captured.lines, source_mirror))
            raise
    if rec.result is not None and rec.result.status in builds.RESULTS:
        _append(state_dir, _built(rec.result, started, captured.lines, source_mirror))


def _built(
    result: RunResult, started: float, lines: list[tuple[float, str, str]], mirror: Path
) -> builds.BuildEntry:
    changed = len(result.changed_paths) if result.status in ("published", "unchanged") else None
    log_lines, dropped = _log(lines)
    return builds.BuildEntry(
        started=started,
        seconds=time.time() - started,
        result=str(result.status),
        source_commit=result.source_commit,
        source_subject=_subject(mirror, result.source_commit),
        build_commit=result.build_commit if result.status == "published" else None,
        changed_files=changed,
        log=log_lines,
        log_dropped=dropped,
        last=time.time(),
    )


def _failed(
    rec: Recording,
    exc: Exception,
    started: float,
    lines: list[tuple[float, str, str]],
    mirror: Path,
) -> builds.BuildEntry:
    error = redact_text(one_line(exc))[: builds.SUBJECT_CHARS]
    code = exc.exit_code if isinstance(exc, DeploybotError) else EX_SOFTWARE
    log_lines, dropped = _log([*lines, (time.time(), "ERROR", error)])
    return builds.BuildEntry(
        started=started,
        seconds=time.time() - started,
        result="failed",
        source_commit=rec.source_commit,
        source_subject=_subject(mirror, rec.source_commit),
        error=error,
        exit_code=code,
        log=log_lines,
        log_dropped=dropped,
        last=time.time(),
    )


def _log(lines: list[tuple[float, str, str]]) -> tuple[tuple[builds.LogLine, ...], int]:
    """The run's captured ``lines`` within the journal's bounds, and how many were left out."""
    return builds.bounded_log([builds.LogLine(*line) for line in lines])


def _subject(mirror: Path, commit: str | None) -> str:
    """The source commit's subject from the source mirror ("" when it cannot be read)."""
    if commit is None:
        return ""
    try:
        return read_commit_subject(mirror, commit)[: builds.SUBJECT_CHARS]
    except (KeyError, OSError, ValueError) as exc:
        log.debug("no subject for %s: %s", commit[:12], exc)
        return ""


def _append(state_dir: Path, entry: builds.BuildEntry) -> None:
    try:
        builds.append(state_dir, entry)
    except OSError as exc:
        log.warning("the build journal %s was not written: %s", builds.path(state_dir), exc)
