"""``deploybot run-once`` on hostile source trees and permalinks: exit 1, one line, and the
publish branch left as it was (real repositories in tmp_path, the real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from tests.gitrepo import head, read_branch
from tests.hostile import Names, commit_names

PAGE = b"---\ntitle: Home\n---\nhello\n"
INCLUDE_ALL = b"include: ['..', '.git', '.GIT']\n"
DOTGIT = "a name git reserves for its own folder ('.git' in some spelling)"


class Repos:
    """A source repo, an empty publish repo and a config, all under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.source = root / "source.git"
        self.publish = root / "publish.git"
        Repo.init_bare(str(self.publish), mkdir=True).close()
        self.config = root / "deploybot.toml"
        self.config.write_text(
            '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
            '[notify]\ntransport = "none"\n'
        )
        self.tip = ""

    def commit(self, files: dict[Names, bytes]) -> None:
        self.tip = commit_names(self.source, files, parent=self.tip)

    def run(self) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["run-once", "--config", str(self.config)])
        return result.exit_code, result.output


def outside(root: Path) -> set[str]:
    """Files under ``root`` that are not in the repos, the state dir or the config."""
    skip = ("source.git/", "publish.git/", ".deploybot/", "deploybot.toml")
    found = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {p for p in found if not p.startswith(skip)}


@pytest.mark.parametrize(
    ("names", "error"),
    [
        ((b"..", b"x"), "..: refused path: a '..' name"),
        ((b".git", b"hooks", b"post-checkout"), f".git: refused path: {DOTGIT}"),
        ((b".GIT", b"config"), f".GIT: refused path: {DOTGIT}"),
        ((b"a\r\nb.md",), "a\\x0d\\x0ab.md: refused path: a control character in the name"),
        ((b"caf\xe9.md",), "caf\\xe9.md: refused path: a name that is not UTF-8"),
    ],
)
def test_first_build_of_a_hostile_tree_is_refused(tmp_path: Path, names: Names, error: str) -> None:
    repos = Repos(tmp_path)
    repos.commit({(b"_config.yml",): INCLUDE_ALL, (b"index.md",): PAGE, names: b"pwned\n"})
    assert repos.run() == (1, f"deploybot: error: {error}\n")
    assert head(repos.publish, "asf-site") is None
    assert outside(tmp_path) == set()


def test_an_incremental_build_refuses_a_new_dotgit_folder(tmp_path: Path) -> None:
    repos = Repos(tmp_path)
    repos.commit({(b"_config.yml",): INCLUDE_ALL, (b"index.md",): PAGE})
    code, output = repos.run()
    assert code == 0, output
    published = head(repos.publish, "asf-site")
    repos.commit(
        {
            (b"_config.yml",): INCLUDE_ALL,
            (b"index.md",): PAGE,
            (b"docs", b".git", b"hooks", b"post-checkout"): b"pwned\n",
        }
    )
    assert repos.run() == (1, f"deploybot: error: docs/.git: refused path: {DOTGIT}\n")
    assert head(repos.publish, "asf-site") == published
    assert not any(".git" in path for path in read_branch(repos.publish, "asf-site"))


@pytest.mark.parametrize("permalink", ["/.git/config", "/x/.GIT/hooks/post-checkout"])
def test_a_permalink_into_git_is_refused(tmp_path: Path, permalink: str) -> None:
    repos = Repos(tmp_path)
    evil = f"---\ntitle: Evil\npermalink: {permalink}\n---\nhi\n".encode()
    repos.commit({(b"index.md",): PAGE, (b"evil.md",): evil})
    code, output = repos.run()
    assert code == 1
    assert output.startswith(f"deploybot: error: evil.md:3: permalink '{permalink}' gives")
    assert output.endswith(f"a refused output path: {DOTGIT}\n")
    assert output.count("\n") == 1
    assert head(repos.publish, "asf-site") is None
