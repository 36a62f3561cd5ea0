"""``deploybot serve`` with several sites and over time: parallel builds, an unreachable
source, backoff and /healthz's 503, the poller, outbox retries, SIGHUP, SIGTERM during a
build, a slow client, a Unix socket, journald lines and systemd's READY=1.

Real daemon processes, repositories, SMTP and HTTP on 127.0.0.1; waits poll with a
deadline.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.daemonproc import Daemon, GatedSite, daemon_table, github, held_back_post, wait_until
from tests.gitrepo import read_branch
from tests.servers import free_port, silent_server, smtp_server

HOOK = "/webhook/deploybot"


def _daemon_over(tmp_path: Path, *sites: GatedSite, **daemon: object) -> Path:
    """A daemon config at ``tmp_path/daemon.toml`` listing ``sites`` by glob; each site
    must be ``tmp_path/sites/<name>`` (its ``[daemon] name``)."""
    config = tmp_path / "daemon.toml"
    table = daemon_table(sites="sites/*/deploybot.toml", **daemon)
    config.write_text(table + '[state]\ndir = "dstate"\n')
    return config


def _named(tmp_path: Path, name: str, *, gated: bool = True, source_url: str = "") -> GatedSite:
    site = GatedSite(tmp_path / "sites" / name, gated=gated, extra=f'[daemon]\nname = "{name}"\n')
    if source_url:
        site.write_config(source_url=source_url, extra=f'[daemon]\nname = "{name}"\n')
    return site


def test_two_sites_build_in_parallel(tmp_path: Path) -> None:
    a, b = _named(tmp_path, "a"), _named(tmp_path, "b")
    with Daemon(_daemon_over(tmp_path, a, b, workers=2)) as daemon:
        commits = {site: site.commit(1) for site in (a, b)}
        for site, commit in commits.items():
            assert daemon.push(f"/webhook/{site.root.name}", github(commit)).status_code == 202
        # Both builds are inside their pushes at once: they run in parallel.
        wait_until(lambda: a.pushes_reached() == 1 and b.pushes_reached() == 1)
        assert daemon.metrics()[("deploybot_builds_running", ())] == 2
        a.open_gate()
        b.open_gate()
        for site, commit in commits.items():
            wait_until(lambda s=site, c=commit: s.published_source() == c)


def test_a_hanging_source_does_not_delay_the_other_site_and_stop_ends_it(
    tmp_path: Path,
) -> None:
    with silent_server() as (port, _):
        stuck = _named(tmp_path, "stuck", gated=False, source_url=f"git://127.0.0.1:{port}/s.git")
        ok = _named(tmp_path, "ok", gated=False)
        config = _daemon_over(tmp_path, stuck, ok, workers=2, stop_timeout=1)
        with Daemon(config) as daemon:
            assert daemon.push("/webhook/stuck", github("1" * 40)).status_code == 202
            wait_until(lambda: daemon.health()[1]["sites"]["stuck"]["building"])
            commit = ok.commit(1)
            assert daemon.push("/webhook/ok", github(commit)).status_code == 202
            wait_until(lambda: ok.published_source() == commit, timeout=30)
            assert daemon.health()[1]["sites"]["stuck"]["building"] is True
            # The stuck fetch would wait out source.timeout (600 s): only ending the build
            # lets the daemon exit within stop()'s wait (60 s, a safety net).
            code = daemon.stop()
        assert code == 0
        assert any("still running after 1 s: ending them" in line for line in daemon.log)


def test_with_one_worker_a_hanging_http_source_does_not_hold_it(tmp_path: Path) -> None:
    """``workers = 1`` (the default): a site whose http source accepts and never answers
    used to hold the only worker for its fetch's idle timeouts (4 x 300 s); the fetch now
    runs outside the workers, and the other site is live within seconds."""
    with silent_server() as (port, accepted):
        url = f"http://127.0.0.1:{port}/s.git"
        stuck = _named(tmp_path, "stuck", gated=False, source_url=url)
        ok = _named(tmp_path, "ok", gated=False)
        config = _daemon_over(tmp_path, stuck, ok, workers=1, stop_timeout=1)
        with Daemon(config) as daemon:
            assert daemon.push("/webhook/stuck", github("1" * 40)).status_code == 202
            wait_until(lambda: len(accepted) == 1)  # stuck's fetch waits for an answer
            commit = ok.commit(1)
            assert daemon.push("/webhook/ok", github(commit)).status_code == 202
            wait_until(lambda: ok.published_source() == commit, timeout=30)
            stuck_state = daemon.health()[1]["sites"]["stuck"]
            assert stuck_state["building"] is True and stuck_state["fetching"] is True
            assert daemon.runs("stuck") == 0 and len(accepted) == 1
            assert daemon.stop() == 0


def test_a_fetched_build_waits_for_the_worker_and_a_stop_drops_it(tmp_path: Path) -> None:
    a, b = _named(tmp_path, "a"), _named(tmp_path, "b", gated=False)
    with Daemon(_daemon_over(tmp_path, a, b, workers=1)) as daemon:
        assert daemon.push("/webhook/a", github(a.commit(1))).status_code == 202
        wait_until(lambda: a.pushes_reached() == 1)  # a holds the only worker
        assert daemon.push("/webhook/b", github(b.commit(1))).status_code == 202
        wait_until(lambda: daemon.health()[1]["sites"]["b"]["building"])
        # b has fetched and waits for the worker: it still counts as fetching, not running.
        wait_until(lambda: (b.state / "source.git" / "refs" / "heads" / "main").exists())
        assert daemon.health()[1]["sites"]["b"]["fetching"] is True
        assert daemon.metrics()[("deploybot_builds_running", ())] == 1
        daemon.signal(signal.SIGTERM)
        daemon.wait_log("site b: build dropped at stop")
        a.open_gate()
        assert daemon.wait() == 0
    assert b.head() is None and a.head() is not None
    assert not any("site b: build failed" in line for line in daemon.log)


def test_an_unreachable_source_backs_off_without_blocking_the_other(tmp_path: Path) -> None:
    url = f"git://127.0.0.1:{free_port()}/x.git"
    down = _named(tmp_path, "down", gated=False, source_url=url)
    ok = _named(tmp_path, "ok", gated=False)
    with Daemon(_daemon_over(tmp_path, down, ok, workers=1)) as daemon:
        assert daemon.push("/webhook/down", github("1" * 40)).status_code == 202
        wait_until(lambda: daemon.runs("down") == 1)
        state = daemon.health()[1]["sites"]["down"]
        assert state["last_run"]["result"] == "failed"
        assert state["last_run"]["error"] == (
            f"cannot fetch from {url}: the connection was refused (is the server running?)"
        )
        assert state["retry_at"] is not None and state["queued"] is True  # retried later
        for n in (1, 2, 3):
            commit = ok.commit(n)
            assert daemon.push("/webhook/ok", github(commit)).status_code == 202
            assert daemon.push("/webhook/down", github("1" * 40)).status_code == 202
            wait_until(lambda c=commit: ok.published_source() == c, timeout=30)
        assert daemon.runs("down") == 1  # the same commit again: the backoff holds
        assert any("build failed (1 in a row; retried in 60 s)" in line for line in daemon.log)


def test_healthz_is_503_after_three_failed_runs_and_a_fix_clears_it(tmp_path: Path) -> None:
    from tests.gitrepo import commit_files

    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config) as daemon:
        for n in (1, 2, 3):  # each a new commit: the backoff after a failure is lifted
            bad = commit_files(
                site.source, {f"_posts/2023-05-0{n}-bad.md": b"---\ntitle: [x\n---\n"}
            )
            assert daemon.push(HOOK, github(bad)).status_code == 202
            wait_until(lambda n=n: daemon.runs("deploybot") == n)
        status, health = daemon.health()
        assert status == 503 and health["status"] == "failing"
        assert health["failing"] == ["deploybot"]
        run = health["sites"]["deploybot"]["last_run"]
        assert run["result"] == "failed" and "front matter" in run["error"]
        assert health["sites"]["deploybot"]["failures_in_a_row"] == 3
        failed = ("deploybot_runs_total", (("result", "failed"), ("site", "deploybot")))
        assert daemon.metrics()[failed] == 3
        fixed = commit_files(site.source, {f"_posts/2023-05-0{n}-bad.md": None for n in (1, 2, 3)})
        assert daemon.push(HOOK, github(fixed)).status_code == 202
        wait_until(lambda: site.published_source() == fixed)
        wait_until(lambda: daemon.health()[0] == 200)


def test_sigterm_during_a_build_lets_it_finish_and_exits_0(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, extra=daemon_table())
    daemon = Daemon(site.config).start()
    try:
        commit = site.commit(1)
        assert daemon.push(HOOK, github(commit)).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)
        daemon.signal(signal.SIGTERM)
        daemon.wait_log("stopping: waiting up to 300 s for deploybot")
        with pytest.raises(requests.ConnectionError):  # no new work is accepted
            daemon.push(HOOK, github(commit))
        assert daemon.proc is not None and daemon.proc.poll() is None
        site.open_gate()
        assert daemon.wait() == 0
    finally:
        site.open_gate()
        daemon.stop()
    assert site.published_source() == commit
    assert site.emails() == [site.head()]  # the build's email was queued and delivered
    assert any("published" in line and commit[:12] in line for line in daemon.log)


_TRICKLED_HEAD = f"POST {HOOK} HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n".encode()


def _trickle(url: str, sent_before_close: list[int]) -> None:
    """Send a request's headers one byte a second (never their end); note how many bytes
    went out before the server closed (all of them: it never did)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sent = 0
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        for byte in _TRICKLED_HEAD:
            try:
                sock.sendall(bytes([byte]))
                sent += 1
                readable = sock.recv(1, socket.MSG_DONTWAIT)
            except BlockingIOError:
                time.sleep(1)
                continue
            except OSError:
                break
            if readable == b"":
                break
            time.sleep(1)
    sent_before_close.append(sent)


