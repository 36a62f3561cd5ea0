"""``deploybot build``: hostile trees, permalinks and folders never read or write outside.

Each case runs the real CLI on a git revision (a tree written object by object, with names
git itself refuses) or on a folder, and checks the exit code, the one error line, and that
nothing at all was written: not outside OUT, not inside it either.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from tests.hostile import Names, commit_names

PAGE = b"---\ntitle: Home\n---\nhello\n"
DOTGIT = "a name git reserves for its own folder ('.git' in some spelling)"


def files_under(root: Path) -> set[str]:
    """Every file and symlink below ``root``, relative, as POSIX paths."""
    found = set()
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            if path.is_symlink() or path.is_file():
                found.add(path.relative_to(root).as_posix())
    return found


def build_rev(tmp_path: Path, files: dict[Names, bytes]) -> tuple[int, str, Path]:
    """Commit ``files`` to a bare repo in ``tmp_path/work`` and build it into ``.../out``."""
    work = tmp_path / "work"
    repo = work / "src.git"
    commit_names(repo, files)
    out = work / "site" / "out"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", "main"])
    return result.exit_code, result.output, out


def assert_nothing_written(tmp_path: Path, out: Path) -> None:
    assert not out.exists()
    assert files_under(tmp_path / "work" / "site") == set()
    assert {p for p in files_under(tmp_path / "work") if not p.startswith("src.git/")} == set()


@pytest.mark.parametrize(
    ("names", "error"),
    [
        ((b"..", b"x"), "..: refused path: a '..' name"),
        ((b".", b"x"), ".: refused path: a '.' name"),
        ((b"..", b"..", b"x"), "..: refused path: a '..' name"),
        ((b"docs", b"..", b"..", b"x"), "docs/..: refused path: a '..' name"),
        ((b".git", b"hooks", b"post-checkout"), f".git: refused path: {DOTGIT}"),
        ((b".GIT", b"hooks", b"post-checkout"), f".GIT: refused path: {DOTGIT}"),
        ((b"git~1", b"config"), f"git~1: refused path: {DOTGIT}"),
        ((b"sub", b".Git ", b"config"), f"sub/.Git : refused path: {DOTGIT}"),
        ((b"../x",), "../x: refused path: a '/' inside one name"),
        ((b"a/b.html",), "a/b.html: refused path: a '/' inside one name"),
        (
            (b"evil\nname.html",),
            "evil\\x0aname.html: refused path: a control character in the name",
        ),
        (
            (b"evil\rname.html",),
            "evil\\x0dname.html: refused path: a control character in the name",
        ),
    ],
)
def test_build_rev_refuses_a_tree_git_would_refuse(
    tmp_path: Path, names: Names, error: str
) -> None:
    # _config.yml includes every dotted name, so today's reader publishes them all.
    config = b"include: ['..', '.', '.git', '.GIT', 'git~1', '.Git ']\n"
    files = {(b"_config.yml",): config, (b"index.md",): PAGE, names: b"#!/bin/sh\necho pwned\n"}
    code, output, out = build_rev(tmp_path, files)
    assert (code, output) == (1, f"deploybot: error: {error}\n")
    assert_nothing_written(tmp_path, out)


def test_build_rev_refuses_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, (b"caf\xe9.md",): PAGE})
    assert (code, output) == (
        1,
        "deploybot: error: caf\\xe9.md: refused path: a name that is not UTF-8\n",
    )
    assert_nothing_written(tmp_path, out)


@pytest.mark.parametrize(
    "permalink",
    ["/.git/config", "/.GIT/hooks/post-checkout", "/sub/git~1/x/", "/%2Egit/config", "/a%0Ab/"],
)
def test_a_permalink_into_git_is_refused(tmp_path: Path, permalink: str) -> None:
    page = f"---\ntitle: Evil\npermalink: {permalink}\n---\nhi\n".encode()
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, (b"evil.md",): page})
    assert code == 1
    assert output.startswith("deploybot: error: evil.md:3: permalink ")
    assert "gives a refused output path" in output and output.count("\n") == 1
    assert_nothing_written(tmp_path, out)


def test_config_yml_with_a_control_character_is_one_line(tmp_path: Path) -> None:
    config = b"title: Site\ndescription: 'bell \x07 here'\n"
    code, output, out = build_rev(tmp_path, {(b"_config.yml",): config, (b"index.md",): PAGE})
    assert (code, output) == (
        1,
        "deploybot: error: _config.yml:2: character U+0007 is not allowed in YAML "
        "(control characters are not allowed)\n",
    )
    assert_nothing_written(tmp_path, out)


# --- a folder: never follow a symlink or ../ out of SOURCE ------------------------------


def folder_site(tmp_path: Path) -> tuple[Path, Path]:
    """A source folder beside a secret file it must never read."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("TOP-SECRET-KEY\n")
    (secret / "page.html").write_text("TOP-SECRET-LAYOUT\n")
    src = tmp_path / "src"
    (src / "theme").mkdir(parents=True)
    (src / "index.md").write_bytes(PAGE)
    return src, secret


