"""``deploybot serve`` when things are wrong: a listen address it cannot take, malformed
HTTP requests, hostile payload values, config errors after SIGHUP.

Real daemon processes on 127.0.0.1; waits poll with a deadline.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until

HOOK = "/webhook/deploybot"


def _exit_and_log(config: Path, cwd: Path | None = None) -> tuple[int, list[str]]:
    """Run ``deploybot serve --config CONFIG`` to its end (60 s at most); its exit code and
    its output's lines."""
    env = Daemon(config).env
    argv = [sys.executable, "-m", "deploybot", "serve", "--config", str(config)]
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=60, check=False, cwd=cwd
    )
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
    head = f"deploybot: error: {site.config}: 'daemon.listen': "
    head += f"cannot listen on unix:{tmp_path / where}: "
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
    # listening; whether the status page is served; 4 requests; stopping, stopped; and,
    # whenever its zygote is ready (before the requests or after: a race under load), the
    # warm builder's line, which is none of this test's
    lines = [line for line in daemon.log if " warm builder ready " not in line]
    assert len(daemon.log) - len(lines) <= 1, daemon.log
    assert len(lines) == 1 + 1 + 4 + 2, daemon.log
    assert " INFO the status page is open: 127.0.0.1:" in lines[1], daemon.log


def test_a_hostile_after_is_400_and_control_characters_are_escaped_in_the_log(
    tmp_path: Path,
) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        answer = daemon.push(HOOK, github("--upload-pack=touch /tmp/pwned"))
        assert answer.status_code == 400
        assert answer.text == "'after' is not a commit id (40 or 64 hex digits)\n"
        forged = github("a" * 40, ref="refs/heads/x\n<3>forged line\r\x1b[2J")
        answer = daemon.push(HOOK, forged)
        assert answer.status_code == 200
        assert "refs/heads/x\\n<3>forged line\\r\\x1b[2J is not refs/heads/main" in answer.text
        wait_until(lambda: sum(" webhook " in line for line in daemon.log) == 2)
        assert daemon.idle("deploybot") and daemon.runs("deploybot") == 0
    assert not any("pwned" in line for line in daemon.log)
    [line] = [line for line in daemon.log if "forged" in line]
    assert line.endswith(
        "ignored: deploybot: refs/heads/x\\n<3>forged line\\r\\x1b[2J is not refs/heads/main"
    )


def test_config_errors_after_sighup_name_the_files_as_at_start(tmp_path: Path) -> None:
    """``--config daemon.toml`` (relative): a key wrong in it, or in a site config its glob
    finds, is named by the file's absolute path, at start and after SIGHUP alike."""
    site = GatedSite(tmp_path / "sites" / "a", gated=False, extra='[daemon]\nname = "a"\n')
    daemon_config = tmp_path / "daemon.toml"
    table = daemon_table(sites="sites/*/deploybot.toml") + '[state]\ndir = "dstate"\n'
    daemon_config.write_text(table)
    with Daemon(Path("daemon.toml"), cwd=tmp_path) as daemon:
        daemon_config.write_text(table.replace("[daemon]\n", "[daemon]\nworkers = 0\n"))
        daemon.signal(signal.SIGHUP)
        line = daemon.wait_log("the running configuration stays")
        assert f"SIGHUP: {daemon_config}: 'daemon.workers' must be" in line
        daemon_config.write_text(table)
        site.config.write_text("[source]\nbogus = 1\n")
        daemon.signal(signal.SIGHUP)
        wait_until(lambda: sum("configuration stays" in line for line in daemon.log) == 2)
        assert f"SIGHUP: {site.config}: unknown key 'source.bogus'" in daemon.log[-1]
    code, log = _exit_and_log(Path("daemon.toml"), cwd=tmp_path)
    assert code == 78 and log[0].startswith(f"deploybot: error: {site.config}: unknown key")
    daemon_config.write_text(table.replace("[daemon]\n", "[daemon]\nworkers = 0\n"))
    code, log = _exit_and_log(Path("daemon.toml"), cwd=tmp_path)
    assert code == 78 and log[0].startswith(f"deploybot: error: {daemon_config}: 'daemon.workers'")
