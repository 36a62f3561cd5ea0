"""Merge commits: ``format_commit_log_bytes`` against ``git log -C --stat -p --cc -1 <merge>``.

Generated merges are made with ``git fast-import`` (a base, two or three parents from it,
and a merge whose tree is chosen freely: clean, resolved or "evil"); real ones with
``git merge`` (tests/test_notify_cli.py runs the CLI on those).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.commit_log import format_commit_log_bytes
from tests.test_notify_gitlog import (
    GIT_ENV,
    GITLINK,
    LOG_ARGS,
    Tree,
    _data,
    _quote,
    check,
    excerpts_both_ways,
    git,
)

REG = 0o100644
EXE = 0o100755
LINK = 0o120000


def merge_import(
    repo: Path, ref: str, base: Tree, parents: list[Tree], merged: Tree, message: bytes = b"Merge\n"
) -> None:
    """Reset ``ref`` to a merge of ``parents`` (each a child of ``base``) with tree
    ``merged``."""
    stream = b""
    trees = [base, *parents]
    for n, tree in enumerate([*trees, merged], 1):
        ident = b"A U Thor <author@example.org> 1594743124 -0700"
        stream += b"commit %s\nmark :%d\nauthor %s\ncommitter %s\n" % (
            ref.encode(),
            n,
            ident,
            ident,
        )
        stream += _data(message if n == len(trees) + 1 else b"c%d\n" % n)
        if n == 1:
            stream = b"reset " + ref.encode() + b"\n" + stream
        elif n <= len(trees):
            stream += b"from :1\n"
        else:
            stream += b"from :2\n" + b"".join(b"merge :%d\n" % m for m in range(3, n))
        stream += b"deleteall\n"
        for path, (mode, content) in sorted(tree.items()):
            if mode == GITLINK:
                stream += b"M %o %s %s\n" % (mode, content, _quote(path))
            else:
                stream += b"M %o inline %s\n" % (mode, _quote(path)) + _data(content)
    git(repo, "fast-import", "--quiet", "--force", stdin=stream)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gitlog-merge") / "repo"
    git(path.parent, "init", "-q", "--bare", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def lines(*items: str) -> bytes:
    return "".join(item + "\n" for item in items).encode()


BASE = lines(*[f"line {i}" for i in range(1, 21)])


def edit(data: bytes, old: str, new: str) -> bytes:
    return data.replace((old + "\n").encode(), (new + "\n").encode(), 1)


def check_merge(repo: Path, base: Tree, parents: list[Tree], merged: Tree) -> None:
    merge_import(repo, "refs/heads/m", base, parents, merged)
    check(repo, "refs/heads/m")


# ---------------------------------------------------------------- generated merges

PATHS = [b"a.txt", b"b.txt", b"d/c.txt", b"e", b"sp ace", b"sub"]
WORDS = [b"", b"a", b"b", b"}", b"{", b"def f(x):", b"    return x", b"caf\xc3\xa9 x", b"x\r"]
WORDS += [b"function " + b"y" * 40 + b" z", b"_private", b"$v", b"  ", b"line"]


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    body = b"\n".join(draw(st.lists(st.sampled_from(WORDS), max_size=25)))
    if draw(st.integers(0, 15)) == 0:
        body += b"\0"
    return body + (b"\n" if body and draw(st.booleans()) else b"")


@st.composite
def edits(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to three blocks of lines replaced."""
    rows = data.split(b"\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(rows)))
        j = draw(st.integers(i, min(len(rows), i + 3)))
        rows[i:j] = draw(st.lists(st.sampled_from(WORDS), max_size=3))
    return b"\n".join(rows)


@st.composite
def splices(draw: st.DrawFn, one: bytes, other: bytes) -> bytes:
    """A hand-made resolution: ``one`` with a block of ``other``'s lines spliced in."""
    a, b = one.split(b"\n"), other.split(b"\n")
    i = draw(st.integers(0, len(a)))
    k = draw(st.integers(i, len(a)))
    j = draw(st.integers(0, len(b)))
    m = draw(st.integers(j, len(b)))
    return b"\n".join(a[:i] + b[j:m] + a[k:])


def _entry(draw: st.DrawFn, data: bytes) -> tuple[int, bytes]:
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return (GITLINK, draw(st.sampled_from([b"1" * 40, b"2" * 40, b"3" * 40])))
    if kind == 1:
        return (LINK, data[:20] or b"target")
    return (EXE if kind == 2 else REG, data)


@st.composite
def merges(draw: st.DrawFn) -> tuple[Tree, list[Tree], Tree]:
    """A base tree, 2 or 3 parents edited from it, and a merge tree made of the parents'
    versions, edits of them and splices of two of them (moves and copies included)."""
    base = {p: (REG, draw(texts())) for p in draw(st.lists(st.sampled_from(PATHS), unique=True))}
    parents: list[Tree] = []
    for _ in range(draw(st.integers(2, 3))):
        tree: dict[bytes, tuple[int, bytes]] = {}
        for path in PATHS:
            op = draw(st.sampled_from(["keep", "keep", "edit", "drop", "new", "move"]))
            mode, data = base.get(path, (REG, b""))
            if op == "keep" and path in base:
                tree[path] = (mode, data)
            elif op == "edit" and path in base:
                tree[path] = (mode, draw(edits(data)))
            elif op == "new":
                tree[path] = _entry(draw, draw(texts()))
            elif op == "move" and path in base:
                tree.setdefault(draw(st.sampled_from(PATHS)), (mode, draw(edits(data))))
        parents.append(tree)
    merged: dict[bytes, tuple[int, bytes]] = {}
    for path in PATHS:
        have = [t[path] for t in parents if path in t]
        op = draw(st.sampled_from(["pick", "edit", "splice", "drop", "retype"]))
        if not have and op == "retype":  # a path no parent has: "new file mode"
            merged[path] = (REG, draw(texts()))
        if not have or op == "drop":
            continue
        mode, data = draw(st.sampled_from(have))
        if mode != GITLINK and op == "edit":
            data = draw(edits(data))
        elif mode != GITLINK and op == "splice":
            other = draw(st.sampled_from(have))[1]
            data = draw(splices(data, other))
        elif op == "retype":
            mode, data = _entry(draw, data)
        merged[path] = (mode, data)
    return base, parents, merged


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=merges())
def test_generated_merges_match_git(repo: Path, case: tuple[Tree, list[Tree], Tree]) -> None:
    base, parents, merged = case
    check_merge(repo, base, parents, merged)


