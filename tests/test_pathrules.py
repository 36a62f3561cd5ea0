"""Tests for deploybot.git.path_rules: which names and paths are refused.

git is the oracle for its own rules: ``git fsck`` reports a tree entry it would refuse to
check out (``hasDot``, ``hasDotdot``, ``hasDotgit``, ``fullPathname``) whatever
``core.protectNTFS``/``core.protectHFS`` say, using the same ``is_ntfs_dotgit`` and
``is_hfs_dotgit`` as ``verify_path``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploybot.git.path_rules import (
    _PLAIN,
    _problem,
    check_name,
    check_path,
    name_problem,
    path_problem,
    printable,
)
from deploybot.git.tree import decode_path
from deploybot.support.errors import SourceError
from tests.hostile import commit_names

GIT_REFUSES = [
    b".",
    b"..",
    b".git",
    b".GIT",
    b".Git",
    b".git.",
    b".git ",
    b".git. . ",
    b"git~1",
    b"GIT~1",
    b"Git~1...",
    b"a\\.git",
    b".git\\hooks",
    "\u200c.git".encode(),
    ".g\u200dit".encode(),
    ".gi\ufefft".encode(),
    ".GIT\u206f".encode(),
    b"a/b",
]
GIT_ACCEPTS = [
    b"ok.md",
    b".github",
    b".gitignore",
    b".gitx",
    b".git~1",
    b"git~2",
    b"git~1x",
    b"xgit~1",
    b"..x",
    b"...",
    b"a\\b",
    "\u200cgit".encode(),
    "caf\u00e9.md".encode(),
]


def _fsck_refuses(tmp_path: Path, name: bytes) -> bool:
    repo = tmp_path / "fsck.git"
    shutil.rmtree(repo, ignore_errors=True)
    commit_names(repo, {(name,): b"x"})
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "fsck", "--no-dangling"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)},
    )
    found = done.stdout + done.stderr
    return any(key in found for key in ("hasDot", "fullPathname", "emptyName"))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")
@pytest.mark.parametrize("name", GIT_REFUSES + GIT_ACCEPTS)
def test_names_git_refuses_are_refused(tmp_path: Path, name: bytes) -> None:
    refused = name_problem(decode_path(name)) is not None
    assert refused == (name in GIT_REFUSES)
    assert _fsck_refuses(tmp_path, name) == refused


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "an empty name"),
        ("a\nb", "a control character in the name"),
        ("a\rb", "a control character in the name"),
        ("a\x00b", "a control character in the name"),
        ("tab\there", "a control character in the name"),
        ("del\x7f", "a control character in the name"),
        (decode_path(b"caf\xe9.md"), "a name that is not UTF-8"),
        # sizes are the name's own bytes, an undecodable one being one byte, not three
        (decode_path(b"\xe9" * 255), "a name that is not UTF-8"),
        (decode_path(b"\xe9" * 256), "a name longer than 255 bytes"),
        ("\udcff" * 253 + "\ud800", "a name longer than 255 bytes"),  # 253 + 3 bytes
    ],
)
def test_our_own_rules(name: str, problem: str) -> None:
    assert name_problem(name) == problem


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("a/b/c.html", False),
        (".well-known/x", False),
        ("a//b", True),
        ("/a", True),
        ("a/", True),
        ("a/./b", True),
        ("a/../b", True),
        ("x/.git/config", True),
        ("x/GIT~1/config", True),
        ("", True),
    ],
)
def test_paths(path: str, refused: bool) -> None:
    assert (path_problem(path) is not None) == refused


def test_errors_name_the_path_on_one_line() -> None:
    with pytest.raises(SourceError) as caught:
        check_path("site/.GIT/hooks/post-checkout", "output path")
    assert str(caught.value) == (
        "site/.GIT/hooks/post-checkout: refused output path: "
        "a name git reserves for its own folder ('.git' in some spelling)"
    )
    with pytest.raises(SourceError) as caught:
        check_name("evil\nname", "posts")
    assert str(caught.value) == "posts/evil\\x0aname: refused path: a control character in the name"
    assert check_path("a/b.html") == "a/b.html"


def test_printable_shows_raw_bytes_and_controls() -> None:
    assert printable(decode_path(b"caf\xe9\r\n.md")) == "caf\\xe9\\x0d\\x0a.md"
    assert printable("a\\b") == "a\\\\b"
    assert printable("café") == "café"


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8))
def test_the_plain_name_shortcut_agrees_with_the_rules(name: str) -> None:
    if _PLAIN.match(name):
        assert _problem(name) is None
    assert name_problem(name) == _problem(name)


def test_a_path_is_measured_in_its_own_bytes() -> None:
    folder = decode_path(b"\xe9" * 200)
    assert path_problem("/".join([folder] * 20)) == "a name that is not UTF-8"  # 4,019 bytes
    assert path_problem("/".join([folder] * 21)) == "a path longer than 4095 bytes"
