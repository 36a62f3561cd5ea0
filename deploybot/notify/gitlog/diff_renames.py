"""Rename and copy detection as ``git log -C`` does it (git's ``diffcore-rename.c``).

With ``-C`` the rename sources are the deleted files *and* the files modified in the same
commit (not unchanged ones: that would be ``--find-copies-harder``). Destinations are the
added files. Exact matches (same blob id) are paired first, preferring an unused source and
then one with the same base name; then every remaining destination is scored against every
source with git's similarity estimate (``diffcore-delta.c``, :mod:`.spanhash`: chunks of up
to 64 bytes ending at a newline, hashed and counted), the four best candidates per
destination are kept, all candidates are sorted by score (stable, as glibc's merge-sort
``qsort``), and pairs at or above 50% are taken, renames before copies. A source used more
than once, or a modified source, makes copies; the last use of a deleted source is the
rename (``diff.c`` ``diff_resolve_rename_copy``). Everything here is pure: contents come
from ``load``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from deploybot.notify.gitlog.spanhash import CountsBatch, copied_bytes

MAX_SCORE = 60000
DEFAULT_RENAME_SCORE = 30000
RENAME_LIMIT = 1000
NUM_CANDIDATE_PER_DST = 4
DST_BATCH = 64
"""Destinations read, hashed and scored together: rename detection holds the chunk counts of
at most this many destinations (about 30 KB each for a 20 KB page) and of the sources, not
of every file a commit adds. Their candidates are kept in the destinations' order, so the
pairs do not depend on it."""
S_IFMT = 0o170000
S_IFREG = 0o100000


class _Candidate(NamedTuple):
    """One cell of git's similarity matrix (``struct diff_score``): a source for a
    destination, by index; ``dst`` -1 for an empty slot."""

    dst: int
    src: int
    score: int
    same_name: int
    """1 when the two paths have the same base name (the tie-break), else 0."""


class _Match(NamedTuple):
    """The source a destination was paired with (``rename_dst.pair``), and its score."""

    src: int
    score: int


@dataclass(frozen=True)
class Side:
    """One side of a file pair: path, git mode and blob id (40 hex, as bytes)."""

    path: bytes
    mode: int
    sha: bytes


@dataclass
class FilePair:
    """A queued change. ``status``: ``A``, ``D``, ``M``, ``T``, ``R`` or ``C``.

    ``score`` is the similarity (0..60000) for ``R``/``C``; ``old``/``new`` are None for
    an addition/deletion.
    """

    old: Side | None
    new: Side | None
    status: str = "M"
    score: int = 0


@dataclass
class _Src:
    side: Side
    used: int = 0
    unmodified: bool = False  # an unchanged file, a source only under --find-copies-harder
    size: int | None = None
    counts: dict[int, int] | None = field(default=None, repr=False)
    keys: frozenset[int] = field(default=frozenset(), repr=False)

    def set_counts(self, counts: dict[int, int]) -> None:
        self.counts, self.keys = counts, frozenset(counts)


@dataclass
class _Dst:
    """A destination being scored: its base name, size (0 when not a regular file) and
    chunk counts."""

    side: Side
    name: bytes
    size: int = 0
    counts: dict[int, int] = field(default_factory=dict, repr=False)
    keys: frozenset[int] = field(default=frozenset(), repr=False)

    def set_counts(self, counts: dict[int, int]) -> None:
        self.counts, self.keys = counts, frozenset(counts)


def similarity_percent(score: int) -> int:
    """``similarity_index``: the percentage git prints for a score."""
    return score * 100 // MAX_SCORE


def _sizes_close(a: int, b: int) -> bool:
    """``estimate_similarity``'s first cut: sizes too far apart for the minimum score."""
    max_size = max(a, b)
    return max_size * (MAX_SCORE - DEFAULT_RENAME_SCORE) >= (max_size - min(a, b)) * MAX_SCORE


def _basename(path: bytes) -> bytes:
    return path.rsplit(b"/", 1)[-1]


def _basename_same(a: bytes, b: bytes) -> int:
    return int(_basename(a) == _basename(b))


def _is_reg(mode: int) -> bool:
    return mode & S_IFMT == S_IFREG


