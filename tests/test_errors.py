"""The error helpers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deploybot.support.errors import is_disk_full, one_line


def test_one_line_error_text() -> None:
    assert one_line(OSError("disk\n  full\r\n")) == "disk full"
    assert one_line(TimeoutError()) == "TimeoutError"
    assert one_line(b"550 5.1.1\r\nno such user") == "550 5.1.1 no such user"


def test_sqlite_full_is_a_full_disk_and_another_sqlite_error_is_not(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db")
    db.execute("pragma max_page_count = 2")
    with pytest.raises(sqlite3.Error) as full:
        db.execute("create table t (x)")
        db.executemany("insert into t values (?)", [("x" * 4000,)] * 10)
    assert full.value.sqlite_errorcode == sqlite3.SQLITE_FULL and is_disk_full(full.value)
    with pytest.raises(sqlite3.Error) as other:
        db.execute("select * from nowhere")
    assert not is_disk_full(other.value)
    db.close()
