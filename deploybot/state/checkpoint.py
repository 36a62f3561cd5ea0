"""Checkpoints: the moments of a run when what it wrote to its state directory must be safe
elsewhere before it goes on.

A run on one machine needs none: its state directory is the whole truth, and the fsynced
writes before each outward step (the build commit recorded before the push, ``sending``
recorded before a message goes out) make a killed run's successor do the right thing. A
fleet of workers (:mod:`deploybot.serve.fleet`) shares that part of the state in Redis, so it
installs a hook here: the state is fetched when a run has taken the state directory, and
stored before every push and every send. A hook that raises stops the run right there,
before the step, as a failed fsync would.

The moments, each with the folder it concerns:

- :data:`LOCKED` (``state.dir``): the state directory's lock was just taken;
- :data:`BEFORE_PUSH` (``state.dir``): the build commit about to be pushed is recorded;
- :data:`BEFORE_SEND` (the outbox): a message is recorded as ``sending``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

LOCKED = "locked"
BEFORE_PUSH = "before-push"
BEFORE_SEND = "before-send"

Hook = Callable[[str, Path], None]
_hooks: list[Hook] = []


def reached(moment: str, folder: Path) -> None:
    """Call every installed hook with ``moment`` and ``folder``; whatever a hook raises
    goes to the caller (the run stops before its next step)."""
    for hook in list(_hooks):
        hook(moment, folder)


@contextlib.contextmanager
def installed(hook: Hook) -> Iterator[None]:
    """Call ``hook`` at every checkpoint reached inside the ``with`` block."""
    _hooks.append(hook)
    try:
        yield
    finally:
        _hooks.remove(hook)
