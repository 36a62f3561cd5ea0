"""The outbox with a real SMTP server on 127.0.0.1: queue, fail, retry, crash, no duplicates."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from deploybot.notify.deliver.outbox import (
    DeliveryReport,
    deliver_pending,
    list_pending,
    queue_email,
)
from deploybot.notify.deliver.transport import make_transport
from deploybot.notify.deliver.transport import make_transport as make_sender
from deploybot.support.errors import NotifyError
from tests.servers import Collector, LocalController, smtp_server
from tests.test_notify_transport import sample_message, smtp_notify

SHA1 = "1" * 40
SHA2 = "2" * 40


def sidecar(path: Path) -> dict[str, object]:
    data = json.loads(path.with_suffix(".json").read_text())
    assert isinstance(data, dict)
    return data


def collecting_send() -> tuple[list[bytes], Callable[[bytes], None]]:
    sent: list[bytes] = []
    return sent, sent.append


# --- queue and list ------------------------------------------------------------------------


def test_queue_is_atomic_and_idempotent(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    path = queue_email(outbox, SHA1, b"first")
    assert path == outbox / f"{SHA1}.eml"
    assert queue_email(outbox, SHA1, b"second") == path
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in outbox.iterdir()) == [f"{SHA1}.eml", f"{SHA1}.json"]
    assert sidecar(path)["state"] == "queued"


def test_queue_after_sent_does_not_send_again(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    queue_email(outbox, SHA1, b"m")
    sent, send = collecting_send()
    assert deliver_pending(outbox, send) == DeliveryReport(sent=(SHA1,), failed=())
    assert queue_email(outbox, SHA1, b"m") == outbox / "sent" / f"{SHA1}.eml"
    assert deliver_pending(outbox, send) == DeliveryReport(sent=(), failed=())
    assert sent == [b"m"]


@pytest.mark.parametrize("key", ["", "../x", ".hidden", "a/b", "a b", "x" * 201])
def test_bad_keys_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="outbox key"):
        queue_email(tmp_path, key, b"m")


def test_list_pending_oldest_first(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    assert list_pending(outbox) == []
    for key in ("c" * 40, "a" * 40, "b" * 40):
        queue_email(outbox, key, key.encode())
    (outbox / ".stray.eml.123.tmp").write_bytes(b"half")  # an interrupted write
    pending = list_pending(outbox)
    assert [p.key for p in pending] == ["c" * 40, "a" * 40, "b" * 40]
    assert [(p.attempts, p.state, p.last_error) for p in pending] == [(0, "queued", None)] * 3
    sent, send = collecting_send()
    deliver_pending(outbox, send)
    assert sent == [b"c" * 40, b"a" * 40, b"b" * 40]


def test_missing_sidecar_counts_as_queued(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    path = queue_email(outbox, SHA1, b"m")
    path.with_suffix(".json").unlink()  # a crash between the two writes of an older version
    assert [(p.key, p.state, p.attempts) for p in list_pending(outbox)] == [(SHA1, "queued", 0)]


# --- SMTP down, then back ------------------------------------------------------------------


def test_smtp_down_then_back_delivers_exactly_once(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    handler = Collector()
    controller = LocalController(handler)
    controller.start()
    port = controller.port
    controller.stop()  # the server is down
    send = make_sender(smtp_notify(port))
    path = queue_email(outbox, SHA1, sample_message(SHA1))

    report = deliver_pending(outbox, send)
    assert report.sent == ()
    assert [key for key, _ in report.failed] == [SHA1]
    assert report.failed[0][1].startswith(f"SMTP 127.0.0.1:{port}: ")
    assert path.exists()
    [pending] = list_pending(outbox)
    assert (pending.attempts, pending.state, pending.last_error) == (
        1,
        "failed",
        report.failed[0][1],
    )
    assert pending.last_attempt is not None

    assert pending.next_attempt == pytest.approx(pending.last_attempt + 60, abs=1)
    skipped = deliver_pending(outbox, send)  # backing off: not even tried
    assert (skipped.sent, skipped.failed) == ((), ())
    assert skipped.deferred == ((SHA1, pending.next_attempt),)
    assert list_pending(outbox)[0].attempts == 1

    deliver_pending(outbox, send, retry_now=True)  # still down: a second attempt is counted
    assert list_pending(outbox)[0].attempts == 2

    controller = LocalController(handler, port=port)
    controller.start()
    try:
        report = deliver_pending(outbox, send, retry_now=True)
        assert report == DeliveryReport(sent=(SHA1,), failed=())
        assert deliver_pending(outbox, send) == DeliveryReport(sent=(), failed=())
    finally:
        controller.stop()
    assert len(handler.messages) == 1
    assert list_pending(outbox) == []
    done = outbox / "sent" / f"{SHA1}.eml"
    assert done.read_bytes() == sample_message(SHA1)
    assert sidecar(done)["state"] == "sent"
    assert sidecar(done)["attempts"] == 3
    assert sidecar(done)["uncertain"] is False


def test_one_failure_does_not_block_the_others(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    queue_email(outbox, SHA1, b"bad")
    queue_email(outbox, SHA2, b"good")
    delivered: list[bytes] = []

    def send(message: bytes) -> None:
        if message == b"bad":
            raise NotifyError("SMTP x:25: 552 message too big")
        delivered.append(message)

    report = deliver_pending(outbox, send)
    assert report == DeliveryReport(
        sent=(SHA2,), failed=((SHA1, "SMTP x:25: 552 message too big"),)
    )
    assert delivered == [b"good"]


def test_a_due_message_takes_older_waiting_ones_first(tmp_path: Path) -> None:
    """Mail was down for build 1 (its email backs off); build 2's email is queued when mail is
    back: build 1's goes first, not after its backoff, so the list sees builds in order."""
    outbox = tmp_path / "outbox"
    queue_email(outbox, SHA1, b"build 1")

    def down(message: bytes) -> None:
        raise NotifyError("SMTP x:25: connection refused")

    deliver_pending(outbox, down, now=lambda: 1000.0)
    assert list_pending(outbox)[0].next_attempt == 1060.0
    queue_email(outbox, SHA2, b"build 2")
    delivered, send = collecting_send()
    report = deliver_pending(outbox, send, now=lambda: 1001.0)
    assert report.sent == (SHA1, SHA2)
    assert delivered == [b"build 1", b"build 2"]


