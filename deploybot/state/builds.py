"""The build journal: ``<state.dir>/builds.jsonl``, one JSON object per line, a line per run
that built or failed, oldest first.

It is what the daemon's status page (:mod:`deploybot.serve.status`) shows beyond the publish
branch's notes: how long a build took, its log lines, the output files it changed, and the
runs that failed (a failed run leaves no build commit, so no note). ``run-once``, the
daemon's build processes and a fleet worker all write it, in the state folder they run on,
holding its lock (:func:`deploybot.state.statedir.held`); anyone may read it without the lock.

Each line (:class:`BuildEntry`, :meth:`BuildEntry.to_json`)::

    {"id": "<12 hex>", "started": <Unix s>, "seconds": <s>, "result": "published" |
     "unchanged" | "older" | "failed", "source_commit": <40 hex>|null,
     "source_subject": str, "build_commit": <40 hex>|null, "changed_files": int|null,
     "error": str|null, "exit_code": int, "repeats": int,
     "last": <Unix s>, "log": [[<Unix s>, "INFO"|"WARNING"|"ERROR", str], ...],
     "log_dropped": int}

Bounded: at most :data:`KEEP` entries and :data:`MAX_BYTES` bytes (the oldest go first);
each entry at most :data:`LOG_LINES` log lines (the first and the last half: what a build
set out to do, and how it ended) of :data:`LINE_CHARS` characters; a failure that repeats
the newest entry's (same source commit, same error: a source down while cron runs every
5 minutes) counts in that entry's ``repeats`` instead of pushing real builds out.

Written atomically: the whole file is written anew through ``.builds.jsonl.<pid>.tmp``,
fsynced and renamed over it, so a reader or a ``kill -9`` sees the journal before or after
an entry, never half of one (the temp file a kill leaves is swept:
:mod:`deploybot.state.stale`). A line that does not parse (an older or newer version's) is
skipped.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from deploybot.state import private

JOURNAL = "builds.jsonl"
"""The journal's file name in the state folder."""
KEEP = 200
"""Entries the journal keeps."""
MAX_BYTES = 4 * 1024 * 1024
"""Bytes the journal keeps at most (the oldest entries go first past it)."""
LOG_LINES = 200
"""Log lines an entry keeps: the first and the last half of them."""
LINE_CHARS = 400
"""Characters a log line keeps."""
SUBJECT_CHARS = 300
"""Characters a source commit's subject (and an error) keeps."""
_FIRST_WINDOW = 64 * 1024
"""Bytes :func:`read` first reads from the journal's end (a page's few entries are
there), then eight times more while it needs more, up to the whole window."""
RESULTS = ("published", "unchanged", "older", "failed")
"""The results an entry records (an up-to-date run built nothing: it is not recorded)."""


@dataclass(frozen=True)
class LogLine:
    """One log line of a run: ``when`` (Unix s), ``level`` (``INFO``...), ``text``."""

    when: float
    level: str
    text: str


@dataclass(frozen=True)
class BuildEntry:
    """One run that built or failed (the fields: the module doc)."""

    started: float
    seconds: float
    result: str
    source_commit: str | None = None
    source_subject: str = ""
    build_commit: str | None = None
    changed_files: int | None = None
    error: str | None = None
    exit_code: int = 0
    log: tuple[LogLine, ...] = ()
    log_dropped: int = 0
    repeats: int = 1
    last: float = 0.0
    id: str = field(default_factory=lambda: secrets.token_hex(6))

    @property
    def ended(self) -> float:
        """When the run (the last of its repeats) ended, Unix s."""
        return max(self.last, self.started + self.seconds)

    def to_json(self) -> str:
        """The entry as one JSON line (no line feed)."""
        data = {
            "id": self.id, "started": round(self.started, 3), "seconds": round(self.seconds, 3),
            "result": self.result, "source_commit": self.source_commit,
            "source_subject": self.source_subject, "build_commit": self.build_commit,
            "changed_files": self.changed_files, "error": self.error,
            "exit_code": self.exit_code, "repeats": self.repeats,
            "last": round(self.last, 3),
            "log": [[round(line.when, 3), line.level, line.text] for line in self.log],
            "log_dropped": self.log_dropped,
        }  # fmt: skip
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def bounded_log(
    lines: Sequence[LogLine], limit: int = LOG_LINES
) -> tuple[tuple[LogLine, ...], int]:
    """``(kept lines, how many were left out)``: at most ``limit`` of ``lines``, the first
    and the last half, each cut to :data:`LINE_CHARS` characters."""
    cut = [replace(line, text=line.text[:LINE_CHARS]) for line in lines]
    if len(cut) <= limit:
        return tuple(cut), 0
    head = limit // 2
    return tuple(cut[:head] + cut[len(cut) - (limit - head) :]), len(cut) - limit