class _Detector:
    def __init__(self, srcs: list[_Src], dsts: list[Side], load: Callable[[bytes], bytes]):
        self.srcs = srcs
        self.dsts = dsts
        self.load = load
        self.match: dict[int, _Match] = {}  # by destination index
        self.memo: dict[bytes, int] = {}  # chunk -> hash: pages share their layout's lines

    def record(self, d: int, s: int, score: int) -> None:
        self.srcs[s].used += 1
        self.match[d] = _Match(s, score)

    def exact(self) -> None:
        """``find_exact_renames``: sources looked up by blob id (git's hash table), in order."""
        by_sha: dict[bytes, list[int]] = {}
        for s, src in enumerate(self.srcs):
            by_sha.setdefault(src.side.sha, []).append(s)
        for d, dst in enumerate(self.dsts):
            best, best_score, tries = -1, -1, 100
            for s in by_sha.get(dst.sha, ()):
                side = self.srcs[s].side
                if (not _is_reg(side.mode) or not _is_reg(dst.mode)) and side.mode != dst.mode:
                    continue
                score = (0 if self.srcs[s].used else 1) + _basename_same(side.path, dst.path)
                if score > best_score:
                    best, best_score = s, score
                    if score == 2:
                        break
                tries -= 1
                if not tries:
                    break
            if best >= 0:
                self.record(d, best, MAX_SCORE)

    def prepare(self, todo: list[int], srcs: list[tuple[int, _Src]]) -> list[_Dst]:
        """Read the destinations ``todo`` (one batch) and the regular sources not read yet:
        sizes, and chunk counts (hashed together, :class:`.spanhash.CountsBatch`) for the
        destinations and for each source whose size is close enough to one of theirs to be
        scored. A source read for an earlier batch but not hashed (close to none of its
        destinations) is read again once a batch comes close; a hashed one keeps its
        counts. A symlink or gitlink is never read, as ``estimate_similarity`` gives 0 for
        it before populating anything (a gitlink's commit is not in this repository)."""
        batch = CountsBatch(self.memo)
        out: list[_Dst] = []
        for d in todo:
            side = self.dsts[d]
            dst = _Dst(side, _basename(side.path))
            out.append(dst)
            if _is_reg(side.mode):
                data = self.load(side.sha)
                dst.size = len(data)
                batch.add(data, dst.set_counts)
        sizes = sorted(dst.size for dst in out if dst.size)
        for _, src in srcs:
            if src.counts is not None or not _is_reg(src.side.mode):
                continue
            if src.size is not None and not _near(sizes, src.size):
                continue  # read before, and still too far from every destination
            data = self.load(src.side.sha)
            src.size = len(data)
            if _near(sizes, src.size):
                batch.add(data, src.set_counts)
        batch.flush()
        return out

    def estimate(self, src: _Src, dst: _Dst) -> int:
        """``estimate_similarity`` of one source for one destination (both prepared)."""
        if src.size is None or not dst.size or not _sizes_close(src.size, dst.size):
            return 0  # not regular files, or sizes too far apart
        assert src.counts is not None
        copied = copied_bytes(src.counts, dst.counts, src.keys & dst.keys)
        return copied * MAX_SCORE // max(src.size, dst.size)

    def inexact(self, rename_limit: int, batch: int) -> None:
        """``diffcore_rename``'s similarity matrix, unless ``too_many_rename_candidates``;
        the destinations are prepared and scored ``batch`` at a time, in order (git's
        matrix is the same rows, its stable sort sees them in the same order)."""
        todo = [d for d in range(len(self.dsts)) if d not in self.match]
        if not todo:
            return
        srcs = list(enumerate(self.srcs))
        if rename_limit > 0 and len(todo) * len(srcs) > rename_limit * rename_limit:
            # git: under --find-copies-harder, retry without the unchanged sources (the -C
            # matrix); plain -C has none, so it gives up here.
            srcs = [(s, src) for s, src in srcs if not src.unmodified]
            if len(srcs) == len(self.srcs) or len(todo) * len(srcs) > rename_limit**2:
                return
        mx: list[_Candidate] = []
        names = [_basename(src.side.path) for _, src in srcs]
        for start in range(0, len(todo), batch):
            group = todo[start : start + batch]
            for d, dst in zip(group, self.prepare(group, srcs), strict=True):
                mx.extend(self.candidates(d, dst, srcs, names))
        mx.sort(key=_sort_key)
        for copies in (False, True):
            for d, s, score, _name in mx:
                if d < 0 or score < DEFAULT_RENAME_SCORE:
                    break
                if d in self.match or (not copies and self.srcs[s].used):
                    continue
                self.record(d, s, score)

    def candidates(
        self, d: int, dst: _Dst, srcs: list[tuple[int, _Src]], names: list[bytes]
    ) -> list[_Candidate]:
        """git's four slots for destination ``d`` (``score_compare``): a candidate replaces
        the first worst slot when strictly better (score, then the same base name)."""
        slots = [_Candidate(-1, 0, 0, 0)] * NUM_CANDIDATE_PER_DST
        keys = [(1, 0, 0)] * NUM_CANDIDATE_PER_DST  # the worse sort later, empty slots last
        worst = 0
        for (s, src), name in zip(srcs, names, strict=True):
            score = self.estimate(src, dst)
            same = int(name == dst.name)
            key = (0, -score, -same)
            if keys[worst] > key:
                keys[worst], slots[worst] = key, _Candidate(d, s, score, same)
                worst = max(range(NUM_CANDIDATE_PER_DST), key=keys.__getitem__)
        return slots


