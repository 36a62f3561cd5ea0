"""The line-matching core of git's default diff: xdiff's Myers with its speed-ups.

This is a pure-Python re-implementation, written from reading git's ``xdiff/xprepare.c``
(``xdl_trim_ends``, ``xdl_cleanup_records``, ``xdl_clean_mmatch``) and ``xdiff/xdiffi.c``
(``xdl_split``, ``xdl_recs_cmp``, ``xdl_do_diff``). It must make the same choices as git,
including the non-minimal ones (discarded lines, the "snake" and cost-limit heuristics),
because those choices decide which lines show as changed.

Records are whole lines *with* their newline, compared as bytes; each distinct line gets a
class number, and all comparisons below are on class numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_EQLIMIT = 1024  # XDL_MAX_EQLIMIT
SIMSCAN_WINDOW = 100  # XDL_SIMSCAN_WINDOW
KPDIS_RUN = 4  # XDL_KPDIS_RUN
MAX_COST_MIN = 256  # XDL_MAX_COST_MIN
HEUR_MIN_COST = 256  # XDL_HEUR_MIN_COST
SNAKE_CNT = 20  # XDL_SNAKE_CNT
K_HEUR = 4  # XDL_K_HEUR
LINE_MAX = (1 << 63) - 1  # XDL_LINE_MAX on a 64-bit long


def bogosqrt(n: int) -> int:
    """xdiff's ``xdl_bogosqrt``: a power of two near the square root of ``n``."""
    i = 1
    while n > 0:
        i <<= 1
        n >>= 2
    return i


def classify(old: Sequence[bytes], new: Sequence[bytes]) -> tuple[list[int], list[int]]:
    """Map each line of both files to a class number; equal lines get equal numbers."""
    classes: dict[bytes, int] = {}
    a = [classes.setdefault(line, len(classes)) for line in old]
    b = [classes.setdefault(line, len(classes)) for line in new]
    return a, b


def _trim_ends(a: list[int], b: list[int]) -> tuple[int, int, int]:
    """``xdl_trim_ends``: return (dstart, dend1, dend2) after dropping the common ends."""
    lim = min(len(a), len(b))
    i = 0
    while i < lim and a[i] == b[i]:
        i += 1
    start = i
    lim -= start
    j = 0
    while j < lim and a[len(a) - 1 - j] == b[len(b) - 1 - j]:
        j += 1
    return start, len(a) - j - 1, len(b) - j - 1


def _clean_mmatch(dis: list[int], i: int, s: int, e: int) -> bool:
    """``xdl_clean_mmatch``: should multi-match line ``i`` be discarded with its neighbours?"""
    s = max(s, i - SIMSCAN_WINDOW)
    e = min(e, i + SIMSCAN_WINDOW)
    rdis0, rpdis0 = 0, 1
    r = 1
    while i - r >= s:
        v = dis[i - r]
        if v == 0:
            rdis0 += 1
        elif v == 2:
            rpdis0 += 1
        else:
            break
        r += 1
    if rdis0 == 0:
        return False
    rdis1, rpdis1 = 0, 1
    r = 1
    while i + r <= e:
        v = dis[i + r]
        if v == 0:
            rdis1 += 1
        elif v == 2:
            rpdis1 += 1
        else:
            break
        r += 1
    if rdis1 == 0:
        return False
    rdis1 += rdis0
    rpdis1 += rpdis0
    return rpdis1 * KPDIS_RUN < rpdis1 + rdis1


def _match_kinds(mine: list[int], other: list[int], start: int, end: int) -> list[int]:
    """For lines start..end of ``mine``: 0 = no match in ``other``, 1 = some, 2 = many."""
    counts: dict[int, int] = {}
    for c in other:  # the whole other file, trimmed ends included, as xdiff's hash holds it
        counts[c] = counts.get(c, 0) + 1
    mlim = min(bogosqrt(len(mine)), MAX_EQLIMIT)
    dis = [0] * (len(mine) + 1)
    for i in range(start, end + 1):
        nm = counts.get(mine[i], 0)
        dis[i] = 0 if nm == 0 else (2 if nm >= mlim else 1)
    return dis


def _cleanup(
    mine: list[int], other: list[int], start: int, end: int, changed: list[bool]
) -> list[int]:
    """``xdl_cleanup_records`` for one file: return ``rindex`` (kept line numbers).

    Lines with no match in the other file, and multi-match lines inside runs of those,
    are marked changed at once and left out of the Myers search.
    """
    dis = _match_kinds(mine, other, start, end)
    rindex: list[int] = []
    for i in range(start, end + 1):
        if dis[i] == 1 or (dis[i] == 2 and not _clean_mmatch(dis, i, start, end)):
            rindex.append(i)
        else:
            changed[i] = True
    return rindex


