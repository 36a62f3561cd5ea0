"""``format_commit_log`` against ``git log -C --stat -p --cc -1`` itself, byte for byte.

Commits are made with ``git fast-import`` (one process per example, messages kept raw), in
one repository per test; every example resets its own branch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.commit_log import (
    format_commit_log,
    format_commit_log_bytes,
    read_log_excerpt,
)
from deploybot.notify.gitlog.excerpt import LogExcerpt
from deploybot.notify.gitlog.git_cli import git_log_excerpt

SHARED = Path(__file__).resolve().parents[2] / "shared"
TVM = SHARED / "corpus" / "tvm-site"
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}
GIT_ENV.pop("COLUMNS", None)
LOG_ARGS = ["log", "-C", "--stat", "-p", "--cc", "-1"]
Tree = Mapping[bytes, tuple[int, bytes]]  # path -> (mode, content; a gitlink's commit id)
GITLINK = 0o160000


def git(
    repo: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    """Run git in ``repo`` with a clean configuration; return stdout."""
    proc = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**GIT_ENV, **(env or {})},
        input=stdin,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


def _quote(path: bytes) -> bytes:
    out = b'"'
    for c in path:
        if c in (0x22, 0x5C):
            out += b"\\" + bytes([c])
        elif 0x20 <= c < 0x7F:
            out += bytes([c])
        else:
            out += b"\\%03o" % c
    return out + b'"'


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


@dataclass
class Commit:
    """One commit for fast-import: the full tree, message and author date."""

    tree: Tree
    message: bytes = b"Edit\n"
    when: bytes = b"1594743124 -0700"
    extra: list[bytes] = field(default_factory=list)


def fast_import(repo: Path, ref: str, commits: list[Commit]) -> None:
    """Reset ``ref`` and commit ``commits`` on it, each on top of the one before."""
    stream = b"reset " + ref.encode() + b"\n"
    for n, c in enumerate(commits, 1):
        ident = b"A U Thor <author@example.org> " + c.when
        stream += b"commit %s\nmark :%d\nauthor %s\ncommitter %s\n" % (
            ref.encode(),
            n,
            ident,
            ident,
        )
        stream += _data(c.message)
        if n > 1:
            stream += b"from :%d\n" % (n - 1)
        stream += b"deleteall\n"
        for path, (mode, content) in sorted(c.tree.items()):
            if mode == GITLINK:  # the content is the submodule's commit id (40 hex)
                stream += b"M %o %s %s\n" % (mode, content, _quote(path))
            else:
                stream += b"M %o inline %s\n" % (mode, _quote(path)) + _data(content)
    git(repo, "fast-import", "--quiet", "--force", stdin=stream)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gitlog") / "repo"
    git(path.parent, "init", "-q", "--bare", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def check(repo: Path, ref: str, abbrev: int | None = None, width: int | None = None) -> None:
    """Assert that both forms of our output equal git's."""
    opts = ["-c", f"core.abbrev={abbrev}"] if abbrev else []
    env = {"COLUMNS": str(width)} if width else {}
    want = git(repo, *opts, *LOG_ARGS, ref, env=env)
    got = format_commit_log_bytes(repo, ref, abbrev=abbrev, width=width or 80)
    assert got == want
    text = format_commit_log(repo, ref, abbrev=abbrev, width=width or 80)
    assert text == want.decode("utf-8", "replace")


def excerpts_both_ways(
    repo: Path, ref: str, max_lines: int, max_line_length: int
) -> dict[str, LogExcerpt]:
    """The excerpt by each engine: ``"python"`` from the pure-Python path, ``"git"`` from
    git's own output (:func:`.gitlog_cli.git_log_excerpt`, asserted to give one).
    ``read_log_excerpt(engine="git")`` would fall back to Python when git gives nothing, and
    a comparison of its result would pass with git never used."""
    limits = {"max_lines": max_lines, "max_line_length": max_line_length}
    python = read_log_excerpt(repo, ref, **limits, engine="python")
    git = git_log_excerpt(repo, ref, **limits)
    assert git is not None, f"git made no excerpt of {ref}"
    assert git == python, (ref, max_lines, max_line_length)
    return {"python": python, "git": git}


