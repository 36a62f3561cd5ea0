"""Hostile tree shapes and names: a tree 10,000 folders deep, names and paths longer than a
file system holds, a NUL byte inside a tree entry name, and an output folder whose files
become folders (and back) between builds. Each must end in one line and the right exit
code, with nothing half-written (the real CLI; git trees written object by object)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.objects import Blob, Tree
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.git import path_rules, repository
from deploybot.git.tree import changed_paths
from deploybot.git.tree_check import bad_entry
from tests import fullfs
from tests.gitrepo import SNAPSHOT_AUTHOR, SNAPSHOT_WHEN, head
from tests.hostile import commit_names
from tests.test_preview import PAGE, assert_nothing_written, build_rev, files_under

DEEP = 3_000  # past Python's recursion limit
TOO_DEEP = "/".join(["d"] * (path_rules.MAX_DEPTH + 1))


def commit_deep(repo_path: Path, depth: int) -> str:
    """Commit ``index.md`` and ``d/d/.../d/f.txt`` (``depth`` folders) on ``main``; the
    trees are written from the inside out, so no recursion is needed."""
    with repository.bare_repo(repo_path) as repo:
        store = repo.object_store
        blob = Blob.from_string(b"x")
        page = Blob.from_string(PAGE)
        store.add_object(blob)
        store.add_object(page)
        inner = Tree()
        inner.add(b"f.txt", repository.MODE_FILE, blob.id)
        store.add_object(inner)
        for _ in range(depth - 1):
            outer = Tree()
            outer.add(b"d", stat.S_IFDIR, inner.id)
            store.add_object(outer)
            inner = outer
        root = Tree()
        root.add(b"d", stat.S_IFDIR, inner.id)
        root.add(b"index.md", repository.MODE_FILE, page.id)
        store.add_object(root)
        commit = repository.make_commit(
            repo, root.id.decode(), [], author=SNAPSHOT_AUTHOR, message="deep\n", when=SNAPSHOT_WHEN
        )
        repository.set_local_refs(repo, {"refs/heads/main": commit})
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        return root.id.decode()


def run_once(tmp_path: Path, source: Path) -> tuple[int, str, Path]:
    publish = tmp_path / "publish.git"
    Repo.init_bare(str(publish), mkdir=True).close()
    config = tmp_path / "deploybot.toml"
    config.write_text(
        f'[source]\nurl = "{source}"\n[publish]\nurl = "{publish}"\n[notify]\ntransport = "none"\n'
    )
    result = CliRunner().invoke(main, ["run-once", "--config", str(config)])
    return result.exit_code, result.output, publish


# --- a tree 10,000 folders deep -------------------------------------------------------------


def test_build_rev_of_a_tree_10000_folders_deep_is_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "work" / "src.git"
    commit_deep(repo, DEEP)
    out = tmp_path / "work" / "site" / "out"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", "main"])
    where = path_rules.shortened(TOO_DEEP)
    assert (result.exit_code, result.output) == (
        1,
        f"deploybot: error: {where}: refused path: a path more than 256 folders deep\n",
    )
    assert_nothing_written(tmp_path, out)


def test_run_once_of_a_tree_10000_folders_deep_is_one_line(tmp_path: Path) -> None:
    commit_deep(tmp_path / "source.git", DEEP)
    code, output, publish = run_once(tmp_path, tmp_path / "source.git")
    assert (code, output) == (
        1,
        f"deploybot: error: {path_rules.shortened(TOO_DEEP)}: refused path: a path more than "
        "256 folders deep\n",
    )
    assert head(publish, "asf-site") is None


def test_tree_diff_walks_any_depth(tmp_path: Path) -> None:
    repo = tmp_path / "src.git"
    tree = commit_deep(repo, DEEP)
    with repository.bare_repo(repo) as opened:
        assert changed_paths(opened, None, tree) == {"index.md", "d/" * DEEP + "f.txt"}


def test_a_tree_as_deep_as_allowed_builds(tmp_path: Path) -> None:
    repo = tmp_path / "work" / "src.git"
    commit_deep(repo, path_rules.MAX_DEPTH - 1)
    out = tmp_path / "work" / "site" / "out"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", "main"])
    assert result.exit_code == 0, result.output
    assert (out / ("d/" * (path_rules.MAX_DEPTH - 1) + "f.txt")).read_bytes() == b"x"


# --- names and paths longer than a file system holds ---------------------------------------


def test_a_name_over_255_bytes_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    name = "é" * 128  # 256 bytes of UTF-8
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, (name.encode(),): b"x"})
    assert (code, output) == (
        1,
        f"deploybot: error: {path_rules.shortened(name)}: refused path: a name longer than 255 "
        "bytes\n",
    )
    assert_nothing_written(tmp_path, out)


@pytest.mark.parametrize(
    "name", [b"a" * 253 + b"\xff", b"\xe9" * 254], ids=["one byte", "every byte"]
)
def test_a_name_of_254_bytes_that_is_not_utf8_is_refused_as_such(
    tmp_path: Path, name: bytes
) -> None:
    # Each undecodable byte was counted as the 3 bytes of its stand-in (a lone surrogate):
    # "a name longer than 255 bytes" for a name of 254.
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, (name,): b"x"})
    shown = path_rules.shortened(path_rules.printable(name.decode("utf-8", "surrogateescape")))
    assert (code, output) == (
        1,
        f"deploybot: error: {shown}: refused path: a name that is not UTF-8\n",
    )
    assert_nothing_written(tmp_path, out)


def test_a_name_of_255_bytes_builds(tmp_path: Path) -> None:
    name = "x" * 251 + ".txt"
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, (name.encode(),): b"x"})
    assert code == 0, output
    assert (out / name).read_bytes() == b"x"


def test_a_permalink_over_255_bytes_is_refused(tmp_path: Path) -> None:
    post = b"---\npermalink: /" + b"a" * 300 + b"/\n---\nhi\n"
    code, output, out = build_rev(tmp_path, {(b"_posts", b"2020-01-01-x.md"): post})
    assert code == 1
    assert output.startswith("deploybot: error: _posts/2020-01-01-x.md:2: permalink '/aaaa")
    assert output.endswith("gives a refused output path: a name longer than 255 bytes\n")
    assert_nothing_written(tmp_path, out)


def test_out_too_deep_for_an_output_path_is_refused_before_writing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / ("x" * 250)).write_bytes(b"x")
    deep = tmp_path.joinpath(*["o" * 250] * 16)  # about 4,000 bytes
    deep.mkdir(parents=True)
    out = deep / "out"
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert result.exit_code == 2
    assert result.output.startswith(f"deploybot: error: OUT ({out}) is too deep for the output ")
    assert not out.exists()


# --- a NUL byte in a tree entry name -------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "shown"),
    [((b"a\0b.txt",), "a\\x00b.txt"), ((b"sub", b"page\0.html"), "sub/page\\x00.html")],
)
def test_build_rev_of_a_name_with_a_nul_byte_is_one_line(
    tmp_path: Path, names: tuple[bytes, ...], shown: str
) -> None:
    code, output, out = build_rev(tmp_path, {(b"index.md",): PAGE, names: b"x"})
    assert (code, output) == (
        1,
        f"deploybot: error: {shown}: refused path: a tree entry git cannot read (a NUL byte "
        "in a name)\n",
    )
    assert_nothing_written(tmp_path, out)


@pytest.mark.parametrize("git_cli", [True, False])
def test_run_once_of_a_name_with_a_nul_byte_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_cli: bool
) -> None:
    if not git_cli:  # dulwich's own local transport
        monkeypatch.setattr(repository.shutil, "which", lambda name: None)
    source = tmp_path / "source.git"
    commit_names(source, {(b"index.md",): PAGE, (b"a\0b.txt",): b"x"})
    code, output, publish = run_once(tmp_path, source)
    assert (code, output) == (
        1,
        "deploybot: error: a\\x00b.txt: refused path: a tree entry git cannot read (a NUL "
        "byte in a name)\n",
    )
    assert head(publish, "asf-site") is None


def test_bad_entry_reads_the_name_past_its_nul_byte() -> None:
    sha = bytes(range(20))
    good = b"100644 a.txt\0" + sha
    assert bad_entry(good + b"100644 x\0y.md\0" + sha + good) == (
        b"x\0y.md",
        "a NUL byte in a name",
    )
    assert bad_entry(b"1x0644 a\0" + sha) == (b"a", "no mode")
    assert bad_entry(good) == (b"", "not a tree")


# --- entries naming the wrong kind of object, or none -------------------------------------


def commit_entries(repo_path: Path, extra: str) -> None:
    """Commit ``index.md`` plus one entry ``x`` on ``main``: ``extra`` is ``"dir->blob"``
    (a folder entry naming a blob), ``"file->tree"`` or ``"missing"`` (a file entry naming
    an object the repository does not hold)."""
    with repository.bare_repo(repo_path) as repo:
        store = repo.object_store
        page = Blob.from_string(PAGE)
        store.add_object(page)
        inner = Tree()
        inner.add(b"index.md", repository.MODE_FILE, page.id)
        store.add_object(inner)
        root = Tree()
        root.add(b"index.md", repository.MODE_FILE, page.id)
        if extra == "dir->blob":
            root.add(b"x", stat.S_IFDIR, page.id)
        elif extra == "file->tree":
            root.add(b"x", repository.MODE_FILE, inner.id)
        else:
            root.add(b"x", repository.MODE_FILE, b"ab" * 20)
        store.add_object(root)
        commit = repository.make_commit(
            repo, root.id.decode(), [], author=SNAPSHOT_AUTHOR, message="x\n", when=SNAPSHOT_WHEN
        )
        repository.set_local_refs(repo, {"refs/heads/main": commit})
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")


@pytest.mark.parametrize(
    ("extra", "code", "error"),
    [
        ("dir->blob", 1, "x: refused path: a folder whose git object is a blob"),
        ("file->tree", 1, "x: refused path: a file whose git object is a tree"),
        (
            "missing",
            1,
            "git object abababababababababababababababababababab is missing from {repo}: the "
            "repository is damaged (check it with: git -C {repo} fsck)",
        ),
    ],
)
def test_build_rev_of_an_entry_naming_the_wrong_object_is_one_line(
    tmp_path: Path, extra: str, code: int, error: str
) -> None:
    repo = tmp_path / "work" / "src.git"
    commit_entries(repo, extra)
    out = tmp_path / "work" / "site" / "out"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", "main"])
    assert (result.exit_code, result.output) == (
        code,
        f"deploybot: error: {error.format(repo=repo)}\n",
    )
    assert_nothing_written(tmp_path, out)


@pytest.mark.parametrize("extra", ["dir->blob", "file->tree"])
def test_run_once_of_an_entry_naming_the_wrong_object_exits_1(tmp_path: Path, extra: str) -> None:
    commit_entries(tmp_path / "source.git", extra)
    code, output, publish = run_once(tmp_path, tmp_path / "source.git")
    kind = "folder whose git object is a blob" if extra == "dir->blob" else "file whose git "
    assert code == 1
    assert output.startswith(f"deploybot: error: x: refused path: a {kind}")
    assert head(publish, "asf-site") is None


# --- an output folder that becomes a file, and back -----------------------------------------


def test_a_folder_that_becomes_a_file_and_back(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "x").mkdir(parents=True)
    (src / "x" / "a.txt").write_bytes(b"a")
    (src / "y").write_bytes(b"y")
    for step in range(3):
        result = CliRunner().invoke(main, ["build", str(src), str(out)])
        assert result.exit_code == 0, result.output
        if step == 0:
            assert (out / "x" / "a.txt").read_bytes() == b"a"
            (src / "x" / "a.txt").unlink()
            (src / "x").rmdir()
            (src / "x").write_bytes(b"file")
            (src / "y").unlink()
            (src / "y").mkdir()
            (src / "y" / "b.txt").write_bytes(b"b")
        elif step == 1:
            assert (out / "x").read_bytes() == b"file"
            assert (out / "y" / "b.txt").read_bytes() == b"b"
            (src / "x").unlink()
            (src / "x").mkdir()
            (src / "x" / "c.txt").write_bytes(b"c")
    assert {p for p in files_under(out) if not p.startswith(("assets/", "atom", "rss"))} == {
        ".deploybot-build",
        "index.html",
        "x/c.txt",
        "y/b.txt",
    }


def test_a_file_nobody_built_in_the_way_is_refused_before_writing(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "a.txt").write_bytes(b"a")
    assert CliRunner().invoke(main, ["build", str(src), str(out)]).exit_code == 0
    (out / "y").mkdir()
    (out / "y" / "mine.txt").write_bytes(b"mine")
    (src / "y").write_bytes(b"y")
    (src / "a.txt").unlink()
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert (result.exit_code, result.output) == (
        2,
        f"deploybot: error: OUT ({out}) holds y/mine.txt, which no earlier build made, where "
        "the output y goes; move it away\n",
    )
    assert (out / "a.txt").read_bytes() == b"a"  # nothing written, nothing removed
    assert (out / "y" / "mine.txt").read_bytes() == b"mine"


@pytest.mark.skipif(fullfs.unavailable() is not None, reason=fullfs.unavailable() or "")
def test_a_build_that_fills_the_disk_leaves_out_the_next_build_takes(tmp_path: Path) -> None:
    src, disk = tmp_path / "src", tmp_path / "disk"
    src.mkdir()
    disk.mkdir()
    files = {f"f{i:02d}.bin": os.urandom(50_000) for i in range(20)}
    for name, data in files.items():
        (src / name).write_bytes(data)
    build = ["python", "-m", "deploybot", "build", str(src), str(disk / "out")]
    full, again = fullfs.run_on_tmpfs(
        disk, [{"fill": 300_000}, {"run": build}, {"unfill": True}, {"run": build}],
        keep=tmp_path / "after",
    )  # fmt: skip
    assert full.code == 75, full
    assert full.err.startswith("deploybot: error: no space left on device: cannot write "), full
    assert full.err.count("\n") == 1
    assert again.code == 0, again
    out = tmp_path / "after" / "out"
    assert {name: (out / name).read_bytes() for name in files} == files
    listed = (out / ".deploybot-build").read_text().splitlines()
    assert set(files) <= set(listed) and "index.html" in listed


@pytest.mark.parametrize(
    "data", [b"garbage", b"", b"x\x9c" + bytes(20)], ids=["type", "empty", "zlib"]
)
def test_build_rev_of_a_blob_overwritten_with_garbage_is_one_line(
    tmp_path: Path, data: bytes
) -> None:
    """A loose blob that cannot be read (dulwich: ObjectFormatException, EmptyFileException,
    zlib.error) is one line naming it and the repository, exit 1, as notify --commit says
    it (it was a traceback)."""
    repo = tmp_path / "work" / "src.git"
    commit_names(repo, {(b"index.md",): b"# Hi\n"})
    blob = Blob.from_string(b"# Hi\n").id.decode()
    loose = repo / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(data)
    out = tmp_path / "work" / "site" / "out"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", "main"])
    assert (result.exit_code, result.output) == (
        1,
        f"deploybot: error: git object {blob} in {repo} cannot be read: the repository is "
        f"damaged (check it with: git -C {repo} fsck)\n",
    )
    assert_nothing_written(tmp_path, out)
