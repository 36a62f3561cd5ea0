"""The email's log text from git itself (:mod:`deploybot.notify.gitlog.git_cli`) against the
pure-Python path, byte for byte, and the fallback when git is missing, fails or hangs.

Oracle: the pure-Python path, itself checked against ``git log`` in test_notify_gitlog*.py;
here git runs with settings, attributes, a mailmap, notes and environment variables that
would change its output if they were not pinned.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from deploybot.config.schema import NotifyConfig
from deploybot.notify.commit_email import build_email
from deploybot.notify.gitlog import git_cli as cli
from deploybot.notify.gitlog.commit_log import _tree_diff, read_log_excerpt
from deploybot.notify.gitlog.excerpt import ExcerptBuilder, LogExcerpt, excerpt_from_text
from deploybot.notify.gitlog.git_cli import GIT_MIN_MODIFIED, prefer_git
from tests.servers import call_within
from tests.test_notify_gitlog import GITLINK, LOG_ARGS, TVM, Commit, Tree, fast_import, git
from tests.test_notify_gitlog_merge import BASE, edit, merge_import

NOTIFY = NotifyConfig(
    transport="stdout",
    to=("commits@example.org",),
    sender="bot@example.org",
    repository_url="https://example.org/repos/site.git",
    pusher="bot",
)
NOW = datetime(2020, 7, 14, 16, 12, 5, tzinfo=UTC)
BUDGETS = [(10000, 500), (0, 0), (7, 12), (3, 0), (25, 40)]
REG = 0o100644


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "site.git"
    git(tmp_path, "init", "-q", "--bare", str(path))
    return path


def tip(repo: Path, ref: str) -> str:
    return git(repo, "rev-parse", ref).decode().strip()


def same_both_ways(repo: Path, ref: str) -> None:
    """git's excerpt equals the pure-Python one for several budgets, and exists."""
    commit = tip(repo, ref)
    for max_lines, max_line_length in BUDGETS:
        args = {"max_lines": max_lines, "max_line_length": max_line_length}
        ours = read_log_excerpt(repo, commit, **args, engine="python")
        theirs = cli.git_log_excerpt(repo, commit, **args)
        assert theirs is not None
        assert theirs == ours, (max_lines, max_line_length)


def page(n: int, extra: bytes = b"") -> bytes:
    body = b"".join(b"<p>post %d paragraph %d lorem ipsum dolor</p>\n" % (n, i) for i in range(40))
    return b"<html>\n<head><title>Post %d</title></head>\n<body>\n" % n + body + extra


# ------------------------------------------------------------------ byte for byte