class _Env:
    """The state ``xdl_recs_cmp``/``xdl_split`` share: reduced sequences and K vectors."""

    def __init__(self, ha1: list[int], ha2: list[int], need_min: bool) -> None:
        self.ha1 = ha1
        self.ha2 = ha2
        ndiags = len(ha1) + len(ha2) + 3
        self.off = len(ha2) + 1
        self.kvdf = [0] * (ndiags + 2)
        self.kvdb = [0] * (ndiags + 2)
        self.mxcost = max(bogosqrt(ndiags), MAX_COST_MIN)
        self.need_min = need_min


def _split(
    env: _Env, off1: int, lim1: int, off2: int, lim2: int, need_min: bool
) -> tuple[int, int, bool, bool]:
    """``xdl_split``: find the middle snake (or a heuristic split) of the box.

    Returns (i1, i2, min_lo, min_hi).
    """
    ha1, ha2, o = env.ha1, env.ha2, env.off
    kvdf, kvdb = env.kvdf, env.kvdb
    dmin, dmax = off1 - lim2, lim1 - off2
    fmid, bmid = off1 - off2, lim1 - lim2
    odd = (fmid - bmid) & 1
    fmin = fmax = fmid
    bmin = bmax = bmid
    kvdf[fmid + o] = off1
    kvdb[bmid + o] = lim1
    ec = 0
    while True:
        ec += 1
        got_snake = False
        if fmin > dmin:
            fmin -= 1
            kvdf[fmin - 1 + o] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            kvdf[fmax + 1 + o] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            i1 = kvdf[d - 1 + o] + 1 if kvdf[d - 1 + o] >= kvdf[d + 1 + o] else kvdf[d + 1 + o]
            prev1 = i1
            i2 = i1 - d
            while i1 < lim1 and i2 < lim2 and ha1[i1] == ha2[i2]:
                i1 += 1
                i2 += 1
            if i1 - prev1 > SNAKE_CNT:
                got_snake = True
            kvdf[d + o] = i1
            if odd and bmin <= d <= bmax and kvdb[d + o] <= i1:
                return i1, i2, True, True

        if bmin > dmin:
            bmin -= 1
            kvdb[bmin - 1 + o] = LINE_MAX
        else:
            bmin += 1
        if bmax < dmax:
            bmax += 1
            kvdb[bmax + 1 + o] = LINE_MAX
        else:
            bmax -= 1
        for d in range(bmax, bmin - 1, -2):
            i1 = kvdb[d - 1 + o] if kvdb[d - 1 + o] < kvdb[d + 1 + o] else kvdb[d + 1 + o] - 1
            prev1 = i1
            i2 = i1 - d
            while i1 > off1 and i2 > off2 and ha1[i1 - 1] == ha2[i2 - 1]:
                i1 -= 1
                i2 -= 1
            if prev1 - i1 > SNAKE_CNT:
                got_snake = True
            kvdb[d + o] = i1
            if not odd and fmin <= d <= fmax and i1 <= kvdf[d + o]:
                return i1, i2, True, True

        if need_min:
            continue
        if got_snake and ec > HEUR_MIN_COST:
            found = _snake_heuristic(env, off1, lim1, off2, lim2, ec, fmin, fmax, bmin, bmax)
            if found is not None:
                return found
        if ec >= env.mxcost:
            return _cost_cutoff(env, off1, lim1, off2, lim2, fmin, fmax, bmin, bmax)


