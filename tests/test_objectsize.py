"""``object_size`` reads a blob's size from its loose header or its pack entry (whole, or a
delta on an offset or on an object id), and agrees with the blob's length; git packs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.git.object_size import object_size
from tests.gitcli import run_git

ID = {"name": "t", "email": "t@example.org"}


def _blob_sizes(repo: Path) -> dict[str, int]:
    with Repo(str(repo)) as r:
        return {
            sha.decode(): len(r[sha].as_raw_string())
            for sha in r.object_store
            if r[sha].type_name == b"blob"
        }


def _repo_with_similar_blobs(path: Path) -> Path:
    path.mkdir()
    run_git(path, "init", "-q", **ID)
    base = "".join(f"line {i} of a file long enough to be stored as a delta\n" for i in range(400))
    for i in range(4):
        (path / "f.txt").write_text(base + f"edit {i}\n" * (i + 1))
        (path / "empty").write_text("")
        run_git(path, "add", "-A", **ID)
        run_git(path, "commit", "-q", "-m", f"c{i}", **ID)
    return path


def _delta_blobs(repo: Path) -> int:
    packs = [str(p) for p in (repo / ".git/objects/pack").glob("*.idx")]
    out = subprocess.run(
        ["git", "-C", str(repo), "verify-pack", "-v", *packs],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum(
        1 for line in out.splitlines() if line.split()[1:2] == ["blob"] and len(line.split()) == 7
    )


def test_loose_objects(tmp_path: Path) -> None:
    repo = _repo_with_similar_blobs(tmp_path / "r")
    blobs = _blob_sizes(repo)
    assert len(blobs) == 5
    with Repo(str(repo)) as r:
        assert {sha: object_size(r, sha) for sha in blobs} == blobs


@pytest.mark.parametrize("offset_deltas", ["true", "false"])  # OFS_DELTA or REF_DELTA
def test_packed_objects_and_deltas(tmp_path: Path, offset_deltas: str) -> None:
    repo = _repo_with_similar_blobs(tmp_path / "r")
    blobs = _blob_sizes(repo)
    run_git(repo, "-c", f"repack.useDeltaBaseOffset={offset_deltas}", "repack", "-adfq", **ID)
    assert _delta_blobs(repo) >= 2
    with Repo(str(repo)) as r:
        assert {sha: object_size(r, sha) for sha in blobs} == blobs
