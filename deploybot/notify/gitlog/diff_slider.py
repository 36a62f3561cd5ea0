"""Sliding change groups into place, as git's ``xdl_change_compact`` does.

A group of added (or deleted) lines can often move up or down without changing the diff's
meaning ("sliders"). git first slides each group as far down as it goes, merges groups that
meet, lines it up with a change in the other file when it can, and otherwise picks the place
with the best *indent heuristic* score (on by default since git 2.14). Re-implemented from
git's ``xdiff/xdiffi.c`` (``get_indent``, ``measure_split``, ``score_add_split``,
``score_cmp``, ``group_*``, ``xdl_change_compact``, ``xdl_build_script``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

MAX_INDENT = 200
MAX_BLANKS = 20
START_OF_FILE_PENALTY = 1
END_OF_FILE_PENALTY = 21
TOTAL_BLANK_WEIGHT = -30
POST_BLANK_WEIGHT = 6
RELATIVE_INDENT_PENALTY = -4
RELATIVE_INDENT_WITH_BLANK_PENALTY = 10
RELATIVE_OUTDENT_PENALTY = 24
RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17
RELATIVE_DEDENT_PENALTY = 23
RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17
INDENT_WEIGHT = 60
INDENT_HEURISTIC_MAX_SLIDING = 100


class Change(NamedTuple):
    """One edit: ``chg1`` lines at ``i1`` (0-based, old file) became ``chg2`` at ``i2``."""

    i1: int
    i2: int
    chg1: int
    chg2: int


def get_indent(line: bytes) -> int:
    """Indent width of ``line`` (TAB = to the next multiple of 8), -1 if blank, at most 200.

    Whitespace is git's: space, TAB, LF and CR (git's own ctype; VT and FF are not spaces).
    """
    ret = 0
    for c in line:
        if c == 32:
            ret += 1
        elif c == 9:
            ret += 8 - ret % 8
        elif c not in (10, 13):
            return ret
        if ret >= MAX_INDENT:
            return MAX_INDENT
    return -1


class _File:
    """One side of the diff while sliding: class numbers, lines, and padded change flags."""

    def __init__(self, recs: list[int], lines: list[bytes], changed: list[bool]) -> None:
        self.n = len(recs)
        self.recs = recs
        self.lines = lines
        # ch[i + 1] is line i's flag; ch[0] and ch[n + 1] are always-False sentinels.
        self.ch = [False, *changed, False]
        self._indents: list[int | None] = [None] * self.n

    def changed(self, i: int) -> bool:
        return self.ch[i + 1]

    def indent(self, i: int) -> int:
        v = self._indents[i]
        if v is None:
            v = self._indents[i] = get_indent(self.lines[i])
        return v


@dataclass(slots=True)
class _Group:
    """xdiff's ``struct xdlgroup``: a run of changed lines ``[start, end)`` of one file (empty
    when ``start == end``), moved in place while sliding."""

    start: int
    end: int


@dataclass(slots=True)
class _Score:
    """xdiff's ``struct split_score``: the indent heuristic's score of a split, lower is better
    (:func:`_score_cmp`)."""

    effective_indent: int = 0
    penalty: int = 0


def _group_init(f: _File) -> _Group:
    end = 0
    while f.changed(end):
        end += 1
    return _Group(0, end)


def _group_next(f: _File, g: _Group) -> bool:
    if g.end == f.n:
        return False
    g.start = g.end + 1
    g.end = g.start
    while f.changed(g.end):
        g.end += 1
    return True


def _group_previous(f: _File, g: _Group) -> bool:
    if g.start == 0:
        return False
    g.end = g.start - 1
    g.start = g.end
    while f.changed(g.start - 1):
        g.start -= 1
    return True


def _slide_down(f: _File, g: _Group) -> bool:
    if g.end < f.n and f.recs[g.start] == f.recs[g.end]:
        f.ch[g.start + 1] = False
        g.start += 1
        f.ch[g.end + 1] = True
        g.end += 1
        while f.changed(g.end):
            g.end += 1
        return True
    return False


def _slide_up(f: _File, g: _Group) -> bool:
    if g.start > 0 and f.recs[g.start - 1] == f.recs[g.end - 1]:
        g.start -= 1
        f.ch[g.start + 1] = True
        g.end -= 1
        f.ch[g.end + 1] = False
        while f.changed(g.start - 1):
            g.start -= 1
        return True
    return False


def _measure_and_score(f: _File, split: int, score: _Score) -> None:
    """``measure_split`` then ``score_add_split``: adds the split at ``split`` to ``score``."""
    end_of_file = split >= f.n
    indent = -1 if end_of_file else f.indent(split)
    pre_blank, pre_indent = 0, -1
    for i in range(split - 1, -1, -1):
        pre_indent = f.indent(i)
        if pre_indent != -1:
            break
        pre_blank += 1
        if pre_blank == MAX_BLANKS:
            pre_indent = 0
            break
    post_blank, post_indent = 0, -1
    for i in range(split + 1, f.n):
        post_indent = f.indent(i)
        if post_indent != -1:
            break
        post_blank += 1
        if post_blank == MAX_BLANKS:
            post_indent = 0
            break

    penalty = 0
    if pre_indent == -1 and pre_blank == 0:
        penalty += START_OF_FILE_PENALTY
    if end_of_file:
        penalty += END_OF_FILE_PENALTY
    post_blank = 1 + post_blank if indent == -1 else 0
    total_blank = pre_blank + post_blank
    penalty += TOTAL_BLANK_WEIGHT * total_blank + POST_BLANK_WEIGHT * post_blank
    if indent == -1:
        indent = post_indent
    any_blanks = total_blank != 0
    score.effective_indent += indent
    if indent == -1 or pre_indent == -1:
        pass
    elif indent > pre_indent:
        penalty += RELATIVE_INDENT_WITH_BLANK_PENALTY if any_blanks else RELATIVE_INDENT_PENALTY
    elif indent < pre_indent:
        if post_indent != -1 and post_indent > indent:
            penalty += (
                RELATIVE_OUTDENT_WITH_BLANK_PENALTY if any_blanks else RELATIVE_OUTDENT_PENALTY
            )
        else:
            penalty += RELATIVE_DEDENT_WITH_BLANK_PENALTY if any_blanks else RELATIVE_DEDENT_PENALTY
    score.penalty += penalty


def _score_cmp(s1: _Score, s2: _Score) -> int:
    cmp_indents = (s1.effective_indent > s2.effective_indent) - (
        s1.effective_indent < s2.effective_indent
    )
    return INDENT_WEIGHT * cmp_indents + (s1.penalty - s2.penalty)


def _best_shift(f: _File, g: _Group, earliest_end: int, groupsize: int) -> int:
    """The indent heuristic: the group end (at most 100 lines up) with the lowest score."""
    shift = max(earliest_end, g.end - groupsize - 1, g.end - INDENT_HEURISTIC_MAX_SLIDING)
    best_shift = -1
    best = _Score()
    while shift <= g.end:
        score = _Score()
        _measure_and_score(f, shift, score)
        _measure_and_score(f, shift - groupsize, score)
        if best_shift == -1 or _score_cmp(score, best) <= 0:
            best, best_shift = score, shift
        shift += 1
    return best_shift


def _compact(f: _File, fo: _File, indent_heuristic: bool) -> None:
    """``xdl_change_compact`` of ``f`` against the other file ``fo`` (both changed in place)."""
    g = _group_init(f)
    go = _group_init(fo)
    while True:
        if g.end != g.start:
            while True:
                groupsize = g.end - g.start
                end_matching_other = -1
                while _slide_up(f, g):
                    _group_previous(fo, go)
                earliest_end = g.end
                if go.end > go.start:
                    end_matching_other = g.end
                while _slide_down(f, g):
                    _group_next(fo, go)
                    if go.end > go.start:
                        end_matching_other = g.end
                if groupsize == g.end - g.start:
                    break
            if g.end == earliest_end:
                pass
            elif end_matching_other != -1:
                while go.end == go.start:
                    _slide_up(f, g)
                    _group_previous(fo, go)
            elif indent_heuristic:
                best_shift = _best_shift(f, g, earliest_end, groupsize)
                while g.end > best_shift:
                    _slide_up(f, g)
                    _group_previous(fo, go)
        if not _group_next(f, g):
            break
        _group_next(fo, go)


def _build_script(ch1: list[bool], ch2: list[bool], n1: int, n2: int) -> list[Change]:
    """``xdl_build_script``: runs of changed flags to a forward-ordered edit script."""
    out: list[Change] = []
    i1, i2 = n1, n2
    # ch1/ch2 are padded: flag of line i is at i + 1, index 0 is the line "-1" sentinel.
    while i1 >= 0 or i2 >= 0:
        if ch1[max(i1, 0)] or ch2[max(i2, 0)]:
            l1, l2 = i1, i2
            while ch1[i1]:
                i1 -= 1
            while ch2[i2]:
                i2 -= 1
            out.append(Change(i1, i2, l1 - i1, l2 - i2))
        i1 -= 1
        i2 -= 1
    out.reverse()
    return out


def compact_and_script(
    recs1: list[int],
    lines1: list[bytes],
    changed1: list[bool],
    recs2: list[int],
    lines2: list[bytes],
    changed2: list[bool],
    indent_heuristic: bool = True,
) -> list[Change]:
    """Slide both files' change groups into git's places and return the edit script.

    Args:
        recs1, recs2: class numbers of each line; lines1, lines2: the lines themselves
        (for indentation); changed1, changed2: flags from ``diff_myers.mark_changes``.

    Returns:
        The changes in file order, as ``xdl_build_script`` makes them.
    """
    f1 = _File(recs1, lines1, changed1)
    f2 = _File(recs2, lines2, changed2)
    _compact(f1, f2, indent_heuristic)
    _compact(f2, f1, indent_heuristic)
    return _build_script(f1.ch, f2.ch, f1.n, f2.n)
