"""The commit status channel against a fake forge API on 127.0.0.1: each forge's request, the
outbox's retries, refusals, superseding, bounds, and the token kept out of every line."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from deploybot.config.forges import (
    FORGES,
    BuildState,
    CommitStatus,
    cut,
    pages_url,
    repository_of,
)
from deploybot.config.schema import StatusConfig
from deploybot.notify.deliver.forge_status import (
    deliver_statuses,
    make_status_sender,
    queue_status,
    status_key,
)
from deploybot.notify.deliver.outbox import list_pending, list_refused, read_status
from deploybot.notify.stage import list_outbox
from deploybot.support.errors import ConfigError
from deploybot.support.redact import redact_text
from tests.forgeapi import TOKEN, FakeForge

SHA = "0123456789abcdef0123456789abcdef01234567"
ENV = "DEPLOYBOT_STATUS_TOKEN"


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, TOKEN)
    return TOKEN


def settings(forge: FakeForge, **more: object) -> StatusConfig:
    base = FORGES[forge.api].api_base(forge.url)
    return replace(
        StatusConfig(api=forge.api, url=base, repository=forge.repository, token_env=ENV,
                     context="deploybot/www", target_url="https://www.example.org/"),
        **more,
    )  # fmt: skip


def status(state: BuildState = BuildState.SUCCESS, sha: str = SHA, text: str = "") -> CommitStatus:
    description = text or f"Published in 0.41 s as {sha[:7]}"
    return CommitStatus(
        sha, state, description, "https://www.example.org/", "deploybot/www", "main"
    )


@pytest.fixture(params=["github", "gitea", "gitlab"])
def forge(request: pytest.FixtureRequest) -> Iterator[FakeForge]:
    repository = "group/sub/site" if request.param == "gitlab" else "owner/site"
    server = FakeForge(request.param, repository)
    yield server
    server.stop()


EXPECTED = {
    "github": (
        "/repos/owner/site/statuses/" + SHA,
        {"authorization": f"Bearer {TOKEN}", "accept": "application/vnd.github+json",
         "x-github-api-version": "2022-11-28"},
        {"state": "success", "description": "Published in 0.41 s as 0123456",
         "context": "deploybot/www", "target_url": "https://www.example.org/"},
    ),
    "gitea": (
        "/api/v1/repos/owner/site/statuses/" + SHA,
        {"authorization": f"token {TOKEN}"},
        {"state": "success", "description": "Published in 0.41 s as 0123456",
         "context": "deploybot/www", "target_url": "https://www.example.org/"},
    ),
    "gitlab": (
        "/api/v4/projects/group%2Fsub%2Fsite/statuses/" + SHA,
        {"private-token": TOKEN},
        {"state": "success", "description": "Published in 0.41 s as 0123456",
         "name": "deploybot/www", "ref": "main", "target_url": "https://www.example.org/"},
    ),
}  # fmt: skip


def test_each_forge_gets_its_documented_request(forge: FakeForge, token: str) -> None:
    send = make_status_sender(settings(forge))
    assert send is not None
    send(json.dumps(status().to_json()).encode())
    assert forge.problems == []
    [got] = forge.received
    path, headers, body = EXPECTED[forge.api]
    assert got.path == path
    assert {k: got.headers[k] for k in headers} == headers
    assert got.headers["content-type"] == "application/json; charset=utf-8"
    assert got.body == body


@pytest.mark.parametrize(
    ("state", "github", "gitea", "gitlab"),
    [
        (BuildState.PENDING, "pending", "pending", "running"),
        (BuildState.SUCCESS, "success", "success", "success"),
        (BuildState.FAILURE, "failure", "failure", "failed"),
        (BuildState.ERROR, "error", "error", "failed"),
    ],
)
def test_each_state_in_each_forges_words(state: BuildState, github: str, gitea: str,
                                         gitlab: str) -> None:  # fmt: skip
    words = {"github": github, "gitea": gitea, "gitlab": gitlab}
    for api, forge in FORGES.items():
        _, _, body = forge.request(status(state), url="", repository="o/n", token="t")
        assert body["state"] == words[api]


def test_a_long_description_is_cut_to_the_forges_limit(forge: FakeForge, token: str) -> None:
    long = "Build failed: _posts/2023-01-05-x.md:3: " + "unknown tag 'bogus' " * 30
    send = make_status_sender(settings(forge))
    assert send is not None
    send(json.dumps(status(BuildState.FAILURE, text=long).to_json()).encode())
    [got] = forge.received
    most = FORGES[forge.api].max_description
    assert len(got.body["description"]) == most
    assert got.body["description"].startswith("Build failed: _posts/2023-01-05-x.md:3: unknown")
    assert got.body["description"].endswith("…")
    assert cut("a\nb  c", 10) == "a b c"


def test_a_500_waits_and_the_retry_posts_it_once(tmp_path: Path, token: str) -> None:
    forge = FakeForge("github")
    try:
        forge.answers = [500]
        queue_status(tmp_path, status())
        first = deliver_statuses(settings(forge), tmp_path)
        assert first.sent == ()
        [(key, reason)] = first.failed
        assert key == status_key(SHA, BuildState.SUCCESS)
        assert reason == (
            f"commit status GitHub http://127.0.0.1:{forge.port} (owner/site): "
            "HTTP 500 Internal Server Error: Server Error"
        )
        [waiting] = list_pending(tmp_path, ".status")
        assert (waiting.state, waiting.attempts) == ("failed", 1)
        assert waiting.next_attempt is not None and waiting.next_attempt > time.time() + 50
        assert deliver_statuses(settings(forge), tmp_path).deferred  # backoff holds
        again = deliver_statuses(settings(forge), tmp_path, retry_now=True)
        assert again.sent == (key,)
        assert deliver_statuses(settings(forge), tmp_path, retry_now=True).sent == ()
        queue_status(tmp_path, status())  # the same (commit, state) again: never posted twice
        assert deliver_statuses(settings(forge), tmp_path, retry_now=True).sent == ()
        assert forge.states() == ["success"]
        assert forge.tried == [f"/repos/owner/site/statuses/{SHA}"] * 2
    finally:
        forge.stop()


@pytest.mark.parametrize("code", [429, 408, 502])
def test_429_408_and_5xx_are_retried(tmp_path: Path, token: str, code: int) -> None:
    forge = FakeForge("gitea")
    try:
        forge.answers = [code]
        queue_status(tmp_path, status())
        report = deliver_statuses(settings(forge), tmp_path)
        assert [k for k, _ in report.failed] == [status_key(SHA, BuildState.SUCCESS)]
        assert report.refused == ()
        assert deliver_statuses(settings(forge), tmp_path, retry_now=True).sent
    finally:
        forge.stop()


def test_a_401_is_refused_for_good_told_once_and_kept(
    tmp_path: Path, token: str, caplog: pytest.LogCaptureFixture
) -> None:
    forge = FakeForge("github", token="another-token-the-forge-expects")
    forge.echo_token_in_errors = True  # a hostile (or chatty) forge quotes what it was sent
    try:
        queue_status(tmp_path, status())
        caplog.set_level(logging.DEBUG)
        report = deliver_statuses(settings(forge), tmp_path)
        [(key, reason)] = report.refused
        assert key == status_key(SHA, BuildState.SUCCESS)
        assert reason.startswith(
            f"commit status GitHub http://127.0.0.1:{forge.port} (owner/site): HTTP 401 "
            "Unauthorized: Bad credentials: Bearer "
        )
        assert TOKEN not in redact_text(reason) and "[...]" in redact_text(reason)
        assert TOKEN not in reason
        assert TOKEN not in caplog.text
        assert list_pending(tmp_path, ".status") == []
        [kept] = list_refused(tmp_path, ".status")
        assert kept.state == "refused"
        assert [item.key for item in list_outbox(tmp_path)] == [key]
        again = deliver_statuses(settings(forge), tmp_path, retry_now=True)
        assert (again.sent, again.failed, again.refused) == ((), (), ())
        assert len(forge.tried) == 1
    finally:
        forge.stop()


def test_a_404_is_refused_and_a_redirect_is_not_followed(tmp_path: Path, token: str) -> None:
    forge = FakeForge("gitlab", "group/site")
    try:
        forge.answers = [404, 307]
        queue_status(tmp_path, status())
        queue_status(tmp_path, status(sha="e" * 40))
        refused = dict(deliver_statuses(settings(forge), tmp_path).refused)
        assert refused[status_key(SHA, BuildState.SUCCESS)].endswith(
            "HTTP 404 Not Found: Not Found"
        )
        assert refused[status_key("e" * 40, BuildState.SUCCESS)].endswith(
            "HTTP 307 Temporary Redirect: Moved"
        )
        assert len(forge.tried) == 2  # the redirect was not followed
    finally:
        forge.stop()


def test_a_forge_that_hangs_is_a_timeout_within_the_bound(tmp_path: Path, token: str) -> None:
    forge = FakeForge("github")
    forge.answers, forge.hang_for = ["hang"], 3.0
    try:
        queue_status(tmp_path, status())
        started = time.monotonic()
        report = deliver_statuses(settings(forge, timeout=0.5), tmp_path)
        took = time.monotonic() - started
        assert took < 1.5
        [(_, reason)] = report.failed
        assert reason.endswith("no complete answer within the 0.5 s timeout")
        [waiting] = list_pending(tmp_path, ".status")
        assert waiting.state == "failed"
    finally:
        forge.stop()


def test_a_forge_that_is_down_is_a_retry(tmp_path: Path, token: str) -> None:
    forge = FakeForge("github")
    config = settings(forge)
    forge.stop()
    queue_status(tmp_path, status())
    [(_, reason)] = deliver_statuses(config, tmp_path).failed
    assert "ConnectionError" in reason


def test_a_later_state_supersedes_the_waiting_pending(tmp_path: Path, token: str) -> None:
    forge = FakeForge("github")
    try:
        forge.always = 500
        queue_status(tmp_path, status(BuildState.PENDING, text="Building 0123456 for asf-site"))
        assert deliver_statuses(settings(forge), tmp_path).failed
        queue_status(tmp_path, status(BuildState.SUCCESS))
        superseded = tmp_path / "superseded" / f"{status_key(SHA, BuildState.PENDING)}.status"
        assert superseded.exists()
        assert read_status(superseded)["attempts"] == 1
        forge.always = None
        report = deliver_statuses(settings(forge), tmp_path, retry_now=True)
        assert report.sent == (status_key(SHA, BuildState.SUCCESS),)
        assert forge.states() == ["success"]
        other = "f" * 40  # another commit's statuses are its own
        queue_status(tmp_path, status(BuildState.PENDING, sha=other))
        queue_status(tmp_path, status(BuildState.FAILURE, sha=SHA))
        assert {p.key for p in list_pending(tmp_path, ".status")} == {
            status_key(other, BuildState.PENDING),
            status_key(SHA, BuildState.FAILURE),
        }
    finally:
        forge.stop()


def test_a_missing_token_is_a_config_error_naming_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    config = StatusConfig(api="github", url="https://api.github.com", repository="o/n",
                          token_env=ENV)  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        make_status_sender(config)
    assert str(caught.value) == f"'status.token_env': environment variable {ENV} is not set"
    assert make_status_sender(StatusConfig()) is None


@pytest.mark.parametrize(
    ("api", "url", "api_url", "expected"),
    [
        ("github", "https://github.com/apache/tvm-site.git", "", "apache/tvm-site"),
        ("github", "git@github.com:apache/tvm-site.git", "", "apache/tvm-site"),
        ("gitea", "ssh://git@git.example.org:2222/owner/site.git", "https://git.example.org",
         "owner/site"),
        ("gitea", "https://git.example.org/gitea/owner/site", "https://git.example.org/gitea",
         "owner/site"),
        ("gitlab", "https://gitlab.com/group/sub/site.git", "", "group/sub/site"),
        ("gitlab", "git@gitlab.example.org:group/site.git", "https://gitlab.example.org/api/v4",
         "group/site"),
        ("github", "/srv/git/site.git", "", None),
        ("github", "../site", "", None),
        ("github", "file:///srv/git/site.git", "", None),
    ],
)  # fmt: skip
def test_the_repository_is_read_off_the_source_url(api: str, url: str, api_url: str,
                                                   expected: str | None) -> None:  # fmt: skip
    assert repository_of(FORGES[api], url, api_url) == expected


def test_the_github_pages_url_is_the_default_target() -> None:
    github, gitlab = FORGES["github"], FORGES["gitlab"]
    assert pages_url(github, "https://github.com/Apache/tvm-site.git", "gh-pages") == (
        "https://apache.github.io/tvm-site/"
    )
    assert pages_url(github, "git@github.com:octo/octo.github.io.git", "gh-pages") == (
        "https://octo.github.io/"
    )
    assert pages_url(github, "https://github.com/apache/tvm-site.git", "asf-site") == ""
    assert pages_url(gitlab, "https://github.com/apache/tvm-site.git", "gh-pages") == ""


def test_a_state_is_posted_again_only_after_another_one(tmp_path: Path, token: str) -> None:
    """The same commit built again (success, then a failure, then success): the forge
    shows the last post, so success goes again (as ``-2``); never twice in a row, and
    pending never again."""
    forge = FakeForge("github")
    try:
        config = settings(forge)

        def post(state: BuildState) -> tuple[str, ...]:
            queue_status(tmp_path, status(state, text=f"{state.value} build"))
            return deliver_statuses(config, tmp_path).sent

        assert post(BuildState.PENDING) == (status_key(SHA, BuildState.PENDING),)
        assert post(BuildState.SUCCESS) == (status_key(SHA, BuildState.SUCCESS),)
        assert post(BuildState.SUCCESS) == ()
        assert post(BuildState.PENDING) == ()
        assert post(BuildState.FAILURE) == (status_key(SHA, BuildState.FAILURE),)
        assert post(BuildState.SUCCESS) == (status_key(SHA, BuildState.SUCCESS) + "-2",)
        assert post(BuildState.SUCCESS) == ()
        assert post(BuildState.FAILURE) == (status_key(SHA, BuildState.FAILURE) + "-2",)
        assert forge.states() == ["pending", "success", "failure", "success", "failure"]
        assert list_outbox(tmp_path) == []
    finally:
        forge.stop()
