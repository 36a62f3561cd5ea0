"""The ``--stat`` block: fixed vectors (notifier-research section 4) and git as the oracle."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.diffstat import (
    StatEntry,
    char_width,
    format_diffstat,
    print_name,
    quote_path,
    rename_name,
    scale_linear,
    str_width,
    summary_line,
)

GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}
GIT_ENV.pop("COLUMNS", None)


def test_single_file_graph_grows_to_fill_the_line() -> None:
    line = format_diffstat([StatEntry("a.txt", 200, 0)])[0]
    assert line == " a.txt | 200 " + "+" * 66
    assert len(line) == 79


def test_small_change_is_not_scaled() -> None:
    assert format_diffstat([StatEntry("c.txt", 60, 0)])[0] == " c.txt | 60 " + "+" * 60


def test_tvm_email_stat_at_width_80() -> None:
    entries = [
        StatEntry(
            "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html", 8, 8
        ),
        StatEntry("2020/07/14/bert-pytorch-tvm.html", 16, 16),
        StatEntry("atom.xml", 25, 25),
        StatEntry("rss.xml", 26, 26),
    ]
    assert format_diffstat(entries) == [
        " ...s-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html | 16 +++----",
        " 2020/07/14/bert-pytorch-tvm.html                   | 32 ++++++-------",
        " atom.xml                                           | 50 ++++++++++-----------",
        " rss.xml                                            | 52 +++++++++++-----------",
        " 4 files changed, 75 insertions(+), 75 deletions(-)",
    ]


def test_big_change_next_to_a_long_name() -> None:
    lines = format_diffstat([StatEntry("big.txt", 605, 494), StatEntry("d/" + "x" * 60, 1, 0)])
    assert lines[0] == " big.txt" + " " * 43 + " | 1099 " + "+" * 11 + "-" * 9


@pytest.mark.parametrize(
    ("files", "ins", "dels", "text"),
    [
        (1, 1, 0, " 1 file changed, 1 insertion(+)"),
        (2, 0, 3, " 2 files changed, 3 deletions(-)"),
        (1, 0, 0, " 1 file changed, 0 insertions(+), 0 deletions(-)"),
        (4, 75, 75, " 4 files changed, 75 insertions(+), 75 deletions(-)"),
    ],
)
def test_summary_line(files: int, ins: int, dels: int, text: str) -> None:
    assert summary_line(files, ins, dels) == text


def test_names() -> None:
    assert quote_path(b"plain/name.txt") is None
    assert quote_path("café.txt".encode()) == '"caf\\303\\251.txt"'
    assert quote_path(b'a"b\\c\td\x7f') == '"a\\"b\\\\c\\td\\177"'
    assert rename_name(b"a/b/c.txt", b"a/d/c.txt") == "a/{b => d}/c.txt"
    assert rename_name(b"old.txt", b"new.txt") == "old.txt => new.txt"
    assert rename_name(b"dir/a.txt", b"dir/sub/a.txt") == "dir/{ => sub}/a.txt"
    assert print_name(b"x", b"x") == "x"
    assert scale_linear(0, 20, 100) == 0
    assert scale_linear(1, 20, 100) == 1


def test_each_byte_is_quoted_as_git_quotes_it() -> None:
    """The one-call test for a plain path (``bytes.translate``) agrees with git's rule for
    every byte: controls, ``"``, ``\\``, DEL and bytes from 0x80 need quoting."""
    for c in range(256):
        needs = c < 0x20 or c in (0x22, 0x5C) or c >= 0x7F
        quoted = quote_path(b"a" + bytes([c]) + b"z")
        assert (quoted is not None) == needs, c
        if needs:
            assert quoted is not None and quoted.startswith('"a\\') and quoted.endswith('z"')


@pytest.mark.parametrize(
    "text", ["plain/name.txt", " spaced ", "a\tb", "\x7f", "café", "日本語.md", "e\u0301", ""]
)
def test_the_width_of_a_name_is_the_sum_of_its_characters(text: str) -> None:
    assert str_width(text) == sum(char_width(ch) for ch in text)
    assert str_width("".join(map(chr, range(128)))) == 95  # the printable ASCII


