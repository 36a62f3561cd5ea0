"""SMTP against hostile or old servers: a reply that never ends, a server without 8BITMIME.

The hostile servers are raw sockets on 127.0.0.1; the client runs in a subprocess, which
reports how much its peak resident memory grew during the call (``ru_maxrss``), so the
bound on memory is the outcome asserted, not the speed.
"""

from __future__ import annotations

import email
import email.policy
import json
import quopri
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploybot.config.schema import NotifyConfig, SmtpConfig
from deploybot.notify.deliver.seven_bit import for_smtp, quoted_printable
from deploybot.notify.deliver.smtp import MAX_REPLY_BYTES, MAX_REPLY_LINES
from deploybot.notify.deliver.transport import make_transport
from tests.servers import LocalController
from tests.test_notify_transport import LIST, LOG, sample_message, unfold

FLOOD_BYTES = 256 << 20
"""What a flooding server sends at most: enough to show unbounded growth, small enough
for the old code to survive it on a shared test machine."""


@contextmanager
def smtp_flood(*, greeting: bytes | None, line: bytes) -> Iterator[tuple[int, list[int]]]:
    """A raw SMTP server on 127.0.0.1 that never ends a reply.

    ``greeting`` None: the greeting itself is ``line`` sent again and again (``220-...``);
    else ``greeting`` is sent, and after the client's first command (EHLO) ``line`` again
    and again (``250-...``). Stops after :data:`FLOOD_BYTES` or when the client hangs up,
    then holds the connection until the test ends. Yields the port and a one-item list: the
    bytes flooded so far.
    """
    sent = [0]
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    chunk = line * max(1, 65536 // len(line))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            try:
                if greeting is not None:
                    conn.sendall(greeting)
                    conn.recv(65536)
                while sent[0] < FLOOD_BYTES and not stop.is_set():
                    conn.sendall(chunk)
                    sent[0] += len(chunk)
                stop.wait(30)
            except OSError:
                pass  # the client gave up and hung up: that is the point

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], sent
    finally:
        stop.set()
        server.close()
        thread.join(timeout=10)


_CLIENT = r"""
import json, resource, sys
from deploybot.config.schema import NotifyConfig, SmtpConfig
from deploybot.support.errors import NotifyError
from deploybot.notify.deliver.transport import make_transport
import deploybot.notify.deliver.smtp  # imported before the baseline: it is not what is measured

port, timeout = int(sys.argv[1]), float(sys.argv[2])
notify = NotifyConfig(transport="smtp", to=("commits@example.org",), sender="bot@example.org",
                      smtp=SmtpConfig(host="127.0.0.1", port=port, timeout=timeout))
send = make_transport(notify)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    send(b"Subject: x\n\nbody\n")
    error = None
except NotifyError as exc:
    error = str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"error": error, "grew_kib": after - before}))
"""