# ---------------------------------------------------------------- generated cases

LINES = [
    b"",
    b"<p>Hello</p>",
    b"  <li>item</li>",
    b"}",
    b"\tif (x) {",
    b"def f(x):",
    b"    return x",
    b"caf\xc3\xa9",
    b"x\r",
    b"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " * 2,
    b"function " + b"x" * 69 + "\u00e9\u20ac\U0001f600".encode() + b" cut inside",
    b"latin1 caf\xe9 function",
    b"crlf line\r",
    b"<p>minified</p>" * 300,
]
PATHS = [
    b"a.txt",
    b"b.txt",
    b"dir/a.txt",
    b"dir/sub/page.html",
    b"other/a.txt",
    b"sp ace.txt",
    b"caf\xc3\xa9.txt",
    b'q"uote',
    b"tab\tname",
    b"2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html",
    b"z.bin",
    b"e",
]
MESSAGES = [
    b"Build at Tue Jul 14 09:12:04 PDT 2020\n",
    b"Subject\n\nBody line\twith tab\n  \ntrailing   \n\n\n",
    b"\n\nleading blank lines\n",
    b"no newline",
    b"",
    b"non-utf8 \xff\xfe\n",
]
DATES = [b"1594743124 -0700", b"1593965524 +0530", b"0 +0000", b"1700000000 -0000"]


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=30))
    data = b"\n".join(lines) + (b"\n" if lines and draw(st.booleans()) else b"")
    if draw(st.integers(0, 9)) == 0:
        data = data[:10] + b"\0" + data[10:]
    return data


@st.composite
def edited(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines)))
        j = draw(st.integers(i, min(len(lines), i + 4)))
        lines[i:j] = draw(st.lists(st.sampled_from(LINES), max_size=4))
    return b"\n".join(lines)


@st.composite
def commit_pairs(draw: st.DrawFn) -> tuple[Tree, Tree]:
    """An old tree and a new one: edits, deletions, mode changes, renames and copies."""
    old: dict[bytes, tuple[int, bytes]] = {}
    for path in draw(st.lists(st.sampled_from(PATHS), unique=True, max_size=6)):
        old[path] = (0o100644 if draw(st.integers(0, 5)) else 0o100755, draw(contents()))
    new: dict[bytes, tuple[int, bytes]] = {}
    for path, (mode, data) in old.items():
        op = draw(st.sampled_from(["keep", "edit", "delete", "mode", "rename", "copy", "type"]))
        if op == "type":  # a file becomes a symlink (or back): printed as delete + add
            new[path] = (0o100644, b"target") if mode == 0o120000 else (0o120000, b"a.txt")
        elif op == "keep":
            new[path] = (mode, data)
        elif op == "edit":
            new[path] = (mode, draw(edited(data)))
        elif op == "mode":
            new[path] = (mode ^ 0o111, data)
        elif op in ("rename", "copy"):
            if op == "copy":
                new[path] = (mode, draw(st.sampled_from([data, draw(edited(data))])))
            target = draw(st.sampled_from(PATHS))
            body = data if draw(st.booleans()) else draw(edited(data))
            new.setdefault(target, (mode, body))
    for path in draw(st.lists(st.sampled_from(PATHS), unique=True, max_size=2)):
        new.setdefault(path, (0o100644, draw(contents())))
    if draw(st.integers(0, 9)) == 0:
        new[b"link"] = (0o120000, b"a.txt")
    return old, new


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(trees=commit_pairs(), message=st.sampled_from(MESSAGES), when=st.sampled_from(DATES))
def test_generated_commits_match_git(
    repo: Path, trees: tuple[Tree, Tree], message: bytes, when: bytes
) -> None:
    old, new = trees
    fast_import(repo, "refs/heads/ex", [Commit(old), Commit(new, message, when)])
    check(repo, "refs/heads/ex")


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=commit_pairs())
def test_root_commits_match_git(repo: Path, tree: tuple[Tree, Tree]) -> None:
    fast_import(repo, "refs/heads/root", [Commit(tree[1])])
    check(repo, "refs/heads/root")


# ---------------------------------------------------------------- fixed cases


