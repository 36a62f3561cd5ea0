"""Copy and rename detection (``git log -C``) against git itself, on made-up cases that
stress the scoring: ties between sources, the 50% threshold, more than four candidates per
destination, one source copied many times, destinations scored in batches; and the fast
chunk hashing against git's loop.
"""

from __future__ import annotations

import hashlib
import random
import tracemalloc
from pathlib import Path

import pytest
from dulwich.objects import Commit as GitCommit
from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.commit_log import BlobReader, tree_changes
from deploybot.notify.gitlog.diff_renames import (
    DST_BATCH,
    FilePair,
    Side,
    detect_copies,
    similarity_percent,
)
from deploybot.notify.gitlog.spanhash import copied_bytes, span_counts, span_counts_bytewise
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


def own(name: bytes, count: int) -> list[bytes]:
    return [b"%s line %02d" % (name, i) for i in range(count)]


def name_status(pairs: list[FilePair]) -> list[bytes]:
    """Our queue as ``git log --name-status`` prints it."""
    out = []
    for p in pairs:
        if p.status in "RC" and p.old is not None and p.new is not None:
            score = b"%03d" % similarity_percent(p.score)
            out.append(b"%s%s\t%s\t%s" % (p.status.encode(), score, p.old.path, p.new.path))
        else:
            side = p.new or p.old
            assert side is not None
            out.append(b"%s\t%s" % (p.status.encode(), side.path))
    return out


def test_batches_of_destinations_pair_as_git_does(repo: Path) -> None:
    """Destinations are read and scored in batches: batches of 1, 3 and the default give
    git's queue. Two destinations tie for their best source: the first in path order takes
    it, the other its second best (batches scored out of order swap them). A small source
    read while a batch of big destinations is scored (close to none of them) is read again
    for a later batch of small ones."""
    big = {k: own(b"big%d" % k, 40) for k in range(4)}  # 520 bytes each
    small, tie = own(b"small", 10), own(b"tie", 10)  # 140 and 120: under half of 520
    old: Tree = {
        b"a/big0.txt": (REG, lines(*big[0])),
        b"a/big1.txt": (REG, lines(*big[1])),
        b"a/big2.txt": (REG, lines(*big[2])),
        b"m/big3.txt": (REG, lines(*big[3])),
        b"t/alt.txt": (REG, lines(*tie[:6], *own(b"alt", 4))),
        b"t/tie.txt": (REG, lines(*tie)),
        b"z/small.txt": (REG, lines(*small)),
    }
    new: Tree = {
        b"b/big0.txt": (REG, lines(*big[0][:35], *own(b"edit", 5))),  # renamed, edited
        b"b/big1-copy.txt": (REG, lines(*big[1][:30], *own(b"copy", 10))),
        b"b/big1.txt": old[b"a/big1.txt"],  # an exact rename
        b"c/big3-copy.txt": (REG, lines(*big[3][:32], *own(b"c3", 8))),  # from a modified file
        b"d/new1.txt": (REG, lines(*own(b"new1", 40))),
        b"d/new2.txt": (REG, lines(*own(b"new2", 40))),
        b"m/big3.txt": (REG, lines(*big[3], b"modified")),
        b"t/x1.txt": (REG, lines(*tie[:8], b"same edit")),  # tie: 80%, alt: 60%
        b"t/x2.txt": (REG, lines(*tie[:8], b"same edit")),
        b"zz/small-moved.txt": (REG, lines(*small[:8], b"edited")),
    }
    text = renamed(repo, "refs/heads/batches", old, new)
    assert b"rename from a/big0.txt\nrename to b/big0.txt" in text
    want = git(repo, "log", "-C", "--name-status", "--format=", "-1", "refs/heads/batches")
    assert b"R080\tt/tie.txt\tt/x1.txt\nR060\tt/alt.txt\tt/x2.txt\n" in want
    assert b"\tz/small.txt\tzz/small-moved.txt\n" in want
    with Repo(str(repo)) as r:
        commit = r[b"refs/heads/batches"]
        assert isinstance(commit, GitCommit)
        parent = r[commit.parents[0]]
        assert isinstance(parent, GitCommit)
        changes = tree_changes(r, parent.tree, commit.tree)
        reader = BlobReader(r)
        for batch in (1, 3, DST_BATCH):
            got = detect_copies(changes, reader.load, batch=batch)
            assert name_status(got) == want.splitlines(), batch


def _page(rng: random.Random, pool: list[bytes]) -> bytes:
    return lines(*rng.sample(pool, 150))


def _added_pages(count: int) -> tuple[list[FilePair], dict[bytes, bytes]]:
    """``count`` new pages of about 6 KB next to 5 edited ones, none alike: each page takes
    150 of the same 1,000 lines, so the chunk memo stays small and the chunk counts of the
    destinations are what grows with them."""
    rng = random.Random(7)
    pool = [b"<p>shared line %04d of a site's pages</p>" % i for i in range(1000)]
    blobs: dict[bytes, bytes] = {}

    def side(path: bytes, data: bytes) -> Side:
        sha = hashlib.sha1(data).hexdigest().encode()
        blobs[sha] = data
        return Side(path, REG, sha)

    pairs = [
        FilePair(side(b"m/%d" % k, _page(rng, pool)), side(b"m/%d" % k, _page(rng, pool)))
        for k in range(5)
    ]
    pairs += [FilePair(None, side(b"p/%05d" % k, _page(rng, pool)), "A") for k in range(count)]
    return pairs, blobs


def _peak(count: int) -> int:
    """Peak traced bytes of :func:`detect_copies` on :func:`_added_pages` (the pages
    themselves made before, not counted)."""
    pairs, blobs = _added_pages(count)
    tracemalloc.start()
    try:
        found = detect_copies(pairs, blobs.__getitem__)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [p.status for p in found] == ["M"] * 5 + ["A"] * count  # all scored, none alike
    return peak


def test_rename_detection_memory_is_bounded_by_the_batch() -> None:
    """The destinations' chunk counts are held a batch at a time, not all at once: with
    four times the destinations past a batch, the peak barely grows."""
    one, four = _peak(DST_BATCH), _peak(4 * DST_BATCH)
    assert four < 1.3 * one, (one, four)


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
