"""A run that meets a full disk or a damaged mirror: exit 75 with one line, nothing half-done,
and the next run (with room again, or a re-fetched mirror) finishes the job."""

from __future__ import annotations

import os
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