def test_reference_commit_email_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tvm-site build 202b30a (4 files: git is asked first) makes the same email whether
    git or Python makes its log text."""
    if not (TVM / "published-parent").is_dir():
        pytest.skip(f"the tvm-site corpus is missing at {TVM}")
    names = [
        "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html",
        "2020/07/14/bert-pytorch-tvm.html",
        "atom.xml",
        "rss.xml",
    ]
    old = {n.encode(): (REG, (TVM / "published-parent" / n).read_bytes()) for n in names}
    new = {n.encode(): (REG, (TVM / "published" / n).read_bytes()) for n in names}
    repo = tmp_path / "site.git"
    git(tmp_path, "init", "-q", "--bare", str(repo))
    fast_import(
        repo,
        "refs/heads/asf-site",
        [
            Commit(old, b"Build at Tue Jul 14 09:04:36 PDT 2020\n", b"1594742676 -0700"),
            Commit(new, b"Build at Tue Jul 14 09:12:04 PDT 2020\n", b"1594743124 -0700"),
        ],
    )
    old_id, new_id = tip(repo, "asf-site^"), tip(repo, "asf-site")
    assert prefers_git(repo, new_id)
    same_both_ways(repo, "asf-site")
    with_git = build_email(repo, "refs/heads/asf-site", old_id, new_id, NOTIFY, now=NOW)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert cli.git_executable() is None
    without = build_email(repo, "refs/heads/asf-site", old_id, new_id, NOTIFY, now=NOW)
    assert with_git == without
    assert b"\n 4 files changed, " in with_git


def test_rename_heavy_commit(repo: Path) -> None:
    """50 pages moved (most edited a little), an index modified (a copy source)."""
    old: dict[bytes, tuple[int, bytes]] = {b"%d/post.html" % n: (REG, page(n)) for n in range(50)}
    old[b"index.html"] = (REG, page(99))
    new: dict[bytes, tuple[int, bytes]] = {}
    for n in range(50):
        extra = b"" if n % 5 == 0 else b"<p>moved %d</p>\n" % n
        new[b"2020/%02d/post-%d.html" % (n % 12, n)] = (REG, page(n, extra))
    new[b"index.html"] = (REG, page(99, b"<p>new index</p>\n"))
    new[b"copy-of-index.html"] = (REG, page(99, b"<p>copy</p>\n"))
    fast_import(repo, "refs/heads/ren", [Commit(old), Commit(new)])
    text = git(repo, *LOG_ARGS, "refs/heads/ren")
    assert text.count(b"\nrename from ") == 50 and b"\ncopy from index.html\n" in text
    same_both_ways(repo, "ren")


def test_merge_commits(repo: Path) -> None:
    a = {b"f": (REG, edit(BASE, "line 3", "three")), b"g": (REG, b"g\n")}
    b = {b"f": (REG, edit(BASE, "line 17", "seventeen")), b"h": (REG, b"h\n")}
    merged = {b"f": (REG, edit(edit(BASE, "line 3", "3"), "line 17", "17")), b"g": (REG, b"g\n")}
    merge_import(repo, "refs/heads/m", {b"f": (REG, BASE)}, [a, b], merged)
    assert b"\ndiff --cc f\n" in git(repo, *LOG_ARGS, "refs/heads/m")
    same_both_ways(repo, "m")


def test_binary_files_gitlinks_and_odd_names(repo: Path) -> None:
    old: Tree = {
        b"img.png": (REG, b"\x89PNG\0\x01\x02" * 50),
        b"caf\xc3\xa9/menu.html": (REG, b"caf\xc3\xa9\n"),
        b"latin1-\xe9t\xe9.txt": (REG, b"old\n"),
        b"sub": (GITLINK, b"1" * 40),
        b"tab\tname": (REG, b"t\n"),
    }
    new: Tree = {
        b"img.png": (REG, b"\x89PNG\0\x01\x03" * 60),
        b"new.bin": (REG, b"\0\0\0"),
        b"caf\xc3\xa9/menu.html": (REG, b"caf\xc3\xa9 cr\xc3\xa8me\n"),
        b"latin1-\xe9t\xe9.txt": (REG, b"new\n"),
        b"sub": (GITLINK, b"2" * 40),
        b'q"uote sp ace': (REG, b"q\n"),
        b"tab\tname": (0o100755, b"t\n"),
    }
    fast_import(repo, "refs/heads/odd", [Commit(old), Commit(new)])
    text = git(repo, *LOG_ARGS, "refs/heads/odd")
    assert b"Subproject commit 2222" in text and b"Bin 350 -> 420 bytes" in text
    assert b'"latin1-\\351t\\351.txt"' in text
    same_both_ways(repo, "odd")


def test_multibyte_hunk_headers(repo: Path) -> None:
    """Function lines cut at 80 bytes inside a character, and Latin-1 ones (git's
    ``sane_truncate_line``), and long lines that the email cuts."""
    func = b"function " + b"x" * 69 + "\u00e9\u20ac\U0001f600".encode() + b" cut inside\n"
    body = [b"  body %d\n" % i for i in range(40)]
    lines = [b"latin1 caf\xe9 function\n", *body[:12], func, *body[12:]]
    long = b"<p>" + "\u00e9".encode() * 600 + b"</p>\n"
    old = b"".join(lines) + long
    changed = [*lines[:6], b"  changed\n", *lines[6:25], b"  changed\n", *lines[25:]]
    new = b"".join(changed) + long.replace(b"p>", b"q>")
    fast_import(repo, "refs/heads/mb", [Commit({b"a.c": (REG, old)}), Commit({b"a.c": (REG, new)})])
    text = git(repo, *LOG_ARGS, "refs/heads/mb")
    assert b" @@ latin1 caf\n" in text and b" @@ function xxx" in text
    same_both_ways(repo, "mb")


def test_settings_that_would_change_gits_output_are_pinned(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .gitattributes, a .mailmap and notes in the repository, and environment variables
    for git, do not reach git's output; a repository config that would is not used."""
    files: Tree = {
        b".gitattributes": (REG, b"* -diff\n*.html diff=html\n"),
        b".mailmap": (REG, b"Someone Else <else@example.org> <author@example.org>\n"),
        b"a.html": (REG, b"<p>a</p>\n" * 20),
        b"b.txt": (REG, b"b\n"),
    }
    edited = {**files, b"a.html": (REG, b"<p>a</p>\n" * 10 + b"<p>x</p>\n" + b"<p>a</p>\n" * 10)}
    edited[b"c.txt"] = (REG, b"c\n")
    fast_import(repo, "refs/heads/main", [Commit(files), Commit(edited)])
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    who = ("-c", "user.name=N", "-c", "user.email=n@x")
    git(repo, *who, "notes", "add", "-m", "a note", "main")
    replacement = git(repo, *who, "commit-tree", "-m", "replaced", tip(repo, "main^{tree}"))
    git(repo, "replace", tip(repo, "main"), replacement.decode().strip())
    monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=1")
    monkeypatch.setenv("GIT_NOTES_REF", "refs/notes/commits")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "false")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    # What git prints left to itself:
    assert b"    replaced\n" in git(repo, *LOG_ARGS, "main")
    text = git(repo, "--no-replace-objects", *LOG_ARGS, "main")
    assert b"\nNotes:\n    a note\n" in text and b"Author: Someone Else" in text
    same_both_ways(repo, "main")
    assert cli.config_allows_git(repo)
    for key, value in (("diff.noprefix", "true"), ("log.date", "iso")):
        git(repo, "config", key, value)
        assert not cli.config_allows_git(repo)
        commit = tip(repo, "main")
        assert cli.git_log_excerpt(repo, commit, max_lines=100, max_line_length=500) is None
        got = read_log_excerpt(repo, commit, max_lines=100, max_line_length=500, engine="git")
        assert got == read_log_excerpt(repo, commit, max_lines=100, max_line_length=500)
        git(repo, "config", "--unset", key)
    git(repo, "config", "remote.origin.url", "https://example.org/x.git")
    assert cli.config_allows_git(repo)


