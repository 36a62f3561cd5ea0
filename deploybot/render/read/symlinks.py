"""Symlinks and submodules of the source tree, as Jekyll's safe mode (GitHub Pages) reads
them, never reading outside the tree.

A git tree stores a symlink as a blob holding its target (``../shared/post.md``). Jekyll
(``entry_filter.rb``, ``--safe``) publishes a symlink whose real path is inside the source as
the file it points to (a page, a post, a static file, read under the link's own name), and
leaves out one that points outside. deploybot resolves the target inside the tree only,
by path, the way a file system would but on the tree's own entries (:class:`ResolvedTree`):

- each name of the target is taken from the link's folder: ``.`` is skipped, ``..`` goes up
  a folder (above the root: outside), and a name that is itself a symlink is replaced by
  its target (a chain, or a symlinked folder on the way), at most :data:`MAX_HOPS` times
  (Linux's ``MAXSYMLINKS``; more: a loop);
- the result must be a file of the tree whose path passes :mod:`deploybot.git.path_rules`.

A symlink that points outside the tree (an absolute target, or ``..`` above the root), at
nothing, at a folder, in a loop, or with a target of more than ``PATH_MAX`` bytes, is left
out with a one-line warning naming it and the target (Jekyll leaves the outside ones out
silently and stops at a missing one; the warning says what happened without stopping the
build). So is one the build reads by its name rather than publishes (``_config.yml``, a
data file, a layout or an include: "symlink not read"), which the site is then built
without. A symlink to a folder is not published (Jekyll follows it; deploybot does not list
a folder twice).

Submodules (gitlinks, mode 160000) are commits of another repository, which the source
tree does not hold: each is left out with a one-line warning naming its path
(:data:`SUBMODULE`); Jekyll would publish whatever a checkout put there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from deploybot.git import path_rules
from deploybot.render.read.source import SourceTree
from deploybot.support.errors import SourceError

MAX_HOPS = 40
"""The most symlinks followed for one path (Linux's ``MAXSYMLINKS``)."""
MAX_TARGET_BYTES = path_rules.MAX_PATH_BYTES
"""The longest symlink target read (``PATH_MAX``)."""
SUBMODULE = "a submodule (gitlink): not published (its files are in another repository)"
"""The warning for a submodule of the source tree."""
_NOT_PUBLISHED = "symlink not published: "
_NOT_READ = "symlink not read: "


@dataclass(frozen=True)
class Resolution:
    """Where a path leads: ``target`` (the file read for it; the path itself when it is no
    symlink) or ``None`` with ``problem`` saying why; ``chain`` lists every path the
    resolution looked at (the links, the target or the missing name), so a change to any
    of them changes the answer."""

    target: str | None
    chain: tuple[str, ...]
    problem: str | None = None


def is_symlink(tree: SourceTree, path: str) -> bool:
    """Whether ``path`` is a symlink of ``tree`` (``False`` for a tree that has none, a
    folder, or a missing path)."""
    probe = getattr(tree, "is_symlink", None)
    if probe is None:
        return False
    try:
        return bool(probe(path))
    except KeyError:
        return False


def submodules(tree: SourceTree) -> list[str]:
    """Return the paths of the submodules (gitlinks) of ``tree``, sorted ([] for a tree that
    has none)."""
    listing = getattr(tree, "submodules", None)
    return sorted(listing()) if listing is not None else []


def is_submodule(tree: SourceTree, path: str) -> bool:
    """Whether ``path`` is a submodule (gitlink) of ``tree``."""
    probe = getattr(tree, "is_submodule", None)
    return bool(probe(path)) if probe is not None else False


class ResolvedTree:
    """A :class:`~deploybot.render.read.source.SourceTree` in which a symlink reads as the file
    it points to inside the tree (see the module docstring); a symlink that does not
    resolve is absent (``KeyError``) to :meth:`read`, :meth:`blob_id` and :meth:`size`,
    and :meth:`problem` says why. :meth:`paths` lists the symlinks as the inner tree does."""

    def __init__(self, inner: SourceTree) -> None:
        self.inner = inner
        self._resolved: dict[str, Resolution] = {}

    def paths(self) -> Iterator[str]:
        """Yield the inner tree's paths."""
        return self.inner.paths()

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` is a symlink of the inner tree."""
        return is_symlink(self.inner, path)

    def is_submodule(self, path: str) -> bool:
        """Whether ``path`` is a submodule of the inner tree."""
        return is_submodule(self.inner, path)

    def submodules(self) -> list[str]:
        """The inner tree's submodules, sorted."""
        return submodules(self.inner)

    def resolve(self, path: str) -> Resolution:
        """Return where ``path`` leads (cached per path: the tree does not change)."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = self._resolve(path)
        return found

    def problem(self, path: str) -> str | None:
        """Why the symlink ``path`` is not published, or ``None`` (also for a non-link)."""
        return self.resolve(path).problem if self.is_symlink(path) else None

    def read_problem(self, path: str) -> str | None:
        """Why the symlink ``path``, a file the build reads by its name (``_config.yml``, a
        data file, a layout) rather than publishes, is not read, or ``None``."""
        problem = self.problem(path)
        return None if problem is None else _NOT_READ + problem.removeprefix(_NOT_PUBLISHED)

    def _real(self, path: str) -> str:
        if not self.is_symlink(path):
            return path
        resolution = self.resolve(path)
        if resolution.target is None:
            raise KeyError(path)
        return resolution.target

    def read(self, path: str) -> bytes:
        """Return the bytes of ``path``'s target. Raises ``KeyError`` when absent or when it
        does not resolve."""
        return self.inner.read(self._real(path))

    def blob_id(self, path: str) -> str:
        """Return the blob id of ``path``'s target. Raises ``KeyError`` as :meth:`read`."""
        return self.inner.blob_id(self._real(path))

    def size(self, path: str) -> int:
        """Return the size of ``path``'s target. Raises ``KeyError`` as :meth:`read`."""
        return self.inner.size(self._real(path))

    def _target_text(self, link: str) -> str | None:
        if self.inner.size(link) > MAX_TARGET_BYTES:
            return None
        return self.inner.read(link).decode("utf-8", "surrogateescape")

    def _resolve(self, path: str) -> Resolution:
        if not self.is_symlink(path):
            return Resolution(path, (path,))
        chain: list[str] = []
        done: list[str] = []
        pending = deque(path.split("/"))
        hops = 0
        while pending:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if not done:
                    return self._outside(path, chain)
                done.pop()
                continue
            here = "/".join([*done, name])
            if not self.is_symlink(here):
                done.append(name)
                continue
            chain.append(here)
            hops += 1
            text = self._target_text(here)
            if hops > MAX_HOPS or text is None:
                why = "a loop of symlinks" if text is not None else "a target too long"
                return Resolution(None, tuple(chain), f"{_NOT_PUBLISHED}{why}")
            if text.startswith("/"):
                return self._outside(path, chain)
            pending.extendleft(reversed(text.split("/")))
        return self._at(path, "/".join(done), chain)

    def _at(self, path: str, target: str, chain: list[str]) -> Resolution:
        chain.append(target)
        first = self._target_text(path) or ""
        try:
            path_rules.check_path(target)
            self.inner.blob_id(target)
        except (KeyError, SourceError):
            problem = f"{_NOT_PUBLISHED}its target {first!r} is not a file of the tree"
            return Resolution(None, tuple(chain), problem)
        return Resolution(target, tuple(chain))

    def _outside(self, path: str, chain: list[str]) -> Resolution:
        first = self._target_text(path) or ""
        problem = f"{_NOT_PUBLISHED}its target {first!r} is outside the source tree"
        return Resolution(None, tuple(chain), problem)
