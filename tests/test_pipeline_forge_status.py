"""Commit statuses end to end: ``python -m deploybot run-once`` on local repositories, posting to
a fake forge API on 127.0.0.1 (:mod:`tests.forgeapi`) that checks every request as the forge
documents it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.forgeapi import TOKEN, FakeForge, fake_forge, status_table
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

ENV = "DEPLOYBOT_STATUS_TOKEN"
PENDING = {"github": "pending", "gitea": "pending", "gitlab": "running"}
FAILED = {"github": "failure", "gitea": "failure", "gitlab": "failed"}
TARGET = "https://small.example.org/"


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, TOKEN)
    return TOKEN


def site_for(tmp_path: Path, forge: FakeForge) -> SmallSite:
    return SmallSite(tmp_path, extra=status_table(forge, target_url=TARGET))


def sha_of(path: str) -> str:
    return path.rsplit("/", 1)[1]


def outbox_listing(site: SmallSite) -> str:
    """What ``deploybot outbox`` prints for ``site``."""
    from click.testing import CliRunner

    from tests.smallsite import main_cli

    result = CliRunner().invoke(main_cli(), ["outbox", "--config", str(site.config)])
    assert result.exit_code == 0, result.output
    return result.output


def no_token_anywhere(*texts: str, state: Path | None = None) -> None:
    for text in texts:
        assert TOKEN not in text
    if state is not None:
        for path in state.rglob("*"):
            if path.is_file():
                assert TOKEN.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("api", ["github", "gitea", "gitlab"])
def test_run_once_posts_pending_then_success(tmp_path: Path, token: str, api: str) -> None:
    with fake_forge(api, "group/site") as forge:
        site = site_for(tmp_path, forge)
        started = time.time()
        done = site.run_process("-v")
        assert done.returncode == 0, done.stderr
        assert forge.problems == []
        assert forge.states() == [PENDING[api], "success"]
        pending, success = forge.received
        build = site.head()
        assert build is not None
        assert {sha_of(pending.path), sha_of(success.path)} == {site.first}
        name = "name" if api == "gitlab" else "context"
        assert pending.body[name] == success.body[name] == "deploybot/asf-site"
        assert pending.body["description"] == f"Building {site.first[:7]} for asf-site"
        assert re.fullmatch(
            rf"Published in \d+\.\d\d s as {build[:7]}", success.body["description"]
        )
        assert success.body["target_url"] == TARGET
        assert f"commit status success for {site.first[:12]} sent via {api}" in done.stdout
        assert site.emails() == [build]
        no_token_anywhere(done.stdout, done.stderr, state=site.state)
        # the time from the push landing on the publish branch to the success at the forge
        landed = (site.publish / "refs" / "heads" / "asf-site").stat().st_mtime_ns / 1e9
        latency = success.at - landed
        print(
            f"\n{api}: run-once start -> pending {(pending.at - started) * 1000:.0f} ms; "
            f"publish -> success status at the forge: {latency * 1000:.0f} ms"
        )
        assert 0 <= latency < 5
        again = site.run_process()
        assert again.returncode == 0 and "up to date" in again.stdout
        assert len(forge.received) == 2  # nothing posted twice


def test_a_liquid_error_posts_failure_naming_the_file_and_line(tmp_path: Path, token: str) -> None:
    with fake_forge("github") as forge:
        site = site_for(tmp_path, forge)
        bad = commit_files(
            site.source, {"_posts/2023-01-05-bad.md": b"---\ntitle: Bad\n---\nA\n{% bogus %}\n"}
        )
        done = site.run_process()
        assert done.returncode == 1
        assert site.head() is None
        assert forge.problems == []
        assert forge.states() == ["pending", "failure"]
        failure = forge.received[1]
        assert sha_of(failure.path) == bad
        description = failure.body["description"]
        assert description.startswith("Build failed: _posts/2023-01-05-bad.md:5: ")
        assert "bogus" in description
        assert len(description) <= 140
        assert failure.body["target_url"] == TARGET


def test_a_forge_that_is_down_never_holds_the_publish(tmp_path: Path, token: str) -> None:
    forge = FakeForge("github")
    site = site_for(tmp_path, forge)
    port = forge.port
    forge.stop()  # connection refused from now on
    first = site.run_process()
    assert first.returncode == 75, first.stderr  # published; a status waits for a retry
    assert site.head() is not None and site.emails() == [site.head()]
    assert "published" in first.stdout
    assert f"commit status success for {site.first[:12]} not delivered" in first.stderr
    assert f"commit status pending for {site.first[:12]}" not in first.stderr  # withdrawn
    waiting = sorted(p.name for p in (site.state / "outbox").glob("*.status"))
    assert waiting == [f"status-{site.first}-success.status"]  # its pending was superseded
    listing = outbox_listing(site)
    assert f"status-{site.first}-success  commit status, failed, 1 attempt" in listing
    assert "subject: success: Published in " in listing
    forge = FakeForge("github", port=port)
    try:
        second = commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\n---\nThree\n"})
        done = site.run_process()
        assert done.returncode == 0, done.stderr
        assert forge.problems == []
        posted = [(sha_of(r.path), r.state) for r in forge.received]
        # the new build takes the older success along, before its own statuses
        assert posted == [(site.first, "success"), (second, "pending"), (second, "success")]
        assert site.run_process("--retry-now").returncode == 0
        assert len(forge.received) == 3  # never twice
    finally:
        forge.stop()


def test_a_pending_status_the_forge_missed_is_no_failure_once_the_success_is_posted(
    tmp_path: Path, token: str
) -> None:
    """A 500 for the pending status, then the success posted: the pending was withdrawn
    (the forge shows the latest), so nothing waits and the run is not "try again later"
    (it said "pending not delivered (kept in the outbox)" and exit 75, an empty outbox)."""
    with fake_forge("github") as forge:
        forge.answers = [500]
        site = site_for(tmp_path, forge)
        done = site.run_process()
        assert done.returncode == 0, done.stderr
        assert "not delivered" not in done.stderr
        assert [(sha_of(r.path), r.state) for r in forge.received] == [(site.first, "success")]
        assert list((site.state / "outbox").glob("*.status")) == []


def test_a_refused_status_is_told_once_and_the_token_stays_hidden(
    tmp_path: Path, token: str
) -> None:
    forge = FakeForge("github", token="the-token-this-forge-wants")
    forge.echo_token_in_errors = True
    try:
        site = site_for(tmp_path, forge)
        done = site.run_process("-v")
        assert site.head() is not None  # published all the same
        assert done.returncode == 78
        assert "refused, not retried (kept in the outbox's failed/)" in done.stderr
        assert "HTTP 401 Unauthorized: Bad credentials: Bearer [...]" in done.stderr
        assert "check status.repository and the token of status.token_env" in done.stderr
        no_token_anywhere(done.stdout, done.stderr, state=site.state)
        tried = len(forge.tried)
        key = f"status-{site.first}-success"
        listing = outbox_listing(site)
        assert f"{key}  commit status, refused, 1 attempt" in listing
        assert f"deploybot outbox retry {key} sends it again" in listing
        # the refused pending went with the success queued after it: retried by hand after
        # the success, it would have left the commit pending on the forge for good
        refused = sorted(p.stem for p in (site.state / "outbox" / "failed").glob("*.status"))
        assert refused == [key]
        assert f"status-{site.first}-pending" not in listing
        again = site.run_process("--retry-now")
        assert again.returncode == 0, again.stderr
        assert "refused" not in again.stderr  # told once
        assert len(forge.tried) == tried
    finally:
        forge.stop()


@pytest.fixture
def forge() -> Iterator[FakeForge]:
    server = FakeForge("github")
    yield server
    server.stop()


def test_an_unknown_api_is_exit_78_naming_the_key(tmp_path: Path, forge: FakeForge) -> None:
    site = SmallSite(tmp_path, extra='[status]\napi = "bitbucket"\ntoken_env = "T"\n')
    code, output = site.run()
    assert code == 78
    assert f"{site.config}: 'status.api' must be one of github, gitea, gitlab, not 'bitbucket'" in (
        output
    )


def test_a_token_missing_from_the_environment_is_exit_78_before_any_work(
    tmp_path: Path, forge: FakeForge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    site = site_for(tmp_path, forge)
    code, output = site.run()
    assert code == 78
    assert f"{site.config}: 'status.token_env': environment variable {ENV} is not set" in output
    assert site.head() is None and forge.tried == []


def test_config_rules_of_the_status_table(tmp_path: Path) -> None:
    site = SmallSite(tmp_path, extra='[status]\napi = "gitea"\n')
    code, output = site.run()
    assert code == 78
    lines = [line for line in output.splitlines() if "status." in line]
    assert lines == [
        f"deploybot: error: {site.config}: 'status.token_env' is required when 'status.api' "
        "is set: the environment variable holding the forge's API token",
        f"deploybot: error: {site.config}: 'status.url' is required when 'status.api' is "
        '"gitea": its API base, https://HOST/api/v1',
    ]
    site.write_config(extra='[status]\napi = "github"\ntoken_env = "T"\n')
    code, output = site.run()
    assert code == 78
    assert (
        "'status.repository' is required when 'status.api' is set: source.url names no "
        "repository on GitHub (a local path); set owner/name"
    ) in output
    site.write_config(extra='[status]\ncontext = "ci/site"\ntimeout = 5\n')
    code, output = site.run()
    assert code == 78
    assert (
        "'status.api' must be set (github, gitea or gitlab): [status] sets 'status.context', "
        "'status.timeout', and without it no commit status is posted"
    ) in output


def test_the_daemon_posts_them_too(tmp_path: Path, token: str) -> None:
    """``deploybot serve`` builds with the same pipeline: a signed push webhook, then the
    pending and success statuses of the pushed commit; its log line names the status."""
    from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until

    with fake_forge("github") as forge:
        site = GatedSite(tmp_path, gated=False, extra=daemon_table() + status_table(forge))
        with Daemon(site.config) as daemon:
            pushed = site.commit(1)
            sent_at = time.time()
            assert daemon.push("/webhook/deploybot", github(pushed)).status_code == 202
            line = daemon.wait_log(r"site deploybot: published \w{12} from source")
            wait_until(lambda: len(forge.received) == 2, message="both statuses")
            page = daemon.url + "/"
            wait_until(
                lambda: "forge status: success, posted" in requests.get(page, timeout=10).text,
                message="the status page shows the posted status",
            )
        assert forge.problems == []
        assert [(sha_of(r.path), r.state) for r in forge.received] == [
            (pushed, "pending"),
            (pushed, "success"),
        ]
        assert f"commit status success for {pushed[:12]}" in line, line
        no_token_anywhere(*daemon.log, state=site.state)
        took = forge.received[1].at - sent_at
        print(f"\ndaemon: push webhook -> success status at the forge: {took * 1000:.0f} ms")


def test_a_branch_preview_posts_its_own_status_linking_to_the_preview(
    tmp_path: Path, token: str
) -> None:
    """A push to a ``[preview]`` branch: pending, then success as ``<context>/preview``
    linking to the preview's URL; production's status is left alone."""
    from tests.test_previews import PREVIEW, branch_from_main

    with fake_forge("github") as forge:
        site = SmallSite(tmp_path, extra=PREVIEW + status_table(forge, target_url=TARGET))
        code, output = site.run()
        assert code == 0, output
        production = [(sha_of(r.path), r.state, r.body["context"]) for r in forge.received]
        assert production == [
            (site.first, "pending", "deploybot/asf-site"),
            (site.first, "success", "deploybot/asf-site"),
        ]
        tip = branch_from_main(site, "feature/x", {"about.md": b"---\ntitle: About\n---\nHi\n"})
        code, output = site.run()
        assert code == 0, output
        assert forge.problems == []
        pending, success = forge.received[2:]
        assert {sha_of(pending.path), sha_of(success.path)} == {tip}
        assert pending.body["context"] == success.body["context"] == "deploybot/asf-site/preview"
        assert pending.body["description"] == f"Building {tip[:7]} for a preview of feature/x"
        assert success.state == "success"
        assert re.fullmatch(r"Preview published in \d+\.\d\d s as [0-9a-f]{7}",
                            success.body["description"])  # fmt: skip
        url = "https://previews.example.org/preview/feature-x/"
        assert pending.body["target_url"] == success.body["target_url"] == url
        bad = commit_files(
            site.source, {"_posts/2023-01-09-x.md": b"---\n---\n{% bogus %}\n"}, branch="feature/x"
        )
        site.run()
        failure = forge.received[-1]
        assert (sha_of(failure.path), failure.state) == (bad, "failure")
        assert failure.body["description"].startswith("Build failed: _posts/2023-01-09-x.md:3: ")
