"""The daemon's queue rules (deploybot.serve.scheduler), on its records directly: no
daemon process, no build."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from deploybot.config.load import load_config
from deploybot.serve.metrics import Metrics
from deploybot.serve.scheduler import Scheduler
from deploybot.serve.settings import Site
from deploybot.serve.site_state import SiteState

BAD, FIX = "b" * 40, "f" * 40


def _scheduler(tmp_path: Path) -> tuple[Scheduler, SiteState]:
    config = tmp_path / "deploybot.toml"
    config.write_text(
        f'[source]\nurl = "{tmp_path / "src.git"}"\n[publish]\nurl = "{tmp_path / "pub.git"}"\n'
        f'[state]\ndir = "{tmp_path / "state"}"\n'
    )
    scheduler = Scheduler(runner=None, metrics=Metrics(), workers=1)  # type: ignore[arg-type]
    state = SiteState(Site("www", load_config(config)))
    scheduler.states["www"] = state
    return scheduler, state


def _queued_behind_a_backoff(state: SiteState) -> None:
    """Bad input at ``BAD`` failed the build; a build asked for while it ran waits out the
    failure's backoff."""
    state.failures, state.failed_for = 1, BAD
    state.backoff_until = time.time() + 60
    state.wanted, state.wanted_for = True, BAD


def test_a_new_commit_the_poller_sees_lifts_the_backoff_of_a_queued_build(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        scheduler, state = _scheduler(tmp_path)
        _queued_behind_a_backoff(state)
        assert [s.name for s in await scheduler.poll_targets()] == ["www"]
        scheduler.polled("www", BAD, None)  # the same bad commit: it keeps waiting
        assert state.backoff_until > time.time()
        scheduler.polled("www", FIX, None)  # the fix: built now, not in 60 s
        assert (state.backoff_until, state.wanted, state.wanted_for) == (0.0, True, FIX)

    asyncio.run(go())


def test_the_poller_skips_a_site_that_builds_or_waits_without_a_failure(tmp_path: Path) -> None:
    async def go() -> None:
        scheduler, state = _scheduler(tmp_path)
        state.building = True
        assert await scheduler.poll_targets() == []
        state.building, state.wanted = False, True
        assert await scheduler.poll_targets() == []
        state.wanted = False
        assert [s.name for s in await scheduler.poll_targets()] == ["www"]

    asyncio.run(go())
