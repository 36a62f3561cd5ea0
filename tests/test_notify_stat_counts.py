"""The ``--stat`` counts come from the same diff as the patch, as git counts them.

git's ``builtin_diffstat`` diffs with the patch's context (``xecfg.ctxlen = o->context``,
3), so ``xdi_diff`` does not trim the common tail first (``trim_common_tail`` runs only for
a zero-context diff). Trimming changes how many times a line occurs in the files, which
decides whether xdiff discards it as a "multimatch" line (``xdl_cleanup_records``), so the
two diffs can count different lines. Issue 17: one real ``_config.yml`` counted 120 where
git's ``--stat`` said 122. Oracle: git itself (``git diff --numstat``, ``git log --stat
-p``, ``git diff-tree --stat``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.notify.gitlog.commit_log import read_log_excerpt
from deploybot.notify.gitlog.diff import count_changes, unified_diff
from deploybot.notify.gitlog.git_cli import git_log_excerpt
from deploybot.notify.gitlog.summary import diff_tree
from tests.test_notify_diff import git_diff, git_numstat
from tests.test_notify_gitlog import LOG_ARGS, Commit, fast_import, git

REG = 0o100644


def multimatch_pair() -> tuple[bytes, bytes]:
    """Two versions of a file whose zero-context diff counts 8+/8- and whose 3-context
    diff (the patch, and git's ``--stat``) counts 9+/9-.

    A line ``X`` between two runs of changed lines occurs 514 times (513 in the common
    tail), often enough for xdiff to discard it as a multimatch line among changes: it is
    then shown removed and added again. The zero-context diff first trims the common tail
    (its 1024-byte blocks, back to a line end), which leaves 3 ``X`` lines: too few to
    discard, so ``X`` stays unchanged there.
    """
    tail = b"X\n" * 513  # 1026 bytes: one 1024-byte block is trimmed
    old = b"".join(b"old %d\n" % i for i in range(4)) + b"X\n"
    old += b"".join(b"old %d\n" % i for i in range(4, 8)) + tail
    new = old.replace(b"old", b"new")
    return old, new


def test_the_pair_counts_differently_with_and_without_context(tmp_path: Path) -> None:
    """The input really is one where the two diffs disagree (git's own numbers)."""
    old, new = multimatch_pair()
    assert git_numstat(tmp_path, old, new) == (9, 9)
    zero = git_diff(tmp_path, old, new, "-U0")
    assert (zero.count(b"\n+") - 1, zero.count(b"\n-") - 1) == (8, 8)  # minus +++ / ---


def test_count_changes_counts_the_patch(tmp_path: Path) -> None:
    old, new = multimatch_pair()
    patch = unified_diff(old, new)
    shown = (
        sum(1 for line in patch.split(b"\n") if line[:1] == b"+"),
        sum(1 for line in patch.split(b"\n") if line[:1] == b"-"),
    )
    assert count_changes(old, new) == shown == git_numstat(tmp_path, old, new) == (9, 9)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "site.git"
    git(tmp_path, "init", "-q", "--bare", str(path))
    old, new = multimatch_pair()
    fast_import(
        path,
        "refs/heads/asf-site",
        [
            Commit({b"_config.yml": (REG, old), b"index.html": (REG, b"home\n")}),
            Commit({b"_config.yml": (REG, new), b"index.html": (REG, b"home\n")}, b"Build\n"),
        ],
    )
    return path


def test_the_email_stat_equals_git_log_on_both_paths(repo: Path) -> None:
    """``_config.yml | 18`` (git), not ``| 16``, whoever makes the email's log text."""
    want = git(repo, *LOG_ARGS, "asf-site").decode()
    assert " _config.yml | 18 +++++++++---------\n" in want
    expected = want.replace("\nDate:   ", "\nAuthorDate: ", 1).split("\n")[:-1]
    commit = git(repo, "rev-parse", "asf-site").decode().strip()
    limits = {"max_lines": 0, "max_line_length": 0}
    python = read_log_excerpt(repo, commit, **limits, engine="python")
    assert list(python.lines) == expected
    from_git = git_log_excerpt(repo, commit, **limits)
    assert from_git is not None
    assert list(from_git.lines) == expected


def test_the_summary_email_stat_equals_git_diff_tree(repo: Path) -> None:
    want = git(repo, "diff-tree", "--stat", "asf-site~1", "asf-site").decode().split("\n")[:-1]
    old = git(repo, "rev-parse", "asf-site~1").decode().strip()
    new = git(repo, "rev-parse", "asf-site").decode().strip()
    assert list(diff_tree(repo, old, new, harder=False).stat) == want
    assert want[0] == " _config.yml | 18 +++++++++---------"
