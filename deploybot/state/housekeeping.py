"""Keep the state directory's git mirrors small, as ``git gc --auto`` does.

Every build writes its new outputs into the publish mirror as loose objects (one file per
object), and every fetch adds a pack. Left alone, a site of 10,000 pages leaves 10,000 loose
files per full build (the research measured 41 MB loose against 1.3 MB packed). After each
run the pipeline calls :func:`housekeep` on both mirrors; it packs only past git's own
thresholds, so most runs pay a directory count and nothing else. Unreachable objects are
kept (a mirror is small next to the sites it builds); nothing here changes a ref.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID
from dulwich.pack import full_unpacked_object

from deploybot.git import repository
from deploybot.git.object_size import loose_kind

LOOSE_LIMIT = 6700
"""Pack loose objects when there are more than this many (git's ``gc.auto`` default)."""

PACK_LIMIT = 50
"""Repack everything into one pack when there are more packs (git's ``gc.autoPackLimit``)."""


def housekeep(mirror: Path, *, loose_limit: int = LOOSE_LIMIT, pack_limit: int = PACK_LIMIT) -> str:
    """Pack ``mirror``'s loose objects and consolidate its packs when past the limits.

    Returns:
        What was done, for the log: ``""`` when nothing was needed, else e.g.
        ``"packed 7012 loose objects"`` or ``"repacked 51 packs"``.

    Raises:
        OSError: the mirror cannot be read or written.
    """
    if not mirror.exists():
        return ""
    with repository.bare_repo(mirror) as repo:
        store = repo.object_store
        loose = store.count_loose_objects()
        if loose > loose_limit:
            packed = pack_loose(store)
            return f"packed {packed} loose objects"
        packs = len(store.packs)
        if packs > pack_limit:
            store.repack()
            return f"repacked {packs} packs"
    return ""


_WRITE_ORDER = {b"commit": 0, b"tag": 0, b"tree": 1}
"""Where each type goes in a pack (blobs, 2, last): git's order (``builtin/pack-objects.c``,
``compute_write_order``), so that a walk of the trees maps a few MB of the pack rather than
every page between them."""


def pack_loose(store: DiskObjectStore) -> int:
    """Move every loose object of ``store`` into one new pack; return how many.

    Unlike dulwich's ``pack_loose_objects``, which holds every loose object in memory (a
    full build's pages: GBs at 100,000 posts), the objects are read one at a time, and
    they are written in git's order (:data:`_WRITE_ORDER`), told apart by their headers.
    A loose object whose header cannot be read stays loose (a later read reports it).

    Raises:
        OSError: the mirror cannot be read or written.
    """
    ranked: list[tuple[int, ObjectID]] = []
    for sha in store._iter_loose_objects():  # dulwich's own pack_loose_objects uses these
        path = os.path.join(store.path, sha[:2].decode("ascii"), sha[2:].decode("ascii"))
        try:
            ranked.append((_WRITE_ORDER.get(loose_kind(path), 2), ObjectID(sha)))
        except (ValueError, zlib.error):
            continue
    ranked.sort()
    records = (full_unpacked_object(store[sha]) for _, sha in ranked)
    store.add_pack_data(len(ranked), records)
    for _, sha in ranked:
        store.delete_loose_object(sha)
    return len(ranked)
