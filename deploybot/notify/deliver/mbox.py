"""Append emails to an mbox file that other programs (MUAs, procmail) share, safely after
a kill: stale locks are broken, a torn append is repaired, a re-sent message is not doubled.

**Format**: what :class:`mailbox.mbox` writes (mboxo): a ``From <sender> <asctime UTC>``
line, the message with body lines starting ``From `` escaped as ``>From ``, a line end if
the message lacks one, then an empty line. The whole record goes out in one ``write(2)``
and is fsynced; when a write or the fsync fails (a full disk), the file is cut back to its
size before the append, under the locks, so no torn record is left for the next message to
run into.

**Locking**, as :mod:`mailbox` (and mutt, procmail) do it: a ``fcntl`` lock on the file,
then the dot-lock ``<mbox>.lock``, made by ``link(2)`` from a temp file (NFS-safe, as
liblockfile's ``lockfile_create(3)``). Our dot-lock holds our pid and a newline, as
``dotlockfile -p`` writes it. The ``fcntl`` lock dies with its process; a dot-lock does
not, so one left by a killed process would block every later delivery. It is *stale*, and
broken (logged), when the pid it names no longer runs on this host (or is our own pid, so
left by an earlier process that had it), or when it is older than :data:`STALE_AFTER`
seconds, liblockfile's rule (procmail waits 1024 s). A fresh lock of a live process makes
the delivery fail (:class:`~deploybot.support.errors.NotifyError`, retried later).

**Exactly once.** When an earlier attempt at the same message was interrupted or failed
(the outbox says ``sending`` or ``failed``), :meth:`MboxTransport.send_again` first looks
for the message in the mbox: a complete copy means it was delivered (nothing is written); a
partial copy at the end of the file, under our sender's ``From`` line, is a torn append and
is cut off before the message is appended again. A torn copy that other programs have
since appended after stays (we only cut our own tail).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import mmap
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from deploybot.support.errors import NotifyError, one_line

log = logging.getLogger("deploybot.notify.mbox")

STALE_AFTER = 300.0
"""Seconds after which a dot-lock is stale whoever holds it (liblockfile: 5 minutes)."""


class MboxTransport:
    """``send(message)`` for the mbox at ``path`` with envelope sender ``sender`` (a bare
    address); ``send_again(message)`` for a message whose earlier attempt was interrupted."""

    def __init__(self, path: Path, sender: str) -> None:
        self.path = path
        self.sender = sender

    def __call__(self, message: bytes) -> None:
        """Append ``message``; raises NotifyError (locked, unwritable)."""
        append(message, self.path, sender=self.sender)

    def send_again(self, message: bytes) -> None:
        """Append ``message`` unless a complete copy is already in the mbox; cut a torn
        copy at the end of the file first. Raises NotifyError."""
        append(message, self.path, sender=self.sender, uncertain=True)


def append(message: bytes, path: Path, *, sender: str, uncertain: bool = False) -> bool:
    """Append ``message`` to the mbox ``path`` (created 0600 if missing) under its locks.

    Args:
        message: the email, ``\\n`` line ends.
        sender: the envelope sender for the ``From`` line (spaces removed).
        uncertain: an earlier attempt may have written it: look first (module docstring).

    Returns:
        False when ``uncertain`` and a complete copy was found (nothing written), else True.

    Raises:
        NotifyError: the mbox is locked by a live process, or cannot be read or written.
    """
    envelope = sender.replace(" ", "") or "MAILER-DAEMON"
    body = _mangle(message)
    record = f"From {envelope} {time.asctime(time.gmtime())}\n".encode("ascii", "replace")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # ours: private; theirs keeps its mode
        try:
            _lock_fcntl(fd, path)
            with dot_lock(path):
                if uncertain and not _repair(fd, envelope, body):
                    return False
                _append_or_cut(fd, record + body + b"\n")
        finally:
            os.close(fd)  # also drops the fcntl lock
    except OSError as exc:
        raise NotifyError(f"mbox {path}: {one_line(str(exc))}") from exc
    return True


def _mangle(message: bytes) -> bytes:
    """The message as an mboxo body (``mailbox.mbox._dump_message`` with mangle_from_)."""
    body = message.replace(b"\nFrom ", b"\n>From ")
    return body if body.endswith(b"\n") else body + b"\n"


def _append_or_cut(fd: int, record: bytes) -> None:
    """Under the locks: append ``record`` and fsync it, or, when a write or the fsync
    fails (a full disk, a quota, EIO), cut the file back to its size before and re-raise:
    a torn record would run the next message into its last line. Raises OSError."""
    size = os.lseek(fd, 0, os.SEEK_END)
    try:
        _write_all(fd, record)
        os.fsync(fd)
    except OSError:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as exc:  # the next attempt's repair (send_again) cuts it then
            log.warning("mbox: could not cut a torn append back to %d bytes: %s", size, exc)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lock_fcntl(fd: int, path: Path) -> None:
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError) as exc:
        raise NotifyError(f"mbox {path}: locked by another program (fcntl)") from exc


def _repair(fd: int, envelope: str, body: bytes) -> bool:
    """Under the locks: False when a complete copy of ``body`` is in the file; else cut a
    torn copy of it from the end of the file (logged) and return True."""
    size = os.fstat(fd).st_size
    if size == 0:
        return True
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as data:
        found = _complete_copy(data, body)
        cut = _torn_start(data, envelope, body) if found is None else None
    if found is not None:
        if found + len(body) == size:  # killed before the empty line that ends a record
            os.lseek(fd, 0, os.SEEK_END)
            _write_all(fd, b"\n")
            os.fsync(fd)
        log.info("mbox: the interrupted delivery had arrived; not appended again")
        return False
    if cut is not None:
        log.warning("mbox: removed a torn copy of an interrupted delivery (%d bytes)", size - cut)
        os.ftruncate(fd, cut)
        os.fsync(fd)
    return True


def _complete_copy(data: mmap.mmap, body: bytes) -> int | None:
    """Where a complete copy of ``body`` right under a ``From`` line begins, or None."""
    found = data.find(b"\n" + body)
    while found != -1:
        line = data.rfind(b"\n", 0, found) + 1
        if data[line : line + 5] == b"From ":
            return found + 1
        found = data.find(b"\n" + body, found + 1)
    return None


def _torn_start(data: mmap.mmap, envelope: str, body: bytes) -> int | None:
    """Where a torn record of ``body`` (a strict prefix of what :func:`append` writes)
    begins at the end of ``data``, or None when the file does not end with one."""
    our_from = f"From {envelope} ".encode("ascii", "replace")
    full = body + b"\n"
    start = data.rfind(b"\nFrom ") + 1
    if start > 0 or data[:5] == b"From ":
        line_end = data.find(b"\n", start)
        if line_end == -1:  # torn inside the From line
            line = data[start:]
            return start if line.startswith(our_from) or our_from.startswith(line) else None
        if data[start:line_end].startswith(our_from):
            written = data[line_end + 1 :]
            if len(written) < len(full) and full.startswith(written):
                return start
    last = data.rfind(b"\n") + 1
    if last < len(data) and our_from.startswith(data[last:]):  # torn in "From "
        return last
    return None


@contextlib.contextmanager
def dot_lock(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` (our pid inside) while the block runs; break a stale one first.

    Raises:
        NotifyError: a live process holds a fresh lock.
        OSError: the folder cannot be written.
    """
    lock = path.with_name(path.name + ".lock")
    _take(lock, path)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _take(lock: Path, path: Path) -> None:
    host = socket.gethostname()
    _remove_dead_temps(lock, host)
    temp = lock.with_name(f"{lock.name}.{int(time.time())}.{host}.{os.getpid()}")
    with open(temp, "wb") as f:
        f.write(f"{os.getpid()}\n".encode())
        f.flush()
        os.fsync(f.fileno())
    try:
        for _ in range(3):
            try:
                os.link(temp, lock)
                return
            except FileExistsError:
                reason = stale_reason(lock)
                if reason is None:
                    raise NotifyError(f"mbox {path}: locked by another program ({lock})") from None
                _break(lock, reason)
        raise NotifyError(f"mbox {path}: could not take the lock {lock}")
    finally:
        temp.unlink(missing_ok=True)


def _remove_dead_temps(lock: Path, host: str) -> None:
    """Remove ``<lock>.<time>.<host>.<pid>`` temp files (ours and :mod:`mailbox`'s naming)
    of this host whose process is gone: a kill between making one and linking it."""
    for temp in lock.parent.glob(f"{lock.name}.*.{host}.*"):
        pid = temp.name.rsplit(".", 1)[-1]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            temp.unlink(missing_ok=True)


def stale_reason(lock: Path) -> str | None:
    """Why the dot-lock ``lock`` is stale (see the module docstring), or None when it is
    not (or is gone)."""
    try:
        age = time.time() - lock.stat().st_mtime
        text = lock.read_bytes()[:32].decode("ascii", "replace").strip()
    except FileNotFoundError:
        return "it is gone"
    pid = int(text) if text.isdigit() else None
    if pid == os.getpid():
        return f"it names this process's pid {pid}, so an earlier process's"
    if pid is not None and not _alive(pid):
        return f"its process {pid} is gone"
    if age > STALE_AFTER:
        return f"it is {age:.0f} s old"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _break(lock: Path, reason: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        lock.unlink()
        log.warning("removed stale mbox lock %s: %s", lock, reason)
