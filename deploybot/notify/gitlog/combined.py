"""The dense combined diff of one path (``git log --cc``), as git's ``combine-diff.c`` makes it.

Pure: the merge result and each parent's version of one file go in (``bytes``), the hunk
lines come out. Re-implemented from ``combine-diff.c`` (``combine_diff``, ``consume_hunk``,
``consume_line``, ``append_lost``, ``coalesce_lines``, ``reuse_combine_diff``,
``make_hunks``, ``give_context``, ``adjust_hunk_tail``, ``dump_sline``,
``show_line_to_eol``):

* every parent is diffed against the result with no context (``xdi_diff``, the common tail
  trimmed first); an added result line is marked with the parent's bit, the parent's deleted
  lines hang on the result line they precede ("lost" lines), and the lost lines of several
  parents are merged by a longest common subsequence, one line shared by the parents that
  lost it;
* ``--cc`` (dense) drops a hunk whose changes all come from one parent, or are the same
  from all but one, unless the result matches no parent; what is left gets 3 lines of
  context;
* a hunk header is ``@@@ -a,b -c,d +e,f @@@`` (one ``@`` per parent plus one, every count
  printed), followed by the last line above the hunk and below the previous hunk that starts
  with an ASCII letter, ``_`` or ``$``: its first 40 bytes up to, *not including*, the last
  non-blank one (git's off-by-one); no UTF-8 check is made there;
* a body line has one column per parent (``-``/``+``/space), then the line with a final
  ``\\n`` always (no ``\\ No newline at end of file``), cut at a NUL as ``printf`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deploybot.notify.gitlog.diff import split_lines, zero_context_script

CONTEXT = 3
COMMENT_MAX = 40
_GIT_SPACE = b" \t\n\r"

__all__ = ["combined_hunks"]


@dataclass
class _Lost:
    line: bytes  # without its newline
    parent_map: int


@dataclass
class _Line:
    """One result line (``struct sline``); the last two stand after the end of the file."""

    text: bytes | None
    flag: int = 0
    lost: list[_Lost] = field(default_factory=list)
    plost: list[_Lost] = field(default_factory=list)
    p_lno: list[int] = field(default_factory=list)


def _result_lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def _coalesce(base: list[_Lost], new: list[_Lost], parent: int) -> list[_Lost]:
    """``coalesce_lines``: merge ``new`` into ``base`` along their longest common
    subsequence; a matched base line gains the parent's bit, unmatched new lines go where
    git's backtrack through its DP table puts them.

    git fills an ``(len(base)+1) x (len(new)+1)`` table (quadratic time and memory); the
    same table is read here from bit-parallel LCS rows (:func:`_lcs_rows`, one integer of
    ``len(new)`` bits per base line), and only the cells on the backtrack path are
    evaluated, with git's tie rules: a match first, then "new" when
    ``lcs[i][j-1] >= lcs[i-1][j]``, else "base".
    """
    if not new:
        return base
    if not base:
        return new
    rows = _lcs_rows([ll.line for ll in base], [ll.line for ll in new])

    def lcs(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    out: list[_Lost] = []  # built backwards
    i, j = len(base), len(new)
    while i or j:
        if i and j and base[i - 1].line == new[j - 1].line:
            base[i - 1].parent_map |= 1 << parent
            out.append(base[i - 1])
            i, j = i - 1, j - 1
        elif not i or (j and lcs(i, j - 1) >= lcs(i - 1, j)):
            out.append(new[j - 1])
            j -= 1
        else:
            out.append(base[i - 1])
            i -= 1
    out.reverse()
    return out


def _lcs_rows(a: list[bytes], b: list[bytes]) -> list[int]:
    """Row ``i`` encodes ``lcs[i][j]`` (LCS length of ``a[:i]`` and ``b[:j]``) as
    ``j - popcount(row & (2**j - 1))``: the bit-vector LCS of Allison-Dix/Hyyrö
    (H. Hyyrö, "Bit-parallel LCS-length computation revisited", 2004)."""
    full = (1 << len(b)) - 1
    masks: dict[bytes, int] = {}
    for k, line in enumerate(b):
        masks[line] = masks.get(line, 0) | (1 << k)
    v = full
    rows = [v]
    for line in a:
        u = v & masks.get(line, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    return rows


def _combine(slines: list[_Line], parent: bytes, result: bytes, n: int) -> None:
    """``combine_diff`` for parent ``n``: mark added lines, collect lost ones, number."""
    cnt = len(slines) - 2
    nmask = 1 << n
    old = split_lines(parent)
    for ch in zero_context_script(parent, result):
        # consume_hunk puts the lost lines of a hunk on the result line at its new start.
        bucket = slines[ch.i2]
        for k in range(ch.i1, ch.i1 + ch.chg1):
            line = old[k]
            bucket.plost.append(_Lost(line[:-1] if line.endswith(b"\n") else line, nmask))
        for k in range(ch.i2, ch.i2 + ch.chg2):
            slines[k].flag |= nmask
    p_lno = 1
    for lno in range(cnt + 1):
        sl = slines[lno]
        sl.p_lno[n] = p_lno
        if sl.plost:
            sl.lost = _coalesce(sl.lost, sl.plost, n)
            sl.plost = []
        p_lno += sum(1 for ll in sl.lost if ll.parent_map & nmask)
        if lno < cnt and not sl.flag & nmask:
            p_lno += 1
    slines[cnt + 1].p_lno[n] = p_lno


def _reuse(slines: list[_Line], i: int, j: int) -> None:
    """``reuse_combine_diff``: parent ``i`` has the same blob as parent ``j``."""
    imask, jmask = 1 << i, 1 << j
    for sl in slines:
        sl.p_lno[i] = sl.p_lno[j]
        for ll in sl.lost:
            if ll.parent_map & jmask:
                ll.parent_map |= imask
        if sl.flag & jmask:
            sl.flag |= imask


class _Hunks:
    """``make_hunks``/``give_context`` over the flags of ``slines`` (0..cnt)."""

    def __init__(self, slines: list[_Line], num_parent: int) -> None:
        self.sl = slines
        self.cnt = len(slines) - 2
        self.all_mask = (1 << num_parent) - 1
        self.mark = 1 << num_parent
        self.no_pre_delete = 2 << num_parent

    def find_next(self, i: int, uninteresting: bool) -> int:
        while i <= self.cnt:
            if bool(self.sl[i].flag & self.mark) != uninteresting:
                return i
            i += 1
        return i

    def adjust_tail(self, hunk_begin: int, i: int) -> int:
        if hunk_begin + 1 <= i and not self.sl[i - 1].flag & self.all_mask:
            i -= 1
        return i

    def make(self) -> bool:
        sl, mark, cnt = self.sl, self.mark, self.cnt
        for i in range(cnt + 1):
            if sl[i].flag & self.all_mask or sl[i].lost:
                sl[i].flag |= mark
            else:
                sl[i].flag &= ~mark
        i = 0
        while i <= cnt:
            while i <= cnt and not sl[i].flag & mark:
                i += 1
            if cnt < i:
                break
            hunk_end = self._hunk_end(i)
            if not self._two_versions_differ(i, hunk_end):
                for j in range(i, hunk_end):
                    sl[j].flag &= ~mark
            i = hunk_end
        return self.give_context()

    def _hunk_end(self, begin: int) -> int:
        sl, mark, cnt = self.sl, self.mark, self.cnt
        j = begin + 1
        while j <= cnt:
            if not sl[j].flag & mark:
                la = self.adjust_tail(begin, j)
                la = min(la + CONTEXT, cnt + 1)
                contin = False
                while la:
                    la -= 1
                    if j > la:
                        break
                    if sl[la].flag & mark:
                        contin = True
                        break
                if not contin:
                    break
                j = la
            j += 1
        return j

    def _two_versions_differ(self, begin: int, end: int) -> bool:
        """True unless the hunk holds only two versions and the result is one of them."""
        same = 0
        for j in range(begin, end):
            maps = [self.sl[j].flag & self.all_mask] + [ll.parent_map for ll in self.sl[j].lost]
            for k, this in enumerate(maps):
                if k == 0 and not this:
                    continue
                if not same:
                    same = this
                elif same != this:
                    return True
        return same == self.all_mask

    def give_context(self) -> bool:
        sl, mark, cnt = self.sl, self.mark, self.cnt
        i = self.find_next(0, False)
        if cnt < i:
            return False
        while i <= cnt:
            for j in range(max(i - CONTEXT, 0), i):
                if not sl[j].flag & mark:
                    sl[j].flag |= self.no_pre_delete
                sl[j].flag |= mark
            while True:
                j = self.find_next(i, True)
                if cnt < j:
                    return True
                k = self.find_next(j, False)
                j = self.adjust_tail(i, j)
                if k < j + CONTEXT:
                    for m in range(j, k):
                        sl[m].flag |= mark
                    i = k
                    continue
                i = k
                for m in range(j, min(j + CONTEXT, cnt + 1)):
                    sl[m].flag |= mark
                break
        return True


def _comment(line: bytes | None) -> bytes | None:
    """``hunk_comment_line``: a line that can name the hunk."""
    if not line:
        return None
    c = line[0]
    return line if 65 <= c <= 90 or 97 <= c <= 122 or c in (0x5F, 0x24) else None


def _comment_text(line: bytes) -> bytes:
    """The part of a hunk comment git prints: up to the last non-blank of 40 bytes, which
    itself is left out (``comment_end`` is its index)."""
    end = 0
    for i, c in enumerate(line[:COMMENT_MAX]):
        if c == 0:
            break
        if c not in _GIT_SPACE:
            end = i
    return b" " + line[:end] if end else b""


def _to_eol(prefix: bytes, line: bytes, cr_from_whole: bool) -> bytes:
    """``show_line_to_eol``: a CR at the end is kept after the (colour) reset; ``printf``
    stops at a NUL. A lost line was measured with ``strlen``, a result line by its length."""
    shown = line if cr_from_whole else line.split(b"\0", 1)[0]
    cr = shown.endswith(b"\r")
    body = (shown[:-1] if cr else shown).split(b"\0", 1)[0]
    return prefix + body + (b"\r" if cr else b"") + b"\n"


def _dump(slines: list[_Line], num_parent: int) -> list[bytes]:
    """``dump_sline``: the hunks, one output line each (ending in ``\\n``)."""
    cnt = len(slines) - 2
    mark, no_pre_delete = 1 << num_parent, 2 << num_parent
    marker = b"@" * (num_parent + 1)
    out: list[bytes] = []
    lno = 0
    while True:
        comment: bytes | None = None
        while lno <= cnt and not slines[lno].flag & mark:
            comment = _comment(slines[lno].text) or comment
            lno += 1
        if cnt < lno:
            return out
        hunk_end = lno + 1
        while hunk_end <= cnt and slines[hunk_end].flag & mark:
            hunk_end += 1
        rlines = hunk_end - lno - (1 if cnt < hunk_end else 0)
        head = marker
        for n in range(num_parent):
            l0, l1 = slines[lno].p_lno[n], slines[hunk_end].p_lno[n]
            head += b" -%d,%d" % (l0, l1 - l0)
        head += b" +%d,%d " % (lno + 1, rlines) + marker
        out.append(head + (_comment_text(comment) if comment else b"") + b"\n")
        while lno < hunk_end:
            sl = slines[lno]
            lno += 1
            for ll in () if sl.flag & no_pre_delete else sl.lost:
                cols = bytes(45 if ll.parent_map & (1 << j) else 32 for j in range(num_parent))
                out.append(_to_eol(cols, ll.line, False))
            if cnt < lno:
                break
            cols = bytes(43 if sl.flag & (1 << j) else 32 for j in range(num_parent))
            out.append(_to_eol(cols, sl.text or b"", True))


def combined_hunks(result: bytes, parents: Sequence[tuple[bytes, bytes]]) -> list[bytes] | None:
    """The dense combined diff hunks of one path (``show_patch_diff`` after its headers).

    Args:
        result: the merge's version of the file (b"" when the merge deleted it).
        parents: per parent, ``(object id, content)``; a parent without the file has the
            null id and b"". Parents with equal ids share one diff (``reuse_combine_diff``).

    Returns:
        The hunk lines (each ending in ``\\n``), or None when no hunk is interesting (git
        then prints the path only if its mode differs from some parent's).
    """
    num_parent = len(parents)
    texts = _result_lines(result) if result else []
    cnt = len(texts)
    slines = [_Line(text, p_lno=[0] * num_parent) for text in [*texts, None, None]]
    if cnt == 0:
        slines[0].text = result  # git's sline[0].bol points at the (empty) buffer
    for i, (oid, data) in enumerate(parents):
        same = next((j for j in range(i) if parents[j][0] == oid), None)
        if same is not None:
            _reuse(slines, i, same)
        else:
            _combine(slines, data, result, i)
    if not _Hunks(slines, num_parent).make():
        return None
    return _dump(slines, num_parent)
