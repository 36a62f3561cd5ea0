"""The line diff against git itself: ``git diff --no-index`` on the same two files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.diff import (
    count_changes,
    diff_lines,
    is_binary,
    split_lines,
    unified_diff,
)
from deploybot.notify.gitlog.diff_slider import get_indent

GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}
GIT_ENV.pop("COLUMNS", None)

# Lines chosen to make many equal lines (sliders, multi-matches), indentation, blank runs,
# candidates for the function text, CR, long lines and non-ASCII.
LINES = [
    b"",
    b"a",
    b"b",
    b"}",
    b"{",
    b"    return 1;",
    b"\tif (x) {",
    b"def f(x):",
    b"_private = 1",
    b"$var",
    b"  ",
    b"int main(void) {",
    b"x\r",
    b"caf\xc3\xa9",
    b"\xff\xfe",
    b"Long " + b"word " * 30,
    b"\x0bvt",
]


def git_diff(tmp: Path, old: bytes, new: bytes, *args: str) -> bytes:
    """Run ``git diff --no-index`` on two files and return its stdout."""
    (tmp / "old").write_bytes(old)
    (tmp / "new").write_bytes(new)
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", *args, "old", "new"],
        cwd=tmp,
        env=GIT_ENV,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def git_hunks(tmp: Path, old: bytes, new: bytes) -> bytes:
    """The hunk part of git's diff (after ``+++``), or b"" when equal."""
    out = git_diff(tmp, old, new)
    marker = b"\n+++ b/new\n"
    return out[out.index(marker) + len(marker) :] if marker in out else b""


def git_numstat(tmp: Path, old: bytes, new: bytes) -> tuple[int, int]:
    out = git_diff(tmp, old, new, "--numstat")
    if not out:
        return 0, 0
    added, deleted, _ = out.split(b"\t", 2)
    return int(added), int(deleted)


def texts() -> st.SearchStrategy[bytes]:
    return st.builds(
        lambda lines, final: b"\n".join(lines) + (b"\n" if final and lines else b""),
        st.lists(st.sampled_from(LINES), max_size=40),
        st.booleans(),
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """An old text and an edited copy: inserted, deleted, replaced and moved line blocks."""
    old_lines = draw(st.lists(st.sampled_from(LINES), max_size=50))
    new_lines = list(old_lines)
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(["ins", "del", "rep", "move"]))
        i = draw(st.integers(0, len(new_lines)))
        j = draw(st.integers(i, min(len(new_lines), i + 6)))
        block = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=6))
        if op == "ins":
            new_lines[i:i] = block
        elif op == "del":
            del new_lines[i:j]
        elif op == "rep":
            new_lines[i:j] = block
        else:
            moved = new_lines[i:j]
            del new_lines[i:j]
            k = draw(st.integers(0, len(new_lines)))
            new_lines[k:k] = moved
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    final_old, final_new = draw(st.booleans()), draw(st.booleans())
    old = eol.join(old_lines) + (eol if final_old and old_lines else b"")
    new = eol.join(new_lines) + (eol if final_new and new_lines else b"")
    return old, new


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=pairs())
def test_hunks_match_git(tmp_path: Path, pair: tuple[bytes, bytes]) -> None:
    old, new = pair
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(old=texts(), new=texts())
def test_unrelated_texts_match_git(tmp_path: Path, old: bytes, new: bytes) -> None:
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=pairs())
def test_counts_match_numstat(tmp_path: Path, pair: tuple[bytes, bytes]) -> None:
    old, new = pair
    if is_binary(old) or is_binary(new):
        return
    assert count_changes(old, new) == git_numstat(tmp_path, old, new)


def test_big_file_with_common_tail_counts_like_git(tmp_path: Path) -> None:
    """--stat trims the common tail in 1024-byte blocks before diffing (trim_common_tail)."""
    body = b"".join(b"line %d\n" % (i % 7) for i in range(3000))
    old = b"head\n" + body
    new = b"other\nhead\n" + body.replace(b"line 3\n", b"line three\n", 5)
    assert count_changes(old, new) == git_numstat(tmp_path, old, new)
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)


def test_large_scattered_edits_match_git(tmp_path: Path) -> None:
    """Hundreds of edits: exercises xdiff's cost limit and snake heuristics."""
    old = b"".join(b"row %d\n" % i for i in range(4000))
    new_lines = [b"row %d\n" % i for i in range(4000)]
    for i in range(0, 4000, 7):
        new_lines[i] = b"changed %d\n" % i
    for i in range(3, 4000, 11):
        new_lines[i] = b""
    new = b"".join(new_lines)
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)
    assert count_changes(old, new) == git_numstat(tmp_path, old, new)


def test_hunk_header_rules() -> None:
    hunks = diff_lines(b"a\n", b"a\nb\n")
    assert hunks[0].header() == b"@@ -1 +1,2 @@\n"
    assert diff_lines(b"", b"x\n")[0].header() == b"@@ -0,0 +1 @@\n"
    assert diff_lines(b"x\n", b"")[0].header() == b"@@ -1 +0,0 @@\n"


def test_function_text_is_cut_to_80_bytes_then_right_trimmed() -> None:
    func = b"function " + b"x" * 70 + b"  y" * 5
    old = func + b"\n" + b"".join(b"  %d\n" % i for i in range(10))
    new = old.replace(b"  8\n", b"  eight\n")
    assert diff_lines(old, new)[0].function == func[:80].rstrip()


