"""A commit email of a damaged repository (a blob file deleted from ``objects/``): one line
naming the object, the file that holds it and the repository; never a traceback.

Issue 17: ``deploybot notify --commit`` on such a commit (10 of 103 real build commits of
the corpus's history) printed a 42-line KeyError traceback. Exit 75, as every
MissingObjectError (``deploybot build``, ``run-once``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli import main
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=B", "-c", "user.email=b@example.org", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def delete_object(git_dir: Path, sha: str) -> None:
    (git_dir / "objects" / sha[:2] / sha[2:]).unlink()


def loosen(git_dir: Path) -> None:
    """Turn a repository's packs into loose objects (one file each), as git would."""
    for pack in sorted((git_dir / "objects" / "pack").glob("*.pack")):
        data = pack.read_bytes()
        pack.unlink()
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "-C", str(git_dir), "unpack-objects", "-q"], input=data, check=True)


@pytest.mark.parametrize("files", [1, 3])  # 3 modified files: git is asked first (and fails)
def test_notify_commit_of_a_missing_blob_is_one_line(tmp_path: Path, files: int) -> None:
    repo = tmp_path / "site"
    git(tmp_path, "init", "-q", "-b", "asf-site", str(repo))
    names = [f"page{i}.html" for i in range(files)]
    for name in names:
        (repo / name).write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Build 1")
    for name in names:
        (repo / name).write_text("two\n")
    git(repo, "commit", "-qam", "Build 2")
    lost = git(repo, "rev-parse", "HEAD~1:page0.html")
    delete_object(repo / ".git", lost)
    result = CliRunner().invoke(
        main, ["notify", "--commit", "HEAD", "--repo", str(repo), "--transport", "stdout"]
    )
    where = repo / ".git"
    assert (result.exit_code, result.stdout, result.stderr) == (
        75,
        "",
        f"deploybot: error: git object {lost} (page0.html) is missing from {where}: the "
        f"repository is damaged (check it with: git -C {where} fsck)\n",
    )


def test_the_email_in_run_once_of_a_missing_blob_is_one_line(tmp_path: Path) -> None:
    """The publish repository and its mirror both lost the blob the next email's diff reads
    (the front page as built before): the build is pushed, its email cannot be made from
    the mirror, the mirror is fetched anew (which is how a damaged mirror heals), and that
    fetch from the damaged repository fails: one line, no traceback; exit 1, since a
    repository that says it is corrupt does not heal by waiting (it was 75 before issue
    17's exit codes by cause)."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    lost = git(site.publish, "rev-parse", "asf-site:index.html")
    config = b"title: Small, renamed\nurl: https://small.example.org\n"  # every page changes
    commit_files(site.source, {"_config.yml": config}, "Rename", when=1_700_000_100)
    for repo in (site.publish, site.state / "publish.git"):
        loosen(repo)
        delete_object(repo, lost)
    done = site.run_process()
    assert done.returncode == 1, done.stderr
    warning, error = done.stderr.splitlines()  # exactly two lines
    assert warning == f"{site.state / 'publish.git'} is missing object {lost}: fetching it again"
    # The fetch stage's own words (git's upload-pack names no object).
    assert error.startswith(
        f"deploybot: error: publish.url {site.publish}: the server says its repository is corrupt ("
    ), error
    assert error.endswith(": run git fsck there"), error
