"""A progress bar on the terminal for builds that take more than a second.

The render stage counts what it renders (:func:`expect` the total, :func:`advance` one
document at a time); nothing is shown unless the CLI opened a bar with :func:`shown` around
the command, in the same thread (a context variable: the daemon's worker thread never has
one). The bar is tqdm's, on stderr, and only when stderr is a terminal: never in a pipe, a
log file or cron's mail. It appears after one second (tqdm's ``delay``; the environment
variable ``DEPLOYBOT_PROGRESS_DELAY`` sets other seconds, 0 at once), so quick builds
and incremental runs print nothing, and it is erased when the command ends
(``leave=False``); a log line printed meanwhile takes the bar off its line first.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:  # imported when a bar is shown: a run in cron or a pipe never pays for it
    from tqdm import tqdm

DELAY = 1.0
"""Seconds before the bar appears, unless :data:`DELAY_ENV` sets others."""
DELAY_ENV = "DEPLOYBOT_PROGRESS_DELAY"
"""The environment variable that sets the seconds before the bar appears (0: at once)."""

_BAR: ContextVar[tqdm[NoReturn] | None] = ContextVar("progress_bar", default=None)


@contextmanager
def shown(label: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show a bar named ``label`` on ``stream`` (default ``sys.stderr``) while the block
    runs, if ``stream`` is a terminal; otherwise do nothing."""
    out = sys.stderr if stream is None else stream
    if not _is_tty(out):
        yield
        return
    from tqdm import tqdm

    bar: tqdm[NoReturn] = tqdm(
        total=0,
        desc=label,
        unit="page",
        file=out,
        delay=bar_delay(),
        leave=False,
        dynamic_ncols=True,
    )
    token = _BAR.set(bar)
    swapped = _guard_log_streams(out)
    try:
        yield
    finally:
        for handler, stream in swapped:
            handler.setStream(stream)
        _BAR.reset(token)
        bar.close()


def bar_delay(environ: Mapping[str, str] = os.environ) -> float:
    """The seconds before the bar appears: :data:`DELAY_ENV` in ``environ`` when it is a
    finite number >= 0, else :data:`DELAY` (a cosmetic setting: a bad value is ignored)."""
    try:
        seconds = float(environ.get(DELAY_ENV, ""))
    except ValueError:
        return DELAY
    return seconds if math.isfinite(seconds) and seconds >= 0 else DELAY


def expect(total: int) -> None:
    """Add ``total`` documents to the bar's goal (no bar: nothing)."""
    bar = _BAR.get()
    if bar is not None:
        bar.total = (bar.total or 0) + total


def advance(count: int = 1) -> None:
    """Count ``count`` documents done (no bar: nothing)."""
    bar = _BAR.get()
    if bar is not None:
        bar.update(count)


class _BarSafeStream:
    """A log handler's stream that takes the bar off the line while a record is written
    (tqdm's ``external_write_mode``), so no log line carries a piece of the bar."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        with tqdm.external_write_mode(file=self.inner):
            return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()


def _guard_log_streams(out: TextIO) -> list[tuple[logging.StreamHandler[Any], Any]]:
    """Give the root logger's handlers writing to ``out`` a :class:`_BarSafeStream`
    (their filters, e.g. the redaction of secrets, stay as they are); return what to put
    back."""
    swapped: list[tuple[logging.StreamHandler[Any], Any]] = []
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is out:
            swapped.append((handler, handler.setStream(_BarSafeStream(out))))
    return swapped


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file
        return False
