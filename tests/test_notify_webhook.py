"""The webhook channel against a real HTTP server on 127.0.0.1: payload, failures, recovery."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from deploybot.config.schema import NotifyConfig, WebhookConfig
from deploybot.notify.announce import RefUpdate
from deploybot.notify.deliver.webhook import make_webhook_sender
from deploybot.notify.stage import announce, deliver_all, list_outbox
from deploybot.support.errors import ConfigError, NotifyError
from tests.servers import Collector, LocalController
from tests.test_notify_series import REF, WHEN, build, git, history
from tests.test_notify_transport import smtp_notify


class Hook:
    """A webhook endpoint: answers each POST with the next status (then 200), keeps bodies."""

    def __init__(self, port: int = 0, statuses: tuple[int, ...] = ()) -> None:
        self.statuses = list(statuses)
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = hook.statuses.pop(0) if hook.statuses else 200
                if status == 200:
                    hook.received.append((self.path, dict(self.headers), body))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/s3cret-token"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    server = Hook()
    yield server
    server.stop()


def webhook_only(url: str) -> NotifyConfig:
    return NotifyConfig(
        transport="none",
        repository_url="https://git.example.org/repos/site.git",
        webhook=WebhookConfig(url=url, timeout=5.0),
    )


def test_payload_fields(tmp_path: Path, hook: Hook) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1 = history(repo, 1)
    report = announce(
        RefUpdate(repo, REF, c0, c1), webhook_only(hook.url()), state_dir=state, now=WHEN
    )
    assert report.sent == (f"webhook-{c1}",)
    [(path, headers, body)] = hook.received
    assert path == "/hooks/s3cret-token"
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    data = json.loads(body)
    stat = git(repo, "diff-tree", "--stat", "-C", f"{c0}..{c1}").splitlines()
    assert data == {
        "text": f"[site] branch asf-site updated: Build at 1\n{stat[-1].strip()}",
        "repository": "site",
        "repository_url": "https://git.example.org/repos/site.git",
        "branch": "asf-site",
        "ref": REF,
        "refname": REF,
        "commit": c1,
        "after": c1,
        "old": c0,
        "before": c0,
        "compare": f"{c0[:7]}..{c1[:7]}",
        "subject": "Build at 1",
        "author": "Build Bot <bot@example.org>",
        "diffstat": stat,
        "summary": [" create mode 100644 1/post.html"],
        "files_changed": 2,
        "insertions": 2,
        "deletions": 1,
    }


def test_500_then_refused_then_recovery_posts_exactly_once(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1 = history(repo, 1)
    hook = Hook(statuses=(500,))
    notify = webhook_only(hook.url())
    first = announce(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN)
    assert first.sent == ()
    assert first.failed == (
        (f"webhook-{c1}", f"webhook http://127.0.0.1:{hook.port}: HTTP 500 Internal Server Error"),
    )
    [waiting] = list_outbox(state / "outbox")
    assert (waiting.kind, waiting.state, waiting.attempts) == (".http", "failed", 1)
    assert waiting.subject == "[site] branch asf-site updated: Build at 1"
    assert deliver_all(notify, state / "outbox").deferred  # backing off
    port = hook.port
    hook.stop()

    refused = deliver_all(notify, state / "outbox", retry_now=True)
    [(key, reason)] = refused.failed
    assert key == f"webhook-{c1}" and "ConnectionError" in reason
    assert "s3cret" not in reason  # the URL's secret path never reaches a log
    assert list_outbox(state / "outbox")[0].attempts == 2

    hook = Hook(port=port)
    try:
        later = lambda: time.time() + 7200  # noqa: E731
        assert deliver_all(notify, state / "outbox", clock=later).sent == (f"webhook-{c1}",)
        assert deliver_all(notify, state / "outbox", clock=later).sent == ()
        assert announce(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN).sent == ()
    finally:
        hook.stop()
    assert len(hook.received) == 1
    assert list_outbox(state / "outbox") == []


def test_a_failing_webhook_does_not_hold_up_the_email(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0 = build(repo, {"a": "0\n"}, "Build 0")
    c1 = build(repo, {"a": "1\n"}, "Build 1")
    hook = Hook(statuses=(503,))
    handler = Collector()
    controller = LocalController(handler)
    controller.start()
    try:
        notify = replace(smtp_notify(controller.port), webhook=WebhookConfig(url=hook.url()))
        report = announce(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN)
    finally:
        controller.stop()
        hook.stop()
    assert report.sent == (c1,)
    assert [key for key, _ in report.failed] == [f"webhook-{c1}"]
    assert len(handler.messages) == 1


def test_url_from_the_environment() -> None:
    config = WebhookConfig(url_env="HOOK_URL")
    assert make_webhook_sender(config, {"HOOK_URL": "http://127.0.0.1:9/x"}) is not None
    assert make_webhook_sender(WebhookConfig()) is None
    with pytest.raises(ConfigError, match="HOOK_URL is not set"):
        make_webhook_sender(config, {})


def test_webhook_timeout_bounds_the_whole_post() -> None:
    """A server that sends its status line, then one header line every 0.3 s, forever: each
    read is quick, so requests' own timeout never fires; the whole post ends after 1 s."""
    from deploybot.notify.deliver.webhook import post_json
    from tests.servers import call_within, trickling_server

    answer, drip = b"HTTP/1.1 200 OK\r\n", b"X-Slow: 1\r\n"
    with trickling_server(answer=answer, drip=drip) as port:
        url = f"http://127.0.0.1:{port}/hooks/s3cret-token"
        error = call_within(10, lambda: post_json(url, b"{}", timeout=1.0))
    assert isinstance(error, NotifyError), error
    assert (
        str(error) == f"webhook http://127.0.0.1:{port}: no complete answer within the 1 s timeout"
    )


@pytest.mark.parametrize(
    ("head", "chunk"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n", b"x" * 65536),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"10000\r\n" + b"x" * 65536 + b"\r\n",
        ),
        (b"HTTP/1.1 500 Oops\r\nContent-Encoding: gzip\r\n\r\n", b"\x1f\x8b" + b"x" * 65534),
    ],
    ids=["content-length", "chunked", "error-gzip"],
)
def test_a_huge_answer_is_not_read(head: bytes, chunk: bytes) -> None:
    """A server answering with an endless body (here: up to 64 MB, as fast as it is taken):
    the post reads at most 64 KB of it and hangs up, so the server gets rid of little more
    than what the socket buffers hold; the status alone decides."""
    from deploybot.notify.deliver.webhook import post_json
    from tests.servers import call_within, flooding_server

    with flooding_server(head, chunk, 64 << 20) as (port, sent, stopped):
        error = call_within(30, lambda: post_json(f"http://127.0.0.1:{port}/h", b"{}", timeout=20))
        assert stopped.wait(60), "the server is still sending: the post never hung up"
    if b" 200 " in head:
        assert error is None
    else:
        assert str(error) == f"webhook http://127.0.0.1:{port}: HTTP 500 Oops"
    assert sent[0] < 16 << 20, sent
