"""``read_log_excerpt``: the email's part of ``git log -C --stat -p --cc -1``, at bounded cost.

Oracle: git itself. The excerpt must equal the email layer's cut of git's whole output
(:func:`.body.excerpt_from_text`), for every line budget, and the email made from it must be
the email made from git's text. Rename detection's limit is checked against git's.
"""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.compose.email import compose_combined_email
from deploybot.notify.compose.envelope import Envelope, Limits
from deploybot.notify.gitlog.commit_log import format_commit_log_bytes, read_log_excerpt
from deploybot.notify.gitlog.diff import hunk_line_count, hunk_lines, unified_diff
from deploybot.notify.gitlog.diff_renames import RENAME_LIMIT
from deploybot.notify.gitlog.excerpt import excerpt_from_text, limit_log_body
from deploybot.notify.gitlog.git_cli import git_log_excerpt
from tests.test_notify_gitlog import (
    DATES,
    LOG_ARGS,
    MESSAGES,
    Commit,
    Tree,
    commit_pairs,
    contents,
    excerpts_both_ways,
    fast_import,
    git,
)

NEW = "b" * 40
EMAIL_ARGS: dict[str, Any] = {
    "envelope": Envelope(
        repo_name="site",
        repository_url="https://example.org/repos/site.git",
        refname="refs/heads/asf-site",
        pusher="bot",
        sender="bot@example.org",
        to=("commits@example.org",),
        host="example.org",
        date=datetime(2020, 7, 14, 16, 12, 5, tzinfo=UTC),
    ),
    "old": None,
    "new": NEW,
    "subject_line": "Build",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("excerpt") / "repo"
    git(path.parent, "init", "-q", "--bare", str(path))
    return path


def git_text(repo: Path, ref: str, *opts: str) -> str:
    return git(repo, *opts, *LOG_ARGS, ref).decode("utf-8", "replace")


def emails_equal(text: str, repo: Path, ref: str, max_lines: int, max_line_length: int) -> None:
    """The excerpt equals git's text cut as the email cuts it; so do the two emails; both
    the pure-Python path and the one streaming git's output."""
    limits = Limits(max_lines=max_lines, max_line_length=max_line_length)
    want = compose_combined_email(log_text=text, **EMAIL_ARGS, limits=limits)
    for engine, log in excerpts_both_ways(repo, ref, max_lines, max_line_length).items():
        assert log == excerpt_from_text(text, max_lines, max_line_length), engine
        assert compose_combined_email(log_text=log, **EMAIL_ARGS, limits=limits) == want


# ---------------------------------------------------------------- every budget, git's text

BUDGETS = st.sampled_from([0, 1, 3, 5, 8, 12, 17, 25, 40, 80])
LENGTHS = st.sampled_from([0, 3, 9, 20, 40, 500])


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    trees=commit_pairs(),
    message=st.sampled_from(MESSAGES),
    when=st.sampled_from(DATES),
    root=st.booleans(),
    max_lines=BUDGETS,
    max_line_length=LENGTHS,
)
def test_excerpt_is_the_email_cut_of_git_log(
    repo: Path,
    trees: tuple[Tree, Tree],
    message: bytes,
    when: bytes,
    root: bool,
    max_lines: int,
    max_line_length: int,
) -> None:
    old, new = trees
    commits = [Commit(new, message, when)] if root else [Commit(old), Commit(new, message, when)]
    fast_import(repo, "refs/heads/ex", commits)
    text = git_text(repo, "refs/heads/ex")
    emails_equal(text, repo, "refs/heads/ex", max_lines, max_line_length)


def test_cut_utf8_at_line_ends(repo: Path) -> None:
    """Lines are decoded one at a time: an incomplete UTF-8 sequence before a newline."""
    body = b"\xe2\x82\n\xc3\nok \xff\n\xe2\x82\xac\xe2\n" * 5
    fast_import(repo, "refs/heads/utf", [Commit({b"a.txt": (0o100644, body)})])
    text = git_text(repo, "refs/heads/utf")
    for max_lines in (0, 14, 15, 16, 30):
        emails_equal(text, repo, "refs/heads/utf", max_lines, 500)


@given(old=contents(), new=contents())
def test_hunk_lines_and_count_match_unified_diff(old: bytes, new: bytes) -> None:
    lines = list(hunk_lines(old, new))
    assert b"".join(lines) == unified_diff(old, new)
    assert all(line.count(b"\n") == 1 and line.endswith(b"\n") for line in lines)
    assert hunk_line_count(old, new) == len(lines)
    assert hunk_line_count(b"", new) == len(list(hunk_lines(b"", new)))
    assert hunk_line_count(old, b"") == len(list(hunk_lines(old, b"")))


