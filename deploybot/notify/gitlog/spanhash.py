"""git's similarity estimate of two files (``diffcore-delta.c``), fast in pure Python.

A file is cut into chunks that end at a newline or after 64 bytes (a CR before a LF is
skipped in text; a last chunk without a LF and under 64 bytes is left out); each chunk is
hashed and the bytes per hash are counted (``hash_chars``). Two files share the sum over the
hashes of the smaller count (``diffcore_count_changes``). :func:`span_counts_bytewise` is
git's loop as written, one byte at a time: the specification. :func:`span_counts` gives the
same counts about 50 times faster:

* a chunk's hash depends only on its bytes, so the chunks are cut with ``bytes.split`` and
  counted with a :class:`collections.Counter`, and each distinct chunk is hashed once;
* git's per-byte step on its two 32-bit accumulators, ``a1 = (a1 << 7) ^ (a2 >> 25);
  a2 = (a2 << 7) ^ (old_a1 >> 25); a1 += c``, is a 64-bit rotation of ``a1:a2`` by 7 bits
  followed by adding ``c << 32`` (the shifted-in parts never overlap, so ``^`` is ``|``,
  and the carry out of ``a1`` is lost either way). That step runs on all chunks at once:
  each chunk is a 64-bit lane of one big integer (lanes 128 bits apart, so a carry never
  reaches the next lane), chunks right-aligned in 64 bytes (leading zero bytes leave the
  accumulators at zero, as git's start), 64 steps of a few big-integer operations in all.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable
from itertools import filterfalse, repeat
from operator import mul

from deploybot.notify.gitlog.diff import is_binary

HASHBASE = 107927
CHUNK = 64
_M32 = 0xFFFFFFFF

__all__ = ["CountsBatch", "copied_bytes", "span_counts", "span_counts_bytewise"]


def span_counts_bytewise(data: bytes) -> dict[int, int]:
    """``hash_chars`` as git writes it: ``{chunk hash: bytes}`` (the reference)."""
    text = not is_binary(data)
    counts: dict[int, int] = {}
    n = a1 = a2 = 0
    size = len(data)
    for pos in range(size):
        c = data[pos]
        if text and c == 13 and pos + 1 < size and data[pos + 1] == 10:
            continue
        old1 = a1
        a1 = (((a1 << 7) & _M32) ^ (a2 >> 25)) + c & _M32
        a2 = ((a2 << 7) & _M32) ^ (old1 >> 25)
        n += 1
        if n < CHUNK and c != 10:
            continue
        h = ((a1 + a2 * 0x61) & _M32) % HASHBASE
        counts[h] = counts.get(h, 0) + n
        n = a1 = a2 = 0
    return counts


_CHUNK_RE = re.compile(rb"[^\n]{64}|[^\n]*\n")
"""A chunk: 64 bytes without a LF, or else what is left of the line with its LF (at most 64
bytes). A last part without a LF and under 64 bytes matches neither: git leaves it out."""


def _chunks(data: bytes) -> Counter[bytes]:
    """The chunks of ``data`` as ``hash_chars`` cuts them, with how often each occurs."""
    if b"\r\n" in data and not is_binary(data):
        data = data.replace(b"\r\n", b"\n")  # a CR right before a LF is skipped
    return Counter(_CHUNK_RE.findall(data))


def _hashes(chunks: list[bytes]) -> list[int]:
    """git's chunk hash of each chunk (at most 64 bytes), all lanes at once. A lane is 72
    bits: 64 for ``a1:a2`` and 8 that catch the carry of an addition (masked away)."""
    n = len(chunks)
    if not n:
        return []
    flat = b"".join(map(bytes.rjust, chunks, repeat(CHUNK, n), repeat(b"\0", n)))
    low64 = int.from_bytes((b"\xff" * 8 + b"\0") * n, "little")
    low7 = int.from_bytes((b"\x7f" + b"\0" * 8) * n, "little")
    lanes = bytearray(9 * n)
    x = 0
    for j in range(CHUNK):
        lanes[4::9] = flat[j::CHUNK]  # byte j of every chunk, at bit 32 of its lane (a1)
        rotated = ((x << 7) & low64) | ((x >> 57) & low7)
        x = (rotated + int.from_bytes(lanes, "little")) & low64
    # (a1 + a2 * 0x61) mod 2**32 in every lane, then each lane's low 4 bytes side by side.
    low32 = int.from_bytes((b"\xff" * 4 + b"\0" * 5) * n, "little")
    x = (((x >> 32) & low32) + (x & low32) * 0x61) & low32
    packed = x.to_bytes(9 * n, "little")
    words = bytearray(4 * n)
    for k in range(4):
        words[k::4] = packed[k::9]
    values = array("I")
    values.frombytes(words)
    if sys.byteorder == "big":
        values.byteswap()
    return list(map(HASHBASE.__rmod__, values))


def span_counts(data: bytes, memo: dict[bytes, int] | None = None) -> dict[int, int]:
    """``hash_chars``: ``{chunk hash: bytes}``, equal to :func:`span_counts_bytewise`.

    ``memo`` (``{chunk: hash}``) keeps the hashes of chunks seen before, for a caller that
    hashes many files sharing lines (a site's pages share their layout).
    """
    out: list[dict[int, int]] = []
    batch = CountsBatch({} if memo is None else memo)
    batch.add(data, out.append)
    batch.flush()
    return out[0]


BATCH_BYTES = 8 << 20
"""How many bytes of files :class:`CountsBatch` holds (as their chunks) before hashing."""


MEMO_LIMIT = 1 << 18
"""Chunks whose hashes a memo keeps at most (about 20 MB), before it starts again."""


class CountsBatch:
    """:func:`span_counts` of many files, their new chunks hashed together.

    Hashing all lanes at once costs a fixed few big-integer operations per step plus a part
    that grows with the lanes, so a thousand 20 KB pages cost about a third of what they
    cost one by one. Memory: the chunks of at most :data:`BATCH_BYTES` of files, then the
    counts.
    """

    def __init__(self, memo: dict[bytes, int], limit: int = BATCH_BYTES) -> None:
        self.memo = memo
        self.limit = limit
        self.pending: list[tuple[Counter[bytes], Callable[[dict[int, int]], None]]] = []
        self.new: set[bytes] = set()  # chunks to hash
        self.size = 0

    def add(self, data: bytes, done: Callable[[dict[int, int]], None]) -> None:
        """Count ``data``'s chunks; ``done(counts)`` is called once they are hashed (at
        the latest by :meth:`flush`)."""
        chunks = _chunks(data)
        # (``keys() - memo.keys()`` would walk the whole memo for every file)
        self.new.update(filterfalse(self.memo.__contains__, chunks))
        self.pending.append((chunks, done))
        self.size += len(data)
        if self.size >= self.limit:
            self.flush()

    def flush(self) -> None:
        """Hash what waits and hand every pending file its counts."""
        new = list(self.new)
        memo = self.memo
        memo.update(zip(new, _hashes(new), strict=True))
        for chunks, done in self.pending:
            done(_by_hash(chunks, list(map(memo.__getitem__, chunks))))
        self.pending, self.new, self.size = [], set(), 0
        if len(memo) > MEMO_LIMIT:  # a memo only saves time: bound its memory
            memo.clear()


def _by_hash(chunks: Counter[bytes], hashes: list[int]) -> dict[int, int]:
    """``{hash: bytes}`` from ``{chunk: times}`` and each chunk's hash (same order).
    Distinct chunks can share a hash (there are 107,927): those add up."""
    weights = list(map(mul, map(len, chunks), chunks.values()))
    counts = dict(zip(hashes, weights, strict=True))
    if len(counts) < len(hashes):
        shared = {h for h, times in Counter(hashes).items() if times > 1}
        for h in shared:
            counts[h] = 0
        for h, weight in zip(hashes, weights, strict=True):
            if h in shared:
                counts[h] += weight
    return counts


def copied_bytes(src: dict[int, int], dst: dict[int, int], common: frozenset[int]) -> int:
    """``diffcore_count_changes``: the bytes of ``dst`` that also occur in ``src``;
    ``common`` is the set of hashes both have (``src.keys() & dst.keys()``)."""
    return sum(map(min, map(src.__getitem__, common), map(dst.__getitem__, common)))
