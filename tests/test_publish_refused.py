"""A push the publish repository refuses for good (a hook declines it, it is the branch
checked out in a repository with a work tree) is a configuration error (exit 78) with the
server's own words in one line; a race (a ref locked meanwhile) stays exit 75."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from deploybot.git.failure import Refusal, refusal_of, remote_words
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git's receive-pack")


def _error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("deploybot: error: "), lines
    return lines[0]


def _hook(repo: Path, script: bytes) -> None:
    hook = repo / "hooks" / "pre-receive"
    hook.write_bytes(b"#!/bin/sh\n" + script)
    hook.chmod(0o755)


def test_a_declining_pre_receive_hook_is_exit_78_with_its_words(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    _hook(site.publish, b"echo 'pushes to this repository are frozen' >&2\nexit 1\n")
    done = site.run_process()
    assert done.returncode == 78, done.stderr
    assert _error_line(done) == (
        f"deploybot: error: {site.config}: 'publish.url' {site.publish}: a hook of the "
        "repository declines the push (refs/heads/asf-site, refs/notes/deploybot: pre-receive "
        "hook declined) (remote: pushes to this repository are frozen): ask whoever runs the "
        "server to allow deploybot's pushes to that branch, or point publish.url at a "
        "repository deploybot may push to"
    )
    assert site.head() is None


def test_a_hook_writing_escape_sequences_gives_one_clean_line(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    _hook(
        site.publish, b"printf '\\033[31mfrozen\\033[0m\\r\\n\\033]0;title\\007\\n' >&2\nexit 1\n"
    )
    done = site.run_process()
    assert done.returncode == 78, done.stderr
    line = _error_line(done)
    assert "(remote: frozen)" in line, line
    assert "[31m" not in line and "title" not in line and "\x1b" not in line, line


def test_the_checked_out_branch_of_a_work_tree_is_exit_78(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    shutil.rmtree(site.publish)
    subprocess.run(["git", "init", "-q", "-b", "asf-site", str(site.publish)], check=True)
    subprocess.run(
        ["git", "-C", str(site.publish), "-c", "user.name=A", "-c", "user.email=a@example.org",
         "commit", "-q", "--allow-empty", "-m", "Start"],
        check=True,
    )  # fmt: skip
    done = site.run_process()
    assert done.returncode == 78, done.stderr
    line = _error_line(done)
    assert f"'publish.url' {site.publish}: the server refuses the push" in line, line
    # the remote's own reason, not the advice git prints after it
    assert "(remote: refusing to update checked out branch: refs/heads/asf-site)" in line, line
    assert "receive.denyCurrentBranch" in line, line


def test_a_ref_locked_meanwhile_stays_exit_75(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    assert site.run_process().returncode == 0
    commit_files(site.source, {"b.md": b"B\n"}, "B", when=1_700_000_100)
    (site.publish / "refs" / "heads" / "asf-site.lock").write_text("")
    done = site.run_process()
    assert done.returncode == 75, done.stderr
    line = _error_line(done)
    assert f"push to {site.publish} rejected: " in line, line
    assert "cannot lock ref 'refs/heads/asf-site'" in line, line
    (site.publish / "refs" / "heads" / "asf-site.lock").unlink()
    assert site.run_process().returncode == 0


def test_remote_words_keep_whole_last_lines_within_the_limit() -> None:
    progress = b"".join(b"line %d of a chatty hook\n" % n for n in range(100))
    words = remote_words(progress, limit=80)
    assert words == "line 97 of a chatty hook / line 98 of a chatty hook / line 99 of a chatty hook"
    assert remote_words(b"x" * 500, limit=10) == "...xxxxxxx"
    assert remote_words(b"?\n  \n") == ""


@pytest.mark.parametrize(
    ("reason", "refusal"),
    [
        ("pre-receive hook declined", Refusal.HOOK),  # git, Gitea, GitLab
        ("hook declined", Refusal.HOOK),  # git's update hook
        ("protected branch hook declined", Refusal.HOOK),  # GitHub
        ("branch is currently checked out", Refusal.CHECKED_OUT),
        ("deletion prohibited", Refusal.FORBIDDEN),
        ("funny refname", Refusal.FORBIDDEN),
        ("non-fast-forward", Refusal.RACE),
        ("fetch first", Refusal.RACE),
        ("failed to lock", Refusal.RACE),
        ("cannot lock ref 'refs/heads/asf-site'", Refusal.RACE),
        ("failed to update ref", Refusal.RACE),
        ("something no one has seen", Refusal.RACE),
    ],
)
def test_refusal_of_reads_receive_packs_reasons(reason: str, refusal: Refusal) -> None:
    assert refusal_of(reason) is refusal
