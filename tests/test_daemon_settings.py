"""``deploybot serve``'s configuration: the [daemon] keys, site lists, secrets (exit 78)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from deploybot.config.load import load_config
from deploybot.serve.settings import load_settings
from deploybot.support.errors import ConfigError
from tests.smallsite import SmallSite

ENV = {"HOOK_SECRET": "a-long-webhook-secret"}


def _site(root: Path, daemon: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    site = SmallSite(root, extra=daemon)
    return site.config


def test_defaults_and_one_site(tmp_path: Path) -> None:
    config = load_config(_site(tmp_path))
    daemon = config.daemon
    assert (daemon.listen, daemon.secret_env, daemon.poll_interval) == ("127.0.0.1:8787", None, 300)
    assert (daemon.max_body_bytes, daemon.workers, daemon.stop_timeout) == (25_000_000, 1, 300.0)
    assert (daemon.read_timeout, daemon.sites, daemon.name) == (10.0, "", "")
    settings = load_settings([tmp_path / "deploybot.toml"], ENV)
    assert [s.name for s in settings.sites] == ["deploybot"]
    assert settings.sites[0].secret is None
    assert settings.state_dir == tmp_path / "state" / "daemon"


def test_sites_by_glob_names_and_secrets(tmp_path: Path) -> None:
    _site(tmp_path / "sites" / "a", '[daemon]\nname = "a"\n')
    _site(tmp_path / "sites" / "b", '[daemon]\nname = "b"\nsecret_env = "B_SECRET"\n')
    daemon = tmp_path / "daemon.toml"
    daemon.write_text(
        '[daemon]\nsites = "sites/*/deploybot.toml"\nsecret_env = "HOOK_SECRET"\n'
        'listen = "unix:run/serve.sock"\n'
    )
    settings = load_settings([daemon], {**ENV, "B_SECRET": "bbbbbbbbbb"})
    assert {s.name: s.secret for s in settings.sites} == {
        "a": "a-long-webhook-secret", "b": "bbbbbbbbbb"
    }  # fmt: skip
    assert settings.daemon.listen == f"unix:{tmp_path}/run/serve.sock"
    assert settings.state_dir == tmp_path / ".deploybot" / "daemon"
    assert "bbbbbbbbbb" not in repr(settings)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('listen = "localhost"', "'daemon.listen' must be HOST:PORT"),
        ('listen = "127.0.0.1:99999"', "'daemon.listen' must be HOST:PORT"),
        ('listen = "::1:80"', "an IPv6 address goes in brackets"),
        ('listen = "unix:"', "unix: needs a path"),
        ("workers = 0", "'daemon.workers' must be 1 or more"),
        ("poll_interval = -1", "'daemon.poll_interval' must be 0 or more"),
        ("max_body_bytes = 0", "'daemon.max_body_bytes' must be 1 or more"),
        ("stop_timeout = 0", "'daemon.stop_timeout' must be more than 0"),
        ("read_timeout = -2.5", "'daemon.read_timeout' must be more than 0"),
        ('secret_env = "NOT A NAME"', "'daemon.secret_env' must be an environment variable name"),
        ('secret_env = "UNSET_SECRET_VAR"', "the environment variable UNSET_SECRET_VAR is not set"),
        ('name = "a/b"', "'daemon.name' must be 1 to 64 letters"),
        ('sites = "nothing/*.toml"', "'daemon.sites' matches no file"),
        ("listn = 1", "unknown key 'daemon.listn'; did you mean 'listen'?"),
    ],
)
def test_a_wrong_daemon_key_is_exit_78_naming_key_and_file(
    tmp_path: Path, table: str, message: str
) -> None:
    config = _site(tmp_path, f"[daemon]\n{table}\n")
    result = CliRunner().invoke(main, ["serve", "--config", str(config)])
    assert result.exit_code == 78, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"deploybot: error: {config}: ")
    assert message in lines[0]


def test_a_daemon_only_key_in_a_site_config_is_refused(tmp_path: Path) -> None:
    site = _site(tmp_path / "s", "[daemon]\nworkers = 4\n")
    first = _site(tmp_path / "first")
    with pytest.raises(ConfigError, match=r"'daemon.workers' is set in a site's config"):
        load_settings([first, site], ENV)


def test_no_polling_needs_a_secret_for_every_site(tmp_path: Path) -> None:
    _site(tmp_path / "sites" / "a", '[daemon]\nname = "a"\nsecret_env = "HOOK_SECRET"\n')
    b = _site(tmp_path / "sites" / "b", '[daemon]\nname = "b"\n')
    daemon = tmp_path / "daemon.toml"
    daemon.write_text('[daemon]\nsites = "sites/*/deploybot.toml"\npoll_interval = 0\n')
    with pytest.raises(ConfigError) as caught:
        load_settings([daemon], ENV)
    assert str(caught.value) == (
        f"{daemon}: 'daemon.poll_interval' is 0 and 'daemon.secret_env' is unset (for the "
        f"site {b}): no webhook is accepted and nothing polls, so site 'b' would never be "
        "built; set either"
    )
    assert [s.name for s in load_settings([daemon], ENV, secrets=False).sites] == ["a", "b"]
    # the only site: serve does not start (a subprocess: a regression must not hang here)
    config = _site(tmp_path / "one", "[daemon]\npoll_interval = 0\n")
    argv = [sys.executable, "-m", "deploybot", "serve", "--config", str(config)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 78
    assert result.stderr.splitlines() == [
        f"deploybot: error: {config}: 'daemon.poll_interval' is 0 and 'daemon.secret_env' is "
        "unset: no webhook is accepted and nothing polls, so site 'deploybot' would never be "
        "built; set either"
    ]


def test_a_site_file_that_does_not_load_leaves_the_others_served(tmp_path: Path) -> None:
    _site(tmp_path / "sites" / "a", '[daemon]\nname = "a"\n')
    bad = _site(tmp_path / "sites" / "b", '[daemon]\nname = "b"\n')
    bad.write_text(bad.read_text() + "[render]\nfeed_limt = 3\n")
    daemon = tmp_path / "daemon.toml"
    daemon.write_text('[daemon]\nsites = "sites/*/deploybot.toml"\nsecret_env = "HOOK_SECRET"\n')
    with pytest.raises(ConfigError, match=r"unknown key 'render\.feed_limt'"):
        load_settings([daemon], ENV)
    settings = load_settings([daemon], ENV, partial=True)
    assert [s.name for s in settings.sites] == ["a"]
    [broken] = settings.broken
    assert broken.path == bad
    assert broken.error.startswith(f"{bad}: unknown key 'render.feed_limt'")
    a = tmp_path / "sites" / "a" / "deploybot.toml"
    a.write_text(a.read_text() + "[render]\nfeed_limt = 3\n")
    with pytest.raises(ConfigError) as caught:  # no site loads: the first one's error
        load_settings([daemon], ENV, partial=True)
    assert str(caught.value).startswith(f"{a}: unknown key 'render.feed_limt'")


def test_two_sites_with_one_name_or_state_are_refused(tmp_path: Path) -> None:
    a, b = _site(tmp_path / "a"), _site(tmp_path / "b")
    with pytest.raises(
        ConfigError, match=r"the site name 'deploybot' is also .*: set 'daemon.name'"
    ):
        load_settings([a, b], ENV)
    b.write_text(b.read_text().replace('dir = "state"', f'dir = "{tmp_path / "a" / "state"}"'))
    b.write_text(b.read_text() + '[daemon]\nname = "b"\n')
    with pytest.raises(ConfigError, match=r"'state.dir' .* is also .*: each site needs its own"):
        load_settings([a, b], ENV)


def test_a_daemon_config_without_sites_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "daemon.toml"
    config.write_text('[daemon]\nlisten = "127.0.0.1:0"\n')
    with pytest.raises(ConfigError, match=r"missing required key|no site"):
        load_settings([config], ENV)


def test_an_empty_secret_is_refused(tmp_path: Path) -> None:
    config = _site(tmp_path, '[daemon]\nsecret_env = "HOOK_SECRET"\n')
    with pytest.raises(ConfigError, match="the environment variable HOOK_SECRET is empty"):
        load_settings([config], {"HOOK_SECRET": ""})


def _doc_file(doc: str, path: str) -> str:
    """The ```toml block that follows the mention of ``path`` in ``doc`` (Markdown)."""
    after = doc.split(f"`{path}`", 1)[1]
    return after.split("```toml\n", 1)[1].split("```", 1)[0]


def test_the_docs_systemd_configs_load_and_match_the_units(tmp_path: Path) -> None:
    """The sample /etc/deploybot/ of docs/daemon.md (moved under tmp_path) loads as the units
    run it: the daemon's config and the site its glob finds, each state.dir under
    /var/lib/deploybot, the units' StateDirectory=."""
    root = Path(__file__).parent.parent
    doc = (root / "docs" / "daemon.md").read_text()
    units = {
        n: (root / "config" / n).read_text()
        for n in ("deploybot.service", "deploybot-run-once.service", "deploybot-worker.service")
    }
    etc = tmp_path / "etc" / "deploybot"
    (etc / "sites").mkdir(parents=True)
    moved = {"/var/lib/deploybot": str(tmp_path / "var"), "/srv/www": str(tmp_path / "srv")}
    for path in ("/etc/deploybot/daemon.toml", "/etc/deploybot/sites/www.toml"):
        text = _doc_file(doc, path)
        assert "/var/lib/deploybot/" in text  # state.dir under StateDirectory=
        for old, new in moved.items():
            text = text.replace(old, new)
        (etc / path.removeprefix("/etc/deploybot/")).write_text(text)
    assert "--config /etc/deploybot/daemon.toml" in units["deploybot.service"]
    assert "--config /etc/deploybot/sites/www.toml" in units["deploybot-run-once.service"]
    worker = units["deploybot-worker.service"]
    assert "--config /etc/deploybot/daemon.toml --state /var/lib/deploybot/sites" in worker
    for name, unit in units.items():
        assert "StateDirectory=deploybot\n" in unit and "StateDirectoryMode=0700\n" in unit, name
        assert "ReadWritePaths=-/srv/www\n" in unit and "ProtectHome=read-only\n" in unit, name
    settings = load_settings([etc / "daemon.toml"], {"DEPLOYBOT_WEBHOOK_SECRET": "s" * 40})
    assert settings.state_dir == tmp_path / "var" / "daemon" / "daemon"
    [site] = settings.sites
    assert site.name == "www" and site.config.state.dir == tmp_path / "var" / "www"
    assert site.config.notify.transport == "smtp" and site.secret == "s" * 40


def test_a_site_posting_commit_statuses_needs_its_token_at_start(tmp_path: Path) -> None:
    status = '[status]\napi = "github"\nrepository = "o/site"\ntoken_env = "STATUS_TOKEN"\n'
    config = _site(tmp_path, status)
    with pytest.raises(ConfigError) as caught:
        load_settings([config], ENV)
    assert str(caught.value) == (
        f"{config}: 'status.token_env': environment variable STATUS_TOKEN is not set"
    )
    settings = load_settings([config], {**ENV, "STATUS_TOKEN": "a-status-token-value"})
    assert [s.name for s in settings.sites] == ["deploybot"]
    assert load_settings([config], secrets=False).sites  # a worker reads it at each build
