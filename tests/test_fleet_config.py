"""``[queue]`` at load: its defaults, each refusal (naming the key and the file), what a
site's own config may set, and the ``worker`` and ``fleet status`` commands' own refusals.
None of these needs Redis."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from deploybot.config.load import load_config
from deploybot.config.schema import QueueConfig
from deploybot.serve.settings import load_settings
from deploybot.support.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "deploybot.example.toml"


def _config(tmp_path: Path, queue: str) -> Path:
    path = tmp_path / "deploybot.toml"
    path.write_text(f'[source]\nurl = "s"\n[queue]\n{queue}')
    return path


def test_defaults_and_the_example_list_every_key_with_its_default(tmp_path: Path) -> None:
    queue = load_config(_config(tmp_path, "")).queue
    assert queue == QueueConfig()
    assert (queue.backend, queue.name, queue.affinity_timeout, queue.lease_ttl) == (
        "local", "deploybot", 30.0, 60.0,
    )  # fmt: skip
    example = EXAMPLE.read_text()
    for field in dataclasses.fields(QueueConfig):
        assert f"{field.name} = " in example, field.name
    copy = tmp_path / "example.toml"
    copy.write_text(example)
    assert load_config(copy).queue == QueueConfig()


def test_a_redis_backend_reads_its_url(tmp_path: Path) -> None:
    text = 'backend = "redis"\nurl = "redis://redis.internal:6380/2"\nlease_ttl = 5\n'
    queue = load_config(_config(tmp_path, text)).queue
    assert (queue.backend, queue.url, queue.lease_ttl) == (
        "redis", "redis://redis.internal:6380/2", 5.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('backend = "redis"\n', "'queue.url' is required when queue.backend = \"redis\""),
        ('backend = "rabbit"\n', "'queue.backend' must be one of local, redis"),
        ('url = "http://h:6379/0"\n', "'queue.url' must start with redis://, rediss://"),
        ('url = "redis://:hunter2@h:6379/0"\n', "'queue.url' holds a password"),
        ('url = "redis://h:6379/zero"\n', "the database must be a number"),
        ('url = "redis:///0"\n', "'queue.url' names no host"),
        ('url = "unix://"\n', "names no socket path"),
        ('url = "redis://h:99999/0"\n', "cannot be read as a Redis URL"),
        ('url = "redis://h/0?socket_timeout=abc"\n', "may set only db, not 'socket_timeout'"),
        ('url = "redis://h/0?db=zz"\n', "'queue.url': the database must be a number, not 'zz'"),
        ('url = "redis://h/0?nosuch=1"\n', "'queue.url': its query may set only db"),
        ('url = "unix:///run/redis.sock?db=1&nosuch"\n', "may set only db, not 'nosuch'"),
        ('url = "redis://h/0?password=hunter2"\n', "may set only db, not 'password'"),
        ('url = "redis://h/0?db=1&db=2"\n', "'queue.url': db is given twice"),
        ('url = "redis://h/\u00b2"\n', "'queue.url': the database must be a number"),
        ('name = "a b"\n', "'queue.name' must be 1 to 64 letters"),
        ("lease_ttl = 0.5\n", "'queue.lease_ttl' must be 1 second or more"),
        ("heartbeat_timeout = 0.5\n", "'queue.heartbeat_timeout' must be 1 second or more"),
        ("heartbeat_timeout = -1\n", "'queue.heartbeat_timeout' must be more than 0"),
        ("affinity_timeout = 0\n", "'queue.affinity_timeout' must be more than 0"),
        ("job_timeout = 1e9\n", "'queue.job_timeout' must be more than 0 and at most"),
        ('password_env = "1X"\n', "'queue.password_env' must be an environment variable"),
        ("lease = 5\n", "unknown key 'queue.lease'; did you mean 'lease_ttl'?"),
    ],
)
def test_each_refusal_names_the_key_and_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)
    assert "hunter2" not in str(caught.value)


def _daemon(tmp_path: Path, queue: str = 'backend = "redis"\nurl = "redis://h/0"\n') -> Path:
    (tmp_path / "sites").mkdir()
    daemon = tmp_path / "daemon.toml"
    daemon.write_text(f'[daemon]\nsites = "sites/*.toml"\n[queue]\n{queue}[state]\ndir = "d"\n')
    return daemon


def test_a_site_may_name_its_queue_and_nothing_else(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    (tmp_path / "sites" / "big.toml").write_text('[source]\nurl = "s"\n[queue]\nname = "big"\n')
    (tmp_path / "sites" / "small.toml").write_text('[source]\nurl = "t"\n[state]\ndir = "x"\n')
    settings = load_settings([daemon])
    queues = {s.name: (s.config.queue.name, s.config.queue.url) for s in settings.sites}
    assert queues == {"big": ("big", "redis://h/0"), "small": ("deploybot", "redis://h/0")}
    (tmp_path / "sites" / "small.toml").write_text('[source]\nurl = "t"\n[queue]\nlease_ttl = 9\n')
    with pytest.raises(ConfigError) as caught:
        load_settings([daemon])
    assert "small.toml: 'queue.lease_ttl' is set in a site's config" in str(caught.value)


def test_a_worker_needs_the_redis_backend(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path, "")
    (tmp_path / "sites" / "a.toml").write_text('[source]\nurl = "s"\n')
    result = CliRunner().invoke(main, ["worker", "--config", str(daemon)])
    assert result.exit_code == 78
    assert result.output.strip().splitlines() == [
        f"deploybot: error: {daemon.resolve()}: 'queue.backend' must be \"redis\" for deploybot "
        'worker (it is "local": deploybot serve builds by itself)'
    ]


def test_worker_options_are_checked(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    result = CliRunner().invoke(main, ["worker", "--config", str(daemon), "--name", "a/b"])
    assert result.exit_code == 2
    assert "Invalid value for '--name': 'a/b'" in result.output


def test_fleet_status_says_when_redis_is_unreachable(tmp_path: Path) -> None:
    from tests.servers import free_port

    daemon = _daemon(tmp_path, f'backend = "redis"\nurl = "redis://127.0.0.1:{free_port()}/0"\n')
    (tmp_path / "sites" / "a.toml").write_text('[source]\nurl = "s"\n')
    result = CliRunner().invoke(main, ["fleet", "status", "--config", str(daemon)])
    assert result.exit_code == 75
    [line] = result.output.strip().splitlines()
    assert line.startswith("deploybot: error: cannot reach Redis at redis://127.0.0.1:")


def test_an_unset_redis_password_variable_names_the_key_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEPLOYBOT_TEST_UNSET_REDIS_PW", raising=False)
    queue = 'backend = "redis"\nurl = "redis://127.0.0.1:1/0"\n'
    daemon = _daemon(tmp_path, queue + 'password_env = "DEPLOYBOT_TEST_UNSET_REDIS_PW"\n')
    (tmp_path / "sites" / "a.toml").write_text('[source]\nurl = "s"\n')
    result = CliRunner().invoke(main, ["fleet", "status", "--config", str(daemon)])
    assert result.exit_code == 78
    assert result.output.strip().splitlines() == [
        f"deploybot: error: {daemon.resolve()}: 'queue.password_env': the environment "
        "variable DEPLOYBOT_TEST_UNSET_REDIS_PW is not set"
    ]


def test_serve_and_a_worker_name_the_unreachable_redis_and_its_config_file(
    tmp_path: Path,
) -> None:
    """They retry for ever (as designed); the first line they log of it says which Redis:
    the config's 'queue.url' (redacted) and the file."""
    from deploybot.support.redact import redact_url
    from tests.daemonproc import Daemon, daemon_table
    from tests.fleetproc import WorkerProc
    from tests.servers import free_port

    url = f"redis://deploy@127.0.0.1:{free_port()}/0"  # nobody listens; the user is not shown
    daemon = tmp_path / "daemon.toml"
    queue = f'[queue]\nbackend = "redis"\nurl = "{url}"\n'
    daemon.write_text(daemon_table(sites="sites/*.toml") + queue + '[state]\ndir = "d"\n')
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "a.toml").write_text('[source]\nurl = "s"\n[daemon]\nname = "a"\n')
    where = f"'queue.url' = {redact_url(url)} in {daemon.resolve()}"
    assert "deploy@" not in where
    bad = tmp_path / "sites" / "b.toml"
    bad.write_text("[source]\nurl = 5\n")  # one bad site file: the worker builds the others
    worker = WorkerProc(daemon, "w1", tmp_path / "w1")
    worker.spawn()
    try:
        line = worker.wait_log("not building a site: ", timeout=30)
        assert line.endswith(f"{bad}: 'source.url' must be a string, not int 5"), line
        line = worker.wait_log("Redis", timeout=30)
        assert where in line, worker.log
        # redis-py's reason ends with a period: not kept mid-line (it read "refused.: trying")
        port = url.rsplit(":", 1)[1].removesuffix("/0")
        assert line.endswith(
            f"Redis unreachable ({where}): Error 111 connecting to 127.0.0.1:{port}. "
            "Connection refused: trying again in 1 s"
        ), line
    finally:
        worker.kill9()
    with Daemon(daemon) as serve:
        line = serve.wait_log("Redis", timeout=30)
        assert where in line, serve.log
        assert line.endswith("Connection refused; 0 trigger(s) kept until it is back"), line
