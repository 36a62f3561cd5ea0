"""The error helpers."""

from __future__ import annotations

from deploybot.support.errors import one_line


def test_one_line_error_text() -> None:
    assert one_line(OSError("disk\n  full\r\n")) == "disk full"
    assert one_line(TimeoutError()) == "TimeoutError"
    assert one_line(b"550 5.1.1\r\nno such user") == "550 5.1.1 no such user"