def test_backoff_holds_for_a_waiting_batch(tmp_path: Path) -> None:
    """A failed summary email and its never-tried commit emails (one batch): later runs
    inside the backoff try nothing; the commit emails do not drag the summary along."""
    outbox = tmp_path / "outbox"
    meta = {"batch": "b1", "queued_at": 1000.0}
    for seq, key in enumerate((f"{SHA1}-{SHA2}", SHA1, SHA2)):
        queue_email(outbox, key, key.encode(), meta={**meta, "seq": seq})
    attempts: list[bytes] = []

    def down(message: bytes) -> None:
        attempts.append(message)
        raise NotifyError("SMTP x:25: connection refused")

    first = deliver_pending(outbox, down, now=lambda: 1001.0)
    assert len(attempts) == 1 and len(first.failed) == 1
    later = deliver_pending(outbox, down, now=lambda: 1002.0)
    assert len(attempts) == 1
    assert [key for key, _ in later.deferred] == [f"{SHA1}-{SHA2}", SHA1, SHA2]


def test_prune_delivered_keeps_waiting_and_recent(tmp_path: Path) -> None:
    import os

    from deploybot.notify.deliver.outbox import prune_delivered

    outbox = tmp_path / "outbox"
    queue_email(outbox, SHA1, b"old")
    queue_email(outbox, SHA2, b"new")
    deliver_pending(outbox, collecting_send()[1])
    queue_email(outbox, "3" * 40, b"waiting")
    old = outbox / "sent" / f"{SHA1}.eml"
    for path in (old, old.with_suffix(".json")):
        os.utime(path, (1000.0, 1000.0))
    assert prune_delivered(outbox, older_than=3600) == 2
    assert sorted(p.name for p in (outbox / "sent").iterdir()) == [f"{SHA2}.eml", f"{SHA2}.json"]
    assert [p.key for p in list_pending(outbox)] == ["3" * 40]


# --- a crash between send and move ---------------------------------------------------------


class Crash(BaseException):
    """Stands for the process dying (SIGKILL, power loss) right after the server said 250."""


def crash_after(send: Callable[[bytes], None]) -> Callable[[bytes], None]:
    def sending_then_dying(message: bytes) -> None:
        send(message)
        raise Crash

    return sending_then_dying


@pytest.fixture
def server() -> Iterator[tuple[LocalController, Collector]]:
    with smtp_server() as running:
        yield running