def test_config_keys_are_read_as_git_writes_them() -> None:
    text = '[core]\n\tbare = true\n[remote "origin"]\n  url = x\n[Diff] noPrefix\n# c\n; c\n'
    assert cli._config_keys(text) == ["core.bare", "remote.url", "diff.noprefix"]
    assert cli._config_keys("[include]\n\tpath = other\n") == ["include.path"]
    assert cli._config_keys("garbage [\n") == ["?.garbage"]


@pytest.mark.parametrize("size", [1, 5, 7, 64, 4096, None])
def test_reader_gives_the_same_excerpt_for_any_chunking(repo: Path, size: int | None) -> None:
    """git's output cut into chunks anywhere (inside a line, a character, the first index
    line; None: all at once) gives the excerpt of the whole text, for every budget; and the
    short-id length comes from the first index line also when that line is past the budget
    (only counted, found by ``_find_short`` across chunk ends)."""
    tree = {
        b"d/f%02d.txt" % n: (REG, b"x" * (50 * n) + "\u00e9".encode() * 30 + b"\n")
        for n in range(12)
    }
    fast_import(repo, "refs/heads/c", [Commit(tree)])
    text = git(repo, *LOG_ARGS, "refs/heads/c")
    for max_lines, max_line_length in [*BUDGETS, (16, 20), (17, 9), (40, 3)]:
        got, _ = read_in_chunks(text, size, max_lines, max_line_length)
        want = excerpt_from_text(text.decode("utf-8", "replace"), max_lines, max_line_length)
        assert got == want, (max_lines, max_line_length)
    # 8-hex ids (as in a repository of 2**15 objects or more): the first index line is
    # the 23rd, past budgets of 3 to 22 lines (22: the first line only counted).
    text = git(repo, "-c", "core.abbrev=8", *LOG_ARGS, "refs/heads/c")
    lines = text.split(b"\n")
    assert next(n for n, line in enumerate(lines, 1) if line.startswith(b"index ")) == 23
    assert text.count(b"\nindex 00000000..") == 12
    for max_lines, max_line_length in [(3, 0), (7, 12), (16, 20), (22, 0), (23, 0), (40, 500)]:
        got, short = read_in_chunks(text, size, max_lines, max_line_length)
        want = excerpt_from_text(text.decode("utf-8", "replace"), max_lines, max_line_length)
        assert short == 8 and got.short_length == 8, (max_lines, max_line_length)
        assert got == want, (max_lines, max_line_length)


