"""Keep the state directory's git mirrors small, as ``git gc --auto`` does.

Every build writes its new outputs into the publish mirror as loose objects (one file per
object), and every fetch adds a pack. Left alone, a site of 10,000 pages leaves 10,000 loose
files per full build (the research measured 41 MB loose against 1.3 MB packed). After each
run the pipeline calls :func:`housekeep` on both mirrors; it packs only past git's own
thresholds, so most runs pay a directory count and nothing else. Unreachable objects are
kept (a mirror is small next to the sites it builds); nothing here changes a ref.
"""

from __future__ import annotations

from pathlib import Path

from deploybot.git import repository

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
            store.pack_loose_objects()
            return f"packed {loose} loose objects"
        packs = len(store.packs)
        if packs > pack_limit:
            store.repack()
            return f"repacked {packs} packs"
    return ""
