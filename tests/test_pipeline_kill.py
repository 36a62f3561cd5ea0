"""kill -9 at chosen points, then plain runs: nothing wedges, no email is lost or doubled.

Every run is its own ``deploybot`` process (:class:`tests.killsite.KillSite`); a kill point
(:mod:`tests.killpoints`) makes the process SIGKILL itself, so what it leaves on disk is what
a real ``kill -9`` leaves.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from tests.gitrepo import head
from tests.killsite import KillSite, read_mbox

KILLED = -9


@pytest.fixture
def site(tmp_path: Path) -> KillSite:
    return KillSite(tmp_path, posts=12)


def _settled(site: KillSite) -> None:
    """Plain runs reach "up to date" (each exits 0 or 75) with one email per build."""
    runs = site.settle()
    assert all(run.code in (0, 75) for run in runs), [run.out for run in runs]
    assert runs[-1].code == 0 and "up to date" in runs[-1].out, runs[-1].out
    assert site.waiting() == []
    audit = site.audit()
    assert audit.ok, audit


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


# --- 4. stale locks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "point", ["lock:/objects/:20", "lock:/refs/:1", "lock:/pack/:1", "lock:/refs/:3"]
)
def test_killed_holding_a_git_lock_file_does_not_wedge(site: KillSite, point: str) -> None:
    """dulwich's ``<path>.lock`` files (O_EXCL) left by a kill are broken by the next run."""
    assert site.run(kill_at=point).code == KILLED
    left = list(site.state.rglob("*.lock"))
    assert left, "the kill point left no lock file"
    run = site.run()
    assert run.code == 0, run.out
    assert "removed stale lock" in run.out or "published" in run.out
    assert not [p for p in site.state.rglob("*.lock") if p in left]
    _settled(site)


def test_stale_locks_and_temp_files_of_every_kind_are_removed(site: KillSite) -> None:
    assert site.run().code == 0
    site.change()
    stale = [
        "source.git/refs/heads/main.lock",
        "source.git/packed-refs.lock",
        "source.git/config.lock",
        "source.git/objects/pack/pack-0123.idx.lock",
        "source.git/objects/tmp_pack_Ab12",
        "source.git/objects/pack/tmpx1y2.pack",
        "publish.git/refs/heads/asf-site.lock",
        "publish.git/refs/notes/deploybot.lock",
        "publish.git/HEAD.lock",
        "publish.git/objects/ab/" + "c" * 38 + ".lock",
        "outbox/.0123.eml.4242.tmp",
        "notify/.last-emailed.json.4242.tmp",
        ".noop.stamp.4242.tmp",
    ]
    for name in stale:
        path = site.state / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    run = site.run()
    assert run.code == 0, run.out
    assert "published" in run.out
    assert [name for name in stale if (site.state / name).exists()] == []
    _settled(site)


def test_stale_mbox_dot_lock_of_a_dead_process_is_broken(site: KillSite) -> None:
    """A dot-lock naming a pid that no longer runs is stale whatever its age."""
    dot = site.mbox.with_name(site.mbox.name + ".lock")
    dot.write_text(f"{_dead_pid()}\n")
    run = site.run()
    assert run.code == 0, run.out
    assert not dot.exists()
    assert len(read_mbox(site.mbox)) == 1
    _settled(site)


def test_old_empty_mbox_dot_lock_is_broken(site: KillSite) -> None:
    """An empty dot-lock (Python's mailbox writes no pid) is stale after 5 minutes."""
    dot = site.mbox.with_name(site.mbox.name + ".lock")
    dot.write_bytes(b"")
    old = time.time() - 600
    os.utime(dot, (old, old))
    run = site.run()
    assert run.code == 0, run.out
    assert len(read_mbox(site.mbox)) == 1


def test_fresh_mbox_dot_lock_of_a_live_process_is_respected(site: KillSite) -> None:
    dot = site.mbox.with_name(site.mbox.name + ".lock")
    dot.write_text(f"{os.getpid()}\n")
    run = site.run()
    assert run.code == 75, run.out
    assert "mbox" in run.out and dot.read_text() == f"{os.getpid()}\n"
    dot.unlink()
    _settled(site)


def test_killed_inside_mbox_delivery(site: KillSite) -> None:
    """Killed with half the message appended and the mbox locked: the next run breaks the
    lock, removes the torn half and appends the message once."""
    assert site.run(kill_at="mbox").code == KILLED
    assert site.mbox.with_name(site.mbox.name + ".lock").exists()
    _settled(site)


def test_killed_after_the_mbox_append_sends_no_duplicate(site: KillSite) -> None:
    """Appended, then killed before the outbox recorded it: the retry finds it in the mbox."""
    assert site.run(kill_at="handed").code == KILLED
    assert len(read_mbox(site.mbox)) == 1
    _settled(site)
    assert len(read_mbox(site.mbox)) == 1


# --- 5. no lost email ----------------------------------------------------------------------


def test_first_build_killed_right_after_the_push_is_emailed(site: KillSite) -> None:
    assert site.run(kill_at="pushed").code == KILLED
    assert head(site.publish, "asf-site") is not None and read_mbox(site.mbox) == []
    _settled(site)
    assert len(read_mbox(site.mbox)) == 1


def test_first_build_killed_after_the_push_then_a_new_build_emails_both(site: KillSite) -> None:
    assert site.run(kill_at="pushed").code == KILLED
    site.change()
    run = site.run()
    assert run.code == 0 and "published" in run.out, run.out
    _settled(site)
    assert site.audit().builds == 2


def test_killed_before_the_cache_commit_is_emailed(site: KillSite) -> None:
    assert site.run(kill_at="cache").code == KILLED
    _settled(site)
    assert len(read_mbox(site.mbox)) == 1


def test_disk_full_at_the_cache_commit_still_emails(
    site: KillSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlite's SQLITE_FULL at the cache commit (after the push): the email went out first,
    and the run ends "try again later" (75) with one line. sqlite itself raises it: the
    connection may grow by no page (``max_page_count``) and the commit writes a page more."""
    from deploybot.render.engine.cache import BuildCache

    commit = BuildCache.commit
    raised: list[sqlite3.OperationalError] = []

    def disk_full(self: BuildCache, values: dict[str, str]) -> None:
        # sqlite keeps max_page_count at the database's size at least: no page more.
        self.conn.execute("PRAGMA max_page_count = 1")
        try:
            commit(self, {**values, "padding": "x" * 100_000})
        except sqlite3.OperationalError as exc:
            raised.append(exc)
            raise

    with monkeypatch.context() as patch:
        patch.setattr(BuildCache, "commit", disk_full)
        result = CliRunner().invoke(main, ["run-once", "--config", str(site.config)])
    [error] = raised
    assert (error.sqlite_errorcode, str(error)) == (sqlite3.SQLITE_FULL, "database or disk is full")
    assert result.exit_code == 75, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert head(site.publish, "asf-site") is not None
    assert len(read_mbox(site.mbox)) == 1
    _settled(site)