def read_in_chunks(
    text: bytes, size: int | None, max_lines: int, max_line_length: int
) -> tuple[LogExcerpt, int | None]:
    """``text`` fed to a :class:`._Reader` ``size`` bytes at a time (None: all at once):
    the excerpt, and the short-id length the reader found."""
    builder = ExcerptBuilder(max_lines, max_line_length)
    reader = cli._Reader(builder)
    step = size or len(text)
    for start in range(0, len(text), step):
        reader.feed(text[start : start + step])
    return builder.build(reader.short or 7), reader.short


# ------------------------------------------------------------------ which path runs


def many_files(repo: Path) -> str:
    """A commit that modifies :data:`GIT_MIN_MODIFIED` files: one "auto" asks git for."""
    tree = {b"f%d.txt" % n: (REG, b"%d\n" % n) for n in range(GIT_MIN_MODIFIED)}
    edited = {path: (mode, data + b"more\n") for path, (mode, data) in tree.items()}
    fast_import(repo, "refs/heads/many", [Commit(tree), Commit(edited)])
    return tip(repo, "many")


def prefers_git(repo_path: Path, ref: str) -> bool:
    with Repo(str(repo_path)) as repo:
        target = parse_commit(repo, ref.encode())
        merge = len(target.parents) > 1
        return prefer_git(repo, None if merge else _tree_diff(repo, target))


def test_auto_asks_git_only_for_commits_it_pays_for(repo: Path) -> None:
    """Python only counts the lines of added files past the budget (a first build), git
    writes them all; Python diffs modified files and scores renames slowly."""
    small = {b"a": (REG, b"a\n"), b"b": (REG, b"b\n")}
    fast_import(repo, "refs/heads/one", [Commit(small)])
    assert not prefers_git(repo, "refs/heads/one")
    first_build = {b"p/%d.html" % n: (REG, b"<p>%d</p>\n" % n) for n in range(500)}
    fast_import(repo, "refs/heads/first", [Commit(first_build)])
    assert not prefers_git(repo, "refs/heads/first")
    two = {**small, b"a": (REG, b"a\nb\n"), b"b": (REG, b"b\nc\n")}
    fast_import(repo, "refs/heads/two", [Commit(small), Commit(two)])
    assert not prefers_git(repo, "refs/heads/two")
    assert prefers_git(repo, many_files(repo))
    big = {b"a": (REG, b"line\n" * 60_000)}
    fast_import(repo, "refs/heads/big", [Commit(big), Commit({b"a": (REG, b"line\n" * 60_001)})])
    assert prefers_git(repo, "refs/heads/big")
    moved = {b"new/%d" % n: (REG, b"%d moved\n" % n) for n in range(8)}
    olds = {b"old/%d" % n: (REG, b"%d\n" % n) for n in range(8)}
    fast_import(repo, "refs/heads/mv", [Commit(olds), Commit(moved)])
    assert prefers_git(repo, "refs/heads/mv")  # 8 x 8 pairs to score
    exact = {b"new/%d" % n: data for n, (_, data) in enumerate(olds.items())}
    fast_import(repo, "refs/heads/ex", [Commit(olds), Commit(exact)])
    assert not prefers_git(repo, "refs/heads/ex")  # renames by blob id: cheap
    sides = [{b"f": (REG, BASE + b"x\n")}, {b"f": (REG, b"y\n" + BASE)}]
    merge_import(repo, "refs/heads/mg", {b"f": (REG, BASE)}, sides, {b"f": (REG, BASE)})
    assert prefers_git(repo, "refs/heads/mg")


def test_without_git_the_python_path_runs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = many_files(repo)
    want = read_log_excerpt(repo, commit, max_lines=50, max_line_length=500, engine="python")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert not prefers_git(repo, commit)
    assert cli.git_log_excerpt(repo, commit, max_lines=50, max_line_length=500) is None
    assert read_log_excerpt(repo, commit, max_lines=50, max_line_length=500) == want
    assert read_log_excerpt(repo, commit, max_lines=50, max_line_length=500, engine="git") == want


