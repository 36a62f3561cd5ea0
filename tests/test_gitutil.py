"""Tests for deploybot.git.repository: trees read and written as objects, diffs, fetch and push
helpers.

git itself is the oracle where it can be: ``git ls-tree``, ``git diff-tree`` and ``git fsck``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from deploybot.git import repository
from deploybot.git.repository import MODE_FILE, GitTree, RemoteMovedError
from deploybot.render.read.source import SourceTree, git_blob_id
from deploybot.support.errors import ConfigError, FetchError, PublishError, SourceError
from tests.gitcli import run_git
from tests.gitrepo import SNAPSHOT_AUTHOR, SNAPSHOT_WHEN, commit_snapshot

WHEN, AUTHOR = SNAPSHOT_WHEN, SNAPSHOT_AUTHOR


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (no user config) and return its stdout."""
    return run_git(repo, *args, name="A", email="a@example.org")


def test_git_tree_reads_a_tree_without_checkout(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    files = {"index.md": b"# Home\n", "_posts/2024-01-01-a.md": b"post", "run.sh": b"#!/bin/sh\n"}
    commit = commit_snapshot(repo_path, files, modes={"run.sh": 0o100755})
    tree_id = git(repo_path, "rev-parse", f"{commit}^{{tree}}").strip()

    with GitTree(repo_path, tree_id) as tree:
        assert isinstance(tree, SourceTree)
        assert list(tree.paths()) == sorted(files)
        for path, data in files.items():
            assert tree.read(path) == data
            assert tree.blob_id(path) == git_blob_id(data)
        assert tree.entries()["run.sh"][0] == 0o100755
        with pytest.raises(KeyError):
            tree.read("missing.md")
        with pytest.raises(KeyError):
            tree.blob_id("_posts")
    # reading after close reopens the repository
    assert tree.read("index.md") == b"# Home\n"
    tree.close()


def test_git_tree_skips_submodules_and_keeps_symlinks(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    with repository.bare_repo(repo_path) as repo:
        page = repository.add_blob(repo, b"page")
        link = repository.add_blob(repo, b"page.md")
        tree_id = repository.write_tree(
            repo,
            {
                "page.md": (MODE_FILE, page),
                "alias.md": (0o120000, link),
                "vendor/theme": (0o160000, "1" * 40),
            },
        )
    listing = git(repo_path, "ls-tree", "-r", tree_id)
    assert "160000 commit 1111111111111111111111111111111111111111\tvendor/theme" in listing

    with GitTree(repo_path, tree_id) as tree:
        assert list(tree.paths()) == ["alias.md", "page.md"]
        assert tree.is_symlink("alias.md")
        assert tree.read("alias.md") == b"page.md"
        assert tree.submodules() == ["vendor/theme"]
        assert tree.is_submodule("vendor/theme") and not tree.is_submodule("page.md")
    with repository.bare_repo(repo_path) as repo:
        empty = repository.write_tree(repo, {})
        assert repository.changed_paths(repo, empty, tree_id) == {"alias.md", "page.md"}
        every = repository.changed_paths(repo, empty, tree_id, include_gitlinks=True)
        assert every == {"alias.md", "page.md", "vendor/theme"}


def test_write_tree_matches_git(tmp_path: Path) -> None:
    repo_path = tmp_path / "r.git"
    with repository.bare_repo(repo_path) as repo:
        blobs = repository.blob_ids(repo, [("a/b/c.txt", b"c"), ("a/d.txt", b"d"), ("e.txt", b"e")])
        tree_id = repository.write_tree(repo, {p: (MODE_FILE, sha) for p, sha in blobs.items()})
        empty = repository.write_tree(repo, {})
        assert repository.tree_entries(repo, tree_id) == {
            p: (MODE_FILE, sha) for p, sha in blobs.items()
        }
    assert git(repo_path, "ls-tree", "-r", "--name-only", tree_id).split() == [
        "a/b/c.txt",
        "a/d.txt",
        "e.txt",
    ]
    assert empty == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree


def test_make_commit_is_what_git_would_store(tmp_path: Path) -> None:
    repo_path = tmp_path / "r.git"
    commit = commit_snapshot(repo_path, {"a.txt": b"a"})
    raw = git(repo_path, "cat-file", "commit", commit)
    assert f"author {AUTHOR} {int(WHEN.timestamp())} +0100\n" in raw
    assert f"committer {AUTHOR} {int(WHEN.timestamp())} +0100\n" in raw
    assert raw.endswith("\n\nchange\n")
    git(repo_path, "fsck", "--strict")
    with repository.bare_repo(repo_path) as repo, pytest.raises(ValueError):
        repository.make_commit(
            repo, "0" * 40, [], author=AUTHOR, message="m\n", when=datetime.now()
        )


def test_changed_paths_add_edit_delete_rename(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    old = {"keep.md": b"same", "edit.md": b"v1", "gone.md": b"bye", "old/name.md": b"moved text"}
    new = {"keep.md": b"same", "edit.md": b"v2", "added.md": b"hi", "new/name.md": b"moved text"}
    c1 = commit_snapshot(repo_path, old)
    c2 = commit_snapshot(repo_path, new, parents=(c1,))
    with repository.bare_repo(repo_path) as repo:
        t1, t2 = repository.commit_tree_id(repo, c1), repository.commit_tree_id(repo, c2)
        changed = repository.changed_paths(repo, t1, t2)
        assert repository.changed_paths(repo, t1, t1) == frozenset()
        assert repository.changed_paths(repo, None, t1) == frozenset(old)
    expected = {"edit.md", "gone.md", "added.md", "old/name.md", "new/name.md"}
    assert changed == expected
    oracle = git(repo_path, "diff-tree", "-r", "--no-renames", "--name-only", c1, c2).split()
    assert changed == set(oracle)


def test_changed_paths_sees_a_mode_change(tmp_path: Path) -> None:
    repo_path = tmp_path / "src.git"
    c1 = commit_snapshot(repo_path, {"run.sh": b"x"})
    c2 = commit_snapshot(repo_path, {"run.sh": b"x"}, parents=(c1,), modes={"run.sh": 0o100755})
    with repository.bare_repo(repo_path) as repo:
        t1, t2 = repository.commit_tree_id(repo, c1), repository.commit_tree_id(repo, c2)
        assert repository.changed_paths(repo, t1, t2) == {"run.sh"}


def test_non_utf8_paths_round_trip(tmp_path: Path) -> None:
    repo_path = tmp_path / "r.git"
    odd = b"caf\xe9.md".decode("utf-8", "surrogateescape")
    commit = commit_snapshot(repo_path, {odd: b"x", "café.md": b"y"})
    with repository.bare_repo(repo_path) as repo:
        tree_id = repository.commit_tree_id(repo, commit)
        assert set(repository.tree_entries(repo, tree_id)) == {odd, "café.md"}
    # The source tree reader refuses such a name (issue 8, point 10), naming its bytes.
    with GitTree(repo_path, tree_id) as tree, pytest.raises(SourceError) as caught:
        tree.read("café.md")
    assert str(caught.value) == "caf\\xe9.md: refused path: a name that is not UTF-8"


def test_fetch_and_push_refs_between_local_repos(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "remote.git", tmp_path / "mirror.git"
    c1 = commit_snapshot(remote, {"a": b"1"})
    with repository.bare_repo(mirror) as repo:
        tips = repository.fetch_refs(
            str(remote), repo, ["refs/heads/main", "refs/heads/x"], FetchError
        )
        assert tips == {"refs/heads/main": c1, "refs/heads/x": None}
        assert repository.local_ref(repo, "refs/heads/main") == c1

        tree = repository.write_tree(repo, {"a": (MODE_FILE, repository.add_blob(repo, b"2"))})
        c2 = repository.make_commit(repo, tree, [c1], author=AUTHOR, message="m\n", when=WHEN)
        with pytest.raises(RemoteMovedError):  # expected tip is wrong: nothing is sent
            repository.push_refs(str(remote), repo, {"refs/heads/main": (None, c2)}, PublishError)
        assert git(remote, "rev-parse", "main").strip() == c1
        repository.push_refs(str(remote), repo, {"refs/heads/main": (c1, c2)}, PublishError)
        assert repository.local_ref(repo, "refs/heads/main") == c1  # push leaves local refs
    assert git(remote, "rev-parse", "main").strip() == c2


def test_fetch_refs_names_the_url_when_there_is_no_repository(tmp_path: Path) -> None:
    """No repository there: nothing a retry heals, so a ConfigError naming the key (issue
    17), not a FetchError."""
    missing = tmp_path / "nowhere.git"
    with repository.bare_repo(tmp_path / "mirror.git") as repo, pytest.raises(ConfigError) as err:
        repository.fetch_refs(str(missing), repo, ["refs/heads/main"], FetchError)
    assert str(err.value).startswith(f"'source.url' {missing}: no git repository there (")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "made", [["branches"], ["branches", "refs", "refs/heads"], ["branches", "refs", "objects"]]
)
def test_open_bare_finishes_a_mirror_whose_creation_was_killed(
    tmp_path: Path, made: list[str]
) -> None:
    """A run killed inside ``Repo.init_bare`` leaves some of its folders and no objects/:
    the next run makes the mirror anew instead of failing on the existing folders."""
    mirror = tmp_path / "state" / "publish.git"
    for folder in made:
        (mirror / folder).mkdir(parents=True)
    with repository.bare_repo(mirror) as repo:
        blob = repository.add_blob(repo, b"x")
        repo.object_store.pack_loose_objects()
    with repository.bare_repo(mirror) as repo:
        assert repo[repository.oid(blob)].as_raw_string() == b"x"


def test_open_bare_leaves_a_folder_that_is_no_half_made_mirror_alone(tmp_path: Path) -> None:
    mirror = tmp_path / "publish.git"
    (mirror / "branches").mkdir(parents=True)
    (mirror / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        repository.open_bare(mirror)
    assert (mirror / "notes.txt").read_text() == "mine"


def test_a_silent_git_server_fails_the_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git:// server that accepts and then says nothing (a dead peer, a wedged daemon) used
    to hold the fetch, and the state lock, forever: it now fails after the idle timeout."""
    from tests.servers import call_within, trickling_server

    monkeypatch.setattr(repository, "IDLE_TIMEOUT", 1.0)
    silent = trickling_server(answer=None, drip=b"", interval=60)
    with silent as port, repository.bare_repo(tmp_path / "m") as repo:
        url = f"git://127.0.0.1:{port}/site.git"
        refs = ["refs/heads/main"]
        error = call_within(15, lambda: repository.fetch_refs(url, repo, refs, FetchError))
    assert isinstance(error, FetchError), error
    assert str(error).startswith(f"cannot fetch from {url}: ")


def test_a_silent_http_server_fails_the_fetch_after_one_idle_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An http(s) git server that accepts and never answers: urllib3's default retries
    (3 more) used to multiply the idle timeout by four (a daemon's only worker held 20
    minutes): now the fetch gives up after one silent connection."""
    from tests.servers import call_within, silent_server

    monkeypatch.setattr(repository, "IDLE_TIMEOUT", 0.5)
    with silent_server() as (port, accepted), repository.bare_repo(tmp_path / "m") as repo:
        url = f"http://127.0.0.1:{port}/site.git"
        refs = ["refs/heads/main"]
        error = call_within(30, lambda: repository.fetch_refs(url, repo, refs, FetchError))
        assert isinstance(error, FetchError), error
        assert str(error) == f"cannot fetch from {url}: the server stopped answering (timed out)"
        assert len(accepted) == 1


def _zlib_levels(pack: Path) -> set[bytes]:
    """The zlib header (2 bytes: its level bits) of every entry of a pack file."""
    from dulwich.object_format import DEFAULT_OBJECT_FORMAT
    from dulwich.pack import PackData

    with PackData(str(pack), object_format=DEFAULT_OBJECT_FORMAT) as data:
        return {b"".join(u.comp_chunks or [])[:2] for u in data.iter_unpacked(include_comp=True)}


def test_mirrors_write_and_push_at_zlib_level_one(tmp_path: Path) -> None:
    """git's own default for loose objects; a local push's pack too (bytes are free there)."""
    remote, mirror = tmp_path / "remote.git", tmp_path / "mirror.git"
    c1 = commit_snapshot(remote, {"a": b"1"})
    git(remote, "config", "receive.unpackLimit", "1")  # keep the pushed pack as sent
    with repository.bare_repo(mirror) as repo:
        repository.fetch_refs(str(remote), repo, ["refs/heads/main"], FetchError)
        blob = repository.add_blob(repo, b"<p>page</p>\n" * 1000)
        loose = mirror / "objects" / blob[:2] / blob[2:]
        assert loose.read_bytes()[:2] == b"\x78\x01"  # zlib's fastest level (git: 1)
        tree = repository.write_tree(repo, {"a": (MODE_FILE, blob)})
        c2 = repository.make_commit(repo, tree, [c1], author=AUTHOR, message="m\n", when=WHEN)
        repository.push_refs(str(remote), repo, {"refs/heads/main": (c1, c2)}, PublishError)
    packs = list((remote / "objects" / "pack").glob("*.pack"))
    assert packs and set().union(*map(_zlib_levels, packs)) == {b"\x78\x01"}
    assert git(remote, "cat-file", "-p", f"{c2}:a") == "<p>page</p>\n" * 1000
