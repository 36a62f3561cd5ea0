"""``deploybot log``: what was published when, from which source commit and why, read from
the publish branch and its notes (so builds made from another state folder, by the daemon
or a fleet worker, show too). Every build keeps its note: git reads each."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
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
        (builds[2], "full build: render settings changed (feed_limit)"),
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


def set_publish(site: SmallSite, line: str) -> None:
    """Add ``line`` to the config's ``[publish]`` table."""
    site.config.write_text(site.config.read_text().replace("[publish]\n", f"[publish]\n{line}\n"))


def test_log_shows_the_source_commit_the_tree_was_built_from(site: SmallSite) -> None:
    """Pushes touching only paths the build does not read move the first build's note on
    (its ``source-commit``); the log shows the commit its tree was built from, and says the
    source moved on since."""
    config = b"title: Small\nurl: https://small.example.org\nexclude: [README.md]\n"
    built = commit_files(site.source, {"_config.yml": config}, "Exclude README")
    assert site.run()[0] == 0
    later = ""
    for files in ({"README.md": b"r\n"}, {"_drafts/x.md": b"x\n"}, {"Gemfile": b"g\n"}):
        later = commit_files(site.source, files, "Touch")
        assert site.run()[1].startswith("nothing to publish: ")
    site.write_config(extra="[render]\nfeed_limit = 1\n")
    assert site.run()[1].startswith("published ")
    code, out = log(site.config)
    assert code == 0, out
    rebuilt, first = (line.split("  ", 2)[2] for line in out.splitlines())
    assert rebuilt == f"source {later[:12]}  full build: render settings changed (feed_limit)"
    assert first == (
        f"source {built[:12]}  full build: the first build; source at {later[:12]} since, "
        "with the same published tree"
    )


def test_a_publish_setting_is_named_as_what_changed(site: SmallSite) -> None:
    assert site.run()[0] == 0
    set_publish(site, "nojekyll = true")
    assert site.run()[1].startswith("published ")
    code, out = log(site.config, "-n", "1")
    assert code == 0 and out.rstrip().endswith(
        "  full build: publish settings changed (nojekyll)"
    ), out
    note = git(site.publish, "notes", "--ref=deploybot", "show", "asf-site")
    assert "\nchanged-settings publish.nojekyll\n" in note, note


def dates(out: str) -> list[str]:
    return [line.split("  ")[1] for line in out.splitlines()]


def test_log_prints_every_date_in_one_zone(
    site: SmallSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builds dated in Tokyo and in London (publish.timezone changed in between) are listed
    in one zone: publish.timezone's, else render.timezone's, else the local time; --json
    keeps each commit's own offset."""
    set_publish(site, 'timezone = "Asia/Tokyo"')
    assert site.run()[0] == 0
    site.write_config()
    set_publish(site, 'timezone = "Europe/London"')
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    assert site.run()[0] == 0
    entries = json.loads(log(site.config, "--json")[1])
    assert [e["date"][-6:] for e in entries] == ["+00:00", "+09:00"]
    assert {d[-5:] for d in dates(log(site.config)[1])} == {"+0000"}
    site.write_config(extra='[render]\ntimezone = "Asia/Kolkata"\n')
    assert {d[-5:] for d in dates(log(site.config)[1])} == {"+0530"}
    site.write_config()
    monkeypatch.setenv("TZ", "America/Sao_Paulo")  # -0300 all year since 2019
    time.tzset()
    try:
        assert {d[-5:] for d in dates(log(site.config)[1])} == {"-0300"}
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_run_that_publishes_nothing_keeps_why_the_head_was_built(site: SmallSite) -> None:
    """``run-once --full`` with nothing changed, then a render setting that makes the same
    pages: neither makes a commit, so the head's record keeps why that commit was made (the
    source moved, incrementally, 1 path), while what the next run compares against (the
    render fingerprint and digests, the cut-off) follows the newest run."""
    assert site.run()[0] == 0
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    assert site.run()[1].startswith("published ")
    built = site.head()
    before = git(site.publish, "notes", "--ref=deploybot", "show", "asf-site")
    why = "incremental build: the source moved (1 source path changed)"
    assert log(site.config, "-n", "1")[1].rstrip().endswith(why)
    code, out = site.run("--full")
    assert (code, site.head()) == (0, built), out
    assert log(site.config, "-n", "1")[1].rstrip().endswith(why)
    site.write_config(extra="[render]\nfeed_limit = 5\n")  # 3 posts: the same feed
    code, out = site.run()
    assert (code, site.head()) == (0, built), out
    assert log(site.config, "-n", "1")[1].rstrip().endswith(why)
    after = git(site.publish, "notes", "--ref=deploybot", "show", "asf-site")
    fields = [dict(line.split(" ", 1) for line in n.splitlines()) for n in (before, after)]
    for key in ("reason", "build", "changed-sources"):
        assert fields[1][key] == fields[0][key], key
    assert "changed-settings" not in fields[1]
    assert fields[1]["render-fingerprint"] != fields[0]["render-fingerprint"]
    assert fields[1]["output-settings"] != fields[0]["output-settings"]
    assert site.run()[1].startswith("up to date"), "the next run compares against the new run"


def test_a_source_that_moves_to_the_same_pages_keeps_the_build_source(site: SmallSite) -> None:
    """A push that changes a page's source but not the page: no commit; the record names the
    new source commit (the next run is up to date) and, as ``build-source``, the one the
    tree was built from, so the next build's email lists the push."""
    assert site.run()[0] == 0
    built = site.head()
    first = git(site.publish, "notes", "--ref=deploybot", "show", "asf-site")
    time.sleep(1.1)  # a later cut-off (to the second)
    same = commit_files(site.source, {"index.md": b"---\ntitle:  Home\n---\nWelcome.\n"})
    code, out = site.run()
    assert (code, site.head()) == (0, built), out
    note = git(site.publish, "notes", "--ref=deploybot", "show", "asf-site")
    fields = dict(line.split(" ", 1) for line in note.splitlines())
    assert (fields["source-commit"], fields["build-source"]) == (same, site.first)
    assert (fields["reason"], fields["build"]) == ("first-build", "full")
    # the cut-off that the build of build-source used: ``deploybot build`` remakes the tree
    assert f"\nfuture-cutoff {fields['future-cutoff']}\n" in first
    told = f"the first build; source at {same[:12]} since, with the same published tree"
    assert log(site.config, "-n", "1")[1].rstrip().endswith(told)
    assert site.run()[1].startswith("up to date")