def fake_git(folder: Path, script: str) -> None:
    """Put a ``git`` first on PATH that runs ``script`` (sh) instead."""
    folder.mkdir(exist_ok=True)
    path = folder / "git"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(
    "script",
    [
        "echo 'fatal: bad object' >&2; exit 128\n",
        "printf 'commit 1234\\nAuthor: x\\n'; exit 141\n",  # killed by a signal part way
        "printf 'commit 1234\\nno newline at the end'\n",
        "exit 0\n",
    ],
)
def test_a_failing_git_falls_back(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    commit = many_files(repo)
    want = read_log_excerpt(repo, commit, max_lines=50, max_line_length=500, engine="python")
    fake_git(tmp_path / "bin", script)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert cli.git_log_excerpt(repo, commit, max_lines=50, max_line_length=500) is None
    assert read_log_excerpt(repo, commit, max_lines=50, max_line_length=500) == want


@pytest.mark.parametrize(
    "script",
    ["printf 'commit 1\\n'\nexec sleep 3600\n", "exec sleep 3600\n"],
    ids=["writes-then-hangs", "hangs"],
)
def test_a_hanging_git_is_killed_and_falls_back(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    script: str,
) -> None:
    """A git that hangs (a stalled file system), after writing a little or from the start,
    is killed at the deadline of the whole call and reaped; the pure-Python path makes the
    email. git's pid comes from the log (a pid file it wrote could be missing: on a loaded
    machine the deadline can pass before git runs its first line)."""
    commit = many_files(repo)
    want = read_log_excerpt(repo, commit, max_lines=50, max_line_length=500, engine="python")
    fake_git(tmp_path / "bin", script)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(cli, "GIT_TIMEOUT", 0.5)
    caplog.set_level("DEBUG", logger="deploybot.notify.gitlog_cli")
    # git sleeps for an hour: the call returns (within call_within's safety net) only if
    # git was killed, and then its pid is gone.
    got: list[str] = []
    error = call_within(
        300, lambda: got.append(read_log_excerpt(repo, commit, max_lines=50, max_line_length=500))
    )
    assert error is None and got == [want]
    pids = [int(m[1]) for r in caplog.records if (m := re.search(r"pid (\d+)", r.message))]
    assert len(pids) == 1, caplog.text
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # killed and reaped
    assert "git log took more than 0.5 s" in caplog.text


def test_git_runs_without_the_callers_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'")
    env = cli.git_env(80)
    assert "GIT_DIR" not in env and "GIT_CONFIG_PARAMETERS" not in env
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["COLUMNS"] == "80"
    out = subprocess.run(
        ["git", "config", "--list", "--show-origin"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert out.stdout == b""


def test_a_commit_in_another_encoding_reads_as_git_shows_it(repo: Path) -> None:
    """git re-encodes a message with an ``encoding`` header to UTF-8; so does Python."""
    stream = b"reset refs/heads/enc\ncommit refs/heads/enc\n"
    stream += b"author Ren\xe9 <r@x> 0 +0000\ncommitter C <c@x> 0 +0000\nencoding ISO-8859-1\n"
    stream += b"data 5\nm\xe9t\xe9\n" + b"".join(
        b"M 100644 inline f%d\ndata 2\n%d\n" % (n, n) for n in range(3)
    )
    git(repo, "fast-import", "--quiet", "--force", stdin=stream)
    text = git(repo, *LOG_ARGS, "refs/heads/enc")
    assert b"Author: Ren\xc3\xa9 <r@x>\n" in text and b"    m\xc3\xa9t\xc3\xa9\n" in text
    same_both_ways(repo, "enc")


def test_a_revision_is_never_read_as_an_option(repo: Path, tmp_path: Path) -> None:
    many_files(repo)
    out = tmp_path / "written"
    got = cli.git_log_excerpt(repo, f"--output={out}", max_lines=10, max_line_length=500)
    assert got is None and not out.exists()


def test_an_unknown_engine_is_an_error(repo: Path) -> None:
    """A misspelt engine used to run as "auto"; now it names the ones there are."""
    commit = many_files(repo)
    args = {"max_lines": 50, "max_line_length": 500, "engine": "gti"}
    with pytest.raises(ValueError, match=r"'gti' is none of 'auto', 'git', 'python'"):
        read_log_excerpt(repo, commit, **args)
