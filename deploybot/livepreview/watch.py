"""Watching the working tree: which saves the preview rebuilds for.

The watching itself is watchfiles' (inotify on Linux, FSEvents, kqueue or polling
elsewhere, through the Rust ``notify`` crate): :func:`saves` yields the source paths each
burst of saves touched, a burst being the events until :data:`QUIET_MS` pass without one
(at most :data:`MAX_BURST_MS`), so an editor's write-rename-chmod, or a ``git checkout``
of many files, is one rebuild. Events that arrive while a rebuild runs are kept and make
the next burst.

What is not the site's source is never reported (:class:`SourceFilter`): ``.git`` and the
other tool folders watchfiles leaves out, Jekyll's ``_site``, ``.jekyll-cache``,
``.sass-cache`` and ``.jekyll-metadata``, the preview's own folder when it lies inside the
source, and editors' swap, backup and lock files (Vim's ``.x.swp`` and ``4913``, Emacs'
``.#x`` and ``#x#``, ``x~``, JetBrains' ``___jb_tmp___``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import watchfiles

QUIET_MS = 50
"""A burst of saves ends after this many milliseconds without an event (watchfiles' ``step``)."""
MAX_BURST_MS = 1600
"""The longest a burst is waited for, in milliseconds (watchfiles' ``debounce``)."""
IGNORED_DIRS = (*watchfiles.DefaultFilter.ignore_dirs, "_site", ".jekyll-cache", ".sass-cache")
"""Folder names (at any depth) whose contents are never the site's source."""
IGNORED_NAMES = (
    *watchfiles.DefaultFilter.ignore_entity_patterns,
    r"^\.jekyll-metadata$",
    r"^4913$",  # Vim's probe that it may write in the folder
    r"^#.*#$",  # Emacs' auto-save file
    r"\.___jb_(tmp|old|bak)___$",
    r"\.deploybot-tmp$",
)
"""Regular expressions of file names that are editors' or tools' own files."""


class SourceFilter(watchfiles.DefaultFilter):
    """watchfiles' filter with Jekyll's and editors' files left out (module docstring), and
    the folders ``skip`` (absolute paths: the preview's own) too."""

    def __init__(self, skip: Iterable[Path] = ()) -> None:
        super().__init__(
            ignore_dirs=IGNORED_DIRS,
            ignore_entity_patterns=IGNORED_NAMES,
            ignore_paths=[os.path.realpath(p) for p in skip],
        )


def relative_paths(root: Path, changed: Iterable[str]) -> set[str]:
    """The ``/``-separated paths inside ``root`` of the absolute paths ``changed``
    (watchfiles reports the folder's real path); those outside it are dropped."""
    base = os.path.realpath(root)
    found = set()
    for path in changed:
        real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if real.startswith(base + os.sep):
            found.add(Path(os.path.relpath(real, base)).as_posix())
    return found


async def saves(root: Path, stop: Any, skip: Iterable[Path] = ()) -> AsyncIterator[set[str]]:
    """Yield, for each burst of saves under ``root``, the source paths it touched (see the
    module docstring; never empty), until the event ``stop`` (``asyncio.Event``) is set.
    Raises what watchfiles raises for a ``root`` it cannot watch (``FileNotFoundError``)."""
    watch = watchfiles.awatch(
        root, watch_filter=SourceFilter(skip), step=QUIET_MS, debounce=MAX_BURST_MS,
        stop_event=stop,
    )  # fmt: skip
    async for changes in watch:
        paths = relative_paths(root, (path for _change, path in changes))
        if paths:
            yield paths
