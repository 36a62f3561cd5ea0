"""Test helper: commit a set of file changes to a real (bare or not) repository with dulwich."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dulwich.objects import Blob
from dulwich.repo import Repo

from deploybot.git import repository
from deploybot.git.repository import MODE_FILE

AUTHOR = b"Site Author <author@example.org>"


def commit_files(
    repo_path: Path,
    changes: Mapping[str, bytes | None],
    message: str = "Edit",
    *,
    branch: str = "main",
    author: bytes = AUTHOR,
    when: int = 1_700_000_000,
    tz: int = 0,
    modes: Mapping[str, int] | None = None,
) -> str:
    """Commit ``changes`` ({path: bytes, or None to delete}) on top of ``branch``; return the id.

    ``when`` is seconds since the epoch and ``tz`` the zone, in seconds east of UTC.
    ``modes`` gives a path's git mode (default a regular file): ``0o120000`` makes a symlink
    (its bytes are the target), ``0o160000`` a submodule (its bytes are a commit id, hex).
    """
    ref = f"refs/heads/{branch}"
    with Repo(str(repo_path)) as repo:
        parent = repository.local_ref(repo, ref)
        tree = repository.commit_tree_id(repo, parent) if parent else None
        files = repository.tree_entries(repo, tree, include_gitlinks=True)
        for path, data in changes.items():
            if data is None:
                files.pop(path, None)
            elif (modes or {}).get(path) == 0o160000:
                files[path] = (0o160000, data.decode("ascii"))
            else:
                mode = (modes or {}).get(path, MODE_FILE)
                files[path] = (mode, repository.add_blob(repo, data))
        commit = repository.make_commit(
            repo,
            repository.write_tree(repo, files),
            [parent] if parent else [],
            author=author.decode("utf-8"),
            message=message + "\n",
            when=datetime.fromtimestamp(when, timezone(timedelta(seconds=tz))),
        )
        repository.set_local_refs(repo, {ref: commit})
        if not repo.bare and b"HEAD" not in repo.refs:
            repo.refs.set_symbolic_ref(b"HEAD", ref.encode())
        return commit


def read_branch(repo_path: Path, branch: str) -> dict[str, bytes]:
    """Return ``{path: bytes}`` of the branch head's tree."""
    with Repo(str(repo_path)) as repo:
        head = repository.local_ref(repo, f"refs/heads/{branch}")
        assert head is not None, f"no branch {branch}"
        files = repository.tree_entries(repo, repository.commit_tree_id(repo, head))
        out: dict[str, bytes] = {}
        for path, (_mode, sha) in files.items():
            blob = repo[repository.oid(sha)]
            assert isinstance(blob, Blob)
            out[path] = blob.as_raw_string()
        return out


def head(repo_path: Path, branch: str) -> str | None:
    """Return the branch's head commit id, or None when the branch does not exist."""
    with Repo(str(repo_path)) as repo:
        return repository.local_ref(repo, f"refs/heads/{branch}")


def corpus_files(root: Path) -> dict[str, bytes]:
    """Return ``{relative path: bytes}`` for every file under ``root``."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


SNAPSHOT_WHEN = datetime(2024, 3, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=1)))
SNAPSHOT_AUTHOR = "Site Author <author@example.org>"


def commit_snapshot(
    repo_path: Path,
    files: Mapping[str, bytes],
    *,
    parents: tuple[str, ...] = (),
    branch: str = "main",
    modes: Mapping[str, int] | None = None,
    when: datetime = SNAPSHOT_WHEN,
) -> str:
    """Commit ``files`` as the whole tree of a new commit on ``branch`` (bare repo, made if
    missing) by :data:`SNAPSHOT_AUTHOR` at ``when``; return its id."""
    with repository.bare_repo(repo_path) as repo:
        blobs = repository.blob_ids(repo, files.items())
        entries = {p: ((modes or {}).get(p, repository.MODE_FILE), sha) for p, sha in blobs.items()}
        tree = repository.write_tree(repo, entries)
        commit = repository.make_commit(
            repo, tree, list(parents), author=SNAPSHOT_AUTHOR, message="change\n", when=when
        )
        repository.set_local_refs(repo, {f"refs/heads/{branch}": commit})
    return commit
