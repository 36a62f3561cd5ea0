"""The state directory: its layout, the one-run-at-a-time lock, and its upkeep.

Everything a run keeps between runs lives under ``state.dir`` (docs/how-it-works.md): the lock, the
source and publish mirrors, the render cache, the outbox and the notify records. This module
says where each lives and what holding the state directory means: the directory made private,
the lock taken, a full disk reported as such, and what a killed earlier run left swept away
(:mod:`deploybot.state.stale`). The pipeline and the outbox command both hold it this way.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from deploybot.config.checks import check_writable_folder
from deploybot.config.schema import Config
from deploybot.git import repository
from deploybot.state import checkpoint, housekeeping, stale
from deploybot.support.errors import (
    DamagedRepositoryError,
    LockHeldError,
    MissingObjectError,
    no_space_left,
)

log = logging.getLogger("deploybot.statedir")


CACHE = "cache"
"""The state dir's folder of build caches (render cache, highlighted code blocks)."""


THEMES = "themes"
"""The folder of :attr:`StatePaths.themes` in the state folder."""
LINKS = "broken-links.json"
"""The file of :attr:`StatePaths.links` in the state folder."""


def build_cache(state_dir: Path) -> Path:
    """The cache folder of ``state_dir`` for ``deploybot build`` (highlighted code blocks),
    with ``state_dir`` made if missing, private (0700) as a run makes it. Raises
    ``OSError`` when it cannot be made."""
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return state_dir / CACHE


@dataclass(frozen=True)
class StatePaths:
    """The state folder's layout (all absolute paths under ``state.dir``)."""

    lock: Path
    """The run lock (``flock``): one run at a time."""
    source: Path
    """The bare mirror of the source repository."""
    publish: Path
    """The bare mirror of the publish repository."""
    outbox: Path
    """Emails and webhook posts waiting, sent and refused (:mod:`deploybot.notify.deliver`)."""
    cache: Path
    """The build cache (:mod:`deploybot.render.engine.cache`)."""
    themes: Path
    """The bare mirrors of the sites' git themes, one per URL (:mod:`deploybot.watch.theme`)."""
    links: Path
    """The last build's broken links, as JSON (:mod:`deploybot.pipeline.links`)."""

    def mirrors(self) -> tuple[Path, Path]:
        """The two mirrors, source first."""
        return self.source, self.publish


def state_paths(config: Config) -> StatePaths:
    """Return the state folder's layout for ``config`` (:class:`StatePaths`)."""
    root = config.state.dir
    return StatePaths(
        lock=root / "lock",
        source=root / "source.git",
        publish=root / "publish.git",
        outbox=root / "outbox",
        cache=root / CACHE,
        themes=root / THEMES,
        links=root / LINKS,
    )


@contextlib.contextmanager
def held(config: Config, *, sweep: bool = True) -> Iterator[StatePaths]:
    """Hold the state directory for one run; yields :func:`state_paths`.

    Checks that ``state.dir`` is writable, takes the lock, turns a full disk inside into
    :class:`~deploybot.support.errors.DiskFullError` and, with ``sweep``, removes the lock and temp
    files a killed run left (:func:`deploybot.state.stale.sweep`: safe only under the lock).

    Raises:
        ConfigError: ``state.dir`` is a file or not writable (exit 78).
        LockHeldError: another run holds the lock (exit 75).
        DiskFullError: no space left on the state directory's file system (exit 75).
    """
    paths = state_paths(config)
    check_writable_folder(config.state.dir, "state.dir", config.path)
    started = time.time()
    with locked(paths.lock), no_space_left(config.state.dir):
        checkpoint.reached(checkpoint.LOCKED, config.state.dir)
        if sweep:
            sweep_stale(config, paths, started=started)
        yield paths


def sweep_stale(config: Config, paths: StatePaths, *, started: float) -> None:
    """Remove what a killed run left (:func:`deploybot.state.stale.sweep`); only under the lock,
    taken at ``started`` (Unix time, s) or later."""
    stale.sweep(config.state.dir, list(paths.mirrors()), started=started)


@contextlib.contextmanager
def locked(path: Path, held_by: str = "another deploybot run holds the lock") -> Iterator[None]:
    """Hold the state directory's lock (``LockHeldError`` "<held_by> <path>" when another
    process holds it). ``deploybot serve`` holds its own one this way too.

    The lock is an ``flock`` on the file ``lock`` (what :mod:`filelock` takes on Unix, and
    :func:`deploybot.pipeline.noop.try_lock` too), which the kernel releases when its process dies,
    so a killed run never leaves it held. Taken with :mod:`fcntl` itself: importing filelock
    costs more than a no-op run's whole check. The state directory is made private (0700,
    also when an older version made it 0755): its outbox, records and mirrors are nobody
    else's to read. The process umask is left alone: ``git receive-pack`` into a local
    publish repository must write with it.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LockHeldError(f"{held_by} {path}") from None
    try:
        yield
    finally:
        os.close(fd)  # releases the flock


def drop_damaged_mirror(exc: BaseException, paths: StatePaths, *, last_try: bool) -> None:
    """Delete the mirror that ``exc`` (dulwich's exception for a missing or unreadable
    object, :func:`deploybot.git.repository.damaged_object`) came from, so the next attempt
    fetches it anew: mirrors only cache the remotes.

    Raises:
        BaseException: ``exc`` itself, when it is about no git object.
        MissingObjectError: the object is missing from a repository that is no mirror of
            ours (a remote), or ``last_try`` (still missing after a fresh fetch; exit 75).
        DamagedRepositoryError: the object cannot be read there (exit 1: a fresh fetch
            brought the same damage, or it is no mirror of ours).
    """
    damage = repository.damaged_object(exc)
    if damage is None:
        raise exc
    folder = damage.folder
    mirrors = {Path(os.path.abspath(mirror)) for mirror in paths.mirrors()}
    if folder is None or folder not in mirrors or last_try:
        error = MissingObjectError if damage.missing else DamagedRepositoryError
        raise error(damage.message()) from exc
    if damage.sha is None:
        problem = f"cannot be read ({damage.detail})"
    else:
        problem = f"{'is missing' if damage.missing else 'cannot read'} object {damage.sha}"
    log.warning("%s %s: the mirror is damaged, fetching it again", folder, problem)
    shutil.rmtree(folder)


def housekeep(paths: StatePaths) -> None:
    """Pack both mirrors when past git's gc thresholds; a failure here never fails the run."""
    for mirror in paths.mirrors():
        try:
            done = housekeeping.housekeep(mirror)
        except OSError as exc:
            log.warning("could not pack %s: %s", mirror, exc)
            continue
        if done:
            log.info("%s: %s", mirror, done)
