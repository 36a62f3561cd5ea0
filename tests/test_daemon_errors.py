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
import requests

from tests.daemonproc import Daemon, GatedSite, daemon_table, wait_until

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


MALFORMED = {
    "a header over 8 KB": b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-Big: "
    + b"a" * 9000
    + b"\r\n\r\n",
    "a long URL": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "too many headers": b"GET / HTTP/1.1\r\n"
    + b"".join(b"X-%d: 1\r\n" % i for i in range(200))
    + b"\r\n",
    "a bare LF in a header": b"GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
}


def test_a_malformed_request_is_400_and_one_warning_line(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        host, port = daemon.url.removeprefix("http://").rsplit(":", 1)
        for what, request in MALFORMED.items():
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(request)
                assert sock.recv(100).split(b"\r\n")[0].endswith(b" 400 Bad Request"), what
        wait_until(lambda: sum("request from 127.0.0.1" in line for line in daemon.log) == 4)
        assert requests.get(daemon.url + "/healthz", timeout=30).status_code == 200
    logged = [line for line in daemon.log if "bad request" in line]
    assert all(" WARNING bad request from 127.0.0.1: 400 " in line for line in logged), logged
    assert "Too many headers received" in logged[2]
    assert not any("Traceback" in line or " ERROR " in line for line in daemon.log), daemon.log
    assert len(daemon.log) == 1 + 4 + 2, daemon.log  # listening; 4 requests; stopping, stopped