# ---------------------------------------------------------------- fixed cases

A = edit(BASE, "line 3", "three")
B = edit(BASE, "line 15", "fifteen")
AB = edit(A, "line 15", "fifteen")
FIXED: dict[str, tuple[Tree, list[Tree], Tree]] = {
    "clean (no hunk shown)": (
        {b"f": (REG, BASE)},
        [{b"f": (REG, A)}, {b"f": (REG, B)}],
        {b"f": (REG, AB)},
    ),
    "evil edit": (
        {b"f": (REG, BASE)},
        [{b"f": (REG, A)}, {b"f": (REG, B)}],
        {b"f": (REG, edit(AB, "line 10", "ten"))},
    ),
    "conflict resolved to a third text": (
        {b"f": (REG, BASE)},
        [
            {b"f": (REG, edit(BASE, "line 10", "ten a"))},
            {b"f": (REG, edit(BASE, "line 10", "ten b"))},
        ],
        {b"f": (REG, edit(BASE, "line 10", "ten a\nten b"))},
    ),
    "ours (nothing differs from all parents)": (
        {b"f": (REG, BASE)},
        [{b"f": (REG, A)}, {b"f": (REG, B)}],
        {b"f": (REG, A)},
    ),
    "deleted in the merge": ({b"f": (REG, BASE)}, [{b"f": (REG, A)}, {b"f": (REG, B)}], {}),
    "added in the merge": (
        {},
        [{b"x": (REG, b"x\n")}, {b"y": (REG, b"y\n")}],
        {b"n": (REG, b"n\n")},
    ),
    "added on both sides": (
        {},
        [{b"n": (REG, b"a\nb\n")}, {b"n": (REG, b"a\nc\n")}],
        {b"n": (REG, b"a\nb\nc\n")},
    ),
    "mode change": (
        {b"f": (REG, BASE)},
        [{b"f": (EXE, BASE)}, {b"f": (REG, B)}],
        {b"f": (EXE, edit(B, "line 1", "one"))},
    ),
    "binary": (
        {b"f": (REG, b"\0a")},
        [{b"f": (REG, b"\0b")}, {b"f": (REG, b"\0c")}],
        {b"f": (REG, b"\0d")},
    ),
    "gitlink": (
        {b"s": (GITLINK, b"1" * 40)},
        [{b"s": (GITLINK, b"2" * 40)}, {b"s": (GITLINK, b"3" * 40)}],
        {b"s": (GITLINK, b"4" * 40)},
    ),
    "renamed on one side": (
        {b"f": (REG, BASE)},
        [{b"g": (REG, A)}, {b"f": (REG, B)}],
        {b"g": (REG, AB)},
    ),
    "octopus": (
        {b"f": (REG, BASE)},
        [{b"f": (REG, A)}, {b"f": (REG, B)}, {b"f": (REG, edit(BASE, "line 8", "eight"))}],
        {b"f": (REG, edit(AB, "line 8", "8"))},
    ),
    "no final newline, CRLF": (
        {b"f": (REG, b"a\r\nb")},
        [{b"f": (REG, b"a\r\nc")}, {b"f": (REG, b"x\r\nb")}],
        {b"f": (REG, b"y\r\nz")},
    ),
    "hunk comment cut at 40 bytes, last character dropped": (
        {b"f": (REG, b"function caf\xc3\xa9 " + b"x" * 40 + b"\n" + BASE)},
        [
            {b"f": (REG, b"function caf\xc3\xa9 " + b"x" * 40 + b"\n" + A)},
            {b"f": (REG, b"function caf\xc3\xa9 " + b"x" * 40 + b"\n" + B)},
        ],
        {b"f": (REG, b"function caf\xc3\xa9 " + b"x" * 40 + b"\n" + edit(AB, "line 10", "ten"))},
    ),
}


