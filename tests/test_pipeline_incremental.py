"""Incremental ``run_once`` through real git repositories equals a full build, every step."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dulwich.repo import Repo
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.config.load import load_config
from deploybot.git.repository import GitTree, commit_tree_id
from deploybot.pipeline import run as pipeline
from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from tests.gitcli import run_git
from tests.gitrepo import commit_files, corpus_files, read_branch
from tests.incremental_site import LINKS, THEME, apply, change, initial_site

KEEP = "docs/"


class Repos:
    """A bare source repo, a bare publish repo and a config (no email)."""

    def __init__(self, root: Path, theme: str = "default") -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.source, self.publish = root / "source.git", root / "publish.git"
        Repo.init_bare(str(self.source), mkdir=True).close()
        Repo.init_bare(str(self.publish), mkdir=True).close()
        self.config_path = root / "deploybot.toml"
        self.config_path.write_text(
            f'[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
            f'author = "Bot <bot@example.org>"\nkeep = ["{KEEP}"]\n'
            f'[render]\ntheme = "{theme}"\ntimezone = "America/Los_Angeles"\n'
        )
        self.config = load_config(self.config_path)
        self.when = 1_700_000_000

    def commit(self, changes: dict[str, bytes | None]) -> str:
        """Commit ``changes``; the generator's :data:`LINKS` paths as symlinks."""
        self.when += 3600
        modes = {p: 0o120000 for p in changes if p in LINKS}
        return commit_files(self.source, changes, "Change", when=self.when, modes=modes)

    def run(self, full: bool = False) -> pipeline.RunResult:
        now = datetime.fromtimestamp(self.when, UTC)
        return pipeline.run_once(self.config, full=full, now=lambda: now)

    def expected(self, commit: str) -> dict[str, bytes]:
        """The full build of ``commit`` (what the publish branch must hold, kept paths aside)."""
        with Repo(str(self.source)) as repo:
            tree_id = commit_tree_id(repo, commit)
            time = repo[commit.encode()].commit_time  # type: ignore[attr-defined]
        options = RenderOptions(
            theme=self.config.render.theme,
            timezone=self.config.render.timezone,
            feed_limit=self.config.render.feed_limit,
            build_time=datetime.fromtimestamp(time, UTC),
        )
        with GitTree(self.source, tree_id) as tree:
            built = build_site(tree, options).files
        return {p: b for p, b in built.items() if not p.startswith(KEEP)}  # kept: not written

    def built_from(self) -> str:
        """The source commit the publish head's tree was built from, per its record: its
        ``build-source`` (the source moved since in paths the build does not read, or
        not at all: nothing was built), else its ``source-commit``."""
        args = ("notes", "--ref=deploybot", "show", self.config.publish.branch)
        note = run_git(self.publish, *args, name="A", email="a@example.org")
        fields = dict(line.split(" ", 1) for line in note.splitlines())
        return fields.get("build-source") or fields["source-commit"]

    def published(self) -> dict[str, bytes]:
        files = read_branch(self.publish, self.config.publish.branch)
        return {p: b for p, b in files.items() if not p.startswith(KEEP)}


def _branch(repos: Repos) -> str:
    return repos.config.publish.branch


@pytest.fixture(autouse=True)
def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="deploybot.pipeline")


def test_replay_of_the_tvm_corpus(
    tmp_path: Path, tvm_site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = corpus_files(tvm_site / "source")
    posts = sorted(p for p in files if p.startswith("_posts/"))
    first = {p: b for p, b in files.items() if p not in posts[len(posts) // 2 :]}
    repos = Repos(tmp_path)
    commit = repos.commit(first)
    assert repos.run().status == "published"
    commit_files(repos.publish, {"docs/api.html": b"kept\n"}, "Docs", branch=_branch(repos))
    later = posts[len(posts) // 2 :]
    # the later posts come three to a commit: each commit costs a run and a full build to
    # compare with, and one post a commit (11 commits, not 4) checked nothing more
    steps: list[dict[str, bytes | None]] = [
        {p: files[p] for p in later[i : i + 3]} for i in range(0, len(later), 3)
    ]
    edited = posts[0]
    steps.append({edited: files[edited].replace(b"TVM", b"TVM (edited)", 1)})
    steps.append({edited: None, edited.replace("_posts/", "_posts/renamed-"): files[edited]})
    steps.append({posts[1]: None})
    for i, step in enumerate(steps):
        caplog.clear()
        commit = repos.commit(step)
        result = repos.run()
        assert result.status in ("published", "unchanged")
        # the docs commit is not deploybot's build: the first run after it builds fully
        assert ("incremental build" in caplog.text) == (i > 0), caplog.text
        assert repos.published() == repos.expected(commit)
        assert read_branch(repos.publish, _branch(repos))["docs/api.html"] == b"kept\n"


def test_fresh_machine_and_full_flag_give_the_same_tree(tmp_path: Path) -> None:
    import shutil

    repos = Repos(tmp_path, theme=THEME)
    repos.commit(initial_site())
    repos.run()
    shutil.rmtree(repos.config.state.dir / "cache")
    post = "_posts/2021-01-01-post-0.md"
    commit = repos.commit({post: initial_site()[post] + b"\nmore\n"})
    assert repos.run().status == "published"
    assert repos.published() == repos.expected(commit)
    commit = repos.commit({"about.md": None})
    assert repos.run(full=True).status == "published"
    assert repos.published() == repos.expected(commit)


@settings(max_examples=10)
@given(st.data())
def test_random_commits_through_real_repos(data: st.DataObject) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        repos = Repos(Path(tmp), theme=THEME)
        files = initial_site()
        repos.commit(files)
        repos.run()
        for step in range(data.draw(st.integers(1, 6), label="commits")):
            changes = data.draw(change(files), label=f"commit {step}")
            files = apply(files, changes)
            commit = repos.commit(changes)
            result = repos.run()
            assert result.source_commit == commit
            if result.unread_paths is None:  # built: the tree is this commit's full build
                assert repos.built_from() == commit
            assert repos.published() == repos.expected(repos.built_from())
