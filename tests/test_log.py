"""``deploybot log``: what was published when, from which source commit and why, read from
the publish branch and its notes (so builds made from another state folder, by the daemon
or a fleet worker, show too). Every build keeps its note: git reads each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli import main
from tests.gitcli import run_git
from tests.gitrepo import commit_files, head
from tests.smallsite import SmallSite


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    return SmallSite(tmp_path)


def log(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["log", "--config", str(config), *args])
    return result.exit_code, result.output


def git(repo: Path, *args: str) -> str:
    return run_git(repo, *args, name="A", email="a@example.org")


def four_builds(site: SmallSite) -> list[tuple[str, str]]:
    """First build, a new post, a changed [render] setting, run-once --full (after a by-hand
    commit on the publish branch): ``[(build commit, source commit)]``, oldest first."""
    made = []
    assert site.run()[0] == 0
    made.append((site.head() or "", site.first))
    post = commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    assert site.run()[0] == 0
    made.append((site.head() or "", post))
    site.write_config(extra="[render]\nfeed_limit = 1\n")
    assert site.run()[0] == 0
    made.append((site.head() or "", post))
    commit_files(site.publish, {"CNAME/x": b"by hand\n"}, "By hand", branch="asf-site")
    code, out = site.run("--full")
    assert code == 0 and out.startswith("published"), out
    made.append((site.head() or "", post))
    return made


def test_log_lists_every_build_with_its_source_and_why(site: SmallSite) -> None:
    builds = four_builds(site)
    code, out = log(site.config)
    assert code == 0, out
    lines = out.splitlines()
    assert len(lines) == 5, out
    by_hand = git(site.publish, "rev-parse", "asf-site^").strip()
    expected = [
        (builds[3], "full build: run-once --full"),
        ((by_hand, ""), 'no record (not built by deploybot): "By hand"'),
        (builds[2], "full build: the render settings or the renderer changed"),
        (builds[1], "incremental build: the source moved (1 source path changed)"),
        (builds[0], "full build: the first build"),
    ]
    for line, ((build, source), why) in zip(lines, expected, strict=True):
        date = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}"
        where = f"  source {source[:12]}" if source else ""
        assert re.fullmatch(f"{build[:12]}  {date}{where}  {re.escape(why)}", line), line
    code, short = log(site.config, "-n", "2")
    assert (code, short.splitlines()) == (0, lines[:2])


def test_log_as_json(site: SmallSite) -> None:
    builds = four_builds(site)
    code, out = log(site.config, "--json", "-n", "3")
    assert code == 0, out
    entries = json.loads(out)
    assert [e["commit"] for e in entries][::2] == [builds[3][0], builds[2][0]]
    newest = entries[0]
    assert newest["source_commit"] == builds[3][1]
    # built on a commit with no record: how many source paths changed is not known
    assert (newest["reason"], newest["build"], newest["changed_sources"]) == (
        "forced",
        "full",
        None,
    )
    assert newest["subject"].startswith("Build at ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", newest["date"])
    assert entries[1]["record"] is None and entries[1]["subject"] == "By hand"
    assert entries[2]["reason"] == "render-changed"


def test_every_build_keeps_its_note(site: SmallSite) -> None:
    """The recipe ``deploybot build --help`` gives works for each build, not the newest only."""
    builds = four_builds(site)
    for build, source in builds:
        note = git(site.publish, "notes", "--ref=deploybot", "show", build)
        assert note.startswith(f"source-commit {source}\n"), note
        assert re.search(r"^future-cutoff \S+Z$", note, flags=re.M), note


def test_log_shows_builds_from_another_state_folder(site: SmallSite, tmp_path: Path) -> None:
    """Another machine (its own state folder: a daemon, a fleet worker) published the
    newest build: the log reads the publish repository, not this state folder."""
    assert site.run()[0] == 0
    other = tmp_path / "other.toml"
    other.write_text(site.config.read_text().replace('dir = "state"', 'dir = "other-state"'))
    post = commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    result = CliRunner().invoke(main, ["run-once", "--config", str(other)])
    assert result.exit_code == 0, result.output
    code, out = log(site.config, "-n", "1")
    assert code == 0
    assert out.startswith(f"{(head(site.publish, 'asf-site') or '')[:12]}  ")
    assert f"source {post[:12]}" in out


def test_log_of_a_branch_not_published_yet(site: SmallSite) -> None:
    assert log(site.config) == (0, "nothing published on asf-site yet\n")
    assert log(site.config, "--json") == (0, "[]\n")
