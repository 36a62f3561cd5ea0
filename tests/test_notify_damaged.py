"""A commit email of a damaged repository (a blob file deleted from ``objects/``, or
overwritten with garbage): one line naming the object, the file that holds it and the
repository (an absolute path); never a traceback.

Issue 17: ``deploybot notify --commit`` on such a commit (10 of 103 real build commits of
the corpus's history) printed a 42-line KeyError traceback. Exit 1: a repository the user
points at does not heal by waiting. Inside ``run-once`` the state folder's mirror is fetched
anew, which heals it when only the mirror was damaged.
"""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")

FETCHED_AGAIN = ": the mirror is damaged, fetching it again"
"""How the warning of a mirror fetched again ends (deploybot.state.statedir)."""


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


def overwrite_object(git_dir: Path, sha: str, data: bytes) -> None:
    """Overwrite the loose object ``sha`` (git writes them read-only) with ``data``."""
    path = git_dir / "objects" / sha[:2] / sha[2:]
    path.chmod(0o644)
    path.write_bytes(data)


GARBAGE = {
    "garbage": b"garbage",  # dulwich: ObjectFormatException "Not a known type 6"
    "empty": b"",  # EmptyFileException
    "bad-zlib": b"x\x9c" + bytes(20),  # zlib.error
    "other-blob": zlib.compress(b"blob 4\x00two\n"),  # ChecksumMismatch
}


def two_builds(repo: Path, files: int) -> list[str]:
    """A repository on asf-site with two commits changing ``files`` pages; their names."""
    git(repo.parent, "init", "-q", "-b", "asf-site", str(repo))
    names = [f"page{i}.html" for i in range(files)]
    for name in names:
        (repo / name).write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Build 1")
    for name in names:
        (repo / name).write_text("two\n")
    git(repo, "commit", "-qam", "Build 2")
    return names


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
    two_builds(repo, files)
    lost = git(repo, "rev-parse", "HEAD~1:page0.html")
    delete_object(repo / ".git", lost)
    result = CliRunner().invoke(
        main, ["notify", "--commit", "HEAD", "--repo", str(repo), "--transport", "stdout"]
    )
    where = repo / ".git"
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        f"deploybot: error: git object {lost} (page0.html) is missing from {where}: the "
        f"repository is damaged (check it with: git -C {where} fsck)\n",
    )


@pytest.mark.parametrize("repo_option", [[], ["--repo", "."]])
def test_a_damaged_repository_in_the_current_folder_is_named_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo_option: list[str]
) -> None:
    repo = tmp_path / "site"
    two_builds(repo, 1)
    lost = git(repo, "rev-parse", "HEAD~1:page0.html")
    delete_object(repo / ".git", lost)
    monkeypatch.chdir(repo)
    args = ["notify", "--commit", "HEAD", *repo_option, "--transport", "stdout"]
    result = CliRunner().invoke(main, args)
    where = repo / ".git"
    assert (result.exit_code, result.stderr) == (
        1,
        f"deploybot: error: git object {lost} (page0.html) is missing from {where}: the "
        f"repository is damaged (check it with: git -C {where} fsck)\n",
    )


@pytest.mark.parametrize(
    ("kind", "files"),
    # git itself does not check a loose object's hash when it reads it: with 3 modified
    # files git makes the text, from the other blob's contents (only fsck tells)
    [
        (kind, files)
        for kind in sorted(GARBAGE)
        for files in (1, 3)
        if (kind, files) != ("other-blob", 3)
    ],
)
def test_notify_commit_of_a_blob_overwritten_with_garbage_is_one_line(
    tmp_path: Path, files: int, kind: str
) -> None:
    repo = tmp_path / "site"
    two_builds(repo, files)
    bad = git(repo, "rev-parse", "HEAD~1:page0.html")
    overwrite_object(repo / ".git", bad, GARBAGE[kind])
    result = CliRunner().invoke(
        main, ["notify", "--commit", "HEAD", "--repo", str(repo), "--transport", "stdout"]
    )
    where = repo / ".git"
    assert (result.exit_code, result.stdout) == (1, ""), result.stderr
    assert result.stderr == (
        f"deploybot: error: git object {bad} (page0.html) in {where} cannot be read: the "
        f"repository is damaged (check it with: git -C {where} fsck)\n"
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
    assert warning == f"{site.state / 'publish.git'} is missing object {lost}{FETCHED_AGAIN}"
    # The fetch stage's own words (git's upload-pack names no object).
    assert error.startswith(
        f"deploybot: error: publish.url {site.publish}: the server says its repository is corrupt ("
    ), error
    assert error.endswith(": run git fsck there"), error


def test_the_email_in_run_once_heals_a_mirror_blob_overwritten_with_garbage(
    tmp_path: Path,
) -> None:
    """Only the state folder's mirror is damaged: it is fetched anew and the email goes out."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    bad = git(site.publish, "rev-parse", "asf-site:index.html")
    config = b"title: Small, renamed\nurl: https://small.example.org\n"  # every page changes
    commit_files(site.source, {"_config.yml": config}, "Rename", when=1_700_000_100)
    mirror = site.state / "publish.git"
    loosen(mirror)
    overwrite_object(mirror, bad, b"garbage")
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"{mirror} cannot read object {bad}{FETCHED_AGAIN}"]
    assert len(site.emails()) == 2 and site.emails()[1] == site.head()


def test_the_email_in_run_once_of_a_blob_garbage_everywhere_is_one_line(tmp_path: Path) -> None:
    """The publish repository and its mirror hold the same garbage object: after the mirror
    is fetched anew it is still unreadable (or the fetch refuses it): one line, exit 1."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    bad = git(site.publish, "rev-parse", "asf-site:index.html")
    config = b"title: Small, renamed\nurl: https://small.example.org\n"
    commit_files(site.source, {"_config.yml": config}, "Rename", when=1_700_000_100)
    for repo in (site.publish, site.state / "publish.git"):
        loosen(repo)
        overwrite_object(repo, bad, b"garbage")
    done = site.run_process()
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0] == f"{site.state / 'publish.git'} cannot read object {bad}{FETCHED_AGAIN}"
    assert lines[1].startswith("deploybot: error: ") and "Traceback" not in done.stderr


def test_an_unreadable_source_commit_leaves_the_source_section_out(tmp_path: Path) -> None:
    """The source section is what an email can do without: an unreadable commit in the
    source mirror leaves it out (as a missing one does), and the email is sent."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    mirror = site.state / "source.git"
    loosen(mirror)
    overwrite_object(mirror, site.first, b"garbage")
    args = ["notify", "--commit", "asf-site", "--transport", "stdout", "--config", str(site.config)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    body = result.stdout_bytes.decode("utf-8")
    assert "\ncommit " in body and "Built from " not in body
