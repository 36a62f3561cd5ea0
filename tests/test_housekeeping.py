"""Mirror housekeeping: loose objects packed past a limit, packs consolidated, nothing lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

from deploybot.git import repository
from deploybot.state.housekeeping import housekeep
from tests.gitrepo import commit_files, read_branch


def test_packs_loose_objects_past_the_limit(tmp_path: Path) -> None:
    repo = tmp_path / "mirror.git"
    repository.open_bare(repo).close()
    files = {f"p/{i}.html": f"<p>{i}</p>\n".encode() for i in range(30)}
    commit_files(repo, files, "build", branch="asf-site")
    with repository.bare_repo(repo) as r:
        loose = r.object_store.count_loose_objects()
    assert loose > 30
    assert housekeep(repo, loose_limit=loose) == ""  # not past the limit: nothing done
    assert housekeep(repo, loose_limit=10) == f"packed {loose} loose objects"
    with repository.bare_repo(repo) as r:
        assert r.object_store.count_loose_objects() == 0
        assert len(r.object_store.packs) == 1
    assert read_branch(repo, "asf-site") == files
    # git's order: the commit, every tree, then the pages (a walk of the trees reads a few
    # pages of the pack, not all of it)
    (idx,) = repo.glob("objects/pack/*.idx")
    listed = subprocess.run(
        ["git", "verify-pack", "-v", str(idx)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    kinds = [line.split()[1] for line in listed if len(line.split()) > 4]
    assert kinds == ["commit", "tree", "tree"] + ["blob"] * 30


def test_consolidates_packs_past_the_limit(tmp_path: Path) -> None:
    repo = tmp_path / "mirror.git"
    repository.open_bare(repo).close()
    expected: dict[str, bytes] = {}
    for n in range(4):
        expected[f"{n}.html"] = f"build {n}\n".encode()
        commit_files(repo, {f"{n}.html": expected[f"{n}.html"]}, f"b{n}", when=1_700_000_000 + n)
        housekeep(repo, loose_limit=0)
    with repository.bare_repo(repo) as r:
        assert len(r.object_store.packs) == 4
    assert housekeep(repo, pack_limit=3) == "repacked 4 packs"
    with repository.bare_repo(repo) as r:
        assert len(r.object_store.packs) == 1
    assert read_branch(repo, "main") == expected


def test_missing_mirror_is_fine(tmp_path: Path) -> None:
    assert housekeep(tmp_path / "none.git") == ""
