"""The build cache: one sqlite3 file under ``state.dir/cache/`` describing the last build.

It holds what an incremental build needs without re-reading unchanged sources: for every
source path its blob id, kind and (for posts and pages) the model without the body; the
rendered content HTML of posts, documents and pages (zlib, for feeds and listings); the
whole output of the posts and documents whose ``output`` a listing read (zlib); which
outputs each producer wrote; and the dependencies each producer read (:mod:`.deps`),
indexed by key; the links of each written HTML page (``links``: its target, the URL as
written, its line, and whether it is broken: :mod:`deploybot.render.links`) and how many a page
had past the caps (``link_drops``). ``meta`` says which source
commit and publish commit the rows belong to.

Every write happens in one transaction that the caller commits only once the build is
published (:meth:`BuildCache.commit`), so the cache never runs ahead of the publish branch.
A file from another renderer version, or one sqlite cannot read, is replaced by an empty
cache; a row that cannot be decoded raises :class:`CacheError`, and the caller rebuilds
fully. Either way the cache only ever costs time, never changes the output.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploybot.render import fingerprint

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources(path TEXT PRIMARY KEY, blob TEXT NOT NULL, kind TEXT NOT NULL,
    published INTEGER NOT NULL, date_us INTEGER NOT NULL, model BLOB, warnings BLOB);
CREATE INDEX sources_order ON sources(kind, published, date_us, path);
CREATE TABLE contents(path TEXT PRIMARY KEY, content BLOB NOT NULL);
CREATE TABLE listed_outputs(path TEXT PRIMARY KEY, output BLOB NOT NULL);
CREATE TABLE outputs(producer TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY(producer, path));
CREATE INDEX outputs_path ON outputs(path);
CREATE TABLE deps(producer TEXT NOT NULL, key TEXT NOT NULL, fp TEXT NOT NULL);
CREATE INDEX deps_key ON deps(key);
CREATE INDEX deps_producer ON deps(producer);
CREATE TABLE rwarnings(producer TEXT NOT NULL, path TEXT NOT NULL, line INTEGER,
    message TEXT NOT NULL);
CREATE INDEX rwarnings_producer ON rwarnings(producer);
CREATE TABLE links(page TEXT NOT NULL, target TEXT NOT NULL, link TEXT NOT NULL, line INTEGER,
    broken INTEGER);
CREATE INDEX links_page ON links(page);
CREATE INDEX links_target ON links(target);
CREATE INDEX links_broken ON links(page, line) WHERE broken = 1;
CREATE TABLE link_drops(page TEXT PRIMARY KEY, dropped INTEGER NOT NULL);
"""


class CacheError(Exception):
    """A cache row could not be read or decoded; the caller falls back to a full build."""


@dataclass(frozen=True)
class SourceRow:
    """What the last build knew of one source path.

    Attributes:
        path: the source path.
        blob: its git blob id (40 hex).
        kind: ``"post"``, ``"page"``, ``"static"`` or ``"other"`` (read, publishes nothing).
        published: for posts, whether the post is a real post not marked ``published:
            false``; the future cut-off is applied on ``date_us`` at query time.
        date_us: a post's date as microseconds since the epoch (0 for other kinds).
        model: the ``Post``/``Page`` without its body, or ``None``.
        warnings: ``(line, message)`` pairs the reading gave.
    """

    path: str
    blob: str
    kind: str
    published: bool
    date_us: int
    model: Any
    warnings: tuple[tuple[int | None, str], ...]


def renderer_version() -> str:
    """Return a digest (16 hex) of the renderer
    (:func:`deploybot.render.fingerprint.renderer_digest`: deploybot's version, Python's, the output
    libraries' versions, the render modules' source and the bundled theme): a cache written by any
    other renderer is ignored."""
    return fingerprint.renderer_digest()


