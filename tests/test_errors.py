"""The error helpers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deploybot.support.errors import OutOfMemoryError, holds, is_disk_full, memory_error, one_line


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


def test_an_extension_that_could_not_be_mapped_is_out_of_memory() -> None:
    """A lazy ``from lxml import etree`` under the daemon's memory cap failed so, and the
    build job ended in a traceback instead of "out of memory", exit 75 (make test, loaded)."""
    unmapped = ImportError(
        "/v/lxml/etree.cpython-311-x86_64-linux-gnu.so: failed to map segment from shared object"
    )
    assert holds(unmapped, MemoryError)
    reported = memory_error(unmapped, "the build job")
    assert isinstance(reported, OutOfMemoryError)
    assert (str(reported), reported.exit_code) == ("out of memory while running the build job", 75)
    assert not holds(ImportError("No module named 'lxml'"), MemoryError)
    assert not holds(unmapped, OSError)
