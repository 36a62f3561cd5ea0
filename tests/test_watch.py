"""Tests for deploybot.watch.fetch: fetching the source branch into a mirror, over real transports.

Remotes are bare repositories in ``tmp_path``, served as a path, ``file://``, over HTTP by
dulwich.web in-process and over ``git://`` by ``git daemon``, all on 127.0.0.1 only.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deploybot.git import repository
from deploybot.support.errors import EX_TEMPFAIL, ConfigError, FetchError
from deploybot.watch.fetch import fetch_source
from tests.gitrepo import commit_snapshot
from tests.servers import free_port, git_daemon, serve_http

WHEN = datetime(2024, 3, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=-7)))
AUTHOR = "Site Author <author@example.org>"
SITE = {f"_posts/2024-01-{i:02d}-post.md": f"post {i}\n".encode() * 20 for i in range(1, 31)}


def commit_files(repo_path: Path, files: dict[str, bytes], parents: tuple[str, ...] = ()) -> str:
    """Commit ``files`` as the whole tree of a new commit on ``main`` at :data:`WHEN`."""
    return commit_snapshot(repo_path, files, parents=parents, when=WHEN)


def pack_object_counts(repo_path: Path) -> list[int]:
    """Return the number of objects in each pack of ``repo_path``, sorted."""
    with repository.bare_repo(repo_path) as repo:
        return sorted(len(pack) for pack in repo.object_store.packs)


@pytest.mark.parametrize("as_url", [False, True], ids=["path", "file-url"])
def test_fetch_from_a_local_repository(tmp_path: Path, as_url: bool) -> None:
    remote = tmp_path / "src.git"
    tip = commit_files(remote, {"index.md": b"# Hi\n", **SITE})
    url = remote.as_uri() if as_url else str(remote)

    snap = fetch_source(url, "main", tmp_path / "state" / "mirror.git")
    with snap.tree:
        assert snap.commit == tip
        assert list(snap.tree.paths()) == sorted(["index.md", *SITE])
        assert snap.tree.read("index.md") == b"# Hi\n"
    assert snap.commit_time == int(WHEN.timestamp())
    assert snap.commit_tz_offset == -7 * 3600
    assert snap.since is None and snap.changed_paths is None


def test_fetch_over_http(tmp_path: Path) -> None:
    remote = tmp_path / "src.git"
    c1 = commit_files(remote, {"index.md": b"v1", **SITE})
    mirror = tmp_path / "mirror.git"
    with serve_http(remote) as url:
        first = fetch_source(url, "main", mirror)
        c2 = commit_files(remote, {"index.md": b"v2", **SITE}, parents=(c1,))
        second = fetch_source(url, "main", mirror, since=c1)
    assert first.commit == c1
    assert second.commit == c2
    assert second.changed_paths == frozenset({"index.md"})
    with second.tree:
        assert second.tree.read("index.md") == b"v2"


def test_refetch_is_incremental(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "src.git", tmp_path / "mirror.git"
    c1 = commit_files(remote, {"index.md": b"v1", **SITE})
    fetch_source(str(remote), "main", mirror)
    assert pack_object_counts(mirror) == [1 + 2 + 31]  # commit, root + _posts trees, blobs

    fetch_source(str(remote), "main", mirror)  # nothing new: no new pack
    assert pack_object_counts(mirror) == [34]

    commit_files(remote, {"index.md": b"v2", **SITE}, parents=(c1,))
    fetch_source(str(remote), "main", mirror, since=c1)
    assert pack_object_counts(mirror) == [3, 34]  # only the commit, root tree and new blob


def test_refetch_over_git_daemon_is_incremental(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "src.git", tmp_path / "mirror.git"
    c0 = commit_files(remote, {"old.md": b"history", **SITE})
    c1 = commit_files(remote, {"index.md": b"v1", **SITE}, parents=(c0,))
    with git_daemon(tmp_path) as base:
        url = f"{base}/src.git"
        first = fetch_source(url, "main", mirror)
        c2 = commit_files(remote, {"index.md": b"v2", **SITE}, parents=(c1,))
        second = fetch_source(url, "main", mirror, since=c1)
    assert (first.commit, second.commit) == (c1, c2)
    assert second.changed_paths == frozenset({"index.md"})
    # first pack: c0 (commit, 2 trees, 31 blobs) + c1 (commit, root tree, index.md);
    # second pack: only c2's commit, root tree and new blob
    assert pack_object_counts(mirror) == [3, 34 + 3]


def test_changed_paths_since_a_commit(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "src.git", tmp_path / "mirror.git"
    old = {"keep.md": b"same", "edit.md": b"v1", "gone.md": b"x", "a/name.md": b"moved"}
    new = {"keep.md": b"same", "edit.md": b"v2", "added.md": b"y", "b/name.md": b"moved"}
    c1 = commit_files(remote, old)
    fetch_source(str(remote), "main", mirror)
    commit_files(remote, new, parents=(c1,))

    snap = fetch_source(str(remote), "main", mirror, since=c1)
    assert snap.since == c1
    assert snap.changed_paths == frozenset(
        {"edit.md", "gone.md", "added.md", "a/name.md", "b/name.md"}
    )
    same = fetch_source(str(remote), "main", mirror, since=snap.commit)
    assert same.changed_paths == frozenset()


@pytest.mark.parametrize("since", [None, "f" * 40, "not-a-commit"])
def test_changed_paths_unknown_without_a_known_since(tmp_path: Path, since: str | None) -> None:
    remote = tmp_path / "src.git"
    commit_files(remote, {"index.md": b"x"})
    snap = fetch_source(str(remote), "main", tmp_path / "mirror.git", since=since)
    assert snap.since == since
    assert snap.changed_paths is None


def test_missing_branch_is_a_config_error(tmp_path: Path) -> None:
    remote = tmp_path / "src.git"
    commit_files(remote, {"index.md": b"x"})
    with pytest.raises(ConfigError, match=r"source\.branch.*'trunk'"):
        fetch_source(str(remote), "trunk", tmp_path / "mirror.git")


@pytest.mark.parametrize("url", ["{tmp}/nowhere.git", "file://{tmp}/nowhere.git", "{tmp}"])
def test_local_path_without_a_repository_is_a_config_error(tmp_path: Path, url: str) -> None:
    """Retrying cannot fix a wrong path: exit 78 naming source.url, not 75."""
    with pytest.raises(ConfigError, match=r"^source\.url: .* (does not exist|is not a git repo)"):
        fetch_source(url.format(tmp=tmp_path), "main", tmp_path / "mirror.git")


@pytest.mark.parametrize(
    "url",
    ["git://127.0.0.1:{port}/src.git", "http://127.0.0.1:{port}/src.git"],
    ids=["git", "http"],
)
def test_unreachable_remote_is_a_fetch_error(tmp_path: Path, url: str) -> None:
    location = url.format(port=free_port(), tmp=tmp_path)
    with pytest.raises(FetchError) as err:
        fetch_source(location, "main", tmp_path / "mirror.git")
    assert err.value.exit_code == EX_TEMPFAIL
    message = str(err.value)
    assert location in message and "\n" not in message
