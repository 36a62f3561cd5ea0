"""Gitlinks (submodules), symlinks and type changes in the email's log, against git itself.

git prints a gitlink as the one line ``Subproject commit <id>`` in ``--stat`` and ``-p``
(``diff.c`` ``diff_populate_gitlink``); ``-C`` pairs a gitlink only by an exact match of the
same mode (``diffcore-rename.c`` ``find_identical_files``) and never reads it as a blob for
the similarity estimate (``estimate_similarity`` returns 0 for non-regular files first).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.notify.gitlog.excerpt import excerpt_from_text
from tests.test_notify_gitlog import (
    GITLINK,
    LOG_ARGS,
    Commit,
    Tree,
    check,
    contents,
    excerpts_both_ways,
    fast_import,
    git,
)

LINK = 0o120000
EXE = 0o100755
REG = 0o100644
SUB1 = b"1" * 40
SUB2 = b"2" * 40
SUB3 = b"0123456789abcdef0123456789abcdef01234567"
F = (REG, b"hello\nworld\n")
F2 = (REG, b"hello\nthere\nworld\n")
SUBPROJECT = (REG, b"Subproject commit " + SUB1 + b"\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gitlog-types") / "repo"
    git(path.parent, "init", "-q", "--bare", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


CASES: dict[str, tuple[Tree, Tree]] = {
    # Issue 8.11a: -C read the new gitlink as a blob (KeyError: the commit is not here).
    "add gitlink, modify file": ({b"a": F}, {b"a": F2, b"sub": (GITLINK, SUB1)}),
    "add gitlink beside a deleted file": ({b"a": F, b"x": F}, {b"a": F2, b"sub": (GITLINK, SUB1)}),
    "delete gitlink, add another": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F2, b"sub2": (GITLINK, SUB2)},
    ),
    "file with a gitlink's text, gitlink added": (
        {b"a": F, b"x": SUBPROJECT},
        {b"a": F2, b"sub": (GITLINK, SUB1)},
    ),
    "folder becomes gitlink": (
        {b"a": F, b"sub/x": F, b"sub/y": F2},
        {b"a": F2, b"sub": (GITLINK, SUB1)},
    ),
    "gitlink becomes folder": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F2, b"sub/x": F, b"sub/y": F2},
    ),
    "modify gitlink": ({b"a": F, b"sub": (GITLINK, SUB1)}, {b"a": F2, b"sub": (GITLINK, SUB2)}),
    "modify gitlink, add file": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F, b"b": F2, b"sub": (GITLINK, SUB2)},
    ),
    "delete gitlink": ({b"a": F, b"sub": (GITLINK, SUB1)}, {b"a": F2}),
    "gitlink renamed (exact)": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F2, b"sub2": (GITLINK, SUB1)},
    ),
    "gitlink copied (exact, source modified)": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F2, b"sub": (GITLINK, SUB2), b"sub2": (GITLINK, SUB1)},
    ),
    "file becomes gitlink": ({b"a": F, b"sub": F}, {b"a": F2, b"sub": (GITLINK, SUB1)}),
    "gitlink becomes file": ({b"a": F, b"sub": (GITLINK, SUB1)}, {b"a": F2, b"sub": F}),
    "gitlink becomes its own text": (
        {b"a": F, b"sub": (GITLINK, SUB1)},
        {b"a": F2, b"sub": SUBPROJECT},
    ),
    "symlink becomes gitlink": (
        {b"a": F, b"s": (LINK, b"a")},
        {b"a": F2, b"s": (GITLINK, SUB3)},
    ),
    "gitlink becomes symlink": (
        {b"a": F, b"s": (GITLINK, SUB3)},
        {b"a": F2, b"s": (LINK, b"a")},
    ),
    "file becomes symlink": ({b"a": F, b"s": F}, {b"a": F2, b"s": (LINK, b"a")}),
    "symlink becomes file": ({b"a": F, b"s": (LINK, b"a")}, {b"a": F2, b"s": F}),
    "symlink renamed": ({b"a": F, b"s": (LINK, b"target")}, {b"a": F2, b"t": (LINK, b"target")}),
    "symlink edited and renamed": (
        {b"a": F, b"s": (LINK, b"target")},
        {b"a": F2, b"t": (LINK, b"target2")},
    ),
    "symlink's blob as a new file": (
        {b"a": F, b"s": (LINK, b"target")},
        {b"a": F2, b"t": (REG, b"target")},
    ),
    "executable becomes gitlink": ({b"a": F, b"x": (EXE, b"#!/bin/sh\n")}, {b"x": (GITLINK, SUB1)}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fixed_cases_match_git(repo: Path, name: str) -> None:
    old, new = CASES[name]
    ref = "refs/heads/fixed"
    fast_import(repo, ref, [Commit(old), Commit(new)])
    check(repo, ref)


def test_root_commit_with_gitlink_matches_git(repo: Path) -> None:
    fast_import(repo, "refs/heads/root", [Commit({b"a": F2, b"sub": (GITLINK, SUB1)})])
    check(repo, "refs/heads/root")


# ---------------------------------------------------------------- generated cases

PATHS = [b"a", b"b.txt", b"d", b"d/a", b"d/sub", b"sub", b"lnk", b"e"]
SPECIALS = [(GITLINK, SUB1), (GITLINK, SUB2), (GITLINK, SUB3), (LINK, b"a"), (LINK, b"d/a")]


@st.composite
def entries(draw: st.DrawFn) -> tuple[int, bytes]:
    """A regular or executable file, a symlink or a gitlink."""
    kind = draw(st.integers(0, 5))
    if kind < 2:
        return draw(st.sampled_from(SPECIALS))
    return (EXE if kind == 2 else REG, draw(contents()))


@st.composite
def typed_trees(draw: st.DrawFn) -> tuple[Tree, Tree]:
    """Two trees whose paths change kind (file, symlink, gitlink) and are copied and moved."""
    old = {p: draw(entries()) for p in draw(st.lists(st.sampled_from(PATHS), unique=True))}
    new: dict[bytes, tuple[int, bytes]] = {}
    for path, entry in old.items():
        op = draw(st.sampled_from(["keep", "replace", "delete", "move", "copy"]))
        if op == "keep":
            new[path] = entry
        elif op == "replace":
            new[path] = draw(entries())
        elif op in ("move", "copy"):
            if op == "copy":
                new[path] = draw(st.sampled_from([entry, draw(entries())]))
            new.setdefault(draw(st.sampled_from(PATHS)), entry)
    for path in draw(st.lists(st.sampled_from(PATHS), unique=True, max_size=2)):
        new.setdefault(path, draw(entries()))
    # A path cannot be a file and a folder in one tree: ``d`` is dropped when ``d/*`` is there.
    return _no_dir_clash(old), _no_dir_clash(new)


def _no_dir_clash(tree: Tree) -> Tree:
    return {
        p: e for p, e in tree.items() if p != b"d" or not any(q.startswith(b"d/") for q in tree)
    }


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(trees=typed_trees())
def test_generated_type_changes_match_git(repo: Path, trees: tuple[Tree, Tree]) -> None:
    old, new = trees
    fast_import(repo, "refs/heads/gen", [Commit(old), Commit(new)])
    check(repo, "refs/heads/gen")
    text = git(repo, *LOG_ARGS, "refs/heads/gen").decode("utf-8", "replace")
    for max_lines, max_line_length in ((8, 30), (25, 0)):
        excerpts = excerpts_both_ways(repo, "refs/heads/gen", max_lines, max_line_length)
        for engine, got in excerpts.items():
            assert got == excerpt_from_text(text, max_lines, max_line_length), engine
