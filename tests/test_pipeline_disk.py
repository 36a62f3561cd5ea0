"""A run that meets a full disk or a damaged mirror: exit 75 with one line, nothing half-done,
and the next run (with room again, or a re-fetched mirror) finishes the job."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import fullfs
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

NO_TMPFS = fullfs.unavailable()
needs_tmpfs = pytest.mark.skipif(NO_TMPFS is not None, reason=NO_TMPFS or "")


def _outbox(state: Path) -> list[str]:
    outbox = state / "outbox"
    return sorted(p.relative_to(outbox).as_posix() for p in outbox.rglob("*") if p.is_file())


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("deploybot: error: "), err
    return lines[0]


@needs_tmpfs
def test_full_disk_while_writing_the_build_exits_75_and_changes_nothing(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    before, outbox_before = site.head(), _outbox(site.state)
    # 3 MB that do not compress: the fetch (a pack in the source mirror) fits in the 4.5 MB
    # left, the same bytes as a loose object in the publish mirror do not.
    commit_files(site.source, {"big.bin": os.urandom(3 << 20)}, "Big file", when=1_700_000_100)
    full, head_then, outbox_then, again = fullfs.run_on_tmpfs(
        site.state,
        [{"fill": 4_500_000}, {"run": site.argv()}, {"run": _git_head(site)},
         {"run": _list_outbox(site)}, {"unfill": True}, {"run": site.argv()}],
        keep=tmp_path / "state-after",
    )  # fmt: skip
    assert full.code == 75, full
    line = _one_error_line(full.err)
    assert "no space left" in line.lower() and str(site.state / "publish.git") in line, line
    assert head_then.out.strip() == before
    assert _listing(outbox_then.out, site.state) == outbox_before
    assert again.code == 0, again
    assert "published" in again.out
    assert site.emails() == [before, site.head()]


def _git_head(site: SmallSite) -> list[str]:
    return ["git", "-C", str(site.publish), "rev-parse", "refs/heads/asf-site"]


def _list_outbox(site: SmallSite) -> list[str]:
    return ["find", str(site.state / "outbox"), "-type", "f"]


def _listing(find_output: str, state: Path) -> list[str]:
    outbox = state / "outbox"
    return sorted(Path(line).relative_to(outbox).as_posix() for line in find_output.split())


BERT_EDIT = {"_posts/2023-01-03-two.md": b"---\ntitle: Two\n---\nWorld, edited.\n"}


@needs_tmpfs
@pytest.mark.parametrize(
    ("folder", "named", "before_push"),
    [
        ("publish.git/objects", "publish.git", True),
        ("source.git/objects", "source.git", True),
        ("cache", "the build cache in", None),
        ("outbox", "outbox", False),
    ],
)
def test_full_disk_in_each_state_folder(
    tmp_path: Path, folder: str, named: str, before_push: bool | None
) -> None:
    """One state folder on a full file system: exit 75 and one line naming what could not
    be written; no lock file or half-written file is left, so the next run (with room
    again) publishes and emails the build exactly once."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    first = site.head()
    commit_files(site.source, BERT_EDIT, "Edit", when=1_700_000_100)
    full, head_then, locks, again = fullfs.run_on_tmpfs(
        site.state / folder,
        [{"fill": 0}, {"run": site.argv()}, {"run": _git_head(site)},
         {"run": ["find", str(site.state), "-name", "*.lock"]}, {"unfill": True},
         {"run": site.argv()}],
        keep=tmp_path / "after",
    )  # fmt: skip
    assert full.code == 75, full
    line = _one_error_line(full.err)
    assert "no space left" in line and named in line, line
    if before_push:
        assert head_then.out.strip() == first
    assert locks.out == ""
    assert again.code == 0, again
    build = site.head()
    assert build != first
    assert site.emails() == [first, build]


# --- a damaged mirror: an object file deleted from the state folder -----------------------


def _rev(repo: Path, spec: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", spec], capture_output=True)
    return done.stdout.decode().strip()


def _loosen(mirror: Path) -> None:
    """Turn the mirror's packs into loose objects (one file per object), as git would."""
    for pack in sorted((mirror / "objects" / "pack").glob("*.pack")):
        data = pack.read_bytes()
        pack.unlink()
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "-C", str(mirror), "unpack-objects", "-q"], input=data, check=True)


def _delete_object(mirror: Path, sha: str) -> None:
    (mirror / "objects" / sha[:2] / sha[2:]).unlink()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI (unpack-objects)")
@pytest.mark.parametrize("mirror", ["source.git", "publish.git"])
def test_a_mirror_missing_an_object_is_fetched_again(tmp_path: Path, mirror: str) -> None:
    """The source mirror loses a post's blob (read by the next build), or the publish mirror
    loses the front page's blob (read by the next email's diff, after the push): the run
    notices, fetches that mirror anew and finishes; nothing wedges, one email per build."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    first = site.head()
    config = b"title: Small, renamed\nurl: https://small.example.org\n"  # every page changes
    commit_files(site.source, {"_config.yml": config}, "Rename", when=1_700_000_100)
    if mirror == "source.git":
        _loosen(site.state / mirror)
        lost = _rev(site.source, "main:_posts/2023-01-02-one.md")
    else:
        lost = _rev(site.publish, "asf-site:index.html")
    _delete_object(site.state / mirror, lost)
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    assert f"{site.state / mirror} is missing object {lost}" in done.stderr
    build = site.head()
    assert build != first
    # The publish mirror's loss shows after the push, so the second try finds the branch
    # up to date and sends the build's email it owes.
    assert f"email for {(build or '')[:12]} sent via mbox" in done.stdout
    assert site.emails() == [first, build]
    again = site.run_process()
    assert (again.returncode, again.stdout.startswith("up to date")) == (0, True), again
    assert site.emails() == [first, build]


# --- the mbox on a full file system ------------------------------------------------------


@needs_tmpfs
def test_an_mbox_append_torn_by_a_full_disk_is_cut_and_the_retry_written_whole(
    tmp_path: Path,
) -> None:
    """The mbox alone on a file system with 8 KB left, a 40 KB email: the write stops part
    way (exit 75), the mbox is cut back to its size before the append; with room again,
    ``--retry-now`` appends the email once, after the earlier one, on a line of its own."""
    site = SmallSite(tmp_path)
    site.config.write_text(site.config.read_text().replace('"commits.mbox"', '"mail/box"'))
    site.mbox = tmp_path / "mail" / "box"
    assert site.run()[0] == 0
    first, before = site.head(), site.mbox.read_bytes()
    big = b"---\ntitle: Big\n---\n" + b"lorem ipsum dolor sit amet lore\n" * 1250
    commit_files(site.source, {"_posts/2023-01-04-big.md": big}, "Big", when=1_700_000_100)
    full, size_then, again = fullfs.run_on_tmpfs(
        site.mbox.parent,
        [{"fill": 8192}, {"run": site.argv()}, {"run": ["stat", "-c", "%s", str(site.mbox)]},
         {"unfill": True}, {"run": site.argv("--retry-now")}],
        keep=tmp_path / "mail-after",
    )  # fmt: skip
    assert full.code == 75, full
    assert full.err.count("\n") == 1 and "not delivered (kept in the outbox)" in full.err, full
    assert f"mbox {site.mbox}: [Errno 28] No space left on device" in full.err, full
    assert int(size_then.out) == len(before)
    assert again.code == 0, again
    site.mbox = tmp_path / "mail-after" / "box"
    assert site.emails() == [first, site.head()]
    after = site.mbox.read_bytes()
    assert after.startswith(before)
    assert after[len(before) :].startswith(b"From bot@example.org ")