def path(state_dir: Path) -> Path:
    """The journal of the state folder ``state_dir``."""
    return state_dir / JOURNAL


def append(state_dir: Path, entry: BuildEntry) -> None:
    """Add ``entry`` to the journal of ``state_dir`` (or count it in the newest entry's
    ``repeats`` when it is the same failure), keeping the bounds; the caller holds the
    state folder's lock.

    Raises:
        OSError: the journal cannot be written (a full disk: the caller decides).
    """
    raw, _ = _raw_lines(state_dir)
    lines = [line.decode("utf-8") for line in raw if _parse(line) is not None]
    newest = _parse(lines[-1].encode("utf-8")) if lines else None
    if newest is not None and _repeats(newest, entry):
        lines[-1] = replace(newest, repeats=newest.repeats + 1, last=entry.ended).to_json()
    else:
        lines.append(entry.to_json())
    lines = lines[-KEEP:]
    while len(lines) > 1 and sum(len(line.encode()) + 1 for line in lines) > MAX_BYTES:
        lines.pop(0)
    _write(path(state_dir), "".join(line + "\n" for line in lines).encode("utf-8"))


def _repeats(newest: BuildEntry, entry: BuildEntry) -> bool:
    """Whether ``entry`` fails as ``newest`` did: same source commit, same error."""
    return (
        entry.result == newest.result == "failed"
        and entry.error == newest.error
        and entry.source_commit == newest.source_commit
    )


def read(state_dir: Path, limit: int = KEEP) -> list[BuildEntry]:
    """The journal's newest ``limit`` entries, newest first; empty when there is no
    journal (or it cannot be read now: a reader never fails for it). Lines that do not
    parse are skipped."""
    window = _FIRST_WINDOW
    while True:
        lines, whole = _raw_lines(state_dir, window)
        found = []
        for raw in reversed(lines):
            entry = _parse(raw)
            if entry is not None:
                found.append(entry)
                if len(found) >= limit:
                    return found
        if whole:
            return found
        window *= 8


def _raw_lines(state_dir: Path, window: int | None = None) -> tuple[list[bytes], bool]:
    """The journal's whole lines in its last ``window`` bytes (at most ``2 * MAX_BYTES``:
    what a journal this version writes holds), oldest first, and whether that window was
    all there was to read; ``([], True)`` when there is no journal or it cannot be read."""
    limit = min(window or 2 * MAX_BYTES, 2 * MAX_BYTES)
    try:
        with open(path(state_dir), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except OSError:
        return [], True
    lines = data.split(b"\n")
    if size > limit:
        lines = lines[1:]  # it began inside a line
    return [line for line in lines if line.strip()], size <= limit or limit == 2 * MAX_BYTES


def _parse(raw: bytes) -> BuildEntry | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("result") not in RESULTS:
        return None
    try:
        return BuildEntry(
            id=str(data["id"]),
            started=float(data["started"]),
            seconds=float(data["seconds"]),
            result=str(data["result"]),
            source_commit=_hex(data.get("source_commit")),
            source_subject=str(data.get("source_subject") or "")[:SUBJECT_CHARS],
            build_commit=_hex(data.get("build_commit")),
            changed_files=_count(data.get("changed_files")),
            error=None if data.get("error") is None else str(data["error"]),
            exit_code=int(data.get("exit_code") or 0),
            log=tuple(line for line in map(_line, data.get("log") or ()) if line is not None),
            log_dropped=int(data.get("log_dropped") or 0),
            repeats=max(1, int(data.get("repeats") or 1)),
            last=float(data.get("last") or 0.0),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _line(item: Any) -> LogLine | None:
    if not isinstance(item, list) or len(item) != 3:
        return None
    when, level, text = item
    if not isinstance(when, int | float) or not isinstance(level, str) or not isinstance(text, str):
        return None
    return LogLine(float(when), level, text[:LINE_CHARS])


def _hex(value: Any) -> str | None:
    text = str(value) if isinstance(value, str) else ""
    ok = len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
    return text if ok else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _write(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically (:func:`deploybot.state.private.write_file`);
    a full disk stays an OSError here: the journal is best effort, never a run's failure."""
    private.write_file(target, data)
