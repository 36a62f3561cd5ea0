"""A command whose stdout lost its reader (``deploybot log | head -1``) ends quietly, as
git does there: no traceback, nothing on stderr, exit 141 (128 + SIGPIPE).

Each command is a real ``python -m deploybot`` whose stdout is a pipe with no reader left
(closed before the command writes, so its first write fails, as the write after ``head``'s
line does): deterministic, where a reader that takes one line and closes races the writer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.cli import stdio
from tests.fleetproc import fleet_config, make_sites
from tests.gitrepo import commit_files
from tests.redisproc import RedisServer, redis_binary
from tests.smallsite import SmallSite

TIMEOUT_S = 120.0


def into_closed_pipe(*args: str, stderr_too: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python -m deploybot ARGS`` with stdout (and, ``stderr_too``, stderr: ``2>&1``)
    a pipe whose reading end is closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "deploybot", *args],
            stdout=write,
            stderr=write if stderr_too else subprocess.PIPE,
            text=True,
            timeout=TIMEOUT_S,
        )
    finally:
        os.close(write)


@pytest.fixture
def two_builds(tmp_path: Path) -> SmallSite:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
    assert site.run()[0] == 0
    return site


def _quiet(result: subprocess.CompletedProcess[str]) -> None:
    assert (result.returncode, result.stderr) == (stdio.EX_PIPE, ""), result.stderr


@pytest.mark.parametrize("args", [(), ("--json",), ("-n", "1")])
def test_log_into_a_closed_pipe_is_quiet(two_builds: SmallSite, args: tuple[str, ...]) -> None:
    _quiet(into_closed_pipe("log", "--config", str(two_builds.config), *args))


def test_notify_to_stdout_into_a_closed_pipe_is_quiet(two_builds: SmallSite) -> None:
    args = ("--config", str(two_builds.config), "--commit", "asf-site", "--transport", "stdout")
    _quiet(into_closed_pipe("notify", *args))


def test_outbox_into_a_closed_pipe_is_quiet(two_builds: SmallSite) -> None:
    _quiet(into_closed_pipe("outbox", "--config", str(two_builds.config)))


def test_run_once_into_a_closed_pipe_is_quiet(two_builds: SmallSite) -> None:
    config = str(two_builds.config)
    commit_files(two_builds.source, {"_posts/2023-01-05-four.md": b"---\ntitle: 4\n---\nY\n"})
    _quiet(into_closed_pipe("run-once", "--config", config))  # publishes, then says so
    assert two_builds.emails()[-1] == two_builds.head()
    _quiet(into_closed_pipe("run-once", "--config", config))  # the no-op answer, before click


def test_stderr_into_the_same_closed_pipe_is_quiet_too(two_builds: SmallSite) -> None:
    """``deploybot log 2>&1 | head -1``: no error line can be written either."""
    result = into_closed_pipe("log", "--config", str(two_builds.config), stderr_too=True)
    assert result.returncode == stdio.EX_PIPE


def test_a_real_error_is_still_told_on_stderr(tmp_path: Path) -> None:
    """Only a write to the closed stream is quiet: a bad config is its line and exit 78."""
    config = tmp_path / "deploybot.toml"
    config.write_text("[source]\nurl = 5\n")
    result = into_closed_pipe("log", "--config", str(config))
    assert result.returncode == 78
    assert result.stderr.startswith("deploybot: error: ") and "Traceback" not in result.stderr


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    redis_binary()
    with RedisServer(tmp_path / "redis") as server:
        yield server


def test_fleet_status_into_a_closed_pipe_is_quiet(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    make_sites(tmp_path, ["one", "two"])
    config = fleet_config(tmp_path, redis_server.url)
    for args in ((), ("--json",)):
        _quiet(into_closed_pipe("fleet", "status", "--config", str(config), *args))


def into_pipe_closed_after(
    first: int, *args: str, full: int = 65536
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``python -m deploybot ARGS`` with stdout a pipe whose reader waits until the
    pipe holds ``full`` bytes (the writer is then blocked in its write), reads ``first``
    bytes and closes it, as ``| head -1`` does after its line. Returns the process and what
    was read."""
    read, write = os.pipe()
    got: list[bytes] = []

    def reader() -> None:
        import fcntl
        import termios

        size = bytearray(4)
        while True:
            fcntl.ioctl(read, termios.FIONREAD, size)
            if int.from_bytes(size, sys.byteorder) >= full:
                break
            time.sleep(0.01)
        got.append(os.read(read, first))
        os.close(read)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "deploybot", *args], stdout=write, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    _, err = proc.communicate(timeout=TIMEOUT_S)
    thread.join(timeout=TIMEOUT_S)
    return subprocess.CompletedProcess(proc.args, proc.returncode, b"", err), b"".join(got)


def test_a_large_email_to_stdout_into_head_ends_141(tmp_path: Path) -> None:
    """``deploybot notify --commit REV --transport stdout | head -1`` of an email larger
    than the pipe holds: the reader goes after its line, the rest of the email cannot be
    written, so the command ends as git does there (141), not 0 as if it all went out."""
    repo = tmp_path / "big.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    lines = "".join(f"line {n} abcdefghijklmnopqrstuvwxyz\n" for n in range(2500)).encode()
    commit_files(repo, {f"{name}.txt": lines for name in "abcd"}, "Big")
    args = ("notify", "--repo", str(repo), "--commit", "main", "--transport", "stdout")
    result, got = into_pipe_closed_after(4096, *args)
    assert got.startswith(b"Date: ")
    assert (result.returncode, result.stderr) == (stdio.EX_PIPE, b""), result.stderr
