"""The live-reload channel: Server-Sent Events telling the open pages what was built.

:class:`LiveReload` holds the preview's state, the ``generation`` of the build the folder
holds (one more for each build that changed an output) and the ``error`` of the last build
(None when it succeeded), and sends it to every page listening on
:data:`~deploybot.livepreview.inject.ENDPOINT` whenever it changes, as an event ``build`` whose
data is ``{"generation": N, "error": TEXT|null}`` (WHATWG HTML § 9.2 "Server-sent events":
``event:`` and ``data:`` lines, a blank line ending it). A comment line every
:data:`KEEPALIVE` seconds finds pages that went away (their writes fail) and keeps proxies
from timing the stream out.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from aiohttp import web

KEEPALIVE = 15.0
"""Seconds between keep-alive comments on an idle stream."""
RETRY_MS = 500
"""How soon (milliseconds) a page reconnects when the stream drops (the ``retry:`` field)."""


@dataclass(frozen=True)
class State:
    """What the pages are told: the served build's ``generation`` and the last build's
    ``error`` (one line, or None)."""

    generation: int = 0
    error: str | None = None

    def event(self) -> bytes:
        """This state as one Server-Sent Event named ``build`` (UTF-8)."""
        data = json.dumps({"generation": self.generation, "error": self.error})
        return f"event: build\ndata: {data}\n\n".encode()


class LiveReload:
    """The state and the pages listening to it (see the module docstring)."""

    def __init__(self) -> None:
        self.state = State()
        self._listeners: set[asyncio.Queue[State | None]] = set()

    def built(self, changed: bool) -> State:
        """Record a successful build (a new generation when it ``changed`` an output) and
        tell the pages; returns the new state."""
        generation = self.state.generation + (1 if changed else 0)
        return self._set(State(generation, None))

    def failed(self, error: str) -> State:
        """Record a failed build (the folder still holds the last good one) and tell the
        pages; returns the new state."""
        return self._set(State(self.state.generation, error))

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        for queue in self._listeners:
            queue.put_nowait(None)

    def _set(self, state: State) -> State:
        changed = state != self.state
        self.state = state
        if changed:
            for queue in self._listeners:
                queue.put_nowait(state)
        return state

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The event stream of one page: the current state at once, then each change."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        queue: asyncio.Queue[State | None] = asyncio.Queue()
        self._listeners.add(queue)
        try:
            await response.write(f"retry: {RETRY_MS}\n\n".encode() + self.state.event())
            while True:
                try:
                    state = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                if state is None:
                    break
                await response.write(state.event())
        except ConnectionResetError:
            pass  # the page went away: nobody to tell
        finally:
            self._listeners.discard(queue)
        return response

    @property
    def listeners(self) -> int:
        """How many pages listen now."""
        return len(self._listeners)
