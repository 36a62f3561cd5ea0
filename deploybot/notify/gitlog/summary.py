"""The git reads behind the summary ("refchange") email: the new commits and the tree diff.

* :func:`new_commits`: ``git log --topo-order --reverse --format=%H old..new``.
* :func:`brief_summary`: multimail's ``%h %s`` pairs for the ``from``/``new`` lines.
* :func:`diff_tree_summary`: ``git diff-tree --stat --summary --find-copies-harder old..new``
  (git-multimail's default ``diffOpts``), the "Summary of changes:" block.

Built on the diff engine's public API (:mod:`.diff_patch`, :mod:`.diff_renames`,
:mod:`.diffstat`, :mod:`.commit_log`). ``--find-copies-harder`` is ``-C`` with the unchanged
files as copy sources too (git's ``diffcore-rename.c``); their pairs are queued for the
detection and dropped from the output afterwards, as ``diff_flush`` drops unmodified pairs.
``diff-tree --stat`` is always 80 columns wide (research §4.1).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dulwich.object_store import iter_tree_contents
from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo
from dulwich.walk import ORDER_TOPO, Walker

from deploybot.notify.gitlog.commit_log import (
    BlobReader,
    abbrev_length,
    tree_changes,
    unique_abbrev,
)
from deploybot.notify.gitlog.diff import file_script
from deploybot.notify.gitlog.diff_patch import stat_entry
from deploybot.notify.gitlog.diff_renames import FilePair, Side, detect_copies, similarity_percent
from deploybot.notify.gitlog.diffstat import StatEntry, format_diffstat, path_name, rename_name
from deploybot.notify.gitlog.message import commit_message, commit_subject

DIFF_TREE_WIDTH = 80
S_IFMT = 0o170000
S_IFGITLINK = 0o160000

__all__ = [
    "DiffTree",
    "brief_summary",
    "diff_tree",
    "diff_tree_summary",
    "is_ancestor",
    "new_commits",
    "short_id",
]


@dataclass(frozen=True)
class DiffTree:
    """The tree diff of ``old..new``: per-file stat entries and the ``--summary`` lines.

    ``stat`` holds ``format_diffstat`` lines (each file, then `` N files changed, ...``);
    ``summary`` the `` create mode ...``/`` rename ... (NN%)`` lines; ``files``,
    ``insertions`` and ``deletions`` the totals (binary files count as files only).
    """

    entries: tuple[StatEntry, ...]
    stat: tuple[str, ...]
    summary: tuple[str, ...]

    @property
    def files(self) -> int:
        return len(self.entries)

    @property
    def insertions(self) -> int:
        return sum(e.added for e in self.entries if not e.binary)

    @property
    def deletions(self) -> int:
        return sum(e.deleted for e in self.entries if not e.binary)


def new_commits(repo_path: Path, old: str | None, new: str) -> list[str]:
    """Return the commits in ``old..new`` (all ancestors of ``new`` when ``old`` is None),
    oldest first: ``git rev-list --topo-order --reverse``.

    Raises:
        KeyError: ``new`` or ``old`` is not in the repository.
    """
    with Repo(str(repo_path)) as repo:
        walker = Walker(
            repo.object_store,
            include=[ObjectID(new.encode("ascii"))],
            exclude=[ObjectID(old.encode("ascii"))] if old else None,
            order=ORDER_TOPO,
        )
        return [entry.commit.id.decode("ascii") for entry in walker][::-1]


def is_ancestor(repo_path: Path, ancestor: str, commit: str) -> bool:
    """True when ``ancestor`` is ``commit`` or one of its ancestors (``git merge-base
    --is-ancestor``); False also when ``ancestor`` is not in the repository."""
    with Repo(str(repo_path)) as repo:
        if ObjectID(ancestor.encode("ascii")) not in repo.object_store:
            return False
        walker = Walker(repo.object_store, include=[ObjectID(commit.encode("ascii"))])
        return any(entry.commit.id.decode("ascii") == ancestor for entry in walker)


def short_id(repo: Repo, sha: str) -> str:
    """git's ``%h``: the automatic abbreviation length (:func:`.commit_log.abbrev_length`),
    longer while another object shares the prefix (``find_unique_abbrev``)."""
    return unique_abbrev(repo, sha.encode("ascii"), abbrev_length(repo)).decode("ascii")


def brief_summary(repo_path: Path, commits: list[str]) -> list[tuple[str, str]]:
    """Return ``(short id, subject)`` for each commit, as ``git log --format='%h %s'``."""
    with Repo(str(repo_path)) as repo:
        out = []
        for sha in commits:
            obj = repo[sha.encode("ascii")]
            if not isinstance(obj, Commit):
                raise KeyError(f"{sha} is not a commit")
            out.append((short_id(repo, sha), commit_subject(commit_message(obj))))
        return out


def diff_tree(repo_path: Path, old: str | None, new: str, *, harder: bool = True) -> DiffTree:
    """Return ``git diff-tree --stat --summary [--find-copies-harder] old new`` as data.

    With ``harder=False`` it is ``-C`` (copies from modified files only), as ``git log -C``.
    ``old`` None compares with the empty tree (every file created).

    Raises:
        KeyError: ``old`` or ``new`` does not name a commit in the repository.
    """
    with Repo(str(repo_path)) as repo:
        old_tree = _tree_of(repo, old) if old else None
        if harder:
            before = _flatten(repo, old_tree) if old_tree else {}
            pairs = _queue(before, _flatten(repo, _tree_of(repo, new)))
        else:  # only the folders that differ are read
            pairs = tree_changes(repo, old_tree, _tree_of(repo, new))
        loader = BlobReader(repo)
        found = [p for p in detect_copies(pairs, loader.load) if not _unmodified(p)]
        entries = tuple(stat_entry(p, loader.content(p.old), loader.content(p.new)) for p in found)
    file_script.cache_clear()  # it holds the last file pair
    stat = tuple(format_diffstat(entries, DIFF_TREE_WIDTH))
    return DiffTree(entries, stat, tuple(line for p in found for line in summary_lines(p)))


def diff_tree_summary(repo_path: Path, old: str, new: str) -> list[str]:
    """The "Summary of changes:" block: the stat lines, then the ``--summary`` lines."""
    result = diff_tree(repo_path, old, new)
    return [*result.stat, *result.summary]


def summary_lines(pair: FilePair) -> Iterator[str]:
    """``diff_summary`` of git's ``diff.c`` for one pair (``--summary``)."""
    old, new = pair.old, pair.new
    if new is None and old is not None:
        yield f" delete mode {old.mode:06o} {path_name(old.path)}"
    elif old is None and new is not None:
        yield f" create mode {new.mode:06o} {path_name(new.path)}"
    elif old is not None and new is not None:
        if pair.status in ("R", "C"):
            word = "rename" if pair.status == "R" else "copy"
            yield f" {word} {rename_name(old.path, new.path)} ({similarity_percent(pair.score)}%)"
            if old.mode != new.mode:
                yield f" mode change {old.mode:06o} => {new.mode:06o}"
        elif old.mode != new.mode:
            yield f" mode change {old.mode:06o} => {new.mode:06o} {path_name(new.path)}"


def _tree_of(repo: Repo, sha: str) -> bytes:
    obj = repo[sha.encode("ascii")]
    if not isinstance(obj, Commit):
        raise KeyError(f"{sha} is not a commit")
    return bytes(obj.tree)


def _flatten(repo: Repo, tree: bytes) -> dict[bytes, Side]:
    return {
        entry.path: Side(entry.path, entry.mode, entry.sha)
        for entry in iter_tree_contents(repo.object_store, ObjectID(tree))
        if entry.path is not None and entry.mode is not None and entry.sha is not None
    }


def _queue(before: dict[bytes, Side], after: dict[bytes, Side]) -> list[FilePair]:
    """The path-ordered tree diff, unchanged files included (``--find-copies-harder``)."""
    pairs: list[FilePair] = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path), after.get(path)
        if a is None:
            pairs.append(FilePair(None, b, "A"))
        elif b is None:
            pairs.append(FilePair(a, None, "D"))
        else:
            pairs.append(FilePair(a, b, "T" if (a.mode ^ b.mode) & S_IFMT else "M"))
    return pairs


def _unmodified(pair: FilePair) -> bool:
    return pair.status == "M" and pair.old == pair.new
