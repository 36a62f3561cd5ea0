"""The publish guard: a build that would remove more than ``publish.max_removed`` of the
published files, or leave fewer than ``publish.min_files``, is not pushed (exit 1, one line,
no email); ``run-once --force`` publishes it, and its record says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.publish.commit import Guard, guard_problem
from tests.gitcli import run_git
from tests.gitrepo import commit_files, read_branch
from tests.smallsite import SmallSite

POSTS = {f"_posts/2023-02-{day:02d}-p{day}.md": b"---\ntitle: P\n---\nP.\n" for day in range(1, 9)}


def configure(site: SmallSite, publish: str = "") -> None:
    site.config.write_text(
        '[source]\nurl = "source.git"\n'
        f'[publish]\nurl = "publish.git"\nauthor = "Bot <bot@example.org>"\n{publish}'
        '[notify]\ntransport = "mbox"\nmbox = "commits.mbox"\nto = ["commits@example.org"]\n'
        'from = "bot@example.org"\n[state]\ndir = "state"\n'
    )


def notes(site: SmallSite) -> str:
    return run_git(site.publish, "rev-parse", "refs/notes/deploybot", name="A", email="a@x.org")


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    """14 published files: 10 posts, index, feeds, style sheet."""
    made = SmallSite(tmp_path)
    configure(made)
    commit_files(made.source, POSTS, "Posts", when=1_700_000_100)
    assert made.run()[0] == 0
    assert len(read_branch(made.publish, "asf-site")) == 14
    return made


def delete_posts(site: SmallSite) -> None:
    commit_files(site.source, dict.fromkeys(POSTS), "Oops", when=1_700_000_200)


@pytest.mark.parametrize("cache", [True, False], ids=["incremental", "full"])
def test_removing_most_files_is_refused_then_forced(site: SmallSite, cache: bool) -> None:
    delete_posts(site)
    if not cache:
        shutil.rmtree(site.state / "cache")
    before, notes_before = site.head(), notes(site)
    result = CliRunner().invoke(main, ["run-once", "--config", str(site.config)])
    assert result.exit_code == 1, result.output
    assert result.output == (
        "deploybot: error: not publishing: the build would remove 8 of the 14 published "
        "files (57%, more than publish.max_removed = 0.5); run-once --force publishes it\n"
    )
    assert (site.head(), notes(site)) == (before, notes_before)
    assert site.emails() == [before]
    assert site.run()[0] == 1  # again: nothing was recorded
    code, out = site.run("--force")
    warning, published = out.splitlines()[:2]
    assert code == 0 and published.startswith("published "), out
    assert warning == (
        "the build would remove 8 of the 14 published files (57%, more than "
        "publish.max_removed = 0.5): publishing it anyway (--force)"
    )
    assert len(read_branch(site.publish, "asf-site")) == 6
    assert site.emails() == [before, site.head()]
    note = run_git(site.publish, "notes", "--ref=deploybot", "show", "asf-site", name="A",
                   email="a@x.org")  # fmt: skip
    assert "\nguard overridden\n" in note
    logged = CliRunner().invoke(main, ["log", "--config", str(site.config), "-n", "1"])
    assert logged.output.rstrip().endswith("; the publish guard was overridden (run-once --force)")
    assert site.run() == (0, f"up to date: asf-site was built from source {json_source(site)}\n")


def json_source(site: SmallSite) -> str:
    logged = CliRunner().invoke(main, ["log", "--config", str(site.config), "--json", "-n", "1"])
    return str(json.loads(logged.output)[0]["source_commit"])[:12]


def test_a_looser_max_removed_lets_it_through(site: SmallSite) -> None:
    configure(site, "max_removed = 0.6\n")
    delete_posts(site)
    code, out = site.run()
    assert code == 0 and out.startswith("published "), out


def test_removing_half_is_allowed(site: SmallSite) -> None:
    commit_files(site.source, dict.fromkeys(list(POSTS)[:7]), "Fewer", when=1_700_000_200)
    code, out = site.run()  # 7 of 14: not more than half
    assert code == 0 and out.startswith("published "), out


def test_min_files_guards_the_first_build(tmp_path: Path) -> None:
    made = SmallSite(tmp_path)
    configure(made, "min_files = 7\n")
    code, out = made.run()
    assert code == 1
    assert out == (
        "deploybot: error: not publishing: the build would leave 6 files (fewer than "
        "publish.min_files = 7); run-once --force publishes it\n"
    )
    assert made.head() is None and made.emails() == []
    configure(made, "min_files = 6\n")
    assert made.run()[0] == 0


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("max_removed = 1.5", "'publish.max_removed' must be a fraction from 0 to 1, not 1.5"),
        ("max_removed = nan", "'publish.max_removed' must be a fraction from 0 to 1, not nan"),
        ("min_files = -1", "'publish.min_files' must be 0 or more and at most"),
    ],
)
def test_guard_keys_are_checked(tmp_path: Path, key: str, message: str) -> None:
    made = SmallSite(tmp_path)
    configure(made, key + "\n")
    code, out = made.run()
    assert code == 78 and message in out and str(made.config) in out, out


def test_the_example_config_gives_the_defaults(tmp_path: Path) -> None:
    """Every value config/deploybot.example.toml sets is its key's default (but the
    required source.url): copying it publishes nowhere else and mails nobody."""
    import dataclasses

    from deploybot.config.load import load_config
    from deploybot.config.schema import NotifyConfig, PublishConfig, RenderConfig

    example = Path(__file__).resolve().parents[1] / "config" / "deploybot.example.toml"
    copy = tmp_path / "deploybot.toml"
    copy.write_text(example.read_text())
    config = load_config(copy)
    defaults = PublishConfig(url=str(tmp_path.parent / "site"), nojekyll=False)
    assert config.publish == defaults
    assert config.render == RenderConfig()
    notify = dataclasses.replace(config.notify, repository_url="", pusher="")
    assert notify == NotifyConfig()
    for key in ("nojekyll", "max_removed", "min_files"):
        assert f"{key} = " in example.read_text(), key


def _guard_by_full_count(removed: int, added: int, published: int, guard: Guard) -> str | None:
    """The guard's verdict from the whole count of published files (the rule as documented)."""
    if removed == 0 and added >= guard.min_files:
        return None
    if published and removed > guard.max_removed * published:
        share = f"{removed / published:.0%}"
        return f"remove {removed} of the {published} published files ({share}"
    left = published - removed + added
    return f"leave {left} file" if left < guard.min_files else None


