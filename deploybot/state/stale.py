"""Remove what a killed run leaves in the state directory, so the next run goes on.

A run killed with SIGKILL (or the OOM killer, or a power cut) runs no clean-up code. What it
can leave behind in the state directory, and what happens next without this module:

- git lock files in the source and publish mirrors: dulwich's ``GitFile`` writes every
  loose object, ref, ``packed-refs``, ``config`` and pack index through ``<path>.lock``
  created with ``O_EXCL`` (git's own lockfile protocol, ``lockfile.c``), so a lock left
  behind makes every later write of that path fail with ``FileLocked``: the run wedges.
- pack temp files (``objects/tmp_pack_*``, ``objects/pack/tmp*.pack``, a ``pack-*.pack``
  whose ``.idx`` was never written): harmless, but never removed.
- the outbox's and ``notify/``'s atomic-write temp files (``.<name>.<pid>.tmp``): harmless.

The state directory's own lock is an ``flock`` (:func:`deploybot.state.statedir.held`), which the
kernel releases when its process dies, and the render cache is sqlite, which rolls a hot
journal back when it is next opened; neither needs anything here.

**Why removing them is safe.** :func:`sweep` runs while this process holds the state
directory's lock, so no other deploybot process can be writing inside the state directory;
a lock or temp file there that is older than this run can only have been left by a process
that died. (Other programs do not write into the mirrors: they are the bot's own.)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

log = logging.getLogger("deploybot.stale")

WRITE_TEMPS = (
    ".",
    "outbox",
    "outbox/sent",
    "outbox/superseded",
    "outbox/failed",
    "outbox/dropped",
    "notify",
)  # the outbox's folders: deploybot.notify.deliver.outbox's *_DIR (a floor above this one)
"""Folders of the state directory whose files are written through ``.<name>.<pid>.tmp``
(``.``: the state directory itself, for ``noop.stamp``)."""


def sweep(state_dir: Path, mirrors: Sequence[Path], *, started: float) -> list[Path]:
    """Remove the lock and temp files a killed run left in ``mirrors`` and ``state_dir``.

    Only files last modified before ``started`` (Unix time, s: when this run began waiting
    for the state directory's lock) are touched. The caller must hold that lock.

    Returns:
        The paths removed; each is logged as a warning.

    Raises:
        OSError: a stale file exists but cannot be removed (the run could not go on).
    """
    removed = [path for path in _stale(state_dir, mirrors, started) if _remove(path)]
    for mirror in mirrors:
        removed += _prune_packs(mirror, started)
    for path in removed:
        log.warning("removed stale %s (left by a killed run)", _describe(path))
    return removed


def _stale(state_dir: Path, mirrors: Sequence[Path], started: float) -> Iterator[Path]:
    for mirror in mirrors:
        for path in _lock_files(mirror):
            if _older(path, started):
                yield path
    for folder in WRITE_TEMPS:
        for path in _glob(state_dir / folder, ".*.tmp"):
            if _older(path, started):
                yield path


def _lock_files(mirror: Path) -> Iterator[Path]:
    """Every ``*.lock`` file of a bare repository: in its top folder (``HEAD``, ``config``,
    ``packed-refs``), under ``refs/`` (any depth), in ``objects/xx/``, ``objects/pack/`` and
    ``objects/info/``. No other file of a repository ends in ``.lock``: git refuses ref
    names with a component ending in ``.lock`` (``refs.c``, ``check_refname_component``)."""
    yield from _glob(mirror, "*.lock")
    refs = mirror / "refs"
    if refs.is_dir():
        yield from (p for p in refs.rglob("*.lock") if p.is_file())
    objects = mirror / "objects"
    if objects.is_dir():
        for sub in os.scandir(objects):
            if sub.is_dir(follow_symlinks=False):
                yield from _glob(Path(sub.path), "*.lock")


def _prune_packs(mirror: Path, started: float) -> list[Path]:
    """Remove pack temp files older than ``started`` with dulwich's own clean-up
    (:meth:`DiskObjectStore.prune`); return the paths it removed."""
    if not (mirror / "objects").is_dir():
        return []
    before = set(_pack_temps(mirror))
    if not before:
        return []
    try:
        repo = Repo(str(mirror))
    except NotGitRepository:
        return []
    with repo:
        repo.object_store.prune(grace_period=max(int(time.time() - started), 0))
    return sorted(p for p in before if not p.exists())


def _pack_temps(mirror: Path) -> Iterator[Path]:
    objects = mirror / "objects"
    yield from _glob(objects, "tmp_pack_*")
    pack_dir = objects / "pack"
    for path in _glob(pack_dir, "*.pack"):
        if not path.with_suffix(".idx").exists():
            yield path


def _glob(folder: Path, pattern: str) -> Iterator[Path]:
    if folder.is_dir():
        yield from (p for p in folder.glob(pattern) if p.is_file())


def _older(path: Path, started: float) -> bool:
    try:
        return path.stat().st_mtime < started
    except FileNotFoundError:
        return False


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def _describe(path: Path) -> str:
    kind = "lock" if path.suffix == ".lock" else "temp file"
    return f"{kind} {path}"
