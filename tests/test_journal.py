"""Under systemd, every line of every command starts with its syslog priority (``<N>``), as
journald reads it (deploybot.support.journal).

Each command runs as a process whose stdout and stderr are one Unix stream socket named by
``JOURNAL_STREAM`` (its device and inode), exactly as systemd connects a service to
journald; the test reads the socket's other end.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from deploybot.support.journal import JournalStream, is_journal
from tests.daemonproc import journal_socket
from tests.fleetproc import fleet_config, make_sites
from tests.redisproc import RedisServer
from tests.servers import free_port
from tests.smallsite import SmallSite

PRIORITY = re.compile(r"^<[0-7]>")


def journaled(*args: str, stop_when: Callable[[], bool] | None = None) -> tuple[int, list[str]]:
    """Run ``python -m deploybot ARGS`` with the journal as its stdout and stderr; return
    its exit code and its lines. ``stop_when``: SIGTERM it once that returns True."""
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    ours, theirs = journal_socket(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "deploybot", *args], stdin=subprocess.DEVNULL, stdout=theirs,
        stderr=theirs, env=env,
    )  # fmt: skip
    theirs.close()
    ours.settimeout(0.1)
    data = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            chunk = ours.recv(65536)
        except TimeoutError:
            chunk = None
        if chunk == b"":
            break
        data += chunk or b""
        if stop_when is not None and stop_when():
            proc.send_signal(signal.SIGTERM)
            stop_when = None
    ours.close()
    return proc.wait(timeout=60), data.decode("utf-8").splitlines()


def _assert_prefixed(lines: list[str]) -> None:
    assert lines, "no output"
    assert all(PRIORITY.match(line) for line in lines), lines


def test_run_once_its_shortcut_its_errors_and_a_usage_error(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    config = str(site.config)
    code, lines = journaled("run-once", "--config", config)
    assert code == 0
    _assert_prefixed(lines)
    assert lines[0].startswith("<6>published "), lines
    assert any(line.startswith("<6>email for ") for line in lines), lines
    code, lines = journaled("run-once", "--config", config)  # the no-op, answered at once
    assert code == 0 and len(lines) == 1 and lines[0].startswith("<6>up to date: "), lines
    missing = str(tmp_path / "missing.toml")
    code, lines = journaled("run-once", "--config", missing)
    assert code == 78 and lines == [f"<3>deploybot: error: {missing}: config file not found"]
    code, lines = journaled("run-once", "-v", "--config", missing)
    assert code == 78 and len(lines) > 3 and lines[0] == "<3>Traceback (most recent call last):"
    assert all(line.startswith("<3>") for line in lines), lines
    code, lines = journaled("run-once", "--no-such-option")
    assert code == 2
    assert all(line.startswith("<3>") for line in lines if line != "<3>"), lines
    assert "<3>Error: No such option '--no-such-option'." in lines
    code, lines = journaled("no-such-command")
    assert code == 2 and "<3>Error: No such command 'no-such-command'." in lines, lines
    assert all(line.startswith("<3>") for line in lines), lines


def test_build_outbox_and_notify(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "_config.yml").write_text("title: No url\n")
    (folder / "index.md").write_text("---\ntitle: Home\n---\nHi.\n")
    code, lines = journaled("build", str(folder), str(tmp_path / "out"))
    assert code == 0
    _assert_prefixed(lines)
    assert lines[-1].startswith("<6>built ") and all(
        line.startswith("<4>warning: ") for line in lines[:-1]
    ), lines
    code, lines = journaled("outbox", "--config", str(site.config))
    assert (code, lines) == (0, ["<6>outbox is empty"])
    build = site.head()
    assert build is not None
    code, lines = journaled(
        "notify", "--commit", build, "--config", str(site.config), "--transport", "stdout"
    )
    assert code == 0 and len(lines) > 10
    _assert_prefixed(lines)  # the whole email, each line at info
    assert all(line.startswith("<6>") for line in lines)
    assert any(line.startswith("<6>Subject: ") for line in lines)


def test_serve_worker_and_fleet_status(tmp_path: Path) -> None:
    make_sites(tmp_path, ["a"])
    unreachable = fleet_config(tmp_path, f"redis://127.0.0.1:{free_port()}/0")
    code, lines = journaled("fleet", "status", "--config", str(unreachable))
    assert code == 75 and len(lines) == 1 and lines[0].startswith("<3>deploybot: error: "), lines
    with RedisServer(tmp_path / "redis") as server:
        config = fleet_config(tmp_path, server.url)
        code, lines = journaled(
            "worker", "--config", str(config), "--name", "w1", "--state", str(tmp_path / "w1"),
            stop_when=lambda: _rq_idle(server),
        )  # fmt: skip
        assert code == 0
        _assert_prefixed(lines)
        assert any(line.startswith("<6>worker w1: taking jobs from ") for line in lines), lines
        code, lines = journaled("fleet", "status", "--config", str(config))
        assert code == 0
        _assert_prefixed(lines)
        assert any(line.startswith("<6>workers: w1 (down: last heartbeat ") for line in lines)


def _rq_idle(server: RedisServer) -> bool:
    """True once an RQ worker waits for jobs (its signal handlers are set by then)."""
    client = server.client()
    return any(client.hget(k, "state") == b"idle" for k in client.scan_iter("rq:worker:*"))


def test_a_journal_stream_that_is_not_this_output_changes_nothing(tmp_path: Path) -> None:
    """A service's own child with its output in a pipe inherits JOURNAL_STREAM: its stdout
    is not the journal, and stays as it is (JSON stays JSON)."""
    make_sites(tmp_path, ["a"])
    config = fleet_config(tmp_path, f"redis://127.0.0.1:{free_port()}/0")
    (tmp_path / "site").mkdir()
    site = SmallSite(tmp_path / "site")
    other = os.stat(site.config)
    env = {**os.environ, "JOURNAL_STREAM": f"{other.st_dev}:{other.st_ino}"}
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "run-once", "--config", str(site.config)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("published "), done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "fleet", "status", "--config", str(config)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 75 and done.stderr.startswith("deploybot: error: ")


def test_every_line_break_of_journald_starts_a_line_with_the_priority() -> None:
    raw = io.BytesIO()
    stream = JournalStream(raw, 6)
    stream.write(b"one\ntw")
    stream.write(b"o\x00<0>forged\n\n")
    stream.priority = 3
    stream.write(b"three")
    assert raw.getvalue() == b"<6>one\n<6>two\x00<6><0>forged\n<6>\n<3>three"


def test_which_stream_is_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("")
    with path.open("rb") as opened:
        stat = os.fstat(opened.fileno())
        assert is_journal(opened.fileno(), {"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"})
        for value in ("", "8:1234", f"{stat.st_dev}:{stat.st_ino}x", "x:y", ":"):
            assert not is_journal(opened.fileno(), {"JOURNAL_STREAM": value}), value
    assert not is_journal(1_000_000, {"JOURNAL_STREAM": "1:1"})  # no such descriptor
