"""The time one page may spend highlighting code (``[render] highlight_timeout``).

Some Pygments lexers have regexes that backtrack catastrophically: 2 KB of ``" \\t"`` tagged
``systemd`` take a minute, and the time grows exponentially with the input. A page gets a
budget of seconds (:func:`highlight_budget`, opened around each page's render) shared by
all its code blocks; past it, :class:`HighlightTimeout` fails the build (exit 1, naming the
file, the block's line and the lexer). There is no fallback to plain text: the output of a
build must not depend on the speed of the machine that made it.

How the time is enforced: in the main thread, a ``SIGALRM`` timer (``signal.setitimer``)
interrupts the lexer even in the middle of one regex match (CPython's ``re`` engine checks
for signals while it backtracks); the timer is armed only while the lexer runs and always
cleared (and the previous handler put back) before :func:`timed_tokens` returns or raises,
so it never fires during a git or sqlite write. In any other thread (where Python allows no
signal handler) the time is checked between tokens.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from deploybot.render.limits import LimitError
from deploybot.render.model import HIGHLIGHT_TIMEOUT

if TYPE_CHECKING:
    from pygments.lexer import Lexer

DEFAULT_TIMEOUT = HIGHLIGHT_TIMEOUT
"""The budget of a block highlighted outside any page (``[render] highlight_timeout``'s
default), in seconds."""

_MIN_TIMER = 0.001  # setitimer(0) would disarm the timer instead of firing at once


class HighlightTimeout(LimitError):
    """Highlighting passed the page's budget. ``lang`` is the block's language as written,
    ``code`` its text (to find its line); the caller names the file and the line."""

    def __init__(self, lang: str, code: str, seconds: float) -> None:
        super().__init__(
            f"highlighting as {lang} took over {seconds:g} s (render.highlight_timeout); "
            "the lexer is too slow on this block: shorten it or tag it with another language"
        )
        self.lang = lang
        self.code = code


Clock = Callable[[], float]
"""A monotonic clock in seconds (``time.monotonic``)."""


@dataclass
class _Budget:
    seconds: float
    clock: Clock
    used: float = 0.0


_BUDGET: ContextVar[_Budget | None] = ContextVar("highlight_budget", default=None)
_CLOCK: ContextVar[Clock] = ContextVar("highlight_clock", default=time.monotonic)


@contextmanager
def highlight_budget(seconds: float) -> Iterator[None]:
    """Give the code blocks highlighted inside the block ``seconds`` in total (one page)."""
    token = _BUDGET.set(_Budget(seconds, _CLOCK.get()))
    try:
        yield
    finally:
        _BUDGET.reset(token)


@contextmanager
def use_clock(clock: Clock) -> Iterator[None]:
    """Measure the highlighting inside the block with ``clock`` instead of
    ``time.monotonic`` (a clock a test drives). The ``SIGALRM`` timer still counts real
    seconds; the time between tokens is the ``clock``'s."""
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


class _Expired(Exception):
    """The timer fired, or the time was found spent between two tokens."""


@contextmanager
def timed_tokens(lexer: Lexer, code: str, lang: str) -> Iterator[Iterator[Any]]:
    """Yield ``lexer``'s tokens of ``code`` (Pygments' ``lex``), to be consumed inside the
    block, within what is left of the page's budget (:func:`highlight_budget`; a block
    highlighted outside any page gets :data:`DEFAULT_TIMEOUT` of its own).

    Raises:
        HighlightTimeout: the budget ran out while the block was being consumed.
    """
    budget = _BUDGET.get() or _Budget(DEFAULT_TIMEOUT, _CLOCK.get())
    left = budget.seconds - budget.used
    start = budget.clock()
    try:
        if left <= 0:
            raise _Expired
        tokens = _checked(lexer.get_tokens(code), start + left, budget.clock)
        if threading.current_thread() is threading.main_thread():
            with _alarm(left):
                yield tokens
        else:
            yield tokens
    except _Expired:
        raise HighlightTimeout(lang, code, budget.seconds) from None
    finally:
        budget.used += budget.clock() - start


def _checked(tokens: Iterator[Any], deadline: float, clock: Clock) -> Iterator[Any]:
    for token in tokens:
        if clock() > deadline:
            raise _Expired
        yield token


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise :class:`_Expired` in the main thread if the block takes over ``seconds``."""
    armed = True

    def expire(signum: int, frame: FrameType | None) -> None:
        if armed:
            raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, _MIN_TIMER))
        try:
            yield
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
