"""Copy and rename detection (``git log -C``) against git itself, on made-up cases that
stress the scoring: ties between sources, the 50% threshold, more than four candidates per
destination, one source copied many times; and the fast chunk hashing against git's loop.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.spanhash import copied_bytes, span_counts, span_counts_bytewise
from tests.test_notify_gitlog import LOG_ARGS, Commit, Tree, check, fast_import, git

REG = 0o100644


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("renames") / "repo"
    git(path.parent, "init", "-q", "--bare", str(path))
    return path


def lines(*items: bytes) -> bytes:
    return b"".join(item + b"\n" for item in items)


TEN = [b"line %d of ten" % i for i in range(10)]  # 10 lines of 14 bytes (with the LF)


def renamed(repo: Path, ref: str, old: Tree, new: Tree) -> bytes:
    """Commit ``old`` then ``new``; check our log text against git's; return git's."""
    fast_import(repo, ref, [Commit(old), Commit(new)])
    check(repo, ref)
    return git(repo, *LOG_ARGS, ref)


def test_exactly_half_the_bytes_is_a_rename(repo: Path) -> None:
    """Score = copied * 60000 // bigger size: 70 of 140 bytes is 30000, git's minimum."""
    half = lines(*TEN[:5], *[b"other %d of tn" % i for i in range(5)])
    text = renamed(repo, "refs/heads/half", {b"a": (REG, lines(*TEN))}, {b"b": (REG, half)})
    assert b"similarity index 50%\nrename from a\nrename to b\n" in text
    less = lines(*TEN[:5], *[b"other %d of ten" % i for i in range(5)])  # 145 bytes: 48%
    text = renamed(repo, "refs/heads/less", {b"a": (REG, lines(*TEN))}, {b"b": (REG, less)})
    assert b"rename from" not in text


def test_tied_sources_pick_as_git_does(repo: Path) -> None:
    """Two deleted sources with the same content, and one with the destination's base
    name: git's slot order and name score decide, and ours the same way."""
    body = lines(*TEN)
    edited = lines(*TEN[:8], b"changed")
    old = {b"x/a.txt": (REG, body), b"y/b.txt": (REG, body), b"z/c.txt": (REG, body)}
    text = renamed(repo, "refs/heads/tie1", old, {b"d/new.txt": (REG, edited)})
    assert b"rename from x/a.txt" in text
    text = renamed(repo, "refs/heads/tie2", old, {b"d/c.txt": (REG, edited)})
    assert b"rename from z/c.txt" in text
    # Two destinations of equal score for one source: the first is the copy.
    text = renamed(
        repo, "refs/heads/tie3", {b"a": (REG, body)}, {b"b": (REG, edited), b"c": (REG, edited)}
    )
    assert b"copy from a\ncopy to b" in text and b"rename from a\nrename to c" in text


def test_more_than_four_candidates_and_modified_sources(repo: Path) -> None:
    """Six sources close to one destination (only four are kept), modified files as
    copy sources, and one source copied to several places."""
    base = [b"shared line %02d" % i for i in range(20)]
    old: dict[bytes, tuple[int, bytes]] = {}
    for k in range(6):
        old[b"src%d" % k] = (
            REG,
            lines(*base[: 14 + k], *[b"own %d %d" % (k, i) for i in range(3)]),
        )
    new: dict[bytes, tuple[int, bytes]] = {
        b"src0": (REG, old[b"src0"][1] + b"modified\n"),
        b"src1": (REG, old[b"src1"][1] + b"modified\n"),
        b"dst": (REG, lines(*base, b"dst's own")),
        b"copy1": (REG, old[b"src5"][1]),
        b"copy2": (REG, old[b"src5"][1] + b"tail\n"),
        b"copy3": (REG, old[b"src5"][1] + b"other tail\n"),
    }
    text = renamed(repo, "refs/heads/many", old, new)
    assert b"rename from src5\nrename to copy1" in text  # the exact match first
    assert b"rename from src4\nrename to dst" in text


WORDS = [b"a", b"b", b"<p>x</p>", b"", b"long " * 20, b"crlf\r", b"\tindent", b"z"]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Tree, Tree]:
    """Up to 6 sources (some deleted, some modified) and up to 5 destinations, each made
    of a source's lines with some replaced, so that scores fall on both sides of 50%."""
    blocks = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)
    old: dict[bytes, tuple[int, bytes]] = {}
    for k in range(draw(st.integers(1, 6))):
        old[b"d%d/s%d.txt" % (k % 2, k)] = (REG, lines(*draw(blocks)))
    new: dict[bytes, tuple[int, bytes]] = {}
    for path, (mode, data) in old.items():
        if draw(st.booleans()):
            new[path] = (mode, data + lines(*draw(blocks)))  # modified: a copy source
    for k in range(draw(st.integers(1, 5))):
        _, data = old[draw(st.sampled_from(sorted(old)))]
        kept = data.split(b"\n")[:-1]
        cut = draw(st.integers(0, len(kept)))
        name = draw(st.sampled_from([b"n%d.txt" % k, b"d1/s%d.txt" % k, b"e/s0.txt"]))
        new.setdefault(name, (REG, lines(*kept[:cut], *draw(blocks))))
    return old, new


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=scenarios())
def test_generated_renames_and_copies_match_git(repo: Path, case: tuple[Tree, Tree]) -> None:
    fast_import(repo, "refs/heads/gen", [Commit(case[0]), Commit(case[1])])
    check(repo, "refs/heads/gen")


CHUNK_BYTES = st.sampled_from([b"a", b"\n", b"\r", b"\r\n", b"\0", b"x" * 63, b"\xc3\xa9", b" "])


@settings(max_examples=500, deadline=None)
@given(data=st.lists(CHUNK_BYTES, max_size=80).map(b"".join), memo=st.booleans())
def test_span_counts_are_gits_loop(data: bytes, memo: bool) -> None:
    """Chunks cut at LF or 64 bytes, CR before LF skipped in text (not in binary), a last
    short chunk without LF dropped: the fast hashing equals git's byte loop."""
    shared: dict[bytes, int] = {}
    if memo:
        span_counts(data[::-1], shared)  # a memo filled by another file
    assert span_counts(data, shared) == span_counts_bytewise(data)


def test_copied_bytes_is_the_sum_of_the_smaller_counts() -> None:
    a = span_counts(lines(*TEN, b"only in a"))
    b = span_counts(lines(*TEN[:5], b"only in b"))
    assert copied_bytes(a, b, frozenset(a) & frozenset(b)) == 70  # 5 lines of 14 bytes
