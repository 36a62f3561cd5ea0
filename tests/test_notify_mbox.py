"""The mbox transport after a kill: stale dot-locks, torn appends, re-sends (real files,
read back with :mod:`mailbox`)."""

from __future__ import annotations

import mailbox
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deploybot.notify.deliver.mbox import STALE_AFTER, MboxTransport, append
from deploybot.support.errors import NotifyError

SENDER = "bot@example.org"
ROOT = Path(__file__).resolve().parents[1]


def message(n: int) -> bytes:
    return (
        f"From: Bot <bot@example.org>\nSubject: build {n}\nMessage-ID: <{n}@example.org>\n\n"
        f"line one of {n}\nFrom here on a line that mboxo escapes\nlast line\n"
    ).encode()


def read(path: Path) -> list[bytes]:
    box = mailbox.mbox(str(path), create=False)
    try:
        return [box.get_bytes(key) for key in box.iterkeys()]
    finally:
        box.close()


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def same_but_from_lines(a: bytes, b: bytes) -> bool:
    def strip(data: bytes) -> bytes:
        return re.sub(rb"(?m)^From \S+ .*$", b"From", data)

    return strip(a) == strip(b)


def test_format_is_what_mailbox_writes(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.mbox", tmp_path / "theirs.mbox"
    box = mailbox.mbox(str(theirs))
    for n in (1, 2):
        append(message(n), ours, sender=SENDER)
        box.add(b"From bot@example.org Mon Jan  1 00:00:00 2024\n" + message(n))
    box.close()
    assert same_but_from_lines(ours.read_bytes(), theirs.read_bytes())
    assert [m.replace(b">From", b"From") for m in read(ours)] == [message(1), message(2)]


@pytest.mark.parametrize("keep", [1, 3, 20, 40, 61, 100, -2, -1])
def test_a_torn_append_is_cut_and_written_once(tmp_path: Path, keep: int) -> None:
    """The file ends with the first ``keep`` bytes of the record (a kill inside write(2))."""
    path = tmp_path / "commits.mbox"
    append(message(1), path, sender=SENDER)
    whole = path.read_bytes()
    append(message(2), path, sender=SENDER)
    full = path.read_bytes()
    torn = full[: len(whole) + (keep if keep > 0 else len(full) - len(whole) + keep)]
    path.write_bytes(torn)
    MboxTransport(path, SENDER).send_again(message(2))
    assert same_but_from_lines(path.read_bytes(), full)
    assert len(read(path)) == 2


def test_a_complete_copy_is_not_sent_again(tmp_path: Path) -> None:
    path = tmp_path / "commits.mbox"
    transport = MboxTransport(path, SENDER)
    transport(message(1))
    transport(message(2))
    before = path.read_bytes()
    transport.send_again(message(1))
    transport.send_again(message(2))
    assert path.read_bytes() == before
    transport.send_again(message(3))  # never sent before: appended
    assert len(read(path)) == 3


def test_a_torn_copy_that_others_appended_after_stays(tmp_path: Path) -> None:
    """Only our own tail is cut: a message another program appended after it stays."""
    path = tmp_path / "commits.mbox"
    append(message(1), path, sender=SENDER)
    size = path.stat().st_size
    append(message(2), path, sender=SENDER)
    torn = path.read_bytes()[: size + 120] + b"\n\n"
    path.write_bytes(torn)
    append(message(9), path, sender="procmail@example.org")
    MboxTransport(path, SENDER).send_again(message(2))
    subjects = [re.search(rb"Subject: (.*)", m).group(1) for m in read(path)]  # type: ignore[union-attr]
    assert subjects == [b"build 1", b"build 2", b"build 9", b"build 2"]


def lock_of(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def test_dot_lock_holds_our_pid_while_writing_and_is_released(tmp_path: Path) -> None:
    path = tmp_path / "commits.mbox"
    seen: list[str] = []
    import deploybot.notify.deliver.mbox as mbox_module

    original = mbox_module._write_all

    def spy(fd: int, data: bytes) -> None:
        seen.append(lock_of(path).read_text())
        original(fd, data)

    mbox_module._write_all = spy  # type: ignore[assignment]
    try:
        append(message(1), path, sender=SENDER)
    finally:
        mbox_module._write_all = original  # type: ignore[assignment]
    assert seen == [f"{os.getpid()}\n"]
    assert not lock_of(path).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["commits.mbox"]  # no temp file left


@pytest.mark.parametrize(
    ("content", "age", "broken"),
    [
        ("dead", 0, True),  # its process is gone
        ("self", 0, True),  # our pid: an earlier process that had it
        ("parent", 0, False),  # a live process, fresh
        ("parent", STALE_AFTER + 60, True),  # a live pid (reused?), too old
        ("", 0, False),  # no pid (Python's mailbox), fresh
        ("", STALE_AFTER + 60, True),  # no pid, too old
    ],
)
def test_stale_dot_locks(tmp_path: Path, content: str, age: float, broken: bool) -> None:
    path = tmp_path / "commits.mbox"
    pid = {"dead": dead_pid(), "self": os.getpid(), "parent": os.getppid()}.get(content)
    lock_of(path).write_text(f"{pid}\n" if pid else "")
    then = time.time() - age
    os.utime(lock_of(path), (then, then))
    if broken:
        append(message(1), path, sender=SENDER)
        assert len(read(path)) == 1 and not lock_of(path).exists()
    else:
        with pytest.raises(NotifyError, match=r"^mbox .*commits\.mbox: locked by another program"):
            append(message(1), path, sender=SENDER)
        assert lock_of(path).exists() and not path.read_bytes()


def test_temp_files_of_dead_lockers_are_removed(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "commits.mbox"
    host = socket.gethostname()
    dead = tmp_path / f"commits.mbox.lock.1700000000.{host}.{dead_pid()}"
    live = tmp_path / f"commits.mbox.lock.1700000000.{host}.{os.getppid()}"
    other_host = tmp_path / f"commits.mbox.lock.1700000000.elsewhere.{dead_pid()}"
    for temp in (dead, live, other_host):
        temp.write_text("")
    append(message(1), path, sender=SENDER)
    assert (dead.exists(), live.exists(), other_host.exists()) == (False, True, True)


# --- a failed write: cut back at once, and looked for again on the retry --------------------

_APPEND_OVER_A_SIZE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from deploybot.support.errors import NotifyError
from deploybot.notify.deliver.mbox import append
from tests.test_notify_mbox import SENDER, message
path, limit = Path(sys.argv[1]), int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write(2) then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    append(message(2) * 40, path, sender=SENDER)
except NotifyError as exc:
    print(exc)
"""


def test_a_write_that_fails_part_way_is_cut_back(tmp_path: Path) -> None:
    """A real write failure after part of the record went out (the file size limit, as
    a full disk would stop it): the file is cut back to what it held, and says why."""
    path = tmp_path / "commits.mbox"
    append(message(1), path, sender=SENDER)
    before = path.read_bytes()
    argv = [sys.executable, "-c", _APPEND_OVER_A_SIZE_LIMIT, str(path), str(len(before) + 1000)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.strip() == f"mbox {path}: [Errno 27] File too large", done
    assert path.read_bytes() == before


def test_a_retry_after_a_failed_attempt_cuts_its_torn_copy(tmp_path: Path) -> None:
    """An attempt failed (here: a live process held the lock) and left a torn copy at the
    end (a cut that failed too): the outbox's retry cuts it and appends the message once."""
    from deploybot.notify.deliver.outbox import deliver_pending, queue_email

    path, outbox = tmp_path / "commits.mbox", tmp_path / "outbox"
    append(message(1), path, sender=SENDER)
    queue_email(outbox, "k2", message(2))
    lock_of(path).write_text(f"{os.getppid()}\n")
    failed = deliver_pending(outbox, MboxTransport(path, SENDER))
    assert [key for key, _ in failed.failed] == ["k2"]
    lock_of(path).unlink()
    whole = path.read_bytes()
    append(message(2), path, sender=SENDER)
    path.write_bytes(path.read_bytes()[: len(whole) + 100])
    assert deliver_pending(outbox, MboxTransport(path, SENDER), retry_now=True).sent == ("k2",)
    assert [m.replace(b">From", b"From") for m in read(path)] == [message(1), message(2)]