def _near(sizes: list[int], size: int) -> bool:
    """Some size in ``sizes`` (sorted) is within [size / 2, 2 * size] (:func:`_sizes_close`)."""
    at = bisect.bisect_left(sizes, (size + 1) // 2)
    return at < len(sizes) and sizes[at] <= 2 * size


def _sort_key(m: _Candidate) -> tuple[int, int, int]:
    return (1, 0, 0) if m.dst < 0 else (0, -m.score, -m.same_name)


def detect_copies(
    pairs: Sequence[FilePair],
    load: Callable[[bytes], bytes],
    rename_limit: int = RENAME_LIMIT,
    *,
    batch: int = DST_BATCH,
) -> list[FilePair]:
    """Apply ``git log -C`` rename/copy detection to a path-sorted change list.

    Args:
        pairs: the tree diff, sorted by path, statuses ``A``/``D``/``M``/``T``; unchanged
            files (``M`` with equal sides) make it ``--find-copies-harder``.
        load: returns a blob's content from its id. Called once per regular-file
            destination left after exact matching and once per such source (twice when
            an earlier batch of destinations was too far from its size to hash it; a
            symlink or gitlink pairs only by an exact match of id and mode, so it is never
            read); nothing loaded is kept but sizes and chunk counts.
        rename_limit: ``diff.renameLimit``, git's ``too_many_rename_candidates``: the
            inexact (similarity) matching is skipped when the destinations left after exact
            matching times the sources exceed its square (git 2.39 default 1000, checked
            against git in the tests); 0 or less is unlimited. Under
            ``--find-copies-harder``, git first retries without the unchanged sources.
            Exact matching (same blob) always runs, by blob id: linear in the pairs.
        batch: how many destinations are read and scored together (:data:`DST_BATCH`);
            memory holds their chunk counts, not every destination's. The result does
            not depend on it.

    Returns:
        The new queue, in the same order, with matched additions turned into ``R``/``C``
        pairs and deletions that became renames dropped.
    """
    srcs: list[_Src] = []
    src_of: dict[bytes, int] = {}
    dsts: list[Side] = []
    for p in pairs:
        if p.old is None and p.new is not None:
            dsts.append(p.new)
        elif p.old is not None:
            src_of[p.old.path] = len(srcs)
            srcs.append(_Src(p.old, used=0 if p.new is None else 1, unmodified=p.old == p.new))
    if not dsts or not srcs:
        return list(pairs)
    det = _Detector(srcs, dsts, load)
    det.exact()
    det.inexact(rename_limit, max(batch, 1))
    return _rebuild(pairs, det, src_of)


def _rebuild(pairs: Sequence[FilePair], det: _Detector, src_of: dict[bytes, int]) -> list[FilePair]:
    """Rebuild the queue (``diffcore_rename``'s last loop), then name renames and copies."""
    kept: list[FilePair] = []
    d = 0
    for p in pairs:
        if p.old is None and p.new is not None:
            hit = det.match.get(d)
            d += 1
            if hit is None:
                kept.append(p)
            else:
                src = det.srcs[hit.src]
                kept.append(FilePair(src.side, p.new, "R", hit.score))
        elif p.old is not None and p.new is None and det.srcs[src_of[p.old.path]].used:
            continue  # a deleted file that was renamed away
        else:
            kept.append(p)
    for p in kept:
        if p.status == "R" and p.old is not None:
            src = det.srcs[src_of[p.old.path]]
            src.used -= 1
            p.status = "C" if src.used > 0 else "R"
    return kept