def _snake_heuristic(
    env: _Env,
    off1: int,
    lim1: int,
    off2: int,
    lim2: int,
    ec: int,
    fmin: int,
    fmax: int,
    bmin: int,
    bmax: int,
) -> tuple[int, int, bool, bool] | None:
    """The "interesting diagonal" sampling of ``xdl_split`` for expensive boxes."""
    ha1, ha2, o = env.ha1, env.ha2, env.off
    kvdf, kvdb = env.kvdf, env.kvdb
    fmid, bmid = off1 - off2, lim1 - lim2
    best, spl = 0, (0, 0)
    for d in range(fmax, fmin - 1, -2):
        dd = d - fmid if d > fmid else fmid - d
        i1 = kvdf[d + o]
        i2 = i1 - d
        v = (i1 - off1) + (i2 - off2) - dd
        if (
            v > K_HEUR * ec
            and v > best
            and off1 + SNAKE_CNT <= i1 < lim1
            and off2 + SNAKE_CNT <= i2 < lim2
        ):
            k = 1
            while ha1[i1 - k] == ha2[i2 - k]:
                if k == SNAKE_CNT:
                    best, spl = v, (i1, i2)
                    break
                k += 1
    if best > 0:
        return spl[0], spl[1], True, False
    best = 0
    for d in range(bmax, bmin - 1, -2):
        dd = d - bmid if d > bmid else bmid - d
        i1 = kvdb[d + o]
        i2 = i1 - d
        v = (lim1 - i1) + (lim2 - i2) - dd
        if (
            v > K_HEUR * ec
            and v > best
            and off1 < i1 <= lim1 - SNAKE_CNT
            and off2 < i2 <= lim2 - SNAKE_CNT
        ):
            k = 0
            while ha1[i1 + k] == ha2[i2 + k]:
                if k == SNAKE_CNT - 1:
                    best, spl = v, (i1, i2)
                    break
                k += 1
    if best > 0:
        return spl[0], spl[1], False, True
    return None


def _cost_cutoff(
    env: _Env,
    off1: int,
    lim1: int,
    off2: int,
    lim2: int,
    fmin: int,
    fmax: int,
    bmin: int,
    bmax: int,
) -> tuple[int, int, bool, bool]:
    """``xdl_split`` when the edit cost passed ``mxcost``: take the furthest-reaching path."""
    o, kvdf, kvdb = env.off, env.kvdf, env.kvdb
    fbest = fbest1 = -1
    for d in range(fmax, fmin - 1, -2):
        i1 = min(kvdf[d + o], lim1)
        i2 = i1 - d
        if lim2 < i2:
            i1, i2 = lim2 + d, lim2
        if fbest < i1 + i2:
            fbest, fbest1 = i1 + i2, i1
    bbest = bbest1 = LINE_MAX
    for d in range(bmax, bmin - 1, -2):
        i1 = max(off1, kvdb[d + o])
        i2 = i1 - d
        if i2 < off2:
            i1, i2 = off2 + d, off2
        if i1 + i2 < bbest:
            bbest, bbest1 = i1 + i2, i1
    if (lim1 + lim2) - bbest < fbest - (off1 + off2):
        return fbest1, fbest - fbest1, True, False
    return bbest1, bbest - bbest1, False, True


def _recs_cmp(
    env: _Env, changed1: list[bool], changed2: list[bool], r1: list[int], r2: list[int]
) -> None:
    """``xdl_recs_cmp``, with an explicit stack instead of recursion (same boxes, same marks)."""
    ha1, ha2 = env.ha1, env.ha2
    stack = [(0, len(ha1), 0, len(ha2), env.need_min)]
    while stack:
        off1, lim1, off2, lim2, need_min = stack.pop()
        while off1 < lim1 and off2 < lim2 and ha1[off1] == ha2[off2]:
            off1 += 1
            off2 += 1
        while off1 < lim1 and off2 < lim2 and ha1[lim1 - 1] == ha2[lim2 - 1]:
            lim1 -= 1
            lim2 -= 1
        if off1 == lim1:
            for k in range(off2, lim2):
                changed2[r2[k]] = True
        elif off2 == lim2:
            for k in range(off1, lim1):
                changed1[r1[k]] = True
        else:
            i1, i2, min_lo, min_hi = _split(env, off1, lim1, off2, lim2, need_min)
            # Push the high box first so the low box is done first, as in the recursion:
            # the K vectors are shared, so the order can matter for stale entries.
            stack.append((i1, lim1, i2, lim2, min_hi))
            stack.append((off1, i1, off2, i2, min_lo))


def mark_changes(
    a: list[int], b: list[int], need_min: bool = False
) -> tuple[list[bool], list[bool]]:
    """Run ``xdl_do_diff`` on two class sequences.

    Args:
        a, b: class numbers of the old and new lines (see :func:`classify`).
        need_min: git's ``--minimal`` (off by default).

    Returns:
        ``(changed1, changed2)``: one flag per line of ``a`` and ``b``; True means the line is
        deleted (in ``a``) or added (in ``b``). Not yet slid into place (see ``diff_slider``).
    """
    changed1 = [False] * len(a)
    changed2 = [False] * len(b)
    start, end1, end2 = _trim_ends(a, b)
    r1 = _cleanup(a, b, start, end1, changed1)
    r2 = _cleanup(b, a, start, end2, changed2)
    env = _Env([a[i] for i in r1], [b[i] for i in r2], need_min)
    _recs_cmp(env, changed1, changed2, r1, r2)
    return changed1, changed2