@pytest.mark.parametrize("name", list(FIXED))
def test_fixed_merges_match_git(repo: Path, name: str) -> None:
    """Issue 8.10: a merge gave NotImplementedError; now git's dense combined diff."""
    check_merge(repo, *FIXED[name])


@pytest.mark.parametrize(("max_lines", "max_line_length"), [(0, 0), (5, 20), (12, 0), (40, 9)])
def test_merge_excerpt_is_gits_text_cut(repo: Path, max_lines: int, max_line_length: int) -> None:
    from deploybot.notify.gitlog.excerpt import excerpt_from_text

    merge_import(repo, "refs/heads/x", *FIXED["octopus"])
    text = git(repo, *LOG_ARGS, "refs/heads/x").decode("utf-8", "replace")
    for engine, got in excerpts_both_ways(repo, "refs/heads/x", max_lines, max_line_length).items():
        assert got == excerpt_from_text(text, max_lines, max_line_length), engine


def real_merges(root: Path) -> Path:
    """A work tree whose history has a clean merge (``clean``), a merge with a conflict
    resolved by hand (``resolved``) and an octopus merge (``octopus``), made by git."""
    repo = root / "work"
    git(root, "init", "-q", "-b", "main", str(repo))
    env = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@x",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@x",
        "GIT_AUTHOR_DATE": "1594743124 -0700",
        "GIT_COMMITTER_DATE": "1594743124 -0700",
    }

    def commit(msg: str, **files: bytes) -> None:
        for name, data in files.items():
            (repo / name).write_bytes(data)
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", msg, env=env)

    commit("base", f=BASE, g=b"g\n")
    for branch, text in (("b1", A), ("b2", B), ("b3", edit(BASE, "line 8", "eight"))):
        git(repo, "checkout", "-q", "-b", branch, "main", env=env)
        commit(branch, f=text, **{branch: b"new\n"})
    git(repo, "checkout", "-q", "main", env=env)
    git(repo, "merge", "-q", "--no-edit", "b1", "b2", env=env)
    git(repo, "tag", "octopus", env=env)
    git(repo, "checkout", "-q", "-b", "c1", "b1", env=env)
    commit("c1", f=edit(A, "line 10", "ten one"))
    git(repo, "checkout", "-q", "-b", "c2", "b1", env=env)
    commit("c2", f=edit(A, "line 10", "ten two"))
    proc = subprocess.run(
        ["git", "merge", "-q", "c1"],
        cwd=repo,
        env={**GIT_ENV, **env},
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1  # the conflict
    commit("resolved", f=edit(A, "line 10", "ten one and two"))
    git(repo, "tag", "resolved", env=env)
    git(repo, "checkout", "-q", "-b", "c3", "b3", env=env)
    git(repo, "merge", "-q", "--no-edit", "b2", env=env)
    git(repo, "tag", "clean", env=env)
    return repo


@pytest.mark.parametrize("tag", ["clean", "resolved", "octopus"])
def test_real_merges_match_git(tmp_path: Path, tag: str) -> None:
    repo = real_merges(tmp_path)
    assert len(git(repo, "rev-list", "--parents", "-1", tag).split()) > 2
    check(repo, tag)
    shown = b"\ndiff --cc f\n" in format_commit_log_bytes(repo, tag)
    assert shown == (tag == "resolved")  # git shows only the hand-resolved hunk


# ---------------------------------------------------------------- lost-line coalescing


def _coalesce_table(base: list[bytes], new: list[bytes]) -> list[tuple[bytes, bool, bool]]:
    """git's ``coalesce_lines`` as written in combine-diff.c (the whole DP table): the
    merged list as ``(line, from base, matched)``."""
    nb, nn = len(base), len(new)
    lcs = [[0] * (nn + 1) for _ in range(nb + 1)]
    way = [["B"] * (nn + 1) for _ in range(nb + 1)]
    for j in range(1, nn + 1):
        way[0][j] = "N"
    for i in range(1, nb + 1):
        for j in range(1, nn + 1):
            if base[i - 1] == new[j - 1]:
                lcs[i][j], way[i][j] = lcs[i - 1][j - 1] + 1, "M"
            elif lcs[i][j - 1] >= lcs[i - 1][j]:
                lcs[i][j], way[i][j] = lcs[i][j - 1], "N"
            else:
                lcs[i][j] = lcs[i - 1][j]
    out = []
    i, j = nb, nn
    while i or j:
        if way[i][j] == "M":
            out.append((base[i - 1], True, True))
            i, j = i - 1, j - 1
        elif way[i][j] == "N":
            out.append((new[j - 1], False, False))
            j -= 1
        else:
            out.append((base[i - 1], True, False))
            i -= 1
    return out[::-1]


@settings(max_examples=500, deadline=None)
@given(
    base=st.lists(st.sampled_from([b"a", b"b", b"c", b""]), min_size=1, max_size=12),
    new=st.lists(st.sampled_from([b"a", b"b", b"d", b""]), min_size=1, max_size=12),
)
def test_coalesce_follows_gits_table(base: list[bytes], new: list[bytes]) -> None:
    """The bit-parallel LCS walks the same path as git's quadratic table."""
    from deploybot.notify.gitlog.combined import _coalesce, _Lost

    got = _coalesce([_Lost(x, 1) for x in base], [_Lost(x, 2) for x in new], 1)
    want = _coalesce_table(base, new)
    assert [(ll.line, ll.parent_map & 1 == 1, ll.parent_map == 3) for ll in got] == want


class _StepBudget(Exception):
    """Raised by :func:`_count_steps`'s tracer once the budget is spent."""


def _count_steps(module: str, budget: int, fn: Callable[[], bytes]) -> tuple[bytes, int]:
    """Return ``fn()`` and the number of Python lines it ran in the module file ``module``
    (a deterministic measure of its work); raise :class:`_StepBudget` as soon as that
    passes ``budget``, so that a quadratic regression fails at once instead of hanging."""
    steps = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal steps
        if event == "line":
            steps += 1
            if steps > budget:
                raise _StepBudget(f"over {budget:,} lines run in {module}")
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename == module else None

    sys.settrace(calls)
    try:
        out = fn()
    finally:
        sys.settrace(None)
    return out, steps


def test_big_lost_blocks_take_linear_work(repo: Path) -> None:
    """A merge deleting an 8,000-line file that differs on both sides: git's coalescing is
    quadratic in the lost lines (a 64M-cell table, 15 s in Python here); ours is
    bit-parallel: the lines of Python run in :mod:`deploybot.notify.gitlog.combined` are
    linear in the lines (measured: 256,000, 32 per line), each step on integers of one bit
    per line."""
    from deploybot.notify.gitlog import combined

    big = lines(*[f"row {i}" for i in range(8000)])
    other = big.replace(b"row 7\n", b"row seven\n").replace(b"row 7000\n", b"row x\n")
    merge_import(
        repo,
        "refs/heads/big",
        {b"f": (REG, big)},
        [{b"f": (REG, big + b"end\n")}, {b"f": (REG, other)}],
        {},
    )
    budget = 100 * 8000
    out, steps = _count_steps(
        combined.__file__, budget, lambda: format_commit_log_bytes(repo, "refs/heads/big")
    )
    assert out == git(repo, *LOG_ARGS, "refs/heads/big")
    assert 8000 < steps < budget  # the coalescing ran, linearly
