"""``deploybot serve`` when things are wrong: a listen address it cannot take, malformed
HTTP requests, hostile payload values, config errors after SIGHUP.

Real daemon processes on 127.0.0.1; waits poll with a deadline.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemonproc import Daemon, GatedSite, daemon_table

HOOK = "/webhook/deploybot"


def _exit_and_log(config: Path) -> tuple[int, list[str]]:
    """Run ``deploybot serve --config CONFIG`` to its end (60 s at most); its exit code and
    its output's lines."""
    env = Daemon(config).env
    argv = [sys.executable, "-m", "deploybot", "serve", "--config", str(config)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    return done.returncode, (done.stdout + done.stderr).splitlines()


def test_a_port_already_taken_is_one_line_and_exit_75(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        site = GatedSite(tmp_path, gated=False, extra=daemon_table(listen=f"127.0.0.1:{port}"))
        code, log = _exit_and_log(site.config)
    assert code == 75, log
    assert log == [
        f"deploybot: error: {site.config}: 'daemon.listen': cannot listen on 127.0.0.1:{port}: "
        "the address is already in use (another server?)"
    ]


@pytest.mark.parametrize("where", ["missing/serve.sock", "a-file"])
def test_a_unix_socket_path_it_cannot_bind_is_exit_78(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("not a socket")
    site = GatedSite(tmp_path, gated=False, extra=daemon_table(listen=f"unix:{where}"))
    code, log = _exit_and_log(site.config)
    assert code == 78, log
    [line] = log
    head = f"deploybot: error: {site.config}: 'daemon.listen': cannot listen on unix:{tmp_path / where}: "
    why = {
        "a-file": f"{tmp_path / where} is a file, not a socket",
        "missing/serve.sock": f"no such folder {tmp_path / 'missing'}",
    }
    assert line == head + why[where]
    assert (tmp_path / "a-file").read_text() == "not a socket"
