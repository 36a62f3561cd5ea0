"""What the daemon's queue knows of one site (:class:`SiteState`): read by the queue that
changes it (:mod:`deploybot.serve.scheduler`) and by ``/healthz`` (:mod:`deploybot.serve.health`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from deploybot.serve import outboxes
from deploybot.serve.runner import JobResult
from deploybot.serve.settings import Site

HISTORY = 10
"""The runs kept per site (:attr:`SiteState.runs`: ``/healthz`` shows the last)."""


@dataclass
class SiteState:
    """What the queue knows of one site (the rules: :mod:`deploybot.serve.scheduler`)."""

    site: Site
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    wanted: bool = False
    wanted_for: str | None = None  # the newest commit a trigger named (None: unknown)
    wanted_why: str = ""  # the last trigger, for the log
    wanted_preview: bool = False  # a previewed branch moved since the build started
    building: bool = False  # from the fetch to the build's end (or a deliver job)
    fetching: bool = False  # before its build takes a worker (fetching, or waiting)
    failures: int = 0
    failed_for: str | None = None
    backoff_until: float = 0.0  # Unix time
    known_head: str | None = None  # the source commit of the last good build
    outbox: outboxes.Waiting = field(default_factory=outboxes.Waiting)
    last_deliver: float = 0.0
    runs: deque[JobResult] = field(default_factory=lambda: deque(maxlen=HISTORY))
    timer: asyncio.TimerHandle | None = None
    post_timer: asyncio.TimerHandle | None = None  # the held-back post's date: a build then
    task: asyncio.Task[None] | None = None
    removed: bool = False
