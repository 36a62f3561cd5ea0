"""The outbox: every email is on disk before it is sent, and moves to ``sent/`` once sent.

Layout under ``outbox_dir`` (``<state_dir>/outbox``)::

    <key>.eml          the message, exactly the bytes to send (written atomically)
    <key>.json         sidecar: {"queued_at": float s, "attempts": int, "state": str,
                                 "last_error": str | null, "last_attempt": float s | null}
    sent/<key>.eml     delivered (the sidecar moves along, with "sent_at")

``key`` is the delivery id, normally the build commit id. ``state`` is ``queued``, ``sending``
or ``failed``. ``sending`` is written (fsynced) *before* the transport is called, so a crash
during or right after a send leaves ``sending`` behind: the delivery is then *uncertain*.

What is guaranteed (and what is not):

- A message is never lost by a crash: it is on disk before any send and leaves the outbox only
  after the transport returned.
- A message that was confirmed sent (moved to ``sent/``) is never sent again, even if queued
  again under the same key.
- An uncertain delivery is, by default, sent again with the *same bytes*, so the same
  Message-ID (derived from commit id and list address). Delivery is at-least-once: an MTA,
  list archive (Pony Mail, HyperKitty, mail-archive.com) or client that de-duplicates by
  Message-ID shows one email; one that does not (ezmlm itself, many MUAs) can show two copies.
  With ``resend_uncertain=False`` delivery is at-most-once instead: the uncertain message is
  filed in ``sent/`` with ``"uncertain": true`` and not sent again, which may lose it.
- Only one process may deliver at a time; the caller holds the state directory's lock.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploybot.errors import NotifyError

SENT_DIR = "sent"
_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


@dataclass(frozen=True)
class DeliveryReport:
    """What one :func:`deliver_pending` run did: delivered keys, and (key, reason) failures."""

    sent: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PendingEmail:
    """One message waiting in the outbox, for ``deploybot outbox``.

    ``queued_at``/``last_attempt`` are Unix times in seconds; ``state`` is ``queued``,
    ``sending`` (a previous send was interrupted: uncertain) or ``failed``.
    """

    key: str
    path: Path
    queued_at: float
    attempts: int
    state: str
    last_error: str | None
    last_attempt: float | None


def queue_email(outbox_dir: Path, key: str, message: bytes) -> Path:
    """Store ``message`` as ``<outbox_dir>/<key>.eml`` and return its path.

    Idempotent per key: if the key is already queued, or already in ``sent/``, nothing is
    written and the existing file's path is returned. Writes are atomic (temp file, fsync,
    rename, fsync of the folder).

    Raises:
        ValueError: ``key`` is not 1-200 characters of ``[A-Za-z0-9._-]`` starting alnum.
        OSError: the outbox cannot be written.
    """
    _check_key(key)
    pending = outbox_dir / f"{key}.eml"
    sent = outbox_dir / SENT_DIR / f"{key}.eml"
    for existing in (pending, sent):
        if existing.exists():
            return existing
    outbox_dir.mkdir(parents=True, exist_ok=True)
    # Sidecar first: the .eml is the commit point, and a sidecar without one is ignored.
    _write_json(_sidecar(pending), _new_status())
    _write_atomic(pending, message)
    return pending


def list_pending(outbox_dir: Path) -> list[PendingEmail]:
    """Return the messages waiting in the outbox, oldest first (``queued_at``, then key)."""
    if not outbox_dir.is_dir():
        return []
    items = []
    for path in outbox_dir.glob("*.eml"):
        if not _KEY_RE.match(path.stem):
            continue  # a temp file of an interrupted write
        status = _read_status(path)
        items.append(
            PendingEmail(
                key=path.stem,
                path=path,
                queued_at=float(status.get("queued_at") or path.stat().st_mtime),
                attempts=int(status.get("attempts", 0)),
                state=str(status.get("state", "queued")),
                last_error=status.get("last_error"),
                last_attempt=status.get("last_attempt"),
            )
        )
    return sorted(items, key=lambda p: (p.queued_at, p.key))


def deliver_pending(
    outbox_dir: Path, send: Callable[[bytes], None], *, resend_uncertain: bool = True
) -> DeliveryReport:
    """Send every queued message, oldest first; move each one sent to ``sent/``.

    ``send`` raises :class:`~deploybot.errors.NotifyError` on a failed delivery: the message
    stays, its sidecar records ``attempts``, ``last_error`` and ``state = "failed"``, and the
    next message is tried. Any other exception (including ``BaseException``) propagates and
    leaves ``state = "sending"``: an uncertain delivery, handled on the next run as described
    in the module docstring (``resend_uncertain``).

    Returns:
        The keys sent, and ``(key, reason)`` for each failure, in the order tried.
    """
    sent: list[str] = []
    failed: list[tuple[str, str]] = []
    for item in list_pending(outbox_dir):
        if item.state == "sending" and not resend_uncertain:
            _mark_sent(item.path, uncertain=True)
            continue
        error = _deliver_one(item.path, send)
        if error is None:
            sent.append(item.key)
        else:
            failed.append((item.key, error))
    return DeliveryReport(sent=tuple(sent), failed=tuple(failed))


def _deliver_one(path: Path, send: Callable[[bytes], None]) -> str | None:
    """Send one message; return None when sent, else the failure's one-line reason."""
    message = path.read_bytes()
    status = _read_status(path)
    uncertain = status.get("state") == "sending"
    status.update(
        state="sending",
        attempts=int(status.get("attempts", 0)) + 1,
        last_attempt=time.time(),
        uncertain_before=uncertain or bool(status.get("uncertain_before")),
    )
    _write_json(_sidecar(path), status)
    try:
        send(message)
    except NotifyError as exc:
        status.update(state="failed", last_error=str(exc))
        _write_json(_sidecar(path), status)
        return str(exc)
    _mark_sent(path, uncertain=False)
    return None


def _mark_sent(path: Path, *, uncertain: bool) -> None:
    """Move ``path`` and its sidecar to ``sent/`` (sidecar first: the .eml move commits)."""
    sent_dir = path.parent / SENT_DIR
    sent_dir.mkdir(exist_ok=True)
    status = _read_status(path)
    status.update(state="sent", sent_at=time.time(), uncertain=uncertain)
    target = sent_dir / path.name
    _write_json(_sidecar(target), status)
    _sidecar(path).unlink(missing_ok=True)
    os.replace(path, target)
    _fsync_dir(sent_dir)
    _fsync_dir(path.parent)


def _check_key(key: str) -> None:
    if not _KEY_RE.match(key):
        raise ValueError(f"outbox key must match {_KEY_RE.pattern}: {key!r}")


def _sidecar(eml: Path) -> Path:
    return eml.with_suffix(".json")


def _new_status() -> dict[str, Any]:
    return {
        "queued_at": time.time(),
        "attempts": 0,
        "state": "queued",
        "last_error": None,
        "last_attempt": None,
    }


def _read_status(eml: Path) -> dict[str, Any]:
    """The sidecar's fields; a missing or unreadable sidecar counts as freshly queued."""
    try:
        data = json.loads(_sidecar(eml).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"attempts": 0, "state": "queued"}
    return data if isinstance(data, dict) else {"attempts": 0, "state": "queued"}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _write_atomic(path, json.dumps(data, sort_keys=True, indent=1).encode("utf-8") + b"\n")


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder, fsync and rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
