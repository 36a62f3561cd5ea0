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
   them, so the parent only stores them). A document goes, when that worker is not far
   behind, to the worker that read it, which renders it from its first read
   (:mod:`.reread`: no second YAML parse); another worker reads it again.

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
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from deploybot.render.engine.cache import BuildCache, SourceRow, pack_text
from deploybot.render.engine.reread import ReadMemo
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
    first_reads: ReadMemo

    def read_source(self, path: str) -> SourceRow | None:
        """The cache row of the source file ``path``, or None (see the Engine's)."""

    def render_row(self, row: SourceRow, neighbours: Neighbours | None = None) -> RenderedSource:
        """The rendered outputs of one stored row (see the Engine's)."""

    def links_of(self, outputs: list[tuple[str, bytes]]) -> dict[str, PageLinks]:
        """The links of the HTML pages of ``outputs``, if links are checked (the Engine's)."""


_BACKLOG = 2  # ranges sent ahead to each worker, so none waits for the next
_AHEAD = 8  # how far past the first unsent range a worker's own next range may be


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
        self.owners: list[int] = []  # the worker best rendering each document (_owners)
        self.bodies: list[bytes | None] = []  # each path's body digest, when read (_read)
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
        self.bodies = []
        for item in self.pool.run("read", len(self.paths)):
            row, key = _unwrap(item)
            self.bodies.append(key)
            yield row

    def share(self, stored: Sequence[SourceRow], docs: Sequence[Doc]) -> None:
        """Give the workers the rows the cache now holds and the documents to render."""
        self.stored, self.docs = stored, docs
        if self.pool is not None:
            self.owners = self._owners(stored, docs)
            self.pool.share(stored, docs)

    def _owners(self, stored: Sequence[SourceRow], docs: Sequence[Doc]) -> list[int]:
        """Return the worker each of ``docs`` is best rendered by: for a body several
        documents share, one worker for all of them (its Markdown converts that body once),
        the one with the least work so far; for any other, the one that read it (its first
        read is kept: :mod:`.reread`)."""
        assert self.pool is not None
        readers = self.pool.readers()
        place = {path: i for i, path in enumerate(self.paths)}
        keys = [self.bodies[place[stored[index].path]] for index, _ in docs]
        counts = Counter(keys)
        load = [0] * self.pool.workers
        by_body: dict[bytes, int] = {}
        owners = []
        for (index, _), key in zip(docs, keys, strict=True):
            owner = readers[place[stored[index].path]]
            if key is not None and counts[key] > 1:
                if key not in by_body:
                    by_body[key] = load.index(min(load))
                    load[by_body[key]] += counts[key]
                owner = by_body[key]
            else:
                load[owner] += 1
            owners.append(owner)
        return owners

    def render(self) -> Iterator[tuple[SourceRow, RenderedSource]]:
        """Start rendering the shared documents (the workers begin at once) and return an
        iterator of ``(row, render)`` in order. Raises (from the iterator) what the serial
        build raises; ``RuntimeError`` when a worker died."""
        progress.expect(len(self.docs))
        if self.pool is None:
            return self._serial()
        return self._parallel(self.pool.run("render", len(self.docs), self.owners))

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
        self.owners: list[int] = []  # the worker each range is best sent to (-1: any)
        self.unsent: list[int] = []  # the ranges not sent yet, in order
        self.by: dict[int, int] = {}  # a done range's start -> the worker that did it
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

    def run(self, kind: str, count: int, owners: Sequence[int] = ()) -> Iterator[Any]:
        """Have the workers do ``kind`` for items ``0..count-1``, starting at once; return an
        iterator of each item's result, in order. ``owners``: the worker (index) each item
        is best done by (:meth:`readers`), when any."""
        size = max(1, min(16, count // (self.workers * 8)))  # small ranges near the end too
        self.ranges = _ranges(count, size, owners)
        self.owners = [owners[start] if owners else -1 for start, _ in self.ranges]
        self.unsent = list(range(len(self.ranges)))
        self.kind, self.by = kind, {}
        for conn in self.conns:
            self._feed(conn)
        return self._results()

    def readers(self) -> list[int]:
        """Return the worker (index) that did each item of the last :meth:`run`."""
        found = [-1] * (self.ranges[-1][1] if self.ranges else 0)
        for (start, stop), worker in zip(self.ranges, self.by_range(), strict=True):
            found[start:stop] = [worker] * (stop - start)
        return found

    def by_range(self) -> list[int]:
        """Return the worker (index) that did each range of the last :meth:`run`."""
        return [self.by[start] for start, _ in self.ranges]

    def _feed(self, conn: Connection) -> None:
        worker = self.conns.index(conn)
        while self.busy[conn] < _BACKLOG and self.unsent:
            k = self._next_for(worker)
            start, stop = self.ranges[k]
            conn.send((self.kind, start, stop))
            self.busy[conn] += 1

    def _next_for(self, worker: int) -> int:
        """Take the next range to send ``worker``: the first unsent one it owns, when it is
        near the first unsent one (so that few results wait in the parent), else that."""
        for pos, k in enumerate(self.unsent[:_AHEAD]):
            if self.owners[k] == worker:
                return self.unsent.pop(pos)
        return self.unsent.pop(0)

    def _results(self) -> Iterator[Any]:
        from multiprocessing.connection import Connection, wait  # lazy: _Pool imported it

        done: dict[int, list[Any]] = {}
        for start, stop in self.ranges:
            while start not in done:
                for ready in wait(self.conns):
                    assert isinstance(ready, Connection)
                    first, items = self._receive(ready)
                    done[first] = items
                    self.by[first] = self.conns.index(ready)
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


def _ranges(count: int, size: int, owners: Sequence[int]) -> list[tuple[int, int]]:
    """Return ``(start, stop)`` ranges of at most ``size`` of the items ``0..count-1``, a
    new one wherever the owner changes (``owners``: each item's, when any)."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for i in range(1, count + 1):
        if i == count or i - start == size or (owners and owners[i] != owners[start]):
            ranges.append((start, i))
            start = i
    return ranges


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
            work = [partial(_read, engine, path) for path in job.paths[start:stop]]
        else:
            work = [partial(_render, engine, stored, doc) for doc in docs[start:stop]]
        conn.send((start, _run(work)))


def _read(engine: WorkerEngine, path: str) -> tuple[SourceRow | None, bytes | None]:
    """Read ``path``: its row, and the digest of its body when kept (:meth:`Workers._owners`)."""
    row = engine.read_source(path)
    return row, engine.first_reads.body_key(path)


def _render(engine: WorkerEngine, stored: Sequence[SourceRow], doc: Doc) -> RenderedSource:
    """Render ``doc``, parse the pages it makes for their links and pack its content (here,
    in parallel, not in the parent, which stores them in order)."""
    done = engine.render_row(*resolve(stored, doc))
    links = engine.links_of(done.outputs)
    if done.content is None:
        return dataclasses.replace(done, links=links)
    return dataclasses.replace(done, links=links, content=None, packed=pack_text(done.content))


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