def test_crash_after_send_resends_with_the_same_message_id(
    tmp_path: Path, server: tuple[LocalController, Collector]
) -> None:
    """At-least-once: the uncertain copy is sent again, byte for byte, same Message-ID."""
    controller, handler = server
    outbox = tmp_path / "outbox"
    send = make_transport(smtp_notify(controller.port))
    queue_email(outbox, SHA1, sample_message(SHA1))
    with pytest.raises(Crash):
        deliver_pending(outbox, crash_after(send))
    [pending] = list_pending(outbox)
    assert (pending.state, pending.attempts) == ("sending", 1)  # uncertain, shown as such

    assert deliver_pending(outbox, send) == DeliveryReport(sent=(SHA1,), failed=())
    assert len(handler.messages) == 2  # the MTA saw the message twice ...
    assert len(set(handler.message_ids())) == 1  # ... as one email: a list dedupes it
    assert handler.messages[0].content == handler.messages[1].content
    assert sidecar(outbox / "sent" / f"{SHA1}.eml")["uncertain_before"] is True
    assert deliver_pending(outbox, send) == DeliveryReport(sent=(), failed=())
    assert len(handler.messages) == 2


def test_crash_after_send_at_most_once(
    tmp_path: Path, server: tuple[LocalController, Collector]
) -> None:
    """With resend_uncertain=False the uncertain message is filed, never sent twice."""
    controller, handler = server
    outbox = tmp_path / "outbox"
    send = make_transport(smtp_notify(controller.port))
    queue_email(outbox, SHA1, sample_message(SHA1))
    queue_email(outbox, SHA2, sample_message(SHA2))
    with pytest.raises(Crash):
        deliver_pending(outbox, crash_after(send))
    report = deliver_pending(outbox, send, resend_uncertain=False)
    assert report == DeliveryReport(sent=(SHA2,), failed=())
    assert len(handler.messages) == 2
    assert len(set(handler.message_ids())) == 2
    assert sidecar(outbox / "sent" / f"{SHA1}.eml")["uncertain"] is True


def test_an_unexpected_error_propagates_and_leaves_the_message(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    queue_email(outbox, SHA1, b"m")

    def broken(message: bytes) -> None:
        raise RuntimeError("a bug, not a delivery failure")

    with pytest.raises(RuntimeError):
        deliver_pending(outbox, broken)
    assert [(p.state, p.attempts) for p in list_pending(outbox)] == [("sending", 1)]


class _Killed(BaseException):
    """Stands for SIGKILL: no except clause catches it, nothing after it runs."""


@pytest.mark.parametrize("step", [0, 1, 2, None])
def test_killed_while_filing_a_sent_email_does_not_send_it_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int | None
) -> None:
    """Killed at each file operation of filing a delivered email in ``sent/``: the next
    delivery (mbox: exactly once) neither sends it again nor leaves it waiting."""
    import os

    from deploybot.notify.deliver import outbox as outbox_module
    from deploybot.notify.deliver.mbox import MboxTransport
    from tests.killsite import read_mbox

    outbox, mbox = tmp_path / "outbox", tmp_path / "commits.mbox"
    queue_email(outbox, SHA1, sample_message())
    send = MboxTransport(mbox, "bot@example.org")
    real_mark_sent, real_replace, real_unlink = outbox_module._mark_sent, os.replace, Path.unlink
    done: list[str] = []

    def counted(real: Callable[..., None]) -> Callable[..., None]:
        def op(*args: object, **kwargs: object) -> None:
            if len(done) == step:
                raise _Killed
            done.append(real.__name__)
            real(*args, **kwargs)

        return op

    def mark_sent(path: Path, *, uncertain: bool) -> None:
        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", counted(real_replace))
            patch.setattr(Path, "unlink", counted(real_unlink))
            real_mark_sent(path, uncertain=uncertain)

    monkeypatch.setattr(outbox_module, "_mark_sent", mark_sent)
    if step is None:
        deliver_pending(outbox, send)
    else:
        with pytest.raises(_Killed):
            deliver_pending(outbox, send)
    monkeypatch.setattr(outbox_module, "_mark_sent", real_mark_sent)
    deliver_pending(outbox, send)
    assert len(read_mbox(mbox)) == 1
    assert list_pending(outbox) == []
    assert (outbox / "sent" / f"{SHA1}.eml").exists()
