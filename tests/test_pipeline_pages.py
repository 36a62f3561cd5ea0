"""GitHub Pages: a ``gh-pages`` publish has an empty ``.nojekyll`` at its root (GitHub then
serves the built site as it is instead of running Jekyll over it again);
``publish.nojekyll`` turns it on or off for any branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.pipeline import run as pipeline
from deploybot.support.errors import ConfigError
from tests.gitrepo import commit_files, head, read_branch
from tests.smallsite import SmallSite


def configure(site: SmallSite, publish: str) -> None:
    site.config.write_text(
        '[source]\nurl = "source.git"\n'
        f'[publish]\nurl = "publish.git"\nauthor = "Bot <bot@example.org>"\n{publish}'
        '[state]\ndir = "state"\n'
    )


def run(site: SmallSite) -> pipeline.RunResult:
    return pipeline.run_once(load_config(site.config))


@pytest.mark.parametrize(
    ("publish", "branch", "made"),
    [
        ('branch = "gh-pages"\n', "gh-pages", True),
        ("", "asf-site", False),
        ("nojekyll = true\n", "asf-site", True),
        ('branch = "gh-pages"\nnojekyll = false\n', "gh-pages", False),
    ],
)
def test_nojekyll_by_branch_and_key(tmp_path: Path, publish: str, branch: str, made: bool) -> None:
    site = SmallSite(tmp_path)
    configure(site, publish)
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    files = read_branch(site.publish, branch)
    assert files.get(".nojekyll") == (b"" if made else None)
    assert "index.html" in files
    # an incremental build keeps it
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, branch).get(".nojekyll") == (b"" if made else None)


def test_turning_it_off_removes_it_and_on_adds_it(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    configure(site, 'branch = "gh-pages"\n')
    run(site)
    configure(site, 'branch = "gh-pages"\nnojekyll = false\n')
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert ".nojekyll" not in read_branch(site.publish, "gh-pages")
    configure(site, 'branch = "gh-pages"\n')
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, "gh-pages")[".nojekyll"] == b""
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE


def test_the_sources_own_nojekyll_wins(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    config = b"title: Small\ninclude: [.nojekyll]\n"
    commit_files(site.source, {"_config.yml": config, ".nojekyll": b"ours\n"})
    configure(site, 'branch = "gh-pages"\n')
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, "gh-pages")[".nojekyll"] == b"ours\n"
    commit_files(site.source, {".nojekyll": None})  # gone from the source: the empty one
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, "gh-pages")[".nojekyll"] == b""
    assert head(site.publish, "asf-site") is None


def test_nojekyll_must_be_a_bool(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    configure(site, 'nojekyll = "yes"\n')
    with pytest.raises(ConfigError, match=r"'publish\.nojekyll' must be true or false"):
        load_config(site.config)