class BuildCache:
    """The cache file; see the module docstring. Use :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None) -> None:
        self.conn = conn
        self.path = path
        self.conn.execute("BEGIN")

    @classmethod
    def open(cls, path: Path | None, version: str, durable: bool = True) -> BuildCache:
        """Open (or create) the cache at ``path`` (``None``: in memory) for ``version``;
        not ``durable``: a scratch file thrown away after the build, never synced to disk
        (sqlite's ``synchronous=OFF``, its journal in memory).

        A file sqlite cannot read or with another version is emptied. Raises ``OSError``
        when the folder cannot be created.
        """
        if path is not None:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path, durable)
            ok = _version(conn) == version
        except sqlite3.DatabaseError:
            ok = False
        if not ok or conn is None:
            if conn is not None:
                conn.close()
            if path is not None:
                path.unlink(missing_ok=True)
                for extra in ("-journal", "-wal", "-shm"):
                    path.with_name(path.name + extra).unlink(missing_ok=True)
            conn = _connect(path, durable)
            conn.executescript(SCHEMA)
            conn.execute("INSERT INTO meta VALUES ('version', ?)", (version,))
        return cls(conn, path)

    def close(self) -> None:
        """Roll back what was not committed and close the file."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.conn.close()

    def commit(self, values: Mapping[str, str]) -> None:
        """Set ``meta`` ``values`` (e.g. ``source_commit``) and commit every pending write
        atomically (one sqlite transaction)."""
        self.set_meta(values)
        self.conn.execute("COMMIT")
        self.conn.execute("BEGIN")

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Set ``meta`` ``values`` (uncommitted)."""
        self.conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def rollback(self) -> None:
        """Drop every write since the last commit."""
        self.conn.execute("ROLLBACK")
        self.conn.execute("BEGIN")

    def __enter__(self) -> BuildCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def meta(self, key: str) -> str | None:
        """Return ``meta[key]``, or ``None``."""
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def clear(self) -> None:
        """Delete every row but the version (before a full build)."""
        for table in (
            "sources", "contents", "listed_outputs", "outputs", "deps", "rwarnings", "links",
            "link_drops",
        ):  # fmt: skip
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("DELETE FROM meta WHERE key != 'version'")

    # sources

    def source(self, path: str) -> SourceRow | None:
        """Return the row of ``path``, or ``None``. Raises :class:`CacheError`."""
        row = self._one("SELECT * FROM sources WHERE path = ?", (path,))
        return None if row is None else _source_row(row)

    def put_source(self, row: SourceRow) -> None:
        """Insert or replace the row of ``row.path``."""
        self.conn.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.path,
                row.blob,
                row.kind,
                int(row.published),
                row.date_us,
                None if row.model is None else pickle.dumps(row.model, protocol=5),
                pickle.dumps(row.warnings, protocol=5) if row.warnings else None,
            ),
        )

    def delete_source(self, path: str) -> None:
        """Forget ``path`` (and its cached content and output)."""
        self.conn.execute("DELETE FROM sources WHERE path = ?", (path,))
        self.conn.execute("DELETE FROM contents WHERE path = ?", (path,))
        self.conn.execute("DELETE FROM listed_outputs WHERE path = ?", (path,))

    def posts(
        self, cut_us: int, limit: int | None = None, *, lo_us: int | None = None
    ) -> list[SourceRow]:
        """Return visible posts (published, ``date_us <= cut_us``, and ``> lo_us`` if given),
        newest first (date, then path, descending); at most ``limit``."""
        return list(self.iter_posts(cut_us, limit, lo_us=lo_us))

    def iter_posts(
        self, cut_us: int, limit: int | None = None, *, lo_us: int | None = None
    ) -> Iterator[SourceRow]:
        """:meth:`posts`, one row at a time: the caller that keeps less of each row than
        the row (``site.posts`` keeps a post's mapping, not its pickled model) never holds
        every row (14 MB of pickles at 10,000 posts). Raises CacheError while iterating."""
        sql = "SELECT * FROM sources WHERE kind = 'post' AND published = 1 AND date_us <= ?"
        args: list[Any] = [cut_us]
        if lo_us is not None:
            sql += " AND date_us > ?"
            args.append(lo_us)
        sql += " ORDER BY date_us DESC, path DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return (_source_row(r) for r in self._iter(sql, args))

    def neighbours(
        self, date_us: int, path: str, cut_us: int
    ) -> tuple[SourceRow | None, SourceRow | None]:
        """Return ``(older, newer)``: the visible posts just before and just after
        ``(date_us, path)`` in date order (``None`` at either end), i.e. Jekyll's
        ``page.previous`` and ``page.next``."""
        base = "SELECT * FROM sources WHERE kind = 'post' AND published = 1 AND date_us <= ? AND "
        newer = base + "(date_us, path) > (?, ?) ORDER BY date_us, path LIMIT 1"
        older = base + "(date_us, path) < (?, ?) ORDER BY date_us DESC, path DESC LIMIT 1"
        found = [self._one(sql, (cut_us, date_us, path)) for sql in (older, newer)]
        before, after = (None if r is None else _source_row(r) for r in found)
        return before, after

    def rows(self, kind: str) -> list[SourceRow]:
        """Return the rows of every source of ``kind``, in path order."""
        sql = "SELECT * FROM sources WHERE kind = ? ORDER BY path"
        return [_source_row(r) for r in self._all(sql, (kind,))]

    def next_after(self, cut_us: int) -> int | None:
        """Return the earliest ``date_us`` after ``cut_us`` of a published post or a dated
        collection document, or ``None``."""
        sql = (
            "SELECT MIN(date_us) FROM sources WHERE date_us > ? AND "
            "((kind = 'post' AND published = 1) OR kind = 'doc')"
        )
        row = self._one(sql, (cut_us,))
        return None if row is None or row[0] is None else int(row[0])

    def future_warnings(self, cut_us: int) -> list[str]:
        """Return the paths of published posts dated after ``cut_us``, sorted."""
        sql = "SELECT path FROM sources WHERE kind = 'post' AND published = 1 AND date_us > ?"
        return sorted(str(r[0]) for r in self._all(sql, (cut_us,)))

    def all_warnings(self) -> list[tuple[str, int | None, str]]:
        """Return every reading warning as ``(path, line, message)``."""
        out: list[tuple[str, int | None, str]] = []
        for path, data in self._all(
            "SELECT path, warnings FROM sources WHERE warnings IS NOT NULL", ()
        ):
            out.extend((str(path), line, message) for line, message in _loads(data))
        return out

    def kinds(self, kind: str) -> list[str]:
        """Return the paths of every source of ``kind``, sorted."""
        return sorted(
            str(r[0]) for r in self._all("SELECT path FROM sources WHERE kind = ?", (kind,))
        )

    # contents

    def content(self, path: str) -> str | None:
        """Return the cached content HTML of the post, document or page ``path``, or
        ``None``.

        Raises :class:`CacheError` for an undecodable row."""
        return self._text("SELECT content FROM contents WHERE path = ?", "content", path)

    def put_content(self, path: str, content: str | bytes) -> None:
        """Store the content HTML of the post, document or page ``path``: the text, or the
        text as :func:`pack_text` packed it (a render worker packs it)."""
        data = pack_text(content) if isinstance(content, str) else content
        self.conn.execute("INSERT OR REPLACE INTO contents VALUES (?, ?)", (path, data))

    def listed_output(self, path: str) -> str | None:
        """Return the cached whole output of the post or document ``path`` (kept while a
        listing reads it: :meth:`put_listed_output`), or ``None``.

        Raises :class:`CacheError` for an undecodable row."""
        return self._text("SELECT output FROM listed_outputs WHERE path = ?", "output", path)

    def put_listed_output(self, path: str, output: str) -> None:
        """Store the whole output of the post or document ``path``."""
        data = pack_text(output)
        self.conn.execute("INSERT OR REPLACE INTO listed_outputs VALUES (?, ?)", (path, data))

    def listed_output_paths(self) -> set[str]:
        """Return the paths whose output :meth:`listed_output` has."""
        return {str(r[0]) for r in self._all("SELECT path FROM listed_outputs", ())}

    def _text(self, sql: str, what: str, path: str) -> str | None:
        row = self._one(sql, (path,))
        if row is None:
            return None
        try:
            return zlib.decompress(row[0]).decode("utf-8", "surrogatepass")
        except (zlib.error, UnicodeDecodeError, TypeError) as exc:
            raise CacheError(f"{what} of {path}: {exc}") from exc

    # outputs and dependencies

    def outputs_of(self, producer: str) -> list[str]:
        """Return the output paths ``producer`` wrote, sorted."""
        rows = self._all("SELECT path FROM outputs WHERE producer = ?", (producer,))
        return sorted(str(r[0]) for r in rows)

    def producers_of(self, path: str) -> list[str]:
        """Return the producers that wrote output ``path``, sorted."""
        rows = self._all("SELECT producer FROM outputs WHERE path = ?", (path,))
        return sorted(str(r[0]) for r in rows)

    def set_outputs(self, producer: str, paths: Iterable[str]) -> None:
        """Replace the outputs of ``producer``."""
        self.conn.execute("DELETE FROM outputs WHERE producer = ?", (producer,))
        self.conn.executemany(
            "INSERT OR IGNORE INTO outputs VALUES (?, ?)", ((producer, p) for p in paths)
        )

    def users(self, key: str) -> set[str]:
        """Return the producers whose last render read dependency ``key``."""
        return {str(r[0]) for r in self._all("SELECT producer FROM deps WHERE key = ?", (key,))}

    def keys_under(self, prefix: str, but: str | None = None) -> set[str]:
        """Return the dependency keys starting with ``prefix`` that some producer read
        (with another fingerprint than ``but``, when given)."""
        # a range over the index: every key from ``prefix`` to the one after its last character
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        sql = "SELECT DISTINCT key FROM deps WHERE key >= ? AND key < ? AND fp IS NOT ?"
        return {str(r[0]) for r in self._all(sql, (prefix, end, but))}

    def deps_of(self, producer: str) -> dict[str, str]:
        """Return ``{key: fingerprint}`` recorded for ``producer``."""
        rows = self._all("SELECT key, fp FROM deps WHERE producer = ?", (producer,))
        return {str(k): str(f) for k, f in rows}

    def set_deps(self, producer: str, deps: Mapping[str, str]) -> None:
        """Replace the dependencies of ``producer``."""
        self.conn.execute("DELETE FROM deps WHERE producer = ?", (producer,))
        self.conn.executemany(
            "INSERT INTO deps VALUES (?, ?, ?)", ((producer, k, f) for k, f in deps.items())
        )

    def set_render_warnings(
        self, producer: str, warnings: Iterable[tuple[str, int | None, str]]
    ) -> None:
        """Replace the ``(path, line, message)`` warnings ``producer``'s render gave."""
        self.conn.execute("DELETE FROM rwarnings WHERE producer = ?", (producer,))
        rows = ((producer, path, line, message) for path, line, message in warnings)
        self.conn.executemany("INSERT INTO rwarnings VALUES (?, ?, ?, ?)", rows)

    def render_warnings(self) -> list[tuple[str, int | None, str]]:
        """Return every render warning as ``(path, line, message)``."""
        rows = self._all("SELECT path, line, message FROM rwarnings", ())
        return [(str(p), None if n is None else int(n), str(m)) for p, n, m in rows]

    def collisions(self) -> list[str]:
        """Return output paths written by more than one producer, sorted."""
        sql = "SELECT path FROM outputs GROUP BY path HAVING count(*) > 1 ORDER BY path"
        return [str(r[0]) for r in self._all(sql, ())]

    def forget(self, producer: str) -> None:
        """Drop ``producer``'s outputs, dependencies, render warnings and listed output."""
        for table in ("outputs", "deps", "rwarnings"):
            self.conn.execute(f"DELETE FROM {table} WHERE producer = ?", (producer,))
        self.conn.execute("DELETE FROM listed_outputs WHERE path = ?", (producer,))

    # links (:mod:`deploybot.render.links`)

    def put_links(
        self, page: str, links: Iterable[tuple[str, str, int | None]], dropped: int
    ) -> None:
        """Replace the links of the output ``page`` by ``(target, link, line)`` rows, not yet
        checked, and the count of those ``dropped`` past the caps."""
        self.drop_links(page)
        self.conn.executemany(
            "INSERT INTO links VALUES (?, ?, ?, ?, NULL)", ((page, *row) for row in links)
        )
        if dropped:
            self.conn.execute("INSERT INTO link_drops VALUES (?, ?)", (page, dropped))

    def drop_links(self, page: str) -> None:
        """Forget the links of the output ``page`` (removed, or no longer a page)."""
        self.conn.execute("DELETE FROM links WHERE page = ?", (page,))
        self.conn.execute("DELETE FROM link_drops WHERE page = ?", (page,))

    def mark_broken(self, marks: Iterable[tuple[str, bool]]) -> None:
        """Set every link to each ``(target, broken)`` target broken or not."""
        self.conn.executemany(
            "UPDATE links SET broken = ? WHERE target = ?", ((int(b), t) for t, b in marks)
        )

    def output_paths(self) -> set[str]:
        """Return every output path some producer wrote (the built tree)."""
        return {str(r[0]) for r in self._all("SELECT DISTINCT path FROM outputs", ())}

    def broken_links(self, limit: int) -> tuple[list[tuple[str, str, int | None]], int, int]:
        """Return the first ``limit`` broken links as ``(page, link, line)`` sorted by page
        and line, how many there are, and on how many pages."""
        rows = self._all(
            "SELECT page, link, line FROM links WHERE broken = 1 ORDER BY page, line LIMIT ?",
            (limit,),
        )
        count = self._one("SELECT count(*), count(DISTINCT page) FROM links WHERE broken = 1", ())
        found = [(str(p), str(k), None if n is None else int(n)) for p, k, n in rows]
        return found, int(count[0]), int(count[1])

    def link_drops(self) -> list[tuple[str, int]]:
        """Return ``(page, dropped)`` for each page with links past the caps, by page."""
        rows = self._all("SELECT page, dropped FROM link_drops ORDER BY page", ())
        return [(str(p), int(d)) for p, d in rows]

    def _one(self, sql: str, args: Iterable[Any]) -> Any:
        try:
            return self.conn.execute(sql, tuple(args)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise CacheError(str(exc)) from exc

    def _iter(self, sql: str, args: Iterable[Any]) -> Iterator[Any]:
        try:
            yield from self.conn.execute(sql, tuple(args))
        except sqlite3.DatabaseError as exc:
            raise CacheError(str(exc)) from exc

    def _all(self, sql: str, args: Iterable[Any]) -> list[Any]:
        try:
            return self.conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise CacheError(str(exc)) from exc


def pack_text(text: str) -> bytes:
    """Return ``text`` as the cache stores a content or an output (UTF-8, zlib level 1)."""
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _connect(path: Path | None, durable: bool = True) -> sqlite3.Connection:
    if path is not None and not path.exists():
        # Private (0600); sqlite gives its journal the database file's mode.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    conn = sqlite3.connect(":memory:" if path is None else str(path), isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={'DELETE' if durable else 'MEMORY'}")
    conn.execute(f"PRAGMA synchronous={'NORMAL' if durable else 'OFF'}")
    return conn


def _version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0])


def _loads(data: bytes) -> Any:
    try:
        return pickle.loads(data)
    except MemoryError:
        raise  # the row may be fine: the machine is out of memory
    except Exception as exc:  # any other unpickling failure means a corrupt row
        raise CacheError(f"cannot decode a cache row: {exc}") from exc


def _source_row(row: Any) -> SourceRow:
    path, blob, kind, published, date_us, model, warnings = row
    return SourceRow(
        str(path),
        str(blob),
        str(kind),
        bool(published),
        int(date_us),
        None if model is None else _loads(model),
        () if warnings is None else tuple(_loads(warnings)),
    )
