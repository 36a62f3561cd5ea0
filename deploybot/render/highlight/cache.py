"""Highlighted code blocks, cached by content across builds (``state.dir/cache/highlight.sqlite``).

Pygments is most of a code-heavy build's time, and a block's HTML is a function of its
text, its lexer (class and options), the formatter and Pygments' version alone, so it is
kept under a digest of exactly those (:func:`block_key`) and reused by any later build,
full or incremental, of any post: the bytes are the same as highlighting anew.

The store is one sqlite file beside the build cache, written in one transaction at the end
of a successful build (:func:`opened`), so a build killed at any moment leaves the file as
the last build left it (sqlite's journal), never half an entry. Each entry holds the
zlib-compressed HTML and a digest of the HTML: an entry that does not decompress or does
not match its digest (a damaged or truncated row) is ignored, highlighted anew and written
again; a file sqlite cannot read is replaced by an empty one. The entries' bytes
(compressed) are kept within ``[render] highlight_cache_bytes``: past it the least recently
used go first, and the file gives their pages back (incremental vacuum).

The store of the running build is a context variable, so the render code need not carry
it; a forked render worker (:mod:`deploybot.render.engine.parallel`) opens its own connection
(:func:`after_fork`) and hands what it highlighted and hit back to the parent
(:func:`take_news`, :func:`merge_news`), which writes them. No store (a preview without a
state folder, or the bound set to 0): blocks are highlighted every time.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygments

if TYPE_CHECKING:
    from pygments.lexer import Lexer

FILE_NAME = "highlight.sqlite"
FORMATTER = "HtmlFormatter(nowrap=True), whitespace as text"
"""What :func:`block_key` says of the formatter; :mod:`.highlighter` makes every block with it."""

SCHEMA = """
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS blocks(key TEXT PRIMARY KEY, html BLOB NOT NULL,
    digest TEXT NOT NULL, size INTEGER NOT NULL, used INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS blocks_used ON blocks(used);
CREATE TABLE IF NOT EXISTS clock(id INTEGER PRIMARY KEY CHECK (id = 0), now INTEGER NOT NULL);
"""

News = tuple[dict[str, str], set[str]]
"""What a worker highlighted (``{key: html}``) and the keys it found in the store."""


def block_key(lexer: Lexer, code: str) -> str:
    """Return the cache key (40 hex) of ``code`` highlighted by ``lexer``: a BLAKE2b digest
    of Pygments' version, the lexer's class and options, :data:`FORMATTER` and the code."""
    kind = type(lexer)
    return kind_key(f"{kind.__module__}.{kind.__qualname__}", lexer.options, code)


def kind_key(kind: str, options: Mapping[str, Any], code: str) -> str:
    """:func:`block_key` from the lexer's class path (``pygments.lexers.python.PythonLexer``)
    and ``options``, without the lexer itself: a block the store holds is then found without
    making its lexer, whose first instance compiles every regex of its class (Python's
    lexer: about 250 M instructions, more than the rest of a one-post edit's render)."""
    digest = hashlib.blake2b(digest_size=20)
    listed = sorted((str(k), repr(v)) for k, v in options.items())
    head = f"{pygments.__version__}\0{kind}\0{listed!r}"
    digest.update(f"{head}\0{FORMATTER}\0".encode())
    digest.update(code.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _digest(html: bytes) -> str:
    return hashlib.blake2b(html, digest_size=16).hexdigest()


class HighlightStore:
    """The cache file (see the module doc). ``max_bytes`` bounds the compressed entries."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.conn = _open(path)
        self.seen: dict[str, str] = {}  # this build's blocks, found or made
        self.new: dict[str, str] = {}  # to write: made anew, or replacing a damaged entry
        self.hits: set[str] = set()

    def get(self, key: str) -> str | None:
        """Return the HTML under ``key``, or ``None`` when absent or damaged."""
        if key in self.seen:
            return self.seen[key]
        try:
            row = self.conn.execute(
                "SELECT html, digest FROM blocks WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return None  # an unreadable page: highlighted anew, written at the end
        if row is None:
            return None
        try:
            data = zlib.decompress(row[0])
        except (zlib.error, TypeError):
            return None
        if _digest(data) != row[1]:
            return None
        html = data.decode("utf-8", "surrogatepass")
        self.seen[key] = html
        self.hits.add(key)
        return html

    def put(self, key: str, html: str) -> None:
        """Keep ``html`` under ``key`` (written by :meth:`flush`)."""
        self.seen[key] = html
        self.new[key] = html

    def merge(self, news: News) -> None:
        """Take a worker's :data:`News`."""
        made, hits = news
        for key, html in made.items():
            self.put(key, html)
        self.hits |= hits

    def take(self) -> News:
        """Return and forget what was made and hit since the last call (a worker's news)."""
        news = (self.new, self.hits)
        self.new, self.hits = {}, set()
        return news

    def flush(self) -> None:
        """Write the new entries, mark the used ones, and drop the least recently used
        past the bound, in one transaction. A full disk or a locked file loses only this
        build's additions (``sqlite3.OperationalError`` is not raised)."""
        try:
            self._flush()
        except sqlite3.OperationalError:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        self.new, self.hits = {}, set()

    def _flush(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        now = int(conn.execute("SELECT coalesce(max(now), 0) + 1 FROM clock").fetchone()[0])
        conn.execute("INSERT OR REPLACE INTO clock VALUES (0, ?)", (now,))
        rows = []
        for key, html in self.new.items():
            data = html.encode("utf-8", "surrogatepass")
            packed = zlib.compress(data, 6)
            rows.append((key, packed, _digest(data), len(packed), now))
        conn.executemany("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?)", rows)
        conn.executemany("UPDATE blocks SET used = ? WHERE key = ?", ((now, k) for k in self.hits))
        total = int(conn.execute("SELECT coalesce(sum(size), 0) FROM blocks").fetchone()[0])
        if total > self.max_bytes:
            self._prune(total)
        conn.execute("COMMIT")
        conn.execute("PRAGMA incremental_vacuum")

    def _prune(self, total: int) -> None:
        """Delete the least recently used entries until the rest fit the bound."""
        doomed: list[str] = []
        for key, size in self.conn.execute("SELECT key, size FROM blocks ORDER BY used, key"):
            if total <= self.max_bytes:
                break
            doomed.append(str(key))
            total -= int(size)
        self.conn.executemany("DELETE FROM blocks WHERE key = ?", ((k,) for k in doomed))

    def reopen(self) -> None:
        """Use a connection of this process's own (a forked worker; the parent's stays
        open and unused)."""
        _INHERITED.append(self.conn)
        self.conn = _open(self.path)

    def close(self) -> None:
        """Close the file (what was not flushed is lost)."""
        self.conn.close()


_INHERITED: list[sqlite3.Connection] = []
_STORE: ContextVar[HighlightStore | None] = ContextVar("highlight_store", default=None)


def _open(path: Path) -> sqlite3.Connection:
    """Open (or create, private) the store; a file sqlite cannot read is started anew."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    try:
        return _connect(path)
    except sqlite3.DatabaseError:
        path.unlink(missing_ok=True)
        path.with_name(path.name + "-journal").unlink(missing_ok=True)
        path.touch(mode=0o600)
        return _connect(path)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=30)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.executescript(SCHEMA)
        conn.execute("SELECT count(*) FROM blocks").fetchone()
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


@contextmanager
def opened(folder: Path | None, max_bytes: int) -> Iterator[HighlightStore | None]:
    """Use the store in ``folder`` for the code blocks highlighted inside the block and
    write what they added when it ends without an exception. ``folder`` ``None`` or
    ``max_bytes`` 0: no store. Inside the block of an enclosing ``opened`` that has a
    store, that store is used and ``folder`` is ignored: ``deploybot build`` opens the
    state folder's, while the build it runs would open one beside its throw-away build
    cache. Raises ``OSError`` when the folder cannot be made."""
    running = _STORE.get()
    if running is not None:
        yield running
        return
    if folder is None or max_bytes <= 0:
        yield None
        return
    store = HighlightStore(folder / FILE_NAME, max_bytes)
    token = _STORE.set(store)
    try:
        yield store
        store.flush()
    finally:
        _STORE.reset(token)
        store.close()


def cached(key: Callable[[], str], make: Callable[[], str]) -> str:
    """Return ``make()`` (the HTML of a block highlighted), from the running build's store
    under ``key()`` (:func:`block_key`, :func:`kind_key`; asked only when there is a store)
    when it has it; a block made anew is kept for the store. Raises what ``make`` raises (a
    highlight timeout: nothing is kept)."""
    store = _STORE.get()
    if store is None:
        return make()
    digest = key()
    html = store.get(digest)
    if html is None:
        html = make()
        store.put(digest, html)
    return html


def after_fork() -> None:
    """In a forked render worker: give the running store a connection of its own."""
    store = _STORE.get()
    if store is not None:
        store.reopen()


def take_news() -> News | None:
    """Return what this worker's store made and hit since the last call (``None``: no store)."""
    store = _STORE.get()
    return None if store is None else store.take()


def merge_news(news: Any) -> None:
    """Add a worker's :func:`take_news` to the running store (the parent)."""
    store = _STORE.get()
    if store is not None and news is not None:
        store.merge(news)
