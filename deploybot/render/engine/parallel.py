"""A full build's reading and rendering, done by worker processes (``[render] jobs``).

Rendering is pure Python (Markdown, Liquid, Pygments), so threads would share one core;
worker processes use them all. :class:`Workers` forks them once the engine has set up the
theme, so each starts with the engine as it is (theme, compiled templates, ``site``); they
then work in two rounds, each over ``(start, stop)`` ranges of a list they share with the
parent:

1. reading: each source path becomes its cache row (:meth:`WorkerEngine.read_source`: kind,
   date, front matter), sent back;
2. rendering: once the parent has stored every row it sends the workers the rows and the
   document list (indices into the rows), and each page or post comes back as a
   :class:`~deploybot.render.outputs.sinks.RenderedSource` (outputs, content, dependencies,
   warnings, and, when links are checked, the links of the pages it made: the workers parse
   them, so the parent only stores them).

The parent takes both rounds' results **in order**, exactly as the serial build makes
them, so the output, the cache and the warnings are the same byte for byte whatever the
number of workers and however they are scheduled; while the workers render, the parent
renders the theme's index.

What a worker must not share with its parent is replaced when it starts: git repository
handles (shared file offsets) by fresh ones (:mod:`deploybot.git.tree` drops them in every
forked child), the build cache (a sqlite connection in an open transaction) by an
in-memory copy of the rows, and the highlight cache's connection by its own
(:mod:`deploybot.render.highlight.cache`). The limits hold inside a worker as they do in the parent:
they are part of the render; the highlight clock's ``SIGALRM`` works since a worker renders in
its own main thread.

A worker dies with its parent: ``PR_SET_PDEATHSIG`` (Linux) sends it ``SIGKILL`` when the
parent goes, even by ``kill -9``; elsewhere, or as a second line, a worker waiting for work
sees its pipe close. On any error or interruption the parent kills its workers before the
error goes on. A worker's ``SourceError`` reaches the parent as the same one-line error
naming the file, at the place in order where the serial build would have raised it (an
earlier source's error, or an output limit, comes first).

:mod:`multiprocessing` is imported when workers are started, not with this module: a build
too small for workers (most one-post runs) never needs it.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from deploybot.render.engine.cache import BuildCache, SourceRow
from deploybot.render.highlight import cache as highlight_cache
from deploybot.render.links.extract import PageLinks
from deploybot.render.model import Post, RenderOptions
from deploybot.render.outputs.sinks import RenderedSource
from deploybot.support import progress
from deploybot.support.errors import SourceError
from deploybot.support.parent_death import set_pdeathsig

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

Neighbours = tuple[Post | None, Post | None]
Doc = tuple[int, tuple[int | None, int | None] | None]
"""A page or post to render: its index in the stored rows and, for a post, the indices of
its older and newer neighbours (``None`` at either end)."""


class WorkerEngine(Protocol):
    """What the workers use of the build's :class:`deploybot.render.engine.full.Engine`: its
    options, its build cache (a worker swaps in a copy of its own) and one source's read and
    render."""

    options: RenderOptions
    cache: BuildCache

    def read_source(self, path: str) -> SourceRow | None:
        """The cache row of the source file ``path``, or None (see the Engine's)."""

    def render_row(self, row: SourceRow, neighbours: Neighbours | None = None) -> RenderedSource:
        """The rendered outputs of one stored row (see the Engine's)."""

    def links_of(self, outputs: list[tuple[str, bytes]]) -> dict[str, PageLinks]:
        """The links of the HTML pages of ``outputs``, if links are checked (the Engine's)."""


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


def resolve(stored: Sequence[SourceRow], doc: Doc) -> tuple[SourceRow, Neighbours | None]:
    """Return the row and the neighbour models :meth:`WorkerEngine.render_row` takes for ``doc``."""
    index, pair = doc
    if pair is None:
        return stored[index], None
    older, newer = (None if j is None else stored[j].model for j in pair)
    return stored[index], (older, newer)


class Workers:
    """The full build's reading and rendering, in worker processes or in this one.

    Workers are used when ``engine.options.jobs`` allows more than one, there are at least
    ``engine.options.parallel_from`` source paths, and fork is available. Use as a context
    manager: leaving it, normally or by an exception, ends every worker. The methods are
    called in order: :meth:`read`, :meth:`share`, :meth:`render`.
    """

    def __init__(self, engine: WorkerEngine, paths: Sequence[str]) -> None:
        self.engine = engine
        self.paths = paths
        self.stored: Sequence[SourceRow] = ()
        count = min(worker_count(engine.options.jobs), -(-len(paths) // 4))
        parallel = (
            count > 1
            and len(paths) >= max(engine.options.parallel_from, 1)
            and hasattr(os, "fork")  # multiprocessing's "fork" start method
        )
        self.pool = _Pool(engine, paths, count) if parallel else None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            self.pool.stop()

    def read(self) -> Iterator[SourceRow | None]:
        """Yield :meth:`WorkerEngine.read_source` of each path, in order. Raises its errors."""
        if self.pool is None:
            yield from (self.engine.read_source(path) for path in self.paths)
            return
        for item in self.pool.run("read", len(self.paths)):
            yield _unwrap(item)

    def share(self, stored: Sequence[SourceRow], docs: Sequence[Doc]) -> None:
        """Give the workers the rows the cache now holds and the documents to render."""
        self.stored, self.docs = stored, docs
        if self.pool is not None:
            self.pool.share(stored, docs)

    def render(self) -> Iterator[tuple[SourceRow, RenderedSource]]:
        """Start rendering the shared documents (the workers begin at once) and return an
        iterator of ``(row, render)`` in order. Raises (from the iterator) what the serial
        build raises; ``RuntimeError`` when a worker died."""
        progress.expect(len(self.docs))
        if self.pool is None:
            return self._serial()
        return self._parallel(self.pool.run("render", len(self.docs)))

    def _serial(self) -> Iterator[tuple[SourceRow, RenderedSource]]:
        for doc in self.docs:
            row, pair = resolve(self.stored, doc)
            yield row, self.engine.render_row(row, pair)
            progress.advance()

    def _parallel(self, items: Iterator[Any]) -> Iterator[tuple[SourceRow, RenderedSource]]:
        for doc, item in zip(self.docs, items, strict=True):
            done = _unwrap(item)
            assert isinstance(done, RenderedSource)
            yield self.stored[doc[0]], done
            progress.advance()


@dataclass
class _Job:
    """What a forked worker inherits: the engine, the paths, and the parent's pipe ends."""

    engine: WorkerEngine
    paths: Sequence[str]
    parent: int
    parent_ends: list[Connection] = field(default_factory=list)


_JOB: _Job | None = None  # set in the parent only while it forks its workers
_INHERITED: list[Any] = []  # the parent's handles, kept alive in a worker, never closed


class _Pool:
    """``workers`` forked processes working through ranges of a shared list."""

    def __init__(self, engine: WorkerEngine, paths: Sequence[str], workers: int) -> None:
        global _JOB
        self.workers = workers
        import multiprocessing  # lazy on purpose (module docstring)

        self.procs: list[BaseProcess] = []
        self.conns: list[Connection] = []
        self.busy: dict[Connection, int] = {}
        self.ranges: list[tuple[int, int]] = []
        self.kind = ""
        self.sent = 0
        context = multiprocessing.get_context("fork")
        _JOB = job = _Job(engine, paths, os.getpid())
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
        except BaseException:
            self.stop()
            raise
        finally:
            _JOB = None

    def share(self, stored: Sequence[SourceRow], docs: Sequence[Doc]) -> None:
        """Send every worker the rows and the documents."""
        for conn in self.conns:
            conn.send(("share", stored, docs))

    def run(self, kind: str, count: int) -> Iterator[Any]:
        """Have the workers do ``kind`` for items ``0..count-1``, starting at once; return an
        iterator of each item's result, in order."""
        size = max(1, min(16, count // (self.workers * 8)))  # small ranges near the end too
        self.ranges = [(i, min(i + size, count)) for i in range(0, count, size)]
        self.kind, self.sent = kind, 0
        for conn in self.conns:
            self._feed(conn)
        return self._results()

    def _feed(self, conn: Connection) -> None:
        while self.busy[conn] < _BACKLOG and self.sent < len(self.ranges):
            start, stop = self.ranges[self.sent]
            conn.send((self.kind, start, stop))
            self.sent += 1
            self.busy[conn] += 1

    def _results(self) -> Iterator[Any]:
        from multiprocessing.connection import Connection, wait  # lazy: _Pool imported it

        done: dict[int, list[Any]] = {}
        for start, stop in self.ranges:
            while start not in done:
                for ready in wait(self.conns):
                    assert isinstance(ready, Connection)
                    first, items = self._receive(ready)
                    done[first] = items
                    self.busy[ready] -= 1
                    self._feed(ready)
            items = done.pop(start)
            assert len(items) == stop - start
            yield from items

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


def _unwrap(item: tuple[str, Any, Any]) -> Any:
    """Return a worker's result for one item, or raise its error as the serial build would."""
    kind, value, news = item
    if kind == "error":
        message, path, line = value
        raise SourceError(message, path, line)
    if kind == "raise":
        raise value
    highlight_cache.merge_news(news)
    return value


def _serve(conn: Connection) -> None:
    """A worker's life: answer ``(kind, start, stop)`` requests until told to stop."""
    job = _JOB
    assert job is not None
    _die_with_parent(job.parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops us
    for end in job.parent_ends:
        end.close()  # the parent's ends: a pipe reads EOF once the parent alone has gone
    engine = job.engine
    _INHERITED.append(engine.cache)  # the parent's connection: never used, never closed
    highlight_cache.after_fork()
    stored: Sequence[SourceRow] = ()
    docs: Sequence[Doc] = ()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        if task[0] == "share":
            _, stored, docs = task
            engine.cache = _cache_copy(stored)
            continue
        kind, start, stop = task
        work: list[Callable[[], Any]]
        if kind == "read":
            work = [partial(engine.read_source, path) for path in job.paths[start:stop]]
        else:
            work = [partial(_render, engine, stored, doc) for doc in docs[start:stop]]
        conn.send((start, _run(work)))


def _render(engine: WorkerEngine, stored: Sequence[SourceRow], doc: Doc) -> RenderedSource:
    """Render ``doc`` and parse the pages it makes for their links (here, in parallel, not
    in the parent, which stores them in order)."""
    done = engine.render_row(*resolve(stored, doc))
    links = engine.links_of(done.outputs)
    return dataclasses.replace(done, links=links) if links else done


def _run(work: Sequence[Callable[[], Any]]) -> list[Any]:
    """Do each piece of ``work``; stop at the first error (nothing after it is needed)."""
    items: list[Any] = []
    for piece in work:
        try:
            items.append(("ok", piece(), highlight_cache.take_news()))
        except SourceError as exc:
            items.append(("error", (exc.message, exc.path, exc.line), None))
            break
        except Exception as exc:  # a bug or a broken repository: the parent raises it
            items.append(("raise", _portable(exc), None))
            break
    items += [("raise", RuntimeError("not done"), None)] * (len(work) - len(items))
    return items


def _portable(exc: Exception) -> Exception:
    """Return ``exc`` if it survives pickling, else a ``RuntimeError`` saying what it was."""
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
    """Ask Linux to SIGKILL this process when its parent dies (without it, the closed pipe
    ends the worker once it is idle); exit now if the parent already has."""
    set_pdeathsig()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
