"""Every error of a config file is reported at once, one line each naming the key and the
file; a key that is wrong silences the rules that read it, so no error follows from another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.config.load import daemon_from_dict, load_build_config, load_config, read_toml
from deploybot.support.errors import EX_CONFIG, ConfigError

MANY = """\
[source]
url = "s"
brnch = "x"
timeout = 0
[publish]
author = "nobody"
[render]
feed_limit = "x"
jobs = 1000
[notify]
transport = "pigeon"
to = ["TVM <c@x.org>"]
[notify.smtp]
port = 0
[queue]
backend = "redis"
"""


def _errors(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.exit_code == EX_CONFIG
    return str(info.value).split("\n")


def test_every_error_of_a_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "deploybot.toml"
    path.write_text(MANY)
    assert _errors(path) == [
        f"{path}: unknown key 'source.brnch'; did you mean 'branch'?",
        f"{path}: 'source.timeout' must be more than 0 and at most 86400 seconds",
        f"{path}: 'publish.author' must look like 'Name <email>', not 'nobody'",
        f"{path}: 'render.feed_limit' must be an integer, not str 'x'",
        f"{path}: 'render.jobs' must be 0 or more and at most 256, not 1000",
        f"{path}: 'notify.transport' must be one of smtp, sendmail, mbox, stdout, none, "
        "not 'pigeon'",
        f"{path}: 'notify.to' entries must be bare addresses like 'commits@example.org' "
        "(no display name), not 'TVM <c@x.org>'",
        f"{path}: 'notify.smtp.port' must be 1 or more and at most 65535, not 0",
        f"{path}: 'queue.url' is required when queue.backend = \"redis\"",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the URL is wrong: no token rule, no onto-the-source rule on top
        (
            '[source]\nurl = "ftp://h/x"\ntoken_env = "T"\n[publish]\nbranch = "main"\n',
            ["'source.url' must be a local path"],
        ),
        # the transport is wrong: "notify.to must list an address" would follow from it
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "pigeon"\n',
            ["'notify.transport' must be one of smtp, sendmail, mbox, stdout, none, not 'pigeon'"],
        ),
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "mbox"\nto = 5\n',
            ["'notify.to' must be a list", "'notify.mbox' is required"],
        ),
        # no [source]: nothing about its keys
        (
            '[publish]\nbranch = "x y"\n',
            ["'publish.branch' is not a valid git branch name", "missing required key 'source'"],
        ),
        (
            'source = 5\n[state]\ndir = ""\n',
            ["[source] must be a table", "'state.dir' must be a path"],
        ),
    ],
)
def test_one_error_each_and_none_that_follows_from_another(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = tmp_path / "deploybot.toml"
    path.write_text(text)
    errors = _errors(path)
    assert len(errors) == len(expected), errors
    for line, part in zip(errors, expected, strict=True):
        assert line.startswith(f"{path}: ") and part in line, (line, part)


def test_a_build_config_and_a_daemon_config_report_every_error(tmp_path: Path) -> None:
    path = tmp_path / "build.toml"
    path.write_text('[notify]\nto = []\n[render]\njobs = -1\ntypography = "yes"\n')
    with pytest.raises(ConfigError) as info:
        load_build_config(path)
    assert str(info.value).split("\n") == [
        f"{path}: 'notify' needs a [source] table: a config for 'deploybot build' alone holds "
        "only [render] and [state]",
        f"{path}: 'render.jobs' must be 0 or more and at most 256, not -1",
        f"{path}: 'render.typography' must be true or false, not str 'yes'",
    ]
    path = tmp_path / "daemon.toml"
    path.write_text('[daemon]\nworkers = 0\nlisten = "nowhere"\n[queue]\nlease_ttl = 0.5\n')
    with pytest.raises(ConfigError) as info:
        daemon_from_dict(read_toml(path), path)
    errors = str(info.value).split("\n")
    assert [line.split("'")[1] for line in errors] == [
        "daemon.workers", "daemon.listen", "queue.lease_ttl"]  # fmt: skip
    assert errors[2] == f"{path}: 'queue.lease_ttl' must be 1 second or more"


def test_the_cli_prints_each_error_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "deploybot.toml"
    path.write_text('[source]\nurl = "s"\nbogus = 1\n[render]\njobs = -1\n')
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "run-once", "--config", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == EX_CONFIG
    assert done.stderr.splitlines() == [
        f"deploybot: error: {path}: unknown key 'source.bogus'; known keys: branch, "
        "max_fetch_bytes, timeout, token_env, url",
        f"deploybot: error: {path}: 'render.jobs' must be 0 or more and at most 256, not -1",
    ]


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    """Nothing can be read past it, so it is the one error; tomllib gives its line."""
    path = tmp_path / "deploybot.toml"
    path.write_text('[source]\nurl = "s"\nbranch = main\n[render]\njobs = -1\n')
    assert _errors(path) == [
        f"{path}: not valid TOML: Invalid value (at line 3, column 10)",
    ]
