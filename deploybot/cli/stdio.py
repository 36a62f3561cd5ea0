"""A command whose standard output (or error) lost its reader: ``deploybot log | head -1``.

``head`` exits after its line and the command's next write to the pipe fails with EPIPE:
Python ignores SIGPIPE, so that is a BrokenPipeError where git or cat would die of the
signal. The command then ends as they do: quietly, with the status a shell shows for a
process SIGPIPE ended (:data:`EX_PIPE`), its closed streams pointed at ``/dev/null`` so
that Python's last flush at exit writes nowhere either (the pattern of the "Note on
SIGPIPE" in Python's :mod:`signal` documentation).

Only ``os``, ``select`` and ``sys``: the no-op ``run-once`` (:mod:`deploybot.cli.entry`) uses it.
"""

from __future__ import annotations

import os
import select
import sys
from typing import NoReturn

EX_PIPE = 128 + 13
"""128 + SIGPIPE (13): a shell's status for a process SIGPIPE ended (``git log | head``)."""
STREAMS = (1, 2)
"""The file descriptors of stdout and stderr."""


def reader_gone(fd: int) -> bool:
    """Whether ``fd`` is a pipe or socket whose reading end is closed: poll(2) reports
    POLLERR or POLLHUP for it. False for a terminal, a file, /dev/null or a closed ``fd``."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError):
        return False
    gone = select.POLLERR | select.POLLHUP
    return any(mask & gone and not mask & select.POLLNVAL for _, mask in events)


def output_gone() -> bool:
    """Whether the reader of stdout or of stderr is gone (:func:`reader_gone`)."""
    return any(reader_gone(fd) for fd in STREAMS)


def leave_quietly() -> NoReturn:
    """Point each standard stream whose reader is gone at ``/dev/null`` and exit with
    :data:`EX_PIPE`, printing nothing (SystemExit: ``finally`` blocks still run)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in STREAMS:
        if reader_gone(fd):
            os.dup2(devnull, fd)
    os.close(devnull)
    sys.exit(EX_PIPE)
