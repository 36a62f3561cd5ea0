"""``deploybot serve`` against any string a signed payload (or its headers) can hold: lone
surrogates, control characters, NUL, very long strings. Every answer is one line of at most
a few KB, never a 500, and each delivery is one log line.

A real daemon process on 127.0.0.1; requests sends the deliveries (raw header bytes where a
header must hold what UTF-8 cannot: aiohttp reads them as surrogate escapes).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

from deploybot.serve.signatures import sign
from tests.daemonproc import SECRET, Daemon, GatedSite, daemon_table, github, wait_until

HOOK = "/webhook/deploybot"
LONG = 1_000_000
ANSWER_CAP = 4096
"""Bytes an answer may take (its text is clipped well below this)."""


def _signed(data: dict[str, object], **headers: str) -> tuple[dict[str, str], bytes]:
    """``data`` as a GitHub push body (json.dumps writes lone surrogates as \\ud800 escapes:
    valid JSON, valid UTF-8) with its signature."""
    body = json.dumps(data).encode()
    base = {
        "Content-Type": "application/json", "X-GitHub-Event": "push",
        "X-Hub-Signature-256": sign(body, SECRET),
    }  # fmt: skip
    return {**base, **headers}, body


def _push(commit: str, **fields: object) -> dict[str, object]:
    data = json.loads(github(commit)[1])
    data.update(fields)
    return data


def _raw_post(url: str, path: str, headers: list[bytes], body: bytes) -> bytes:
    """POST with header lines sent as the bytes given; the whole answer."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    head = [f"POST {path} HTTP/1.1".encode(), b"Host: test", b"Connection: close",
            f"Content-Length: {len(body)}".encode(), *headers]  # fmt: skip
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_any_string_in_a_signed_payload_gets_a_one_line_answer(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    commit = site.commit(1)
    surrogate = "\ud800"
    hostile = "\x00\x1b[31m\r\n<0>forged line\u2028\udfff"
    bodies = {
        "ref with a lone surrogate": (HOOK, _signed(_push(commit, ref=f"refs/heads/{surrogate}"))),
        "ref with NUL and line breaks": (HOOK, _signed(_push(commit, ref=f"refs/heads/{hostile}"))),
        "a ref of a million characters": (
            HOOK,
            _signed(_push(commit, ref="refs/heads/" + "x" * LONG)),
        ),
        "a repository URL with a lone surrogate": (
            "/webhook",
            _signed(_push(commit, repository={"clone_url": f"https://h/o/{surrogate}"})),
        ),
        "a repository URL with a bad port and an unclosed [": (
            "/webhook",
            _signed(
                _push(
                    commit,
                    repository={
                        "clone_url": "https://[::1/x",
                        "html_url": "https://h:99999/o/site",
                    },
                )
            ),
        ),
        "another event": (HOOK, _signed(_push(commit), **{"X-GitHub-Event": "issues"})),
        "a pusher and a head commit message with lone surrogates, another branch": (
            HOOK,
            _signed(
                _push(
                    commit,
                    ref="refs/heads/dev",
                    pusher={"name": surrogate * 3},
                    head_commit={"message": hostile * 1000},
                )
            ),
        ),
        "a commit id with a lone surrogate": (HOOK, _signed(_push(surrogate * 40))),
        "a Bitbucket push of ten thousand refs": (
            HOOK,
            _bitbucket([f"refs/heads/b{n}-{surrogate}" for n in range(10_000)]),
        ),
    }
    answers = {}
    with Daemon(site.config) as daemon:
        for what, (path, (headers, body)) in bodies.items():
            answer = daemon.post(path, body, headers)
            answers[what] = (answer.status_code, answer.content)
        # Headers are bytes on the wire: a delivery id and an event name that are no UTF-8
        # (a lone surrogate's CESU-8 bytes, 0xff), also a push that builds (the id is stored).
        headers, body = _signed(_push(commit))
        weird = [b"Content-Type: application/json", b"X-GitHub-Event: push",
                 f"X-Hub-Signature-256: {headers['X-Hub-Signature-256']}".encode(),
                 b"X-GitHub-Delivery: \xed\xa0\x80-\xff-" + b"d" * 5000]  # fmt: skip
        raw = _raw_post(daemon.url, HOOK, weird, body)
        other_event = [*weird[:1], b"X-GitHub-Event: \xed\xa0\x80\xff", *weird[2:]]
        raw_event = _raw_post(daemon.url, HOOK, other_event, body)
        wait_until(lambda: site.published_source() == commit)
        wait_until(lambda: daemon.idle("deploybot"))
        replay = _raw_post(daemon.url, HOOK, weird, body)  # the same odd id: seen before
    for what, raw_answer in (("odd delivery id", raw), ("odd event name", raw_event),
                             ("odd delivery id again", replay)):  # fmt: skip
        head, _, text = raw_answer.partition(b"\r\n\r\n")
        answers[what] = (int(head.split()[1]), text)
    for what, (status, content) in answers.items():
        assert status in (200, 202, 400), (what, status, content[:300])
        assert len(content) < ANSWER_CAP, (what, len(content))
        text = content.decode("utf-8")  # also: valid UTF-8
        assert text.endswith("\n") and "\n" not in text[:-1] and "\r" not in text, (what, text)
        assert "\x00" not in text and "\x1b" not in text, (what, text)
    assert answers["ref with a lone surrogate"] == (
        200,
        b"ignored: deploybot: refs/heads/\\ud800 is not refs/heads/main\n",
    )
    assert answers["a commit id with a lone surrogate"][0] == 400
    assert answers["odd delivery id"][0] == 202
    assert answers["odd event name"][1].startswith(b"event '\\udced\\udca0\\udc80\\udcff'")
    assert answers["odd delivery id again"] == (200, b"delivery seen before: ignored\n")
    webhook_lines = [line for line in daemon.log if re.search(r" webhook .*: \d{3} ", line)]
    assert len(webhook_lines) == len(bodies) + 3, daemon.log
    assert not any("Traceback" in line or "Error handling request" in line for line in daemon.log)
    assert all(len(line) < 2 * ANSWER_CAP for line in daemon.log), max(map(len, daemon.log))


def _bitbucket(refs: list[str]) -> tuple[dict[str, str], bytes]:
    changes = [{"refId": r, "toHash": "a" * 40, "fromHash": "b" * 40, "type": "UPDATE"}
               for r in refs]  # fmt: skip
    body = json.dumps({"changes": changes, "repository": {}}).encode()
    headers = {
        "Content-Type": "application/json", "X-Event-Key": "repo:refs_changed",
        "X-Hub-Signature": sign(body, SECRET),
    }  # fmt: skip
    return headers, body


def test_a_payload_that_python_cannot_read_is_a_400_in_plain_words(tmp_path: Path) -> None:
    """A 5,000-digit number (Python's int() refuses over 4,300 digits, its message naming
    sys.set_int_max_str_digits()) and arrays nested past the recursion limit: a 400 that
    says what is wrong with the payload, and one log line each."""
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    number = b'{"ref": "refs/heads/main", "after": ' + b"1" * 5000 + b"}"
    nested = b'{"ref": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with Daemon(site.config) as daemon:
        answers = []
        for body in (number, nested):
            headers = {"Content-Type": "application/json", "X-GitHub-Event": "push",
                       "X-Hub-Signature-256": sign(body, SECRET)}  # fmt: skip
            answer = daemon.post(HOOK, body, headers)
            answers.append((answer.status_code, answer.text))
    assert answers == [
        (400, "a number in the payload is too long (over 4300 digits)\n"),
        (400, "the payload nests arrays or objects too deeply\n"),
    ]
    assert not any("sys." in line or "recursion" in line for line in daemon.log), daemon.log