def test_binary_lines() -> None:
    lines = format_diffstat([StatEntry("pic.png", 1234, 0, binary=True), StatEntry("a", 1, 1)])
    assert lines[0] == " pic.png | Bin 0 -> 1234 bytes"
    assert lines[1] == " a       |   2 +-"
    assert lines[2] == " 2 files changed, 1 insertion(+), 1 deletion(-)"


# ---------------------------------------------------------------- git as the oracle

SEGMENTS = ["a", "docs", "2020", "Bringing-AMDGPUs-to-TVM-Stack", "x" * 40, "café", "sp ace"]


@st.composite
def stat_files(draw: st.DrawFn) -> dict[str, tuple[int, int, bool]]:
    """{path: (added, deleted, binary)} for a commit whose stat git will draw."""
    files: dict[str, tuple[int, int, bool]] = {}
    for _ in range(draw(st.integers(1, 5))):
        path = "/".join(draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4)))
        path += draw(st.sampled_from([".html", ".txt", ""]))
        if any(p.startswith(path + "/") or path.startswith(p + "/") for p in files):
            continue  # a file cannot also be a folder
        counts = st.integers(0, 400) if draw(st.booleans()) else st.integers(0, 12)
        added, deleted, binary = draw(counts), draw(counts), draw(st.integers(0, 6)) == 0
        if binary:
            added, deleted = (n if n != 1 else 2 for n in (added, deleted))
        files[path] = (added, deleted, binary)
    return files


def _run(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, input=stdin, capture_output=True, check=True
    )
    return proc.stdout


def _blob(count: int, tag: bytes, binary: bool) -> bytes:
    if binary:  # distinct on both sides whenever count >= 2
        return (tag + b"\0" * count)[:count]
    return b"".join(b"%s%d\n" % (tag, i) for i in range(count))


@pytest.fixture(scope="module")
def stat_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("stat") / "repo.git"
    _run(repo.parent, "init", "-q", "--bare", str(repo))
    return repo


def _commit(repo: Path, files: dict[str, tuple[int, int, bool]]) -> None:
    """Commit old and new versions of each file; identical ones differ in mode only."""
    stream = b"reset refs/heads/s\n"
    for n, side in ((1, 1), (2, 0)):
        stream += b"commit refs/heads/s\nmark :%d\n" % n
        stream += b"committer C <c@x> 0 +0000\ndata 2\nm\n"
        if n == 2:
            stream += b"from :1\n"
        stream += b"deleteall\n"
        for path, (added, deleted, binary) in files.items():
            count = deleted if side else added
            data = _blob(count, b"o" if side else b"n", binary)
            mode = 0o100755 if n == 2 and not added and not deleted else 0o100644
            quoted = '"' + path.encode().decode("latin-1").replace('"', '\\"') + '"'
            stream += b"M %o inline %s\n" % (mode, quoted.encode("latin-1"))
            stream += b"data %d\n%s\n" % (len(data), data)
    _run(repo, "fast-import", "--quiet", "--force", stdin=stream)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=stat_files(), width=st.sampled_from([80, 80, 60, 120, 30]))
def test_stat_matches_git(
    stat_repo: Path, files: dict[str, tuple[int, int, bool]], width: int
) -> None:
    _commit(stat_repo, files)
    proc = subprocess.run(
        ["git", "log", "--stat", "--format=", "-1", "refs/heads/s"],
        cwd=stat_repo,
        env={**GIT_ENV, "COLUMNS": str(width)},
        capture_output=True,
        check=True,
    )
    want = proc.stdout.decode("ascii").splitlines()
    entries = []
    for path in sorted(files, key=lambda p: p.encode()):
        added, deleted, binary = files[path]
        if binary and (added or deleted):  # an empty file is never binary
            entries.append(StatEntry(print_name(path.encode()), added, deleted, binary=True))
        else:
            entries.append(StatEntry(print_name(path.encode()), added, deleted))
    assert format_diffstat(entries, width) == want
