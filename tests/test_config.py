"""Config loading: defaults, path resolution, and errors that name the key and the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.config import load_config
from deploybot.errors import EX_CONFIG, ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deploybot.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_and_relative_paths(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[source]\nurl = "site"\n'))
    assert cfg.source.url == str(tmp_path / "site")
    assert cfg.source.branch == "main"
    assert cfg.publish.url == cfg.source.url
    assert cfg.publish.branch == "asf-site"
    assert cfg.publish.message == "Build at {date}"
    assert cfg.render.feed_limit == 20
    limits = (cfg.render.layout_max_steps, cfg.render.layout_max_output)
    assert (*limits, cfg.render.layout_max_depth) == (10_000_000, 50_000_000, 50)
    assert cfg.notify.transport == "none"
    assert cfg.notify.pusher == "deploybot"
    assert cfg.state.dir == tmp_path / ".deploybot"


def test_remote_urls_are_not_resolved(tmp_path: Path) -> None:
    for url in ("https://h/x.git", "git://h/x", "ssh://h/x", "git@h:x.git", "file:///x"):
        cfg = load_config(write(tmp_path, f'[source]\nurl = "{url}"\n'))
        assert cfg.source.url == url


def test_every_documented_key(tmp_path: Path) -> None:
    cfg = load_config(
        write(
            tmp_path,
            """
[source]
url = "src"
branch = "trunk"
[publish]
url = "pub.git"
branch = "gh-pages"
author = "Bot <bot@x.org>"
message = "Site build {date}"
timezone = "Europe/Berlin"
keep = ["docs/", "CNAME"]
[render]
theme = "_theme"
timezone = "America/Los_Angeles"
feed_limit = 5
[notify]
transport = "smtp"
to = ["commits@x.org"]
from = "bot@x.org"
repository_url = "https://x.org/site.git"
pusher = "ci"
[notify.smtp]
host = "127.0.0.1"
port = 2525
security = "starttls"
username = "u"
password_env = "PW"
timeout = 5
[state]
dir = "/var/lib/deploybot"
""",
        )
    )
    assert cfg.publish.url == str(tmp_path / "pub.git")
    assert cfg.publish.keep == ("docs/", "CNAME")
    assert cfg.render.theme == "_theme"
    assert cfg.notify.sender == "bot@x.org"
    assert cfg.notify.smtp.timeout == 5.0
    assert cfg.notify.smtp.security == "starttls"
    assert cfg.state.dir == Path("/var/lib/deploybot")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[source]\nurl = "s"\nbrnch = "x"\n',
            "unknown key 'source.brnch'; did you mean 'branch'?",
        ),
        (
            '[source]\nurl = "s"\n[render]\nfeed_limit = "x"\n',
            "'render.feed_limit' must be an integer",
        ),
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "pigeon"\n',
            "'notify.transport' must be one of",
        ),
        (
            '[source]\nurl = "s"\n[notify.smtp]\nsecurity = "tls"\n',
            "'notify.smtp.security' must be one of",
        ),
        ('[source]\nurl = "s"\n[publish]\nkeep = "docs/"\n', "'publish.keep' must be a list"),
        ('[source]\nurl = "s"\n[publish]\nauthor = "nobody"\n', "'publish.author' must look like"),
        (
            '[source]\nurl = "s"\n[render]\ntimezone = "Mars/Base"\n',
            "'render.timezone' is not a known",
        ),
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "mbox"\nto = ["a@b"]\n',
            "'notify.mbox' is required",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_steps = 0\n',
            "'render.layout_max_steps' must be 1 or more",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_output = -5\n',
            "'render.layout_max_output' must be 1 or more",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_depth = "deep"\n',
            "'render.layout_max_depth' must be an integer",
        ),
        ('[sorce]\nurl = "s"\n', "unknown key 'sorce'; did you mean 'source'?"),
        ('[source]\nbranch = "x"\n', "missing required key 'source.url'"),
        ("[source\n", "not valid TOML"),
        ('[source]\nurl = "s"\n[notify]\nto = ["TVM <c@x.org>"]\n', "'notify.to' entries must be"),
        ('[source]\nurl = "s"\n[notify]\nto = ["nobody"]\n', "'notify.to' entries must be"),
        ('[source]\nurl = "s"\n[notify]\nfrom = "not an address"\n', "'notify.from' must be"),
        ("", "missing required key 'source'"),
    ],
)
def test_errors_name_key_and_file(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)
    assert info.value.exit_code == EX_CONFIG


def test_sender_with_display_name(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[source]\nurl = "s"\n[notify]\nfrom = "Bot <b@x.org>"\n'))
    assert cfg.notify.sender == "Bot <b@x.org>"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")
