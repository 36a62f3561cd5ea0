"""The forked child with bounded time and memory (:mod:`deploybot.render.sass.bounded`)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from deploybot.render.sass.bounded import OverLimit, ProcessLimits, run_bounded

LIMITS = ProcessLimits(seconds=5.0, memory=256 * 2**20, max_result=10_000)


def _pid() -> int:
    return os.getpid()


def test_the_work_runs_in_another_process_and_its_result_comes_back() -> None:
    assert run_bounded(_pid, LIMITS) != os.getpid()
    assert run_bounded(lambda: {"a": [1, 2]}, LIMITS) == {"a": [1, 2]}


def test_the_works_exception_is_raised_here() -> None:
    def fail() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_bounded(fail, LIMITS)


def test_a_child_that_dies_is_reported() -> None:
    def die() -> None:
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(OverLimit, match="stopped by signal 15"):
        run_bounded(die, LIMITS)


def test_the_time_limit_kills_the_child() -> None:
    start = time.monotonic()
    with pytest.raises(OverLimit, match=r"took over 0\.5 s"):
        run_bounded(lambda: time.sleep(30), ProcessLimits(0.5, 2**28, 100))
    assert time.monotonic() - start < 3


def test_memory_past_the_limit_fails_in_the_child_only() -> None:
    def grab() -> int:
        return len(bytearray(512 * 2**20))

    with pytest.raises(OverLimit, match="needs more than 64 MB of memory"):
        run_bounded(grab, ProcessLimits(10.0, 64 * 2**20, 100))
    assert run_bounded(lambda: len(bytearray(2**20)), LIMITS) == 2**20


def test_a_result_past_its_limit_is_refused() -> None:
    with pytest.raises(OverLimit, match="its result passes 10,000 bytes"):
        run_bounded(lambda: "x" * 20_000, LIMITS)
