"""Run the ``deploybot`` CLI and SIGKILL it at a chosen point (tests only).

``python -m tests.killpoints POINT [deploybot arguments...]`` runs ``deploybot`` in this
process after arming one kill point; when the point is reached the process sends itself
SIGKILL, so nothing is cleaned up: open lock files, half-written files and a held state lock
are left exactly as a ``kill -9`` (or the OOM killer) leaves them. POINT is one of:

``lock:SUBSTR:N``
    right after the N-th git lock file (dulwich's ``<path>.lock``, created with
    ``O_EXCL``) whose path contains SUBSTR was created, before it is renamed into place:
    ``lock:/objects/:40`` dies during blob writes, ``lock:/refs/:1`` during a ref update.
``pushed``
    right after the push of the build commit returned, before anything records it.
``mbox``
    inside mbox delivery, holding the mbox's locks, with half of the message written.
``handed``
    right after the transport returned, before the outbox files the message as sent.
``cache``
    right before the render cache commit (after the push).

Only the deploybot process dies: a git child process (``git receive-pack``) is not killed.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

POINTS = ("lock:SUBSTR:N", "pushed", "mbox", "handed", "cache")


def die() -> None:
    """SIGKILL this process (never returns)."""
    os.kill(os.getpid(), signal.SIGKILL)


def _after(func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        func(*args, **kwargs)
        die()

    return wrapper


def _before(func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        die()

    return wrapper


def _arm_lock(substr: str, nth: int) -> None:
    from dulwich import file as dulwich_file

    original = dulwich_file._GitFile.__init__
    seen = [0]

    def init(self: Any, filename: Any, *args: Any, **kwargs: Any) -> None:
        original(self, filename, *args, **kwargs)
        name = os.fsdecode(filename)
        if substr in name and getattr(self, "_file", None) is not None:
            seen[0] += 1
            if seen[0] == nth and os.path.exists(name + ".lock"):
                die()

    dulwich_file._GitFile.__init__ = init  # type: ignore[method-assign]


def _arm_mbox() -> None:
    from deploybot.notify.deliver import mbox

    def half(fd: int, data: bytes) -> None:
        os.write(fd, data[: max(len(data) // 2, 1)])
        os.fsync(fd)
        die()

    mbox._write_all = half  # type: ignore[attr-defined]


def arm(point: str) -> None:
    """Arm the kill ``point`` (see the module docstring); ValueError for an unknown one."""
    from deploybot.git import repository
    from deploybot.notify.deliver import outbox

    kind, _, rest = point.partition(":")
    if kind == "lock":
        substr, _, nth = rest.rpartition(":")
        _arm_lock(substr, int(nth))
    elif kind == "pushed":
        repository.push_refs = _after(repository.push_refs)  # type: ignore[assignment]
    elif kind == "mbox":
        _arm_mbox()
    elif kind == "handed":
        outbox._mark_sent = _before(outbox._mark_sent)  # type: ignore[assignment]
    elif kind == "cache":
        from deploybot.render.engine import cache

        cache.BuildCache.commit = _before(cache.BuildCache.commit)  # type: ignore[method-assign]
    else:
        raise ValueError(f"unknown kill point {point!r}; one of {', '.join(POINTS)}")


def main(argv: list[str]) -> None:
    """``argv``: POINT, then the deploybot arguments."""
    if not argv:
        raise SystemExit(f"usage: python -m tests.killpoints POINT ARGS... ({', '.join(POINTS)})")
    arm(argv[0])
    from deploybot.cli.commands import main as deploybot

    deploybot(argv[1:], prog_name="deploybot")


if __name__ == "__main__":
    main(sys.argv[1:])