def test_excerpt_limits_must_fit_the_email() -> None:
    log = excerpt_from_text("a\nb\nc\n", 2, 500)
    with pytest.raises(ValueError, match="characters"):
        limit_log_body([], log, 80, 2)
    with pytest.raises(ValueError, match="lines"):
        limit_log_body([], log, 500, 3)
    assert limit_log_body(["h"], log, 500, 2) == ["h", "a", "... 2 lines suppressed ..."]


# ---------------------------------------------------------------- diff.renameLimit


def _renames_commits(n_src: int, n_dst: int) -> list[Commit]:
    """``n_src`` deleted files and ``n_dst`` added ones, dst k a light edit of src k."""

    def body(k: int) -> bytes:
        return b"".join(b"line %d of file %d\n" % (i, k) for i in range(20))

    old = {b"old/f%05d" % k: (0o100644, body(k)) for k in range(n_src)}
    new = {b"new/g%05d" % k: (0o100644, body(k) + b"extra\n") for k in range(n_dst)}
    return [Commit(old), Commit(new)]


@pytest.mark.parametrize(
    ("n_src", "n_dst", "limit"), [(10, 10, 10), (11, 10, 10), (10, 11, 10), (11, 10, 0)]
)
def test_rename_limit_as_git(repo: Path, n_src: int, n_dst: int, limit: int) -> None:
    """Inexact detection runs while sources x destinations <= limit**2; 0 = unlimited."""
    fast_import(repo, "refs/heads/lim", _renames_commits(n_src, n_dst))
    want = git(repo, "-c", f"diff.renameLimit={limit}", *LOG_ARGS, "refs/heads/lim")
    assert format_commit_log_bytes(repo, "refs/heads/lim", rename_limit=limit) == want
    assert (b"\nrename from " in want) == (limit == 0 or n_src * n_dst <= limit * limit)


def test_default_rename_limit_is_gits(repo: Path) -> None:
    """git 2.39's ``git log -C`` detects 1000 x 1000 and skips 1001 x 1000; so do we (the
    skipped case compared byte for byte: exact matching alone must stay fast there)."""
    assert RENAME_LIMIT == 1000
    fast_import(repo, "refs/heads/big", _renames_commits(1000, 1000))
    assert git(repo, *LOG_ARGS, "--name-status", "refs/heads/big").count(b"\nR") == 1000
    fast_import(repo, "refs/heads/big", _renames_commits(1001, 1000))
    want = git(repo, *LOG_ARGS, "refs/heads/big")
    assert b"\nrename from " not in want
    assert format_commit_log_bytes(repo, "refs/heads/big") == want


# ---------------------------------------------------------------- a huge first build

FILES = 3000


def _page(k: int) -> bytes:
    """A small HTML page, about 2 KB."""
    rows = b"".join(
        b"<p>Post %d paragraph %d: lorem ipsum dolor sit amet.</p>\n" % (k, i) for i in range(36)
    )
    return b"<html>\n<head><title>Post %d</title></head>\n<body>\n%s</body>\n</html>\n" % (k, rows)


def test_root_commit_of_3000_pages(tmp_path: Path) -> None:
    """The same email as git's text cut by the email layer, for memory that follows what is
    sent (10,000 lines), not the commit's size (about 6 MB of pages, 120,000 log lines)."""
    repo = tmp_path / "site.git"
    git(tmp_path, "init", "-q", "--bare", str(repo))
    # fast-import deltifies the pages; dulwich then caches resolved delta bases up to git's
    # core.deltaBaseCacheLimit (96 MiB by default), a bound of its own that has nothing to do
    # with the email. Build commits are written as loose objects; keep the cache small here.
    git(repo, "config", "core.deltaBaseCacheLimit", "1048576")
    tree = {
        b"%d/%02d/post-%d.html" % (2000 + k % 20, k % 12, k): (0o100644, _page(k))
        for k in range(FILES)
    }
    fast_import(repo, "refs/heads/asf-site", [Commit(tree, b"Build at now\n")])
    text = git_text(repo, "refs/heads/asf-site")
    want = compose_combined_email(log_text=text, **EMAIL_ARGS)
    suppressed = 4 + text.count("\n") - 10000
    assert want.endswith(f"\n... {suppressed} lines suppressed ...\n\n".encode())
    del text

    limits = {"max_lines": 10000, "max_line_length": 500}
    for engine in ("python", "git"):
        tracemalloc.start()
        try:
            # git's own: read_log_excerpt(engine="git") would fall back to Python unseen.
            log = (
                read_log_excerpt(repo, "refs/heads/asf-site", **limits, engine="python")
                if engine == "python"
                else git_log_excerpt(repo, "refs/heads/asf-site", **limits)
            )
            assert log is not None, "git made no excerpt"
            got = compose_combined_email(log_text=log, **EMAIL_ARGS)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert got == want, engine
        # What is sent, a few times over (str and bytes copies), plus the per-file stat
        # data. The whole log text alone would be about 7 MB.
        assert peak < 5 * len(got) + FILES * 1000 + 2_000_000, (engine, peak, len(got))