def build_folder(src: Path, out: Path, *config: str) -> tuple[int, str]:
    cfg = src.parent / "deploybot.toml"
    cfg.write_text('[source]\nurl = "src"\n' + "".join(config))
    result = CliRunner().invoke(main, ["build", str(src), str(out), "--config", str(cfg)])
    return result.exit_code, result.output


def test_folder_symlinks_out_of_the_tree_are_left_out(tmp_path: Path) -> None:
    src, secret = folder_site(tmp_path)
    os.symlink(secret / "key.txt", src / "key.txt")
    os.symlink("../secret/key.txt", src / "rel.txt")
    os.symlink(secret, src / "stuff")
    os.symlink(secret / "key.txt", src / "theme" / "leak.html")
    os.symlink("index.md", src / "alias.md")
    out = tmp_path / "out"
    code, output = build_folder(src, out)
    assert code == 0, output
    # Read as git stores a symlink (its target as text), resolved inside the tree only:
    # nothing behind a link that leaves the tree is read, and the link is not published.
    for name in ("key.txt", "rel.txt", "stuff"):
        assert not (out / name).exists()
    assert not any("TOP-SECRET" in p.read_text() for p in out.rglob("*") if p.is_file())
    assert (out / "alias.html").read_text() == (out / "index.html").read_text()
    for name in ("key.txt", "rel.txt", "stuff"):
        assert f"warning: {name}: symlink not published: its target" in output


def test_folder_theme_include_cannot_climb_out(tmp_path: Path) -> None:
    src, _ = folder_site(tmp_path)
    (src / "theme" / "page.html").write_text('[{% include "../../secret/page.html" %}]')
    out = tmp_path / "out"
    code, output = build_folder(src, out, '[render]\ntheme = "theme"\n')
    assert (code, output) == (
        1,
        "deploybot: error: index.md: the theme has no layout '../../secret/page.html'\n",
    )
    assert not out.exists()


def test_folder_include_through_a_symlinked_folder_is_not_followed(tmp_path: Path) -> None:
    src, secret = folder_site(tmp_path)
    os.symlink(secret, src / "_includes")
    (src / "post.md").write_text("---\ntitle: P\n---\n[{% include page.html %}]\n")
    out = tmp_path / "out"
    code, output = build_folder(src, out)
    assert code == 0, output
    assert "TOP-SECRET" not in (out / "post.html").read_text()
    assert "no file _includes/page.html" in output


def test_folder_with_a_dotgit_variant_is_refused(tmp_path: Path) -> None:
    src, _ = folder_site(tmp_path)
    (src / ".git").mkdir()  # the repository itself: skipped
    (src / ".git" / "config").write_text("[core]\n")
    (src / "sub" / ".GIT").mkdir(parents=True)
    (src / "sub" / ".GIT" / "config").write_text("[core]\n")
    out = tmp_path / "out"
    code, output = build_folder(src, out)
    assert (code, output) == (1, f"deploybot: error: sub/.GIT: refused path: {DOTGIT}\n")
    assert not out.exists()
