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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deploybot.notify.spanhash import copied_bytes, span_counts

MAX_SCORE = 60000
DEFAULT_RENAME_SCORE = 30000
RENAME_LIMIT = 1000
NUM_CANDIDATE_PER_DST = 4
S_IFMT = 0o170000
S_IFREG = 0o100000


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


def similarity_percent(score: int) -> int:
    """``similarity_index``: the percentage git prints for a score."""
    return score * 100 // MAX_SCORE


def _basename_same(a: bytes, b: bytes) -> int:
    return int(a.rsplit(b"/", 1)[-1] == b.rsplit(b"/", 1)[-1])


def _is_reg(mode: int) -> bool:
    return mode & S_IFMT == S_IFREG


class _Detector:
    def __init__(self, srcs: list[_Src], dsts: list[Side], load: Callable[[bytes], bytes]):
        self.srcs = srcs
        self.dsts = dsts
        self.load = load
        self.match: dict[int, tuple[int, int]] = {}  # dst index -> (src index, score)
        self.memo: dict[bytes, int] = {}  # chunk -> hash: pages share their layout's lines

    def record(self, d: int, s: int, score: int) -> None:
        self.srcs[s].used += 1
        self.match[d] = (s, score)

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

    def _source(self, src: _Src, need_counts: bool) -> None:
        """Fill ``src.size`` (and ``src.counts``): git keeps these, not the blob."""
        if src.size is not None and (src.counts is not None or not need_counts):
            return
        data = self.load(src.side.sha)
        src.size = len(data)
        if need_counts:
            src.counts = span_counts(data, self.memo)
            src.keys = frozenset(src.counts)

    def _destination(self, dst: Side) -> tuple[int, dict[int, int], frozenset[int]]:
        """A destination's size, chunk counts and their hashes; a symlink or gitlink is
        never read, as ``estimate_similarity`` gives 0 for it before populating anything
        (a gitlink's commit is not in this repository)."""
        if not _is_reg(dst.mode):
            return 0, {}, frozenset()
        data = self.load(dst.sha)
        counts = span_counts(data, self.memo)
        return len(data), counts, frozenset(counts)

    def estimate(
        self, src: _Src, dst: Side, dst_size: int, dst_counts: dict[int, int], keys: frozenset[int]
    ) -> int:
        """``estimate_similarity`` of one source for one destination (``keys``: the
        destination's chunk hashes)."""
        if not _is_reg(src.side.mode) or not _is_reg(dst.mode):
            return 0
        self._source(src, need_counts=False)
        assert src.size is not None
        max_size = max(src.size, dst_size)
        delta = max_size - min(src.size, dst_size)
        if max_size * (MAX_SCORE - DEFAULT_RENAME_SCORE) < delta * MAX_SCORE:
            return 0
        if not dst_size:
            return 0
        self._source(src, need_counts=True)
        assert src.counts is not None
        copied = copied_bytes(src.counts, dst_counts, src.keys & keys)
        return copied * MAX_SCORE // max_size

    def inexact(self, rename_limit: int) -> None:
        """``diffcore_rename``'s similarity matrix, unless ``too_many_rename_candidates``."""
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
        mx: list[tuple[int, int, int, int]] = []  # (dst, src, score, name_score); dst -1 unused
        for d in todo:
            dst = self.dsts[d]
            dst_size, dst_counts, dst_keys = self._destination(dst)
            slots = [(-1, 0, 0, 0)] * NUM_CANDIDATE_PER_DST
            for s, src in srcs:
                cand = (
                    d,
                    s,
                    self.estimate(src, dst, dst_size, dst_counts, dst_keys),
                    _basename_same(src.side.path, dst.path),
                )
                worst = 0
                for i in range(1, NUM_CANDIDATE_PER_DST):
                    if _score_cmp(slots[i], slots[worst]) > 0:
                        worst = i
                if _score_cmp(slots[worst], cand) > 0:
                    slots[worst] = cand
            mx.extend(slots)
        mx.sort(key=_sort_key)
        for copies in (False, True):
            for d, s, score, _name in mx:
                if d < 0 or score < DEFAULT_RENAME_SCORE:
                    break
                if d in self.match or (not copies and self.srcs[s].used):
                    continue
                self.record(d, s, score)


def _score_cmp(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    """``score_compare``: > 0 when ``a`` sorts after (is worse than) ``b``."""
    if a[0] < 0:
        return int(b[0] >= 0)
    if b[0] < 0:
        return -1
    if a[2] == b[2]:
        return b[3] - a[3]
    return b[2] - a[2]


def _sort_key(m: tuple[int, int, int, int]) -> tuple[int, int, int]:
    return (1, 0, 0) if m[0] < 0 else (0, -m[2], -m[3])


def detect_copies(
    pairs: Sequence[FilePair], load: Callable[[bytes], bytes], rename_limit: int = RENAME_LIMIT
) -> list[FilePair]:
    """Apply ``git log -C`` rename/copy detection to a path-sorted change list.

    Args:
        pairs: the tree diff, sorted by path, statuses ``A``/``D``/``M``/``T``; unchanged
            files (``M`` with equal sides) make it ``--find-copies-harder``.
        load: returns a blob's content from its id. Called once per regular-file
            destination and at most twice per regular-file source (a symlink or gitlink
            pairs only by an exact match of id and mode, so it is never read); nothing
            loaded is kept but sizes and chunk counts.
        rename_limit: ``diff.renameLimit``, git's ``too_many_rename_candidates``: the
            inexact (similarity) matching is skipped when the destinations left after exact
            matching times the sources exceed its square (git 2.39 default 1000, checked
            against git in the tests); 0 or less is unlimited. Under
            ``--find-copies-harder``, git first retries without the unchanged sources.
            Exact matching (same blob) always runs, by blob id: linear in the pairs.

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
    det.inexact(rename_limit)
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
                src = det.srcs[hit[0]]
                kept.append(FilePair(src.side, p.new, "R", hit[1]))
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
