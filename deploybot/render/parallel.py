"""A full build's pages and posts, rendered in worker processes (``[render] jobs``).

Rendering is pure Python (Markdown, Liquid, Pygments), so threads would share one core;
worker processes use them all. The workers are forked (POSIX ``fork``) once the engine has
read every source, so each starts with the engine as it is (theme, compiled templates,
``site``) and gets only ``(start, stop)`` ranges of the document list; it sends back each
document's :class:`~deploybot.render.outputs.RenderedSource` (outputs, content,
dependencies, warnings), and the parent stores them **in document order**, exactly as the
serial build does, so the output, the cache and the warnings are the same byte for byte
whatever the number of workers and however they are scheduled.

What a worker must not share with its parent is replaced when it starts: the build cache
(a sqlite connection in an open transaction) by an in-memory copy of the rows the parent
stored, git repository handles (shared file offsets) by fresh ones
(:mod:`deploybot.gittree` drops them in every forked child), and the highlight cache's
connection by its own (:mod:`.highlight_cache`). The limits hold inside a worker as they do
in the parent: they are part of the render; the highlight clock's ``SIGALRM`` works since
a worker renders in its own main thread.

A worker dies with its parent: ``PR_SET_PDEATHSIG`` (Linux) sends it ``SIGKILL`` when the
parent goes, even by ``kill -9``; elsewhere, or as a second line, a worker waiting for work
sees its pipe close. On any error or interruption the parent kills its workers before the
error goes on. A worker's ``SourceError`` reaches the parent as the same one-line error
naming the file, at the place in document order where the serial build would have raised
it (an earlier document's error, or an output limit, comes first).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from deploybot import progress
from deploybot.errors import SourceError
from deploybot.render import highlight_cache
from deploybot.render.cache import BuildCache, SourceRow
from deploybot.render.model import Post
from deploybot.render.outputs import RenderedSource

if TYPE_CHECKING:
    from deploybot.render.engine import Engine

Neighbours = tuple[Post | None, Post | None]
Doc = tuple[SourceRow, Neighbours | None]

MIN_PARALLEL = 32
"""Fewer documents than this render in the parent: starting workers and copying the rows
to them (tens of milliseconds) would cost more than the second core saves."""

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_BACKLOG = 2  # ranges sent ahead to each worker, so none waits for the next


def worker_count(jobs: int) -> int:
    """Return how many workers ``[render] jobs`` asks for: ``jobs`` itself, or for 0 the
    CPUs this process may run on (``sched_getaffinity``, else ``os.cpu_count()``)."""
    if jobs > 0:
        return jobs
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def render_all(
    engine: Engine, docs: Sequence[Doc], stored: Sequence[SourceRow]
) -> Iterator[Iterator[tuple[SourceRow, RenderedSource]]]:
    """Yield an iterator of ``(row, render)`` for ``docs`` (``(row, neighbours)`` as
    :meth:`~deploybot.render.engine.Engine.render_row` takes them), in order.

    Renders in worker processes when ``engine.options.jobs`` allows more than one and there
    are at least ``engine.options.parallel_from`` documents (fork must be available);
    otherwise in this process. ``stored`` are the rows the engine's cache holds (a worker's
    copy). Leaving the block, normally or by an exception, ends every worker.

    Raises (from the iterator): ``SourceError`` as the serial build raises it; any other
    exception a worker raised; ``RuntimeError`` when a worker died.
    """
    workers = min(worker_count(engine.options.jobs), -(-len(docs) // 4))
    serial = (
        workers <= 1
        or len(docs) < max(engine.options.parallel_from, 1)
        or "fork" not in multiprocessing.get_all_start_methods()
    )
    progress.expect(len(docs))
    if serial:
        yield _serial(engine, docs)
        return
    pool = _Pool(engine, docs, stored, workers)
    try:
        yield pool.results()
    finally:
        pool.stop()


def _serial(engine: Engine, docs: Sequence[Doc]) -> Iterator[tuple[SourceRow, RenderedSource]]:
    for row, pair in docs:
        yield row, engine.render_row(row, pair)
        progress.advance()


@dataclass
class _Job:
    """What a forked worker inherits: the engine, the documents and the cache rows."""

    engine: Engine
    docs: Sequence[Doc]
    stored: Sequence[SourceRow]
    parent: int
    parent_ends: list[Connection] = field(default_factory=list)


_JOB: _Job | None = None  # set in the parent only while it forks its workers
_INHERITED: list[Any] = []  # the parent's handles, kept alive in a worker, never closed


class _Pool:
    """``workers`` forked processes rendering ranges of ``docs``; see the module doc."""

    def __init__(
        self, engine: Engine, docs: Sequence[Doc], stored: Sequence[SourceRow], workers: int
    ) -> None:
        global _JOB
        self.docs = docs
        size = max(1, min(16, len(docs) // (workers * 8)))  # small ranges near the end too
        self.ranges = [(i, min(i + size, len(docs))) for i in range(0, len(docs), size)]
        self.sent = 0
        self.procs: list[multiprocessing.process.BaseProcess] = []
        self.conns: list[Connection] = []
        self.busy: dict[Connection, int] = {}
        context = multiprocessing.get_context("fork")
        _JOB = job = _Job(engine, docs, stored, os.getpid())
        try:
            for _ in range(workers):
                mine, theirs = context.Pipe()
                job.parent_ends.append(mine)
                proc = context.Process(target=_serve, args=(theirs,), daemon=True)
                proc.start()
                theirs.close()
                self.procs.append(proc)
                self.conns.append(mine)
                self.busy[mine] = 0
            for conn in self.conns:
                self._feed(conn)  # the workers start now; the parent may do other work
        except BaseException:
            self.stop()
            raise
        finally:
            _JOB = None

    def _feed(self, conn: Connection) -> None:
        while self.busy[conn] < _BACKLOG and self.sent < len(self.ranges):
            conn.send(self.ranges[self.sent])
            self.sent += 1
            self.busy[conn] += 1

    def results(self) -> Iterator[tuple[SourceRow, RenderedSource]]:
        """Yield the renders in document order (see :func:`render_all`)."""
        done: dict[int, list[Any]] = {}
        for start, stop in self.ranges:
            while start not in done:
                for ready in wait(self.conns):
                    assert isinstance(ready, Connection)
                    conn = ready
                    first, items = self._receive(conn)
                    done[first] = items
                    self.busy[conn] -= 1
                    self._feed(conn)
            for index, item in zip(range(start, stop), done.pop(start), strict=True):
                yield self.docs[index][0], _unwrap(item)
                progress.advance()

    def _receive(self, conn: Connection) -> tuple[int, list[Any]]:
        try:
            first, items = conn.recv()
        except (EOFError, OSError) as exc:
            codes = [p.exitcode for p in self.procs if p.exitcode is not None]
            raise RuntimeError(f"a render worker died (exit codes {codes})") from exc
        return int(first), list(items)

    def stop(self) -> None:
        """End every worker: ask the idle ones to leave, kill the busy ones, reap them all."""
        for conn, proc in zip(self.conns, self.procs, strict=False):
            try:
                if self.busy.get(conn) == 0:
                    conn.send(None)
                else:
                    proc.kill()
            except OSError:
                pass  # that worker is gone already
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for conn in self.conns:
            conn.close()


def _unwrap(item: tuple[str, Any, Any]) -> RenderedSource:
    kind, value, news = item
    if kind == "error":
        message, path, line = value
        raise SourceError(message, path, line)
    if kind == "raise":
        raise value
    assert isinstance(value, RenderedSource)
    highlight_cache.merge_news(news)
    return value


def _serve(conn: Connection) -> None:
    """A worker's life: take ``(start, stop)`` ranges, send back their renders."""
    job = _JOB
    assert job is not None
    _die_with_parent(job.parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops us
    for end in job.parent_ends:
        end.close()  # the parent's ends: a pipe reads EOF once the parent alone has gone
    engine = job.engine
    _INHERITED.append(engine.cache)  # the parent's connection: never used, never closed
    engine.cache = _cache_copy(job.stored)
    highlight_cache.after_fork()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        start, stop = task
        conn.send((start, _render_range(engine, job.docs, start, stop)))


def _render_range(engine: Engine, docs: Sequence[Doc], start: int, stop: int) -> list[Any]:
    items: list[Any] = []
    for row, pair in docs[start:stop]:
        try:
            items.append(("ok", engine.render_row(row, pair), highlight_cache.take_news()))
        except SourceError as exc:
            items.append(("error", (exc.message, exc.path, exc.line), None))
            break
        except Exception as exc:  # a bug or a broken repository: the parent raises it
            items.append(("raise", _portable(exc), None))
            break
    items += [("raise", RuntimeError("not rendered"), None)] * (stop - start - len(items))
    return items


def _portable(exc: Exception) -> Exception:
    """Return ``exc`` if it survives pickling, else a ``RuntimeError`` saying what it was."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _cache_copy(rows: Sequence[SourceRow]) -> BuildCache:
    cache = BuildCache.open(None, "worker")
    for row in rows:
        cache.put_source(row)
    return cache


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies; exit now if it already has."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl: the closed pipe ends the worker once it is idle
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
