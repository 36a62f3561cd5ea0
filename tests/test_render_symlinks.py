"""Symlinks and submodules of the source tree (:mod:`deploybot.render.read.symlinks`): a symlink is
read as its target inside the tree, resolved name by name on the tree's own entries;
anything else is left out with one warning, and nothing outside the tree is ever read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import DirTree, MemoryTree
from deploybot.render.read.symlinks import MAX_HOPS, SUBMODULE, ResolvedTree
from tests.test_render_limits import run_build

FILES = {
    "docs/real.md": b"---\ntitle: Real\n---\nReal\n",
    "img/logo.png": b"PNG",
    "_includes/note.html": b"<aside>note</aside>",
}


def resolved(links: dict[str, str], path: str) -> tuple[str | None, str | None]:
    tree = MemoryTree({**FILES, **{k: v.encode() for k, v in links.items()}}, symlinks=links)
    found = ResolvedTree(tree).resolve(path)
    return found.target, found.problem


@pytest.mark.parametrize(
    ("links", "path", "target"),
    [
        ({"a.md": "docs/real.md"}, "a.md", "docs/real.md"),
        ({"docs/a.md": "real.md"}, "docs/a.md", "docs/real.md"),
        ({"docs/a.md": "./../docs//real.md"}, "docs/a.md", "docs/real.md"),
        ({"x/a.png": "../img/logo.png"}, "x/a.png", "img/logo.png"),
        # a chain, and a symlinked folder on the way
        ({"a.png": "b.png", "b.png": "img/logo.png"}, "a.png", "img/logo.png"),
        ({"pics": "img", "a.png": "pics/logo.png"}, "a.png", "img/logo.png"),
        ({"d": "docs", "e.md": "d/../img/logo.png"}, "e.md", "img/logo.png"),
    ],
)
def test_symlinks_inside_the_tree_resolve(links: dict[str, str], path: str, target: str) -> None:
    assert resolved(links, path) == (target, None)


@pytest.mark.parametrize(
    ("links", "path", "problem"),
    [
        ({"a.md": "/etc/passwd"}, "a.md", "its target '/etc/passwd' is outside the source tree"),
        ({"a.md": "../a.md"}, "a.md", "its target '../a.md' is outside the source tree"),
        ({"x/a.md": "../../y"}, "x/a.md", "its target '../../y' is outside the source tree"),
        ({"a.md": "missing.md"}, "a.md", "its target 'missing.md' is not a file of the tree"),
        ({"a.md": "docs"}, "a.md", "its target 'docs' is not a file of the tree"),
        ({"a.md": "."}, "a.md", "its target '.' is not a file of the tree"),
        ({"a.md": "docs/real.md/x"}, "a.md", "its target 'docs/real.md/x' is not a file"),
        ({"a.md": ".git/config"}, "a.md", "its target '.git/config' is not a file of the tree"),
        ({"a.md": "a.md"}, "a.md", "a loop of symlinks"),
        ({"a.md": "b.md", "b.md": "a.md"}, "a.md", "a loop of symlinks"),
    ],
)
def test_other_symlinks_say_why(links: dict[str, str], path: str, problem: str) -> None:
    target, why = resolved(links, path)
    assert target is None and why is not None
    assert why.startswith("symlink not published: ") and problem in why


def test_a_chain_longer_than_forty_is_a_loop() -> None:
    links = {f"l{i}": f"l{i + 1}" for i in range(MAX_HOPS + 1)} | {
        f"l{MAX_HOPS + 1}": "img/logo.png"
    }
    assert resolved(links, "l2") == ("img/logo.png", None)  # 40 symlinks
    assert resolved(links, "l1")[1] == "symlink not published: a loop of symlinks"


def test_a_huge_target_is_not_read() -> None:
    tree = MemoryTree({"a.md": b"x/" * 5000}, symlinks={"a.md"})
    assert ResolvedTree(tree).resolve("a.md").problem == (
        "symlink not published: a target too long"
    )


def test_reads_go_to_the_target_and_a_broken_link_is_absent() -> None:
    tree = ResolvedTree(
        MemoryTree(
            {**FILES, "a.png": b"img/logo.png", "b.png": b"/etc/passwd"},
            symlinks={"a.png", "b.png"},
        )
    )
    assert (tree.read("a.png"), tree.size("a.png")) == (b"PNG", 3)
    assert tree.blob_id("a.png") == tree.blob_id("img/logo.png")
    for call in (tree.read, tree.blob_id, tree.size):
        with pytest.raises(KeyError):
            call("b.png")


def test_a_site_with_symlinks_and_a_submodule() -> None:
    files = {
        **FILES,
        "index.md": b"---\n---\n{% include linked.html %} {% link alias.png %}\n",
        "alias.png": b"img/logo.png",
        "_includes/linked.html": b"note.html",
        "_posts/2021-01-01-p.md": b"../docs/real.md",
        "bad.md": b"../../secret.md",
    }
    links = {"alias.png", "_includes/linked.html", "_posts/2021-01-01-p.md", "bad.md"}
    tree = MemoryTree(files, symlinks=links, submodules=["vendor/theme"])
    built = build_site(tree, RenderOptions())
    assert built.files["alias.png"] == b"PNG"
    assert b"<aside>note</aside>\n<p>/alias.png</p>" in built.files["index.html"]
    assert b"<p>Real</p>" in built.files["2021/01/01/p.html"]
    assert "bad.md" not in built.files and "bad.html" not in built.files
    assert [(w.path, w.message) for w in built.warnings if w.path != "_config.yml"] == [
        (
            "bad.md",
            "symlink not published: its target '../../secret.md' is outside the source tree",
        ),
        ("vendor/theme", SUBMODULE),
    ]


def test_a_folder_with_a_git_inside_is_a_submodule(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "vendor" / "theme").mkdir(parents=True)
    (src / "vendor" / "theme" / ".git").write_text("gitdir: ../../.git/modules/theme\n")
    (src / "vendor" / "theme" / "page.md").write_text("---\n---\nsub\n")
    (src / "index.md").write_text("---\n---\nhome\n")
    os.symlink("index.md", src / "home.md")
    tree = DirTree(src)
    assert sorted(tree.paths()) == ["home.md", "index.md"]
    assert tree.submodules() == ["vendor/theme"] and tree.is_symlink("home.md")
    built = build_site(tree, RenderOptions())
    assert "vendor/theme/page.html" not in built.files
    assert built.files["home.html"] == built.files["index.html"].replace(b"/index", b"/home")
    assert [w.path for w in built.warnings] == ["vendor/theme"]


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("_config.yml", "../outside.yml"),
        ("_data/people.yml", "/etc/passwd"),
        ("_data/team/x.json", "../../../x.json"),
        ("_layouts/post.html", "../../theme/post.html"),
        ("_includes/head.html", "/usr/share/head.html"),
    ],
)
def test_a_file_the_build_reads_by_name_that_points_outside_warns(
    tmp_path: Path, path: str, target: str
) -> None:
    # Not a page or a post, so no entry of the site warns for it: it was left out silently.
    src = tmp_path / "src"
    (src / path).parent.mkdir(parents=True, exist_ok=True)
    (src / "index.md").write_text("---\n---\nhome\n")
    os.symlink(target, src / path)
    built = build_site(DirTree(src), RenderOptions())
    assert [(w.path, w.message) for w in built.warnings if w.path == path] == [
        (path, f"symlink not read: its target {target!r} is outside the source tree")
    ]


def test_a_file_the_build_does_not_read_warns_for_no_symlink(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "_drafts").mkdir(parents=True)
    (src / "index.md").write_text("---\n---\nhome\n")
    os.symlink("/etc/passwd", src / "_drafts" / "a.md")  # drafts are never read
    os.symlink("/etc/passwd", src / ".hidden.yml")  # nor are dot files
    assert [w.path for w in build_site(DirTree(src), RenderOptions()).warnings] == []


def test_a_data_symlink_pointing_outside_leaves_the_other_data_files(tmp_path: Path) -> None:
    # The build's site.data failed as a whole on it: empty in every page, silently.
    src = tmp_path / "src"
    (src / "_data").mkdir(parents=True)
    (src / "_data" / "good.yml").write_text("a: 1\n")
    os.symlink("/etc/passwd", src / "_data" / "bad.yml")
    (src / "index.md").write_text("---\n---\ngood={{ site.data.good.a }}\n")
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "<p>good=1</p>" in (tmp_path / "out" / "index.html").read_text()
    assert (
        "warning: _data/bad.yml: symlink not read: its target '/etc/passwd' is outside the "
        "source tree"
    ) in result.stderr.splitlines()
