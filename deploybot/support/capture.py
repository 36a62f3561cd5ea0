"""Keep a run's log lines (for the build journal, :mod:`deploybot.state.builds`) without
changing what the run prints.

:func:`capture` lowers the ``deploybot`` logger to INFO for the duration of a ``with``
block and catches every record at INFO or above into a :class:`Captured` (bounded:
:data:`MAX_LINES`, each message redacted (:func:`deploybot.support.redact.redact_text`) and
made one line (:func:`deploybot.support.logs.printable`)). So that the terminal and the
daemon's log show what they showed before, the ``deploybot`` logger stops propagating
meanwhile, and a record goes on to the root logger's handlers only when it would have
passed the level it met before (its own logger's, else the one ``deploybot`` had).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from deploybot.support.logs import printable
from deploybot.support.redact import redact_text

ROOT = "deploybot"
MAX_LINES = 10_000
"""Records kept by one capture (a build's warnings, one per post, stay well below); past it
only the count grows."""
LINE_CHARS = 1000


@dataclass
class Captured:
    """The captured lines, ``(Unix s, level name, text)`` in order; ``dropped``: past
    :data:`MAX_LINES`."""

    lines: list[tuple[float, str, str]] = field(default_factory=list)
    dropped: int = 0


class _Tee(logging.Handler):
    """The one handler on the ``deploybot`` logger while any capture runs: each record
    into every active :class:`Captured`, and on to the root logger's handlers when it
    passes the level it met before (:func:`_threshold`)."""

    def __init__(self, before: int) -> None:
        super().__init__(logging.INFO)
        self.before = before
        self.active: list[Captured] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = printable(redact_text(record.getMessage()), LINE_CHARS)
        except Exception:  # a bad format string: keep the line as written
            text = printable(redact_text(str(record.msg)), LINE_CHARS)
        for captured in list(self.active):
            if len(captured.lines) < MAX_LINES:
                captured.lines.append((record.created or time.time(), record.levelname, text))
            else:
                captured.dropped += 1
        if record.levelno >= _threshold(record.name, self.before):
            logging.getLogger().handle(record)


def _threshold(name: str, before: int) -> int:
    """The level a record of logger ``name`` had to reach before the capture: the first
    level set on it or a parent below ``deploybot``, else ``before``."""
    while name.startswith(ROOT + "."):
        level = logging.getLogger(name).level
        if level:
            return level
        name = name.rpartition(".")[0]
    return before


_lock = threading.Lock()
_installed: tuple[_Tee, int, bool] | None = None
"""The tee while captures run, and the ``deploybot`` logger's level and ``propagate``
from before the first."""


@contextlib.contextmanager
def capture() -> Iterator[Captured]:
    """Within the block, catch the ``deploybot`` loggers' records at INFO and above (see
    the module doc); yields the :class:`Captured` that fills. Captures may overlap (runs
    in threads of one process): the first sets the logger up, the last puts it back, and
    meanwhile each catches every record."""
    global _installed
    logger = logging.getLogger(ROOT)
    captured = Captured()
    with _lock:
        if _installed is None:
            tee = _Tee(logger.getEffectiveLevel())
            _installed = (tee, logger.level, logger.propagate)
            logger.addHandler(tee)
            logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
            logger.propagate = False
        _installed[0].active.append(captured)
    try:
        yield captured
    finally:
        with _lock:
            assert _installed is not None
            tee, level, propagate = _installed
            tee.active.remove(captured)
            if not tee.active:
                logger.removeHandler(tee)
                logger.setLevel(level)
                logger.propagate = propagate
                _installed = None