def test_short_ids_grow_when_ambiguous(repo: Path) -> None:
    """With core.abbrev=4 and hundreds of objects, some 4-digit prefixes collide."""
    files = {b"f%03d" % i: (0o100644, b"v%d\n" % i) for i in range(400)}
    edits = {p: (m, d + b"x\n") for p, (m, d) in files.items()}
    fast_import(repo, "refs/heads/many", [Commit(files), Commit(edits)])
    check(repo, "refs/heads/many", abbrev=4)


def test_rename_with_common_prefix_and_suffix(repo: Path) -> None:
    body = b"".join(b"line %d\n" % i for i in range(40))
    old = {b"site/2019/old/index.html": (0o100644, body), b"keep.txt": (0o100644, b"k\n")}
    new = {
        b"site/2020/new/index.html": (0o100644, body + b"more\n"),
        b"keep.txt": (0o100644, b"k\n"),
    }
    fast_import(repo, "refs/heads/ren", [Commit(old), Commit(new)])
    check(repo, "refs/heads/ren")


def test_empty_commit_shows_header_only(repo: Path) -> None:
    tree = {b"a": (0o100644, b"a\n")}
    fast_import(repo, "refs/heads/empty", [Commit(tree), Commit(tree, b"Nothing\n")])
    check(repo, "refs/heads/empty")


def test_merge_commit_matches_git(repo: Path) -> None:
    """A merge is git's combined diff (tests/test_notify_gitlog_merge.py has the rest)."""
    stream = b"reset refs/heads/m\n"
    for n, frm in ((1, b""), (2, b"from :1\n"), (3, b"from :1\nmerge :2\n")):
        stream += b"commit refs/heads/m\nmark :%d\ncommitter C <c@x> 0 +0000\ndata 2\nm\n" % n
        stream += frm + b"M 100644 inline f\ndata 2\n%d\n\n" % n
    git(repo, "fast-import", "--quiet", "--force", stdin=stream)
    check(repo, "refs/heads/m")
    assert b"\ndiff --cc f\n" in format_commit_log_bytes(repo, "refs/heads/m")


def test_seed_case_202b30a(tmp_path: Path) -> None:
    """The tvm-site build commit 202b30a: same stat as the corpus README, same log as git."""
    if not (TVM / "published-parent").is_dir():
        pytest.skip(f"the tvm-site corpus is missing at {TVM}")
    names = [
        "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html",
        "2020/07/14/bert-pytorch-tvm.html",
        "atom.xml",
        "rss.xml",
    ]
    old = {n.encode(): (0o100644, (TVM / "published-parent" / n).read_bytes()) for n in names}
    new = {n.encode(): (0o100644, (TVM / "published" / n).read_bytes()) for n in names}
    repo = tmp_path / "site.git"
    git(tmp_path, "init", "-q", "--bare", str(repo))
    message = b"Build at Tue Jul 14 09:12:04 PDT 2020\n"
    fast_import(
        repo,
        "refs/heads/asf-site",
        [
            Commit(old, b"Build at Tue Jul 14 09:04:36 PDT 2020\n", b"1594742676 -0700"),
            Commit(new, message, b"1594743124 -0700"),
        ],
    )
    check(repo, "refs/heads/asf-site")
    # The README's stat was taken on a wide terminal: no name truncation, no scaling.
    check(repo, "refs/heads/asf-site", width=200)
    wide = format_commit_log(repo, "refs/heads/asf-site", width=200)
    readme = (TVM / "README.md").read_text()
    stat = readme.split("`git show --stat 202b30a`:\n\n```\n", 1)[1].split("```", 1)[0]
    assert "\n---\n" + stat + "\n" in wide
    # The email (a pipe: width 80) lost its line breaks and padding; compare tokens.
    text = format_commit_log(repo, "refs/heads/asf-site")
    email = (SHARED / "reference" / "asf-commit-email-202b30a.txt").read_text()
    email_stat = email.split("\n---\n", 1)[1].split("deletions(-)", 1)[0] + "deletions(-)"
    our_stat = text.split("\n---\n", 1)[1].split("deletions(-)", 1)[0] + "deletions(-)"
    assert our_stat.split() == email_stat.split()
    assert "Date:   Tue Jul 14 09:12:04 2020 -0700\n\n    " + message.decode() in text
