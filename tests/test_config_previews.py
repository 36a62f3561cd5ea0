"""``[preview]``: its defaults, its URL and token defaulting to the publish side's, and the
rules that keep previews off the production branches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.support.errors import ConfigError


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "deploybot.toml"
    path.write_text('[source]\nurl = "src"\n' + text)
    return load_config(path)


def test_defaults_follow_the_publish_side(tmp_path: Path) -> None:
    config = _load(tmp_path, '[publish]\nurl = "https://git.example.org/pub.git"\n'
                   'token_env = "PUB_TOKEN"\n[preview]\nbranches = ["feature/*"]\n')  # fmt: skip
    preview = config.preview  # type: ignore[attr-defined]
    assert preview.branches == ("feature/*",)
    assert preview.publish_branch == "previews" and preview.notify is False
    assert preview.url == "https://git.example.org/pub.git" and preview.token_env == "PUB_TOKEN"
    assert preview.site_url == ""
    own = _load(tmp_path, '[preview]\nbranches = ["f*"]\nurl = "previews.git"\n')
    assert own.preview.url == str(tmp_path / "previews.git")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[publish]\nbranch = "previews"\n[preview]\nbranches = ["f/*"]\n',
         "'preview.publish_branch' is 'publish.branch' ('previews') of the same repository"),
        ('[preview]\nbranches = ["f/*"]\npublish_branch = "main"\n',
         "'preview.publish_branch' is 'source.branch' ('main') of the same repository"),
        ('[preview]\nbranches = ["refs/heads/f/*"]\n',
         "'preview.branches' entries are branch names (feature/*), not refnames"),
        ('[preview]\nbranches = ["a b"]\n', "'preview.branches' entries are branch globs without"),
        ('[preview]\nbranches = ["f/*"]\nsite_url = "previews.example.org"\n',
         "'preview.site_url' must be an http:// or https:// URL"),
        ('[preview]\nbranches = ["f/*"]\npublish_branch = "refs/heads/p"\n',
         "'preview.publish_branch' must be a branch name, not a refname"),
    ],
)  # fmt: skip
def test_refused(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        _load(tmp_path, text)


def test_a_preview_repository_of_its_own_may_use_any_branch(tmp_path: Path) -> None:
    config = _load(tmp_path, '[preview]\nbranches = ["f/*"]\nurl = "other.git"\n'
                   'publish_branch = "asf-site"\n')  # fmt: skip
    assert config.preview.publish_branch == "asf-site"  # type: ignore[attr-defined]


def test_off_previews_are_not_checked(tmp_path: Path) -> None:
    config = _load(tmp_path, '[publish]\nbranch = "previews"\n')
    assert config.preview.branches == ()  # type: ignore[attr-defined]
