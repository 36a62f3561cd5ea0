"""``deploybot serve``: webhooks from each forge, every refusal, replays, a burst of pushes.

A real daemon process on 127.0.0.1, real repositories, real build processes; requests
sends the deliveries. Each wait polls with a generous deadline.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

from deploybot.serve.signatures import sign
from tests.daemonproc import (
    SECRET,
    Daemon,
    GatedSite,
    bitbucket_server,
    daemon_table,
    gitea,
    github,
    gitlab,
    wait_until,
)
from tests.servers import serve_http

HOOK = "/webhook/deploybot"  # the site's name: its config file's stem


def _site(tmp_path: Path, **daemon: object) -> GatedSite:
    return GatedSite(tmp_path, gated=False, extra=daemon_table(**daemon))


def _nothing_queued(daemon: Daemon) -> bool:
    """Right after an answer: a delivery that queued a build shows it at once (a build
    process takes far longer to start and end than this look)."""
    return daemon.idle("deploybot")


def test_signed_pushes_from_each_forge_build_within_seconds(tmp_path: Path) -> None:
    site = _site(tmp_path)
    with Daemon(site.config) as daemon:
        for n, payload in enumerate((github, gitea, gitlab, bitbucket_server), start=1):
            commit = site.commit(n)
            answer = daemon.push(HOOK, payload(commit))
            assert answer.status_code == 202, (payload.__name__, answer.text)
            assert "build queued: deploybot" in answer.text
            wait_until(lambda c=commit: site.published_source() == c, message=payload.__name__)
        wait_until(lambda: daemon.idle("deploybot"))
        status, health = daemon.health()
        metrics = daemon.metrics()
    assert status == 200 and health["status"] == "ok"
    last = health["sites"]["deploybot"]["last_run"]
    assert last["result"] == "published" and last["source_commit"] == commit
    assert last["build_commit"] == site.head() and last["error"] is None
    assert last["time"].endswith("Z") and last["seconds"] > 0
    assert site.build_commits() == 4
    assert len(site.emails()) == 4  # each build's email, delivered to the mbox
    build_env = (tmp_path / "hook.env").read_text()  # a build process's environment
    assert "GIT_DIR=" in build_env and SECRET not in build_env
    published = ("deploybot_runs_total", (("result", "published"), ("site", "deploybot")))
    assert metrics[published] == 4
    assert metrics[("deploybot_run_duration_seconds_count", (("site", "deploybot"),))] == 4
    last_success = ("deploybot_last_success_timestamp_seconds", (("site", "deploybot"),))
    assert abs(metrics[last_success] - time.time()) < 120
    assert metrics[("deploybot_webhook_deliveries_total", (("result", "accepted"),))] == 4
    assert metrics[("deploybot_queue_depth", ())] == 0
    assert metrics[("deploybot_builds_running", ())] == 0
    waiting = ("deploybot_outbox_waiting", (("kind", "email"), ("site", "deploybot")))
    assert metrics[waiting] == 0


def test_github_form_encoded_payload_builds(tmp_path: Path) -> None:
    from urllib.parse import urlencode

    site = _site(tmp_path)
    with Daemon(site.config) as daemon:
        commit = site.commit(1)
        headers, body = github(commit)
        form = urlencode({"payload": body.decode()}).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["X-Hub-Signature-256"] = sign(form, SECRET)
        assert daemon.post(HOOK, form, headers).status_code == 202
        wait_until(lambda: site.published_source() == commit)


def test_a_push_in_another_content_type_is_refused_without_echoing_it(tmp_path: Path) -> None:
    """GitHub's form encoding is read (above); any other content type (a proxy's
    text/plain, none at all) is a 400 that says what to set, and quotes no byte of the body."""
    site = _site(tmp_path)
    with Daemon(site.config) as daemon:
        commit = site.commit(1)
        headers, body = github(commit)
        body = body.replace(b'"created"', b'"secret-ish": "hunter2", "created"')
        headers["X-Hub-Signature-256"] = sign(body, SECRET)
        refusal = "400 content type must be application/json (set it in the webhook's settings)\n"
        for content_type in ("text/plain", None):
            sent = {k: v for k, v in headers.items() if k != "Content-Type"}
            if content_type is not None:
                sent["Content-Type"] = content_type
            answer = daemon.post(HOOK, body, sent)
            assert f"{answer.status_code} {answer.text}" == refusal
        form = b"hunter2&payload_=" + body
        sent = {**headers, "Content-Type": "application/x-www-form-urlencoded",
                "X-Hub-Signature-256": sign(form, SECRET)}  # fmt: skip
        answer = daemon.post(HOOK, form, sent)
        assert f"{answer.status_code} {answer.text}" == (
            "400 the form-encoded body has no 'payload' field\n"
        )
        assert _nothing_queued(daemon) and daemon.deliveries("bad_request") == 3
    assert not any("hunter2" in line for line in daemon.log)


def test_refused_and_ignored_deliveries_build_nothing(tmp_path: Path) -> None:
    site = _site(tmp_path)
    commit = site.commit(1)  # a new source commit, which any build would publish
    with Daemon(site.config) as daemon:
        refusals = {
            "wrong signature": (github(commit, secret="not the secret"), 401),
            "wrong GitLab token": (gitlab(commit, token="not the secret"), 401),
            "another branch": (github(commit, ref="refs/heads/dev"), 200),
            "a tag": (github(commit, ref="refs/tags/v1.0"), 200),
            "a deletion": (github(commit, deleted=True), 200),
            "a Bitbucket deletion": (bitbucket_server(commit, kind="DELETE"), 200),
            "ping": (github(commit, event="ping"), 200),
            "an issue event": (github(commit, event="issues"), 200),
        }
        headers, body = github(commit)
        del headers["X-Hub-Signature-256"]
        answers = {"no signature": (daemon.post(HOOK, body, headers), 401)}
        for what, (payload, _status) in refusals.items():
            answers[what] = (daemon.push(HOOK, payload), _status)
            assert _nothing_queued(daemon), what
        answers["no such site"] = (daemon.push("/webhook/nope", github(commit)), 404)
        not_json = b"{not json"
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(not_json, SECRET),
                   "Content-Type": "application/json"}  # fmt: skip
        answers["signed, not JSON"] = (daemon.post(HOOK, not_json, headers), 400)
        for what, (answer, status) in answers.items():
            assert answer.status_code == status, (what, answer.text)
        assert _nothing_queued(daemon)
        assert "refs/heads/dev is not refs/heads/main" in answers["another branch"][0].text
        assert "a tag" in answers["a tag"][0].text
        assert "was deleted" in answers["a deletion"][0].text
        assert answers["ping"][0].text.strip() == "pong"
        assert daemon.runs("deploybot") == 0 and site.head() is None
        counts = {r: daemon.deliveries(r) for r in ("bad_signature", "ignored", "not_found")}
        assert counts == {"bad_signature": 3, "ignored": 6, "not_found": 1}
        assert daemon.deliveries("bad_request") == 1 and daemon.deliveries("accepted") == 0
    # The signature is checked before the body is parsed: a wrong one never reaches JSON.
    assert not any("not a JSON" in line for line in daemon.log if "401" in line)


def test_replayed_delivery_id_builds_once_also_after_a_restart(tmp_path: Path) -> None:
    site = _site(tmp_path)
    commit = site.commit(1)
    delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    with Daemon(site.config) as daemon:
        assert daemon.push(HOOK, github(commit, delivery=delivery)).status_code == 202
        wait_until(lambda: site.published_source() == commit)
        wait_until(lambda: daemon.idle("deploybot"))
        replay = daemon.push(HOOK, github(commit, delivery=delivery))
        assert replay.status_code == 200 and "seen before" in replay.text
        assert _nothing_queued(daemon)
        assert daemon.runs("deploybot") == 1
    assert daemon.proc is not None and daemon.proc.returncode == 0
    store = site.state / "daemon" / "deliveries.sqlite"
    assert store.stat().st_mode & 0o777 == 0o600
    newer = site.commit(2)
    with Daemon(site.config) as again:
        replay = again.push(HOOK, github(newer, delivery=delivery))  # the id, not the body
        assert replay.status_code == 200 and "seen before" in replay.text
        assert _nothing_queued(again)
        assert again.runs("deploybot") == 0 and again.deliveries("duplicate") == 1
    assert site.published_source() == commit


def _raw_request(url: str, head: str) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(head.encode())
    return sock


def _status_line(sock: socket.socket) -> str:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode()


def _head(length: str, signature: str) -> str:
    return (
        f"POST {HOOK} HTTP/1.1\r\nHost: test\r\nX-GitHub-Event: push\r\n"
        f"X-Hub-Signature-256: {signature}\r\nContent-Type: application/json\r\n{length}\r\n"
    )


def _send_until_cut(sock: socket.socket, limit: int) -> int:
    """Send chunks until the server cuts the connection (or ``limit`` bytes); return the
    bytes sent."""
    sent = 0
    chunk = b"x" * 16384
    try:
        while sent < limit:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    return sent


def test_body_over_the_cap_is_refused_413_without_reading_it_all(tmp_path: Path) -> None:
    site = _site(tmp_path, max_body_bytes=100_000)
    signature = sign(b"whatever", SECRET)
    with Daemon(site.config) as daemon:
        # Declared: refused on the headers; the 10 MB body is never read.
        sock = _raw_request(daemon.url, _head("Content-Length: 10000000\r\n", signature))
        assert _status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
        assert _send_until_cut(sock, 10_000_000) < 10_000_000
        sock.close()
        # Declared, with Expect: 100-continue: the final answer comes instead of 100.
        head = _head("Content-Length: 10000000\r\nExpect: 100-continue\r\n", signature)
        sock = _raw_request(daemon.url, head)
        assert _status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
        sock.close()
        # Streamed (chunked, no length): counted as it comes; the sender that keeps
        # streaming past the cap is answered 413 and cut off.
        sock = _raw_request(daemon.url, _head("Transfer-Encoding: chunked\r\n", signature))
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(_status_line(sock)))
        reader.start()
        sent = 0
        try:
            while sent < 50_000_000:
                sock.sendall(b"4000\r\n" + b"x" * 0x4000 + b"\r\n")
                sent += 0x4000
        except OSError:
            pass
        reader.join(timeout=30)
        sock.close()
        assert answer == ["HTTP/1.1 413 Request Entity Too Large"]
        assert sent < 50_000_000  # cut off, not read to the end
        assert daemon.deliveries("too_large") == 3
        assert _nothing_queued(daemon) and daemon.runs("deploybot") == 0


def test_burst_of_50_pushes_during_a_build_coalesces(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, extra=daemon_table())
    with Daemon(site.config) as daemon:
        first = site.commit(0)
        assert daemon.push(HOOK, github(first)).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)  # build 1 is in its push, held
        newest = first
        for n in range(1, 51):
            newest = site.commit(n)
            answer = daemon.push(HOOK, github(newest))
            assert answer.status_code == 202, answer.text
        last_push = time.monotonic()
        assert daemon.health()[1]["sites"]["deploybot"]["queued"] is True
        assert daemon.metrics()[("deploybot_queue_depth", ())] == 1
        site.open_gate()
        wait_until(lambda: site.published_source() == newest)
        live = time.monotonic() - last_push
        wait_until(lambda: daemon.idle("deploybot"))
        runs = daemon.runs("deploybot")
        assert daemon.last_run("deploybot")["source_commit"] == newest  # type: ignore[index]
        assert daemon.deliveries("accepted") == 51
    further = runs - 1
    print(f"\nburst: 50 pushes during a build -> {further} further build(s); "
          f"live {live:.2f} s after the last push (gate opened then)")  # fmt: skip
    assert 1 <= further <= 2
    assert site.build_commits() == runs


def _two_sites(tmp_path: Path) -> tuple[Path, GatedSite, GatedSite]:
    """A daemon config (its sites by glob) and sites ``a`` and ``b``; ``b`` names its own
    secret (``SITE_B_SECRET``)."""
    a = GatedSite(tmp_path / "sites" / "a", gated=False, extra='[daemon]\nname = "a"\n')
    b_table = '[daemon]\nname = "b"\nsecret_env = "SITE_B_SECRET"\n'
    b = GatedSite(tmp_path / "sites" / "b", gated=False, extra=b_table)
    daemon_config = tmp_path / "daemon.toml"
    table = daemon_table(sites="sites/*/deploybot.toml", workers=2)
    daemon_config.write_text(table + '[state]\ndir = "dstate"\n')
    return daemon_config, a, b


B_SECRET = "site-b-secret-4567"


def test_routing_by_repository_and_a_secret_per_site(tmp_path: Path) -> None:
    daemon_config, a, b = _two_sites(tmp_path)
    with Daemon(daemon_config, env={"SITE_B_SECRET": B_SECRET}) as daemon:
        commit = b.commit(1)
        by_repo = github(commit, repo_url=f"file://{b.source}", secret=B_SECRET)
        answer = daemon.push("/webhook", by_repo)
        assert answer.status_code == 202, answer.text
        assert answer.text.strip() == f"build queued: b ({commit[:12]})"
        wait_until(lambda: b.published_source() == commit)
        other = github(commit, repo_url="https://github.com/x/y", secret=B_SECRET)
        answer = daemon.push("/webhook", other)
        assert answer.status_code == 200 and "no site builds this repository" in answer.text
        # Each site takes its own secret only.
        assert daemon.push("/webhook/b", github(commit, secret=SECRET)).status_code == 401
        assert daemon.push("/webhook/a", github(commit, secret=B_SECRET)).status_code == 401
        # a's secret with b's repository: verified as a's, and a builds another repository.
        answer = daemon.push("/webhook", github(commit, repo_url=f"file://{b.source}"))
        assert answer.status_code == 200 and "no site builds this repository" in answer.text
        wait_until(lambda: daemon.idle("b"))
        assert daemon.runs("a") == 0 and a.head() is None
        first_a = a.commit(1)
        assert daemon.push("/webhook/a", github(first_a, secret=SECRET)).status_code == 202
        wait_until(lambda: a.published_source() == first_a)
    assert B_SECRET not in "\n".join(daemon.log) and SECRET not in "\n".join(daemon.log)


def test_two_repositories_at_one_path_on_two_ports_are_two_sites(tmp_path: Path) -> None:
    """Two git servers on one host, each serving ``/site.git``: a push to the repository on
    one port builds the site whose source is there, and only that one."""
    sites = {n: GatedSite(tmp_path / "sites" / n, gated=False) for n in ("a", "b")}
    daemon_config = tmp_path / "daemon.toml"
    daemon_config.write_text(
        daemon_table(sites="sites/*/deploybot.toml", workers=2) + '[state]\ndir = "dstate"\n'
    )
    with serve_http(sites["a"].source) as url_a, serve_http(sites["b"].source) as url_b:
        urls = {"a": url_a, "b": url_b}
        assert url_a.rsplit(":", 1)[1] != url_b.rsplit(":", 1)[1]  # the same path, two ports
        for name, site in sites.items():
            site.write_config(source_url=urls[name], extra=f'[daemon]\nname = "{name}"\n')
        with Daemon(daemon_config) as daemon:
            for name, other in (("b", "a"), ("a", "b")):
                commit = sites[name].commit(1)
                answer = daemon.push("/webhook", github(commit, repo_url=urls[name] + "/"))
                assert answer.text.strip() == f"build queued: {name} ({commit[:12]})"
                wait_until(lambda s=sites[name], c=commit: s.published_source() == c)
                wait_until(lambda n=name: daemon.idle(n))
                assert daemon.runs(other) == (1 if name == "a" else 0)


def test_github_sends_both_signatures_and_gitea_its_own(tmp_path: Path) -> None:
    """Gitea also sends X-Hub-Signature-256: the first header found decides, so a wrong
    X-Gitea-Signature next to a right X-Hub-Signature-256 still verifies, and a wrong
    X-Hub-Signature-256 is refused whatever else comes."""
    site = _site(tmp_path)
    commit = site.commit(1)
    headers, body = gitea(commit)
    wrong = dict(headers, **{"X-Hub-Signature-256": sign(body, "nope")})
    with Daemon(site.config) as daemon:
        assert daemon.post(HOOK, body, wrong).status_code == 401
        both = dict(headers, **{"X-Hub-Signature-256": sign(body, SECRET)})
        both["X-Gitea-Signature"] = "0" * 64
        assert daemon.post(HOOK, body, both).status_code == 202
        wait_until(lambda: site.published_source() == commit)


def test_one_delivery_id_builds_each_site_it_is_sent_to(tmp_path: Path) -> None:
    """GitLab sends one X-Gitlab-Event-UUID to every hook of one event (one project, two
    hooks: /webhook/a and /webhook/b): each site builds; a replay to either builds nothing."""
    daemon_config, a, b = _two_sites(tmp_path)
    with Daemon(daemon_config, env={"SITE_B_SECRET": B_SECRET}) as daemon:
        commits = {"a": a.commit(1), "b": b.commit(1)}
        event = "4e2b6f3c-1d2a-4f6b-9c8d-0a1b2c3d4e5f"
        pushes = {}
        for name, token in (("a", SECRET), ("b", B_SECRET)):
            headers, body = gitlab(commits[name], token=token)
            headers["X-Gitlab-Event-UUID"] = event
            pushes[name] = (headers, body)
            answer = daemon.push(f"/webhook/{name}", pushes[name])
            assert answer.status_code == 202, (name, answer.text)
        wait_until(lambda: a.published_source() == commits["a"])
        wait_until(lambda: b.published_source() == commits["b"])
        for name in ("a", "b"):
            answer = daemon.push(f"/webhook/{name}", pushes[name])
            assert answer.status_code == 200 and "seen before" in answer.text, answer.text
        assert daemon.deliveries("accepted") == 2 and daemon.deliveries("duplicate") == 2


def _documented_answers() -> list[re.Pattern[str]]:
    """The answers in docs/daemon.md's table of deliveries (the `NNN text` spans of its second
    column), as patterns: a ``<placeholder>`` stands for any text."""
    doc = (Path(__file__).parent.parent / "docs" / "daemon.md").read_text()
    table = doc.split("| delivery | answer |", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()[2:]
    spans = [span for row in rows for span in re.findall(r"`([^`]+)`", row.rsplit(" | ", 1)[1])]
    return [re.compile(re.sub(r"<[^>]+>", ".+", re.escape(span))) for span in spans]


def _declared_too_large(url: str) -> str:
    sock = _raw_request(url, _head("Content-Length: 999999999\r\n", sign(b"x", SECRET)) + "\r\n")
    answer = b""
    while chunk := sock.recv(4096):
        answer += chunk
    sock.close()
    head, _, body = answer.decode().partition("\r\n\r\n")
    return f"{head.split()[1]} {body}"


def test_the_docs_table_gives_each_answer_as_the_daemon_words_it(tmp_path: Path) -> None:
    site = _site(tmp_path)
    commit = site.commit(1)
    answers = {}
    with Daemon(site.config) as daemon:
        headers, body = github(commit)
        unsigned = {k: v for k, v in headers.items() if k != "X-Hub-Signature-256"}
        not_json = b"{not json"
        sends = {
            "push": (HOOK, github(commit, delivery="d-1")),
            "replay": (HOOK, github(commit, delivery="d-1")),
            "ping": (HOOK, github(commit, event="ping")),
            "another branch": (HOOK, github(commit, ref="refs/heads/dev")),
            "a tag": (HOOK, github(commit, ref="refs/tags/v1.0")),
            "a deletion": (HOOK, github(commit, deleted=True)),
            "another event": (HOOK, github(commit, event="issues")),
            "unknown repository": ("/webhook", github(commit)),
            "no signature": (HOOK, (unsigned, body)),
            "wrong signature": (HOOK, github(commit, secret="nope")),
            "no such site": ("/webhook/nope", github(commit)),
            "not JSON": (
                HOOK,
                ({**unsigned, "X-Hub-Signature-256": sign(not_json, SECRET)}, not_json),
            ),
            "not a commit id": (HOOK, github("--upload-pack=touch /tmp/x")),
        }
        for what, (path, payload) in sends.items():
            answer = daemon.push(path, payload)
            answers[what] = f"{answer.status_code} {answer.text}"
        answers["too large"] = _declared_too_large(daemon.url)
        wait_until(lambda: site.published_source() == commit)
    documented = _documented_answers()
    for what, answer in answers.items():
        text = answer.removesuffix("\n")
        assert "\n" not in text, (what, answer)
        assert any(p.fullmatch(text) for p in documented), (what, text, documented)