def test_no_newline_marker() -> None:
    assert unified_diff(b"a", b"b") == (
        b"@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize(
    ("line", "indent"),
    [(b"\n", -1), (b"  x\n", 2), (b"\tx", 8), (b"  \tx", 8), (b"\x0bx", 0), (b" " * 300, 200)],
)
def test_get_indent(line: bytes, indent: int) -> None:
    assert get_indent(line) == indent


def test_split_lines_splits_at_lf_only() -> None:
    assert split_lines(b"a\rb\r\nc") == [b"a\rb\r\n", b"c"]
    assert is_binary(b"x" * 7999 + b"\0")
    assert not is_binary(b"x" * 8000 + b"\0")


# ---------------------------------------------------------------- hunk header function text

CHARS = {
    "2-byte": "é".encode(),
    "3-byte": "€".encode(),
    "4-byte": "😀".encode(),
    "wide CJK": "日".encode(),
}
INVALID = {
    "Latin-1": b"caf\xe9 x",
    "lone continuation": b"a\x80b",
    "truncated 3-byte": b"a\xe2\x82 b",
    "truncated 4-byte": b"a\xf0\x9f\x98 b",
    "overlong 2-byte": b"a\xc0\xafb",
    "overlong 3-byte": b"a\xe0\x80\xafb",
    "overlong 4-byte": b"a\xf0\x80\x80\xafb",
    "surrogate": b"a\xed\xa0\x80b",
    "U+FFFE": b"a\xef\xbf\xbeb",
    "U+FFFF": b"a\xef\xbf\xbfb",
    "U+FFFD is fine": b"a\xef\xbf\xbdb",
    "above U+10FFFF": b"a\xf4\x90\x80\x80b",
    "F5 lead": b"a\xf5\x80\x80\x80b",
    "FF": b"a\xffb",
}


def _func_change(func: bytes) -> tuple[bytes, bytes]:
    """A file whose first line is ``func`` and an edit 8 lines below it (one hunk)."""
    body = b"".join(b"  %d\n" % i for i in range(10))
    old = func + b"\n" + body
    return old, old.replace(b"  8\n", b"  eight\n")


@pytest.mark.parametrize("char", list(CHARS))
@pytest.mark.parametrize("pad", range(74, 82))
def test_function_text_cut_inside_a_character_drops_it(tmp_path: Path, char: str, pad: int) -> None:
    """Issue 8.11b: the 80-byte cut (``def_ff``) lands inside a multibyte character; git's
    ``sane_truncate_line`` (diff.c) drops the partial character instead of printing it."""
    old, new = _func_change(b"f" + b"x" * (pad - 1) + CHARS[char] * 3 + b" tail")
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)


@pytest.mark.parametrize("name", list(INVALID))
def test_function_text_stops_at_invalid_utf8(tmp_path: Path, name: str) -> None:
    """git cuts the whole hunk header at the first byte that does not start a valid UTF-8
    character (``pick_one_utf8_char`` in utf8.c: overlong forms, surrogates, U+FFFE/U+FFFF
    and code points above U+10FFFF are invalid too)."""
    old, new = _func_change(b"func " + INVALID[name] + b" tail")
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)


# Pieces of function lines: ASCII, 2/3/4-byte characters, a Latin-1 byte, a lone lead byte,
# a lone continuation byte, CR and blanks, so that the 80-byte cut and the UTF-8 check meet
# every kind of boundary.
FUNC_PIECES = [b"x", b"yz", b" ", b"\t", b"\r", "é".encode(), "€".encode(), "😀".encode()]
FUNC_PIECES += [b"\xe9", b"\xc3", b"\x80", b"\xef\xbf\xbe"]


@st.composite
def func_lines(draw: st.DrawFn) -> bytes:
    """A line that may give the hunk header's function text, 0 to ~200 bytes long."""
    start = draw(st.sampled_from([b"f", b"_", b"$", b"Z", b" ", b"\t", "é".encode()]))
    return start + b"".join(draw(st.lists(st.sampled_from(FUNC_PIECES), max_size=70)))


@st.composite
def long_line(draw: st.DrawFn) -> bytes:
    """A line of 1,000 to 20,000 bytes (minified HTML, a data URI), maybe with one change."""
    size = draw(st.integers(1000, 20000))
    line = (b"<p>minified " * (size // 12 + 1))[:size]
    at = draw(st.integers(0, size - 1))
    return line[:at] + draw(st.sampled_from([b"", b"X", "é".encode()])) + line[at + 1 :]


@st.composite
def rich_pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Old and new texts mixing function lines, very long lines and short body lines, with
    LF or CRLF endings: line-level edits of a common base."""
    pool = draw(st.lists(st.one_of(func_lines(), long_line()), min_size=1, max_size=6))
    pool += [b"  body", b"", b"}", b"  return 0;"]
    old_lines = draw(st.lists(st.sampled_from(pool), max_size=40))
    new_lines = list(old_lines)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(new_lines)))
        j = draw(st.integers(i, min(len(new_lines), i + 3)))
        new_lines[i:j] = draw(st.lists(st.sampled_from(pool), max_size=3))
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    old = eol.join(old_lines) + (eol if old_lines and draw(st.booleans()) else b"")
    new = eol.join(new_lines) + (eol if new_lines and draw(st.booleans()) else b"")
    return old, new


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=rich_pairs())
def test_function_lines_crlf_and_long_lines_match_git(
    tmp_path: Path, pair: tuple[bytes, bytes]
) -> None:
    old, new = pair
    assert unified_diff(old, new) == git_hunks(tmp_path, old, new)
    assert count_changes(old, new) == git_numstat(tmp_path, old, new)