@pytest.mark.parametrize("max_removed", [0.0, 0.25, 0.5, 1.0])
@pytest.mark.parametrize("min_files", [1, 3, 12])
def test_the_guard_counts_only_as_far_as_it_could_trip(
    tmp_path: Path, max_removed: float, min_files: int
) -> None:
    """The published files are counted only up to where no limit could trip: every verdict
    is the one the whole count gives, for removals and additions on 10 files in folders."""
    repo_path = tmp_path / "p.git"
    Repo.init_bare(str(repo_path), mkdir=True).close()
    files = {f"d{i % 3}/s{i % 2}/f{i}.html": b"%d\n" % i for i in range(10)}
    old = commit_files(repo_path, files, "Old", branch="old")
    guard = Guard(max_removed, min_files)
    with Repo(str(repo_path)) as repo:
        old_tree = repo[old.encode()].tree.decode()
        for removed in (0, 1, 2, 5, 6, 10):
            for added in (0, 1, 4):
                kept = dict(list(files.items())[removed:])
                new_files = {**kept, **{f"new/n{j}.html": b"n\n" for j in range(added)}}
                new = commit_files(repo_path, new_files, "New", branch=f"n{removed}-{added}")
                new_tree = repo[new.encode()].tree.decode()
                got = guard_problem(repo, old_tree, new_tree, guard)
                want = _guard_by_full_count(removed, added, len(files), guard)
                assert (got is None) == (want is None), (removed, added, got, want)
                assert want is None or want in str(got), (removed, added, got, want)
