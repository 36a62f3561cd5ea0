"""What a run's commit statuses say (deploybot.pipeline.statuses), and the bound on the pending
one: a forge that hangs holds the build back at most PENDING_TIMEOUT seconds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from deploybot.config.forges import BuildState
from deploybot.config.load import load_config
from deploybot.pipeline import statuses
from deploybot.publish.commit import GuardError, OlderSourceError
from deploybot.support.errors import ConfigError, PublishError, SourceError
from tests.forgeapi import TOKEN, fake_forge, status_table
from tests.smallsite import SmallSite

SHA = "89abcdef0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    ("exc", "state", "description"),
    [
        (SourceError("unknown tag 'bogus'", "_posts/x.md", 3), BuildState.FAILURE,
         "Build failed: _posts/x.md:3: unknown tag 'bogus'"),
        (GuardError("the build removes 9 of 10 files"), BuildState.FAILURE,
         "Not published: the build removes 9 of 10 files"),
        (PublishError("push to https://tok:secret@git.example.org/s.git rejected"),
         BuildState.ERROR, "Not published: push to https://git.example.org/s.git rejected"),
        (ConfigError("'publish.url': no such repository"), BuildState.ERROR,
         "Not published: 'publish.url': no such repository"),
        (OlderSourceError("1a2b3c4d" * 5, "9f8e7d6c" * 5, "5e6f7a8b" * 5), BuildState.ERROR,
         "Not publishing: source 1a2b3c4d1a2b is older than the published 9f8e7d6c9f8e"),
        (ValueError("a bug\nwith lines"), BuildState.ERROR,
         "Build error: internal error (ValueError)"),
    ],
)  # fmt: skip
def test_what_a_failed_build_says(exc: Exception, state: BuildState, description: str) -> None:
    assert statuses.failure(exc) == (state, description)


def test_what_a_published_build_says() -> None:
    assert statuses.published("1a2b3c4d" * 5, 0.4149) == "Published in 0.41 s as 1a2b3c4"
    assert statuses.unchanged("asf-site", "9f8e7d6c" * 5, 1.5) == (
        "Built in 1.50 s: asf-site 9f8e7d6 already holds this build"
    )


def test_a_hanging_forge_holds_the_build_back_at_most_the_pending_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOYBOT_STATUS_TOKEN", TOKEN)
    with fake_forge("github") as forge:
        forge.always, forge.hang_for = "hang", 6.0
        site = SmallSite(tmp_path, extra=status_table(forge) + "timeout = 30\n")
        config = load_config(site.config)
        assert config.status.timeout == 30
        started = time.monotonic()
        report = statuses.started(config, tmp_path / "outbox", SHA)
        took = time.monotonic() - started
        assert statuses.PENDING_TIMEOUT <= took < statuses.PENDING_TIMEOUT + 1.5
        [(key, reason)] = report.failed
        assert key == f"status-{SHA}-pending"
        assert reason.endswith("no complete answer within the 2 s timeout")
