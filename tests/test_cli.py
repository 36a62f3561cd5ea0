"""The command line: help everywhere, exit codes, ``python -m deploybot``, ``deploybot build``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from tests.gitrepo import commit_files, corpus_files


@pytest.mark.parametrize("command", [[], ["run-once"], ["build"], ["outbox"], ["serve"]])
def test_help_on_every_command(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "deploybot", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("deploybot, version ")


def test_missing_config_exits_78(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run-once", "--config", str(tmp_path / "none.toml")])
    assert result.exit_code == 78
    assert "config file not found" in result.output


def test_config_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "elsewhere.toml"
    cfg.write_text('[source]\nurl = "s"\nbogus = 1\n')
    monkeypatch.setenv("DEPLOYBOT_CONFIG", str(cfg))
    result = CliRunner().invoke(main, ["run-once"])
    assert result.exit_code == 78
    assert "unknown key 'source.bogus'" in result.output


def test_build_folder_and_git_revision(tmp_path: Path, tvm_site: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(tvm_site / "source"), str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "atom.xml").is_file()
    assert (out / "2020/07/14/bert-pytorch-tvm.html").is_file()
    repo = tmp_path / "src.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    commit_files(repo, corpus_files(tvm_site / "source"), "Import")
    with Repo(str(repo)) as r:
        r.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    out2 = tmp_path / "out2"
    result = CliRunner().invoke(main, ["build", str(repo), str(out2), "--rev", "main"])
    assert result.exit_code == 0, result.output
    built = {p.relative_to(out2).as_posix() for p in out2.rglob("*") if p.is_file()}
    assert "2020/07/14/bert-pytorch-tvm.html" in built
    # The git build's feeds take the commit's date, so they differ from the folder build's,
    # but every post page is the same.
    page = "2018/10/03/auto-opt-all.html"
    assert (out / page).read_bytes() == (out2 / page).read_bytes()


def test_build_bad_rev_exits_2(tmp_path: Path) -> None:
    repo = tmp_path / "src.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    commit_files(repo, {"index.md": b"---\ntitle: x\n---\nhi\n"}, "One")
    result = CliRunner().invoke(main, ["build", str(repo), str(tmp_path / "o"), "--rev", "nope"])
    assert result.exit_code == 2
    assert "nope" in result.output


def _site(root: Path) -> Path:
    (root / "_posts").mkdir(parents=True)
    (root / "_posts/2024-01-02-one.md").write_text("---\ntitle: One\n---\nHello\n")
    (root / "_posts/2024-01-03-two.md").write_text("---\ntitle: Two\n---\nWorld\n")
    return root


def _built(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize("inside", ["_site", "preview", "a/b"])
def test_build_out_inside_a_source_folder_is_not_read(tmp_path: Path, inside: str) -> None:
    """Jekyll's usual layout, ``src/_site``: OUT is skipped while SOURCE is read, as Jekyll
    excludes its destination, so a second build does not publish the first."""
    src = _site(tmp_path / "site")
    out = src / inside
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert result.exit_code == 0, result.output
    first = _built(out)
    assert "2024/01/03/two.html" in first
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert result.exit_code == 0, result.output
    assert _built(out) == first
    assert not any(path.startswith(inside.split("/")[0] + "/") for path in first)


def test_build_out_must_not_be_source_nor_hold_it(tmp_path: Path) -> None:
    src = _site(tmp_path / "site")
    for out in (src, tmp_path):
        result = CliRunner().invoke(main, ["build", str(src), str(out)])
        assert result.exit_code == 2
        assert f"OUT ({out}) must not be SOURCE ({src}) or hold it" in result.output
    repo = tmp_path / "src.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    commit_files(repo, {"index.md": b"---\ntitle: x\n---\nhi\n"}, "One")
    result = CliRunner().invoke(main, ["build", str(repo), str(repo / "out")])
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        2,
        f"deploybot: error: OUT ({repo / 'out'}) must not be inside SOURCE ({repo}) when it is "
        "read from git objects",
    )
    assert not (repo / "out").exists()


def test_build_refuses_a_foreign_non_empty_folder(tmp_path: Path) -> None:
    src = _site(tmp_path / "site")
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("mine\n")
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert result.exit_code == 2
    assert "not empty" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["precious.txt"]


def test_build_again_removes_stale_outputs(tmp_path: Path) -> None:
    src = _site(tmp_path / "site")
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(src), str(out)]).exit_code == 0
    assert (out / "2024/01/03/two.html").is_file()
    (src / "_posts/2024-01-03-two.md").unlink()
    result = CliRunner().invoke(main, ["build", str(src), str(out)])
    assert result.exit_code == 0, result.output
    assert not (out / "2024/01/03/two.html").exists()
    assert not (out / "2024/01/03").exists()
    assert (out / "2024/01/02/one.html").is_file()


def test_build_uses_the_default_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _site(tmp_path / "site")
    cfg = tmp_path / "deploybot.toml"
    cfg.write_text('[source]\nurl = "site"\n[render]\ntimezone = "Asia/Tokyo"\n')
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["build", "site", "out"]).exit_code == 0
    assert "+09:00" in (tmp_path / "out/atom.xml").read_text()


def _one_commit_repo(tmp_path: Path) -> tuple[Path, str]:
    """A bare repository with one commit of ``index.md``; returns it and that blob's id."""
    repo = tmp_path / "src.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    commit_files(repo, {"index.md": b"hi\n"}, "One")
    with Repo(str(repo)) as r:
        r.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        tree = r[r.refs[b"refs/heads/main"]].tree  # type: ignore[attr-defined]
        blob = r[tree][b"index.md"][1].decode()  # type: ignore[index]
    return repo, blob


@pytest.mark.parametrize(
    ("rev", "message"),
    [
        ("", "deploybot: error: --rev is empty: give a commit id, a branch or a tag"),
        ("BLOB", "deploybot: error: {repo}: 'BLOB' is a blob, not a commit"),
        ("BLOB7", "deploybot: error: {repo}: 'BLOB7' is a blob, not a commit"),
        ("nope", "deploybot: error: {repo}: unknown revision 'nope'"),
    ],
)
def test_build_rev_that_names_no_commit_is_exit_2_saying_why(
    tmp_path: Path, rev: str, message: str
) -> None:
    repo, blob = _one_commit_repo(tmp_path)
    rev = rev.replace("BLOB7", blob[:7]).replace("BLOB", blob)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["build", str(repo), str(out), "--rev", rev])
    assert result.exit_code == 2
    expected = message.replace("BLOB7", blob[:7]).replace("BLOB", blob).format(repo=repo)
    assert result.output.strip().splitlines() == [expected]
    assert not out.exists()


def test_build_of_a_repository_with_no_commits_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.git"
    Repo.init_bare(str(empty), mkdir=True).close()
    result = CliRunner().invoke(main, ["build", str(empty), str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"deploybot: error: {empty}: the repository has no commits yet (no branch at all)"
    )
    repo, _ = _one_commit_repo(tmp_path)
    with Repo(str(repo)) as r:
        r.refs.set_symbolic_ref(b"HEAD", b"refs/heads/master")
    result = CliRunner().invoke(main, ["build", str(repo), str(tmp_path / "o"), "--rev", "HEAD~1"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"deploybot: error: {repo}: HEAD is refs/heads/master, which has no commits yet; "
        "its branches: main (give one with --rev)"
    )
