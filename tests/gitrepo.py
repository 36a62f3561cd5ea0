"""Test helper: commit a set of file changes to a real (bare or not) repository with dulwich."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

AUTHOR = b"Site Author <author@example.org>"


def tree_files(repo: Repo, tree_id: bytes, prefix: bytes = b"") -> dict[bytes, tuple[bytes, int]]:
    """Return ``{path: (blob id, mode)}`` for every blob under ``tree_id``."""
    out: dict[bytes, tuple[bytes, int]] = {}
    tree = repo[tree_id]
    assert isinstance(tree, Tree)
    for entry in tree.iteritems():
        path = prefix + entry.path
        if entry.mode & 0o170000 == 0o040000:
            out.update(tree_files(repo, entry.sha, path + b"/"))
        else:
            out[path] = (entry.sha, entry.mode)
    return out


def commit_files(
    repo_path: Path,
    changes: Mapping[str, bytes | None],
    message: str = "Edit",
    *,
    branch: str = "main",
    author: bytes = AUTHOR,
    when: int = 1_700_000_000,
    tz: int = 0,
) -> str:
    """Commit ``changes`` ({path: bytes, or None to delete}) on top of ``branch``; return the id."""
    ref = f"refs/heads/{branch}".encode()
    with Repo(str(repo_path)) as repo:
        parent = repo.refs[ref] if ref in repo.refs else None  # noqa: SIM401 (no .get on refs)
        files = tree_files(repo, repo[parent].tree) if parent else {}  # type: ignore[attr-defined]
        for path, data in changes.items():
            if data is None:
                files.pop(path.encode(), None)
                continue
            blob = Blob.from_string(data)
            repo.object_store.add_object(blob)
            files[path.encode()] = (blob.id, 0o100644)
        tree_id = commit_tree(repo.object_store, [(p, s, m) for p, (s, m) in sorted(files.items())])
        commit = Commit()
        commit.tree = tree_id
        commit.parents = [parent] if parent else []
        commit.author = commit.committer = author
        commit.author_time = commit.commit_time = when
        commit.author_timezone = commit.commit_timezone = tz
        commit.message = message.encode() + b"\n"
        repo.object_store.add_object(commit)
        repo.refs[ref] = commit.id
        if not repo.bare and b"HEAD" not in repo.refs:
            repo.refs.set_symbolic_ref(b"HEAD", ref)
        return commit.id.decode()


def read_branch(repo_path: Path, branch: str) -> dict[str, bytes]:
    """Return ``{path: bytes}`` of the branch head's tree."""
    with Repo(str(repo_path)) as repo:
        head = repo.refs[f"refs/heads/{branch}".encode()]
        files = tree_files(repo, repo[head].tree)  # type: ignore[attr-defined]
        return {p.decode(): repo[s].as_raw_string() for p, (s, _) in files.items()}


def head(repo_path: Path, branch: str) -> str | None:
    """Return the branch's head commit id, or None when the branch does not exist."""
    with Repo(str(repo_path)) as repo:
        ref = f"refs/heads/{branch}".encode()
        return repo.refs[ref].decode() if ref in repo.refs else None


def corpus_files(root: Path) -> dict[str, bytes]:
    """Return ``{relative path: bytes}`` for every file under ``root``."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