_BODY_BYTES = 60


def _trickle_body(url: str, answers: list[tuple[str, int]]) -> None:
    """Send whole headers, then the body one byte a second; note the answer and how many
    bytes of the body went out before it."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    head = (
        f"POST {HOOK} HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
        f"X-Hub-Signature-256: sha256=00\r\nContent-Length: {_BODY_BYTES}\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(head.encode())
        for sent in range(_BODY_BYTES + 1):
            try:
                answer = sock.recv(4096, socket.MSG_DONTWAIT)
                answers.append((answer.split(b"\r\n")[0].decode(), sent))
                return
            except BlockingIOError:
                if sent < _BODY_BYTES:
                    sock.sendall(b"x")
                time.sleep(1)


def test_a_slow_client_does_not_stop_others_and_is_cut_off(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table(read_timeout=2))
    with Daemon(site.config) as daemon:
        closed_after: list[int] = []
        tricklers = [
            threading.Thread(target=_trickle, args=(daemon.url, closed_after)) for _ in range(3)
        ]
        body_answers: list[tuple[str, int]] = []
        tricklers.append(threading.Thread(target=_trickle_body, args=(daemon.url, body_answers)))
        for thread in tricklers:
            thread.start()
        for _ in range(5):
            assert requests.get(daemon.url + "/healthz", timeout=5).status_code == 200
        commit = site.commit(1)
        assert daemon.push(HOOK, github(commit)).status_code == 202
        wait_until(lambda: site.published_source() == commit)
        for thread in tricklers:
            thread.join(timeout=60)
        assert daemon.deliveries("timeout") == 1
    # read_timeout 2 s for the headers, and again for the body: each is cut off before its
    # end (a timeout per read would never end a byte a second; the bytes tell, not a clock)
    assert len(closed_after) == 3
    assert all(sent < len(_TRICKLED_HEAD) for sent in closed_after), closed_after
    [(status, sent)] = body_answers
    assert status == "HTTP/1.1 408 Request Timeout" and sent < _BODY_BYTES, body_answers


def test_the_poller_builds_a_push_no_webhook_announced(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table(poll_interval=1))
    with Daemon(site.config) as daemon:
        wait_until(lambda: site.published_source() == site.first)  # the start's catch-up
        commit = site.commit(1)
        wait_until(lambda: site.published_source() == commit)
        assert any("poll: source at " + commit[:12] in line for line in daemon.log)


def test_an_email_waiting_in_the_outbox_is_retried_with_no_push(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there yet: the first delivery fails
    smtp = f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 5.0\n'
    site = GatedSite(tmp_path, gated=False)
    site.write_config(extra=smtp + daemon_table())
    text = site.config.read_text().replace('transport = "mbox"', 'transport = "smtp"')
    site.config.write_text(text)
    assert site.run_process().returncode == 75  # published; the email waits in the outbox
    sidecar = next((site.state / "outbox").glob("*.json"))
    status = json.loads(sidecar.read_text())
    assert status["attempts"] == 1
    status["next_attempt"] = time.time() + 1  # its backoff (1 min) runs out now
    sidecar.write_text(json.dumps(status))
    with smtp_server(port) as (_controller, received), Daemon(site.config) as daemon:
        wait_until(lambda: len(received.messages) == 1)
        waiting = ("deploybot_outbox_waiting", (("kind", "email"), ("site", "deploybot")))
        wait_until(lambda: daemon.metrics().get(waiting) == 0)
        assert daemon.runs("deploybot") == 0  # no build: a deliver job only
    assert site.head() is not None
    assert received.messages[0].content.count(site.head().encode()) >= 1  # type: ignore[union-attr]


def test_sighup_reads_the_sites_again(tmp_path: Path) -> None:
    a = _named(tmp_path, "a", gated=False)
    config = _daemon_over(tmp_path, a)
    with Daemon(config) as daemon:
        assert daemon.push("/webhook/b", github("1" * 40)).status_code == 404
        b = _named(tmp_path, "b", gated=False)
        daemon.signal(signal.SIGHUP)
        daemon.wait_log(r"SIGHUP: configuration read again: 2 site\(s\)")
        commit = b.commit(1)
        assert daemon.push("/webhook/b", github(commit)).status_code == 202
        wait_until(lambda: b.published_source() == commit)
        (tmp_path / "sites" / "c").mkdir()
        (tmp_path / "sites" / "c" / "deploybot.toml").write_text("[source]\nbogus = 1\n")
        daemon.signal(signal.SIGHUP)
        line = daemon.wait_log("SIGHUP: not serving a site: ")
        assert "sites/c/deploybot.toml: unknown key 'source.bogus'" in line
        assert daemon.health()[1]["sites"].keys() == {"a", "b"}
        status, health = daemon.health()
        assert [entry["config"] for entry in health["broken"]] == [
            str(tmp_path / "sites" / "c" / "deploybot.toml")
        ]
        assert (status, health["status"]) == (503, "failing")
        (tmp_path / "daemon.toml").write_text("[daemon]\nlistn = 1\n")
        daemon.signal(signal.SIGHUP)
        line = daemon.wait_log("the running configuration stays")
        assert "unknown key 'daemon.listn'" in line


def test_a_site_file_that_does_not_load_does_not_stop_the_others(tmp_path: Path) -> None:
    a = _named(tmp_path, "a", gated=False)
    bad = tmp_path / "sites" / "b" / "deploybot.toml"
    bad.parent.mkdir(parents=True)
    bad.write_text("[source]\nurl = 5\n")
    with Daemon(_daemon_over(tmp_path, a)) as daemon:
        line = daemon.wait_log("not serving a site: ")
        assert line.endswith(
            f"ERROR not serving a site: {bad}: 'source.url' must be a string, not int 5"
        )
        status, health = daemon.health()
        assert (status, health["status"], health["sites"].keys()) == (503, "failing", {"a"})
        assert health["broken"] == [
            {"config": str(bad), "error": f"{bad}: 'source.url' must be a string, not int 5"}
        ]
        commit = a.commit(1)
        assert daemon.push("/webhook/a", github(commit)).status_code == 202
        wait_until(lambda: a.published_source() == commit)
    a.config.write_text("[source]\nurl = 5\n")
    result = subprocess.run(
        [sys.executable, "-m", "deploybot", "serve", "--config", str(tmp_path / "daemon.toml")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 78, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"deploybot: error: {a.config}: 'source.url' must be a string, not int 5"
    ]


def test_unix_socket_journald_lines_and_systemd_notify(tmp_path: Path) -> None:
    notify_path = tmp_path / "notify.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    notify.settimeout(60)
    site = GatedSite(tmp_path, gated=False, extra=daemon_table(listen="unix:serve.sock"))
    daemon = Daemon(site.config, env={"NOTIFY_SOCKET": str(notify_path)}, journal=True)
    with daemon.start(expect_listening=False):
        daemon.wait_log("listening on unix:")
        assert notify.recv(100) == b"READY=1"
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(30)
            client.connect(str(tmp_path / "serve.sock"))
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["status"] == "ok"
    assert notify.recv(100) == b"STOPPING=1"
    notify.close()
    assert daemon.log[0].startswith("<6>listening on unix:")
    assert all(line[:3] in ("<6>", "<4>", "<3>") for line in daemon.log), daemon.log
    assert not (tmp_path / "serve.sock").exists()


def test_a_second_daemon_on_the_same_state_exits_75(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    with Daemon(site.config):
        second = Daemon(site.config).start(expect_listening=False)
        assert second.wait() == 75
        assert any("another deploybot serve runs on" in line for line in second.log)


def test_a_held_back_post_is_published_when_its_date_passes_with_no_push(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())  # no polling

    with Daemon(site.config) as daemon:

        def push(commit: str) -> None:
            assert daemon.push(HOOK, github(commit)).status_code == 202

        soon = held_back_post(site, push, seconds=5)
        wait_until(lambda: soon in read_branch(site.publish, "asf-site"))
        daemon.wait_log("build started \\(a held-back post came due\\)")
