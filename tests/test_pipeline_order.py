"""Never publish backwards: a build of a source commit older than the one the publish head
was built from is not pushed (two instances with their own state dirs, a rewound source).

Instance A runs in this process (so a test can act at a chosen moment of its run); instance
B is its own ``deploybot`` process with another state dir, on the same source and publish
repositories.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from deploybot.cli.commands import main
from deploybot.git import repository
from deploybot.publish import commit as publish
from tests.gitrepo import commit_files, head
from tests.killsite import T0, KillSite, read_mbox


@pytest.fixture
def site(tmp_path: Path) -> KillSite:
    return KillSite(tmp_path, posts=6)


def run_a(site: KillSite, *args: str) -> Result:
    return CliRunner().invoke(main, ["run-once", "--config", str(site.config), *args])


def source_head(site: KillSite) -> str:
    commit = head(site.source, "main")
    assert commit is not None
    return commit


def recorded_source(site: KillSite) -> str | None:
    return publish.fetch_publish_head(
        str(site.publish), "asf-site", site.root / "probe.git"
    ).source_commit


def test_rewound_source_is_not_published_without_allow_older(site: KillSite) -> None:
    assert site.run().code == 0
    s1 = source_head(site)
    site.change()
    assert site.run().code == 0
    s2, build = source_head(site), head(site.publish, "asf-site")
    with repository.bare_repo(site.source) as repo:  # someone force-pushes the source back
        repository.set_local_refs(repo, {"refs/heads/main": s1})
    for args in ((), ("--full",)):
        run = site.run(*args)
        assert run.code == 0, run.out
        assert f"not publishing: source {s1[:12]} is older than the published {s2[:12]}" in run.out
        assert head(site.publish, "asf-site") == build
    run = site.run("--full", "--allow-older")
    assert run.code == 0 and "published" in run.out, run.out
    assert recorded_source(site) == s1
    assert site.audit().ok


def test_slow_instance_does_not_push_over_a_newer_build(
    site: KillSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fetched S1 and builds slowly; meanwhile S2 is pushed and B publishes it. A's push
    would take the site back to S1: A stops, says so, and exits 0."""
    s1 = source_head(site)
    b_config = site.write_config(site.root / "b.toml", "state-b")
    b_builds: list[str | None] = []
    real = publish.publish_build

    def b_publishes_first(*args: Any, **kwargs: Any) -> Any:
        site.change()
        assert site.run(config=b_config).code == 0
        b_builds.append(head(site.publish, "asf-site"))
        return real(*args, **kwargs)

    monkeypatch.setattr(publish, "publish_build", b_publishes_first)
    result = run_a(site)
    s2 = source_head(site)
    assert result.exit_code == 0, result.output
    assert f"not publishing: source {s1[:12]} is older than the published {s2[:12]}" in (
        result.output
    )
    assert head(site.publish, "asf-site") == b_builds[0]
    assert recorded_source(site) == s2
    assert len(read_mbox(site.mbox)) == 1  # B's build; A announced nothing


def test_lost_push_race_is_checked_again(site: KillSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """A's push loses the race to B's newer build (compare-and-swap fails); A fetches again,
    finds the newer build, and does not retry its older one."""
    assert site.run().code == 0
    site.change()
    s1 = source_head(site)
    b_config = site.write_config(site.root / "b.toml", "state-b")
    real = repository.push_refs
    pushes: list[str] = []

    def b_pushes_first(*args: Any, **kwargs: Any) -> None:
        if not pushes:
            site.change()
            assert site.run(config=b_config).code == 0
            pushes.append(head(site.publish, "asf-site") or "")
        real(*args, **kwargs)

    monkeypatch.setattr(repository, "push_refs", b_pushes_first)
    result = run_a(site)
    s2 = source_head(site)
    assert result.exit_code == 0, result.output
    assert f"not publishing: source {s1[:12]} is older than the published {s2[:12]}" in (
        result.output
    )
    assert head(site.publish, "asf-site") == pushes[0]
    assert recorded_source(site) == s2


# --- a fresh instance (no mirror of the published source commit) after a force-push -------


def _rewind_after_two_builds(site: KillSite) -> tuple[str, str, str | None]:
    """Instance A publishes S1 then S2; the source branch is force-reset to S1. Returns
    (S1, S2, the publish head)."""
    assert site.run().code == 0
    s1 = source_head(site)
    site.change()
    assert site.run().code == 0
    s2 = source_head(site)
    with repository.bare_repo(site.source) as repo:
        repository.set_local_refs(repo, {"refs/heads/main": s1})
    return s1, s2, head(site.publish, "asf-site")


def test_a_fresh_instance_does_not_publish_a_rewound_source(site: KillSite) -> None:
    """S2 is no longer on the branch, and the server does not serve unadvertised commits
    (git's default): a fresh instance cannot tell whether S1 is older than S2, so it does
    not publish (as instance A, which knows S2, does not) and says why; --allow-older does."""
    s1, s2, build = _rewind_after_two_builds(site)
    fresh = site.write_config(site.root / "fresh.toml", "state-fresh")
    for _ in range(2):
        run = site.run(config=fresh)
        assert run.code == 0, run.out
        assert (
            f"not publishing: cannot tell whether source {s1[:12]} is older than the published "
            f"{s2[:12]}, which is no longer in the source repository" in run.out
        ), run.out
        assert head(site.publish, "asf-site") == build
    run = site.run("--allow-older", config=fresh)
    assert run.code == 0 and "published" in run.out, run.out
    assert recorded_source(site) == s1


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git's upload-pack")
def test_a_fresh_instance_fetches_the_published_source_by_id(site: KillSite) -> None:
    """Where the server serves a commit by id (uploadpack.allowAnySHA1InWant; GitHub for
    reachable ones), the fresh instance fetches S2 and knows S1 is older."""
    s1, s2, build = _rewind_after_two_builds(site)
    subprocess.run(
        ["git", "-C", str(site.source), "config", "uploadpack.allowAnySHA1InWant", "true"],
        check=True,
    )
    run = site.run(config=site.write_config(site.root / "fresh.toml", "state-fresh"))
    assert run.code == 0, run.out
    assert f"not publishing: source {s1[:12]} is older than the published {s2[:12]}" in run.out
    assert head(site.publish, "asf-site") == build


def test_a_fresh_instance_publishes_a_commit_made_after_the_published_build(
    site: KillSite,
) -> None:
    """History rewritten (S2 gone, its replacement dated as the original: cannot tell, not
    published); then a commit made after the published build cannot be one of S2's
    ancestors, so it is published without --allow-older."""
    _, s2, build = _rewind_after_two_builds(site)
    rewrite = commit_files(site.source, {"about.md": b"Rewritten.\n"}, "Rewrite", when=T0 + 150)
    fresh = site.write_config(site.root / "fresh.toml", "state-fresh")
    run = site.run(config=fresh)
    said = f"cannot tell whether source {rewrite[:12]} is older than the published {s2[:12]}"
    assert run.code == 0 and said in run.out, run.out
    assert head(site.publish, "asf-site") == build
    later = commit_files(site.source, {"about.md": b"Later.\n"}, "Later", when=int(time.time()) + 5)
    run = site.run(config=fresh)
    assert run.code == 0 and "published" in run.out, run.out
    assert recorded_source(site) == later
