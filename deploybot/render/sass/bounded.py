"""Run one piece of untrusted work in a forked child with bounded time and memory.

What the Sass compiler (:mod:`.sass`) needs: LibSass is C++ that Python cannot interrupt
(``@while true {}`` loops inside one C call, where neither a ``SIGALRM`` handler nor a
check between steps ever runs, unlike the highlight clock of
:mod:`deploybot.render.highlight.clock`), and an ``@for`` loop over a billion rules grows
its output until the machine has no memory left. So the work runs in a child process
(``os.fork``: it starts with the parent's state, the source tree included; the git
handles are replaced in every forked child by :mod:`deploybot.git.tree`) that:

- has an address-space limit (``RLIMIT_AS``) of what it inherited plus ``memory`` bytes,
  so an allocation past it fails inside the child (LibSass reports ``std::bad_alloc``,
  Python a ``MemoryError``) and the parent's memory is never touched;
- is killed (``SIGKILL``) by the parent once ``seconds`` of wall-clock time have passed,
  with ``RLIMIT_CPU`` as a second line; the build fails the same way on a slow machine
  and a fast one only as far as the work is far from the limit (the default is generous);
- dies with its parent (``PR_SET_PDEATHSIG``).

The child sends its result back pickled through a pipe; the parent reads it until the
deadline and always reaps the child.
"""

from __future__ import annotations

import math
import os
import pickle
import resource
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from deploybot.support.errors import holds
from deploybot.support.parent_death import set_pdeathsig

T = TypeVar("T")

_CHUNK = 1 << 16


@dataclass(frozen=True)
class ProcessLimits:
    """The budget of one piece of work: ``seconds`` of wall-clock time, ``memory`` bytes
    of address space beyond what the child inherits, and at most ``max_result`` bytes of
    pickled result sent back."""

    seconds: float
    memory: int
    max_result: int


class OverLimit(Exception):
    """The work passed a limit of :class:`ProcessLimits` or the child died; ``message``
    says which ("took over 20 s", "needs more than 512 MB", "stopped by signal 9")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def run_bounded(work: Callable[[], T], limits: ProcessLimits) -> T:
    """Return ``work()`` run in a forked child within ``limits``; its result must pickle.

    Raises:
        OverLimit: the time ran out (the child is killed), the child ran out of memory
            (a ``MemoryError`` outside ``work``'s own handling), its result was larger than
            ``limits.max_result``, or it died without answering.
        Exception: what ``work`` raised, if it pickles (else a ``RuntimeError`` naming it).
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(work, limits, write_end)
    os.close(write_end)
    try:
        data = _read_until(read_end, pid, limits)
    finally:
        os.close(read_end)
        _reap(pid)
    try:
        kind, value = pickle.loads(data)
    except Exception as exc:
        raise OverLimit(_died(pid)) from exc
    if kind == "raise":
        raise value
    if kind == "over":
        raise OverLimit(value)
    return value  # type: ignore[no-any-return]


_STATUS: dict[int, int] = {}


def _read_until(fd: int, pid: int, limits: ProcessLimits) -> bytes:
    """Read the child's whole answer from ``fd``, killing it at the deadline."""
    deadline = time.monotonic() + limits.seconds
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            os.kill(pid, signal.SIGKILL)
            raise OverLimit(f"took over {limits.seconds:g} s")
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limits.max_result + _CHUNK:  # the child checks first: a broken child
            os.kill(pid, signal.SIGKILL)
            raise OverLimit(f"its result passes {limits.max_result:,} bytes")
        chunks.append(chunk)


def _reap(pid: int) -> None:
    """Wait for the child (killing it first if it still runs) and keep its status."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return
    _STATUS[pid] = status


def _died(pid: int) -> str:
    status = _STATUS.pop(pid, None)
    if status is not None and os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number in (signal.SIGKILL, signal.SIGXCPU):
            return f"stopped by signal {number} (out of time or memory)"
        return f"stopped by signal {number}"
    return "stopped without an answer"


def _child(work: Callable[[], T], limits: ProcessLimits, fd: int) -> None:
    """The child's life: limits, the work, the answer, ``os._exit`` (no atexit, no
    flushing of the parent's buffers)."""
    code = 0
    # Made before the limit: running out of memory while the answer is made (handling
    # the work's error, pickling it) still sends this one, which needs no more memory.
    out_of_memory = pickle.dumps(
        ("over", f"needs more than {limits.memory // 2**20:,} MB of memory")
    )
    try:
        set_pdeathsig()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent kills us
        _limit(limits)
        try:
            answer: tuple[str, object] = ("ok", work())
        except Exception as exc:
            if holds(exc, MemoryError):  # an extension that could not be mapped counts
                raise MemoryError from exc
            answer = ("raise", _portable(exc))
        data = pickle.dumps(answer)
        if len(data) > limits.max_result:
            data = pickle.dumps(("over", f"its result passes {limits.max_result:,} bytes"))
        _write_all(fd, data)
    except BaseException as exc:
        code = 1
        if holds(exc, MemoryError):  # however it came (making the answer, a lazy import)
            try:
                _write_all(fd, out_of_memory)
                code = 0
            except BaseException:
                code = 1
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _limit(limits: ProcessLimits) -> None:
    """Set this process's address-space and CPU limits (as far as the system allows)."""
    seconds = max(1, math.ceil(limits.seconds)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    size = _address_space()
    if size is not None:
        cap = size + limits.memory
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _address_space() -> int | None:
    """This process's address space in bytes (Linux's ``/proc/self/statm``), or ``None``."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def reached_address_limit(margin: int = 16 * 2**20) -> bool:
    """Whether this process's peak address space (Linux's ``VmPeak`` in
    ``/proc/self/status``) came within ``margin`` bytes of its ``RLIMIT_AS``: an allocation
    past the limit failed, whatever the library that made it reported (LibSass sometimes
    gives an error with no message). False without a limit or without ``/proc``."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return False
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            peak = next((line for line in status if line.startswith("VmPeak:")), "")
    except OSError:
        return False
    fields = peak.split()
    return len(fields) >= 2 and fields[1].isdigit() and int(fields[1]) * 1024 >= soft - margin


def _portable(exc: Exception) -> Exception:
    """Return ``exc`` if it survives pickling, else a ``RuntimeError`` saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
