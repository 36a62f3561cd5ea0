"""The delivery ids already seen, per site, so a replayed (or redelivered) webhook builds
nothing.

A forge keeps a delivery's id when it sends it again (GitHub's ``X-GitHub-Delivery`` on a
redelivery, GitLab's ``Idempotency-Key`` on a retry), and a signature covers no timestamp,
so a captured delivery could be sent again by anyone. An id is new or seen *for a site*:
GitLab sends one ``X-Gitlab-Event-UUID`` to every hook of one event, so two sites built
from one project get the same id, and each must build. The ids live in a small sqlite
file (``<daemon state>/deliveries.sqlite``, mode 0600), kept across restarts and bounded:
past :data:`DEFAULT_CAP` ids the oldest are forgotten (a replay older than that many
deliveries builds once more, which publishes nothing new: the build is a function of the
commit). Only deliveries whose signature verified are recorded, so nobody without the
secret can fill it.

The first version kept ids alone (table ``seen``); such a file is migrated when opened,
its ids kept as seen by every site (site ``""``), oldest first, so no replay of a delivery
made before the upgrade builds.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from deploybot.support.errors import disk_full, is_disk_full

DEFAULT_CAP = 50_000
_PRUNE_EVERY = 100
_ANY_SITE = ""
"""The site of an id recorded by the first version, which did not know it."""


class DeliveryStore:
    """Delivery ids seen per site, in ``path`` (created 0600 with its folder 0700).

    Raises (constructor): DiskFullError when the file cannot be created for lack of space;
    sqlite3.Error for a damaged file.
    """

    def __init__(self, path: Path, cap: int = DEFAULT_CAP) -> None:
        self.path = path
        self.cap = cap
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))  # before sqlite makes it 0644
        os.chmod(path, 0o600)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")  # its -wal/-shm files take the db's mode
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS deliveries "
            "(site TEXT NOT NULL, id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (site, id))"
        )
        self._migrate()
        self._added = 0

    def _migrate(self) -> None:
        """Move the first version's ``seen`` ids into ``deliveries`` (in one transaction)."""
        old = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seen'"
        if self._db.execute(old).fetchone() is None:
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR IGNORE INTO deliveries (site, id, at) "
                "SELECT ?, id, at FROM seen ORDER BY rowid",
                (_ANY_SITE,),
            )
            self._db.execute("DROP TABLE seen")

    def first_time(self, site: str, delivery: str) -> bool:
        """Record ``delivery`` for ``site``; True when that site had not seen it, False
        for a replay.

        Raises:
            DiskFullError: no space to record it.
        """
        try:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO deliveries (site, id, at) SELECT ?, ?, ? WHERE NOT "
                "EXISTS (SELECT 1 FROM deliveries WHERE site = ? AND id = ?)",
                (site, delivery, time.time(), _ANY_SITE, delivery),
            )
            new = cursor.rowcount == 1
            if new:
                self._added += 1
                if self._added % _PRUNE_EVERY == 0 or self._added == 1:
                    self._prune()
        except sqlite3.Error as exc:
            if is_disk_full(exc):
                raise disk_full(exc, self.path) from exc
            raise
        return new

    def _prune(self) -> None:
        """Keep the newest ``cap`` ids (rowids grow with each insert)."""
        self._db.execute(
            "DELETE FROM deliveries WHERE rowid <= (SELECT MAX(rowid) FROM deliveries) - ?",
            (self.cap,),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0])

    def close(self) -> None:
        """Prune to the cap and close the file."""
        self._prune()
        self._db.close()