def send_in_subprocess(port: int, timeout: float = 20.0) -> dict[str, Any]:
    """Send one message to ``port`` from a fresh Python process; its report as a dict."""
    done = subprocess.run(
        [sys.executable, "-c", _CLIENT, str(port), str(timeout)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize(
    ("greeting", "line", "after"),
    [
        (None, b"220-hello, and hello again, and again and again\r\n", "the greeting"),
        (b"220 ready\r\n", b"250-PIPELINING and one more extension, forever\r\n", "EHLO"),
    ],
)
def test_an_endless_reply_is_cut_with_one_line_and_bounded_memory(
    greeting: bytes | None, line: bytes, after: str
) -> None:
    """Issue 17: a server streaming ``220-``/``250-`` continuation lines grew the run to 4 GB
    within the timeout. Now a reply of more than MAX_REPLY_LINES lines is a NotifyError
    (75: the message stays in the outbox) as soon as the limit is passed."""
    with smtp_flood(greeting=greeting, line=line) as (port, sent):
        report = send_in_subprocess(port)
        flooded = sent[0]
    assert report["error"] == (
        f"SMTP 127.0.0.1:{port}: the reply to {after} is longer than "
        f"{MAX_REPLY_LINES} lines: the server is not speaking SMTP"
    ), report
    assert report["grew_kib"] < 32 * 1024, report  # the old code grew by hundreds of MB
    assert flooded < FLOOD_BYTES, flooded  # it hung up long before the flood ran out


def test_one_endless_reply_line_is_cut_too() -> None:
    """No line ending at all: smtplib's own 8 KiB line limit holds (a 500 reply)."""
    with smtp_flood(greeting=None, line=b"2" * 4096) as (port, _):
        report = send_in_subprocess(port)
    assert report["error"] == f"SMTP 127.0.0.1:{port}: 500 Line too long.", report
    assert report["grew_kib"] < 32 * 1024, report


def test_a_reply_of_many_long_lines_is_cut_at_the_byte_limit() -> None:
    """Lines of 8 KiB each (smtplib's own limit per line): the byte cap comes first."""
    line = b"250-" + b"x" * 8000 + b"\r\n"
    assert MAX_REPLY_BYTES // len(line) < MAX_REPLY_LINES
    with smtp_flood(greeting=b"220 ready\r\n", line=line) as (port, _):
        report = send_in_subprocess(port)
    assert report["error"] == (
        f"SMTP 127.0.0.1:{port}: the reply to EHLO is longer than "
        f"{MAX_REPLY_BYTES} bytes: the server is not speaking SMTP"
    ), report


# --- a server without 8BITMIME ---------------------------------------------------------------


@dataclass
class SevenBitCollector:
    """aiosmtpd handler for a server started with ``decode_data=True``: it does not offer
    8BITMIME (and refuses 8-bit data with ``500 Error: strict ASCII mode``)."""

    messages: list[tuple[list[str], bytes]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((list(envelope.mail_options), envelope.original_content))
        return "250 OK"


@contextmanager
def seven_bit_server() -> Iterator[tuple[int, SevenBitCollector]]:
    handler = SevenBitCollector()
    controller = LocalController(handler, decode_data=True, enable_SMTPUTF8=False)  # type: ignore[arg-type]
    controller.start()
    try:
        yield controller.port, handler
    finally:
        controller.stop()


def smtp_to(port: int) -> NotifyConfig:
    return NotifyConfig(
        transport="smtp",
        to=(LIST,),
        sender="deploybot@example.org",
        smtp=SmtpConfig(host="127.0.0.1", port=port, timeout=10.0),
    )


def body_text(message: bytes) -> str:
    msg = email.message_from_bytes(message, policy=email.policy.default)
    assert isinstance(msg, email.message.EmailMessage)
    content = msg.get_content()
    assert isinstance(content, str)
    return content


def test_without_8bitmime_the_body_goes_quoted_printable_and_decodes_the_same() -> None:
    """RFC 6152: 8-bit data only to a server that offers 8BITMIME. The old code sent the
    UTF-8 body as it is (this server refused it: 500 strict ASCII mode)."""
    message = sample_message(log=LOG + "+" + "caf\u00e9 " * 200 + "\n")  # a long line too
    with seven_bit_server() as (port, handler):
        make_transport(smtp_to(port))(message)
    [(options, raw)] = handler.messages
    assert "BODY=8BITMIME" not in options
    assert all(byte < 0x80 for byte in raw)
    got = unfold(raw)
    assert max(len(line) for line in got.split(b"\n\n", 1)[1].split(b"\n")) <= 76  # RFC 2045
    assert b"\nContent-Transfer-Encoding: quoted-printable\n" in got.split(b"\n\n")[0] + b"\n"
    assert body_text(got) == body_text(message)
    assert "+<updated>2020-07-14 \u2013 na\u00efve \u2713</updated>\n" in body_text(got)
    # Every other header is sent as composed.
    head = [h for h in message.split(b"\n\n")[0].split(b"\n") if b"Transfer-Encoding" not in h]
    assert [h for h in got.split(b"\n\n")[0].split(b"\n") if b"Transfer-Encoding" not in h] == head


def test_an_ascii_body_is_sent_as_composed_to_a_seven_bit_server() -> None:
    message = sample_message(log=LOG.replace(" \u2013 na\u00efve \u2713", ""))
    assert message.isascii()
    with seven_bit_server() as (port, handler):
        make_transport(smtp_to(port))(message)
    [(options, raw)] = handler.messages
    assert unfold(raw) == message
    assert "BODY=8BITMIME" not in options


@given(st.binary(max_size=400) | st.text(max_size=200).map(lambda t: t.encode("utf-8")))
def test_quoted_printable_decodes_back_byte_for_byte(data: bytes) -> None:
    encoded = quoted_printable(data)
    assert encoded.isascii()
    lines = encoded.split(b"\n")
    assert max(len(line) for line in lines) <= 76
    assert b"\r" not in encoded and b"\0" not in encoded
    assert not any(line.endswith((b" ", b"\t")) for line in lines)
    assert quopri.decodestring(encoded) == data


def test_a_line_too_long_for_smtp_is_encoded_even_where_8bitmime_is_offered() -> None:
    short = b"Subject: x\nContent-Transfer-Encoding: 8bit\n\n" + "\u00e9".encode() * 400 + b"\n"
    assert for_smtp(short, eight_bit_ok=True) == (short, True)  # 800 octets: fits
    long = short.replace(b"\n\n", b"\n\n" + b"x" * 200, 1)  # 1,000 octets
    sent, eight_bit = for_smtp(long, eight_bit_ok=True)
    assert not eight_bit
    assert sent.startswith(b"Subject: x\nContent-Transfer-Encoding: quoted-printable\n\nxxx")
    assert quopri.decodestring(sent.split(b"\n\n", 1)[1]) == long.split(b"\n\n", 1)[1]
