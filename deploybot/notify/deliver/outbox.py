"""The outbox: every message is on disk before it is sent, and moves to ``sent/`` once sent.

Layout under ``outbox_dir`` (``<state_dir>/outbox``)::

    <key>.eml          an email, exactly the bytes to send (written atomically)
    <key>.http         a webhook request body (see :mod:`.webhook`), same rules
    <key>.status       a commit status for the forge (see :mod:`.forge_status`), same rules
    <key>.json         sidecar: {"queued_at": float s, "attempts": int, "state": str,
                                 "last_error": str | null, "last_attempt": float s | null,
                                 "next_attempt": float s | null, "seq": int,
                                 "subject": str, "batch": str, "batch_keys": [str], ...}
    sent/<key>.<ext>   delivered (the sidecar moves along, with "sent_at")
    superseded/        messages withdrawn before any delivery (see :func:`withdraw`)
    failed/<key>.<ext> refused for good (:class:`Refused`: SMTP 5xx for every recipient),
                       state ``refused``: never retried, kept for inspection until
                       ``deploybot outbox retry KEY`` (:func:`requeue`) or ``drop KEY``
    dropped/           messages ``deploybot outbox drop KEY`` removed (:func:`drop`)

``key`` is the delivery id (the commit id for a commit email). ``state`` is ``queued``,
``sending`` or ``failed`` (``refused`` in ``failed/``). ``sending`` is written (fsynced)
*before* the transport is called, so a crash during or right after a send leaves ``sending``
behind: the delivery is then *uncertain*. Extra sidecar fields (``subject``, ``batch``,
``refname``, ``old``, ``new``) come from the caller and are kept as they are.

A permanent refusal is what an MTA bounces rather than retries (RFC 5321 §4.2.1: a 5yz
reply is a permanent negative completion; git-multimail does not retry either): the message
leaves the queue for ``failed/`` at once, and the run that filed it reports it once
(:attr:`DeliveryReport.refused`). A 4yz reply, or a refusal of only some recipients, is not
permanent for the message: the first waits and is retried, the second was delivered.

Retries back off: after the n-th failed attempt the message waits
``min(BACKOFF_FIRST * 2**(n-1), BACKOFF_MAX)`` seconds (1 min, 2, 4, ... up to 1 h;
``next_attempt`` in the sidecar); :func:`deliver_pending` skips it until then unless
``retry_now``. Messages of one batch (a summary email and its commit emails) go out in
``seq`` order: while one is waiting or failed, the later ones wait too.

What is guaranteed (and what is not):

- A message is never lost by a crash: it is on disk before any send and leaves the outbox only
  after the transport returned.
- A message that was confirmed sent (moved to ``sent/``) is never sent again, even if queued
  again under the same key.
- An uncertain delivery is, by default, sent again with the *same bytes*, so the same
  Message-ID (derived from commit id and list address). A transport that can look (the
  mbox: :class:`SendAgain`) sends it only when no complete copy arrived: exactly once.
  It looks after a *failed* attempt too (a write that a full disk stopped part way).
  Over SMTP and sendmail delivery is at-least-once: an MTA,
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from deploybot.state import checkpoint, private
from deploybot.support.errors import NotifyError, disk_full, is_disk_full

SENT_DIR = "sent"
SUPERSEDED_DIR = "superseded"
FAILED_DIR = "failed"
DROPPED_DIR = "dropped"
REFUSED = "refused"
"""The ``state`` of a message in ``failed/``."""
EMAIL = ".eml"
BACKOFF_FIRST = 60.0
"""Seconds to wait after the first failed attempt; doubled after each further one."""
BACKOFF_MAX = 3600.0
"""The longest wait between two attempts, in seconds."""
_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class Refused(NotifyError):
    """A transport's delivery was refused for good (an SMTP 5xx reply for every recipient):
    sending the same message again cannot succeed, so :func:`deliver_pending` files it in
    ``failed/`` instead of retrying. The message is the one-line reason, naming the
    recipients and the server's reply."""


@runtime_checkable
class SendAgain(Protocol):
    """A transport that can tell whether an interrupted delivery arrived (the mbox one):
    :func:`deliver_pending` calls ``send_again`` instead of ``send`` for a message with an
    earlier attempt (interrupted or failed), which delivers it only when no complete copy
    arrived before, after cutting a torn copy at the end."""

    def __call__(self, message: bytes) -> None:
        """Deliver ``message``; NotifyError when it failed."""

    def send_again(self, message: bytes) -> None:
        """Deliver ``message`` unless an earlier attempt did; NotifyError when it failed."""


@dataclass(frozen=True)
class DeliveryReport:
    """What one :func:`deliver_pending` run did.

    ``sent``: keys delivered; ``failed``: ``(key, reason)``, still waiting; ``deferred``:
    ``(key, next attempt as Unix time in s)`` for messages left alone because their backoff
    has not expired (or an earlier message of their batch is still waiting); ``refused``:
    ``(key, reason)`` for messages refused for good in this run, now in ``failed/``.
    """

    sent: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    deferred: tuple[tuple[str, float], ...] = ()
    refused: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PendingEmail:
    """One message waiting in the outbox, for ``deploybot outbox``.

    ``queued_at``/``last_attempt``/``next_attempt`` are Unix times in seconds
    (``next_attempt`` None: try at the next run); ``state`` is ``queued``, ``sending`` (a
    previous send was interrupted: uncertain), ``failed`` or ``refused`` (in ``failed/``:
    never retried); ``subject`` as recorded at queue time ("" if unknown); ``kind`` the
    file suffix: ``.eml`` email, ``.http`` webhook, ``.status`` commit status.
    """

    key: str
    path: Path
    queued_at: float
    attempts: int
    state: str
    last_error: str | None
    last_attempt: float | None
    next_attempt: float | None = None
    subject: str = ""
    kind: str = EMAIL
    batch: str | None = None
    seq: int = 0

    def __str__(self) -> str:
        """Two to four lines: key, kind, state and attempts, then subject, error, next try."""
        what = KINDS.get(self.kind, "message")
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        state = {"sending": "uncertain (interrupted while sending)"}.get(self.state, self.state)
        lines = [f"{self.key}  {what}, {state}, {tries}, queued {_when(self.queued_at)}"]
        if self.subject:
            lines.append(f"    subject: {self.subject}")
        if self.last_error:
            lines.append(f"    last error: {self.last_error}")
        if self.state == REFUSED:
            key = short_key(self.key)
            lines.append(
                f"    not retried (kept in {FAILED_DIR}/): deploybot outbox retry {key} "
                f"sends it again, deploybot outbox drop {key} removes it"
            )
            return "\n".join(lines)
        due = self.next_attempt
        lines.append(f"    next attempt: {_when(due) if due else 'at the next run'}")
        return "\n".join(lines)


WEBHOOK_KEY_PREFIX = "webhook-"
"""How the key of a webhook entry starts (:mod:`deploybot.notify.deliver.webhook`); an email's
key is its commit id, or ``<old>-<new>`` for a summary."""
STATUS_KEY_PREFIX = "status-"
"""How the key of a commit status starts: ``status-<source commit>-<state>``
(:mod:`deploybot.notify.deliver.forge_status`)."""
KINDS = {EMAIL: "email", ".http": "webhook", ".status": "commit status"}
"""What each outbox suffix holds, in words; the suffixes :func:`find_waiting` looks at."""


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def backoff_delay(attempts: int) -> float:
    """Seconds to wait after ``attempts`` failed attempts (>= 1): 60, 120, 240, ... <= 3600."""
    return min(BACKOFF_FIRST * float(2 ** max(attempts - 1, 0)), BACKOFF_MAX)


def queue_email(
    outbox_dir: Path,
    key: str,
    message: bytes,
    *,
    meta: Mapping[str, Any] | None = None,
    suffix: str = EMAIL,
) -> Path:
    """Store ``message`` as ``<outbox_dir>/<key><suffix>`` and return its path.

    Idempotent per key: if the key is already queued, or already in ``sent/``, ``failed/``
    or ``dropped/``, nothing is written and the existing file's path is returned. Writes are
    atomic (temp file, fsync, rename, fsync of the folder). ``meta`` (JSON values) goes into
    the sidecar: ``subject`` for listings, ``seq``/``batch``/``batch_keys`` for ordering and
    :func:`withdraw`, ``queued_at`` to give a batch one time.

    Raises:
        ValueError: ``key`` is not 1-200 characters of ``[A-Za-z0-9._-]`` starting alnum.
        OSError: the outbox cannot be written.
    """
    _check_key(key)
    pending = outbox_dir / f"{key}{suffix}"
    for existing in (pending, *(outbox_dir / d / pending.name for d in _FILED)):
        if existing.exists():
            return existing
    outbox_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Sidecar first: the message file is the commit point, and a sidecar without one is ignored.
    write_json(_sidecar(pending), {**_new_status(), **(meta or {})})
    write_atomic(pending, message)
    return pending


_FILED = (SENT_DIR, FAILED_DIR, DROPPED_DIR)
"""The folders a message is filed in once it no longer waits, where a key is never queued again."""


def list_pending(outbox_dir: Path, suffix: str = EMAIL) -> list[PendingEmail]:
    """Return the messages waiting in the outbox, oldest first (``queued_at``, ``seq``, key)."""
    if not outbox_dir.is_dir():
        return []
    items = []
    for path in outbox_dir.glob(f"*{suffix}"):
        if not _KEY_RE.match(path.stem):
            continue  # a temp file of an interrupted write
        items.append(_pending(path, _read_status(path), suffix))
    return sorted(items, key=lambda p: (p.queued_at, p.seq, p.key))


def _pending(path: Path, status: dict[str, Any], suffix: str) -> PendingEmail:
    return PendingEmail(
        key=path.stem,
        path=path,
        queued_at=float(status.get("queued_at") or path.stat().st_mtime),
        attempts=int(status.get("attempts", 0)),
        state=str(status.get("state", "queued")),
        last_error=status.get("last_error"),
        last_attempt=status.get("last_attempt"),
        next_attempt=status.get("next_attempt"),
        subject=str(status.get("subject") or ""),
        kind=suffix,
        batch=status.get("batch"),
        seq=int(status.get("seq", 0)),
    )


def deliver_pending(
    outbox_dir: Path,
    send: Callable[[bytes], None],
    *,
    resend_uncertain: bool = True,
    retry_now: bool = False,
    now: Callable[[], float] = time.time,
    suffix: str = EMAIL,
) -> DeliveryReport:
    """Send every queued message that is due, oldest first; move each one sent to ``sent/``.

    ``send`` raises :class:`~deploybot.support.errors.NotifyError` on a failed delivery: the message
    stays, its sidecar records ``attempts``, ``last_error``, ``state = "failed"`` and
    ``next_attempt`` (:func:`backoff_delay`), and the next message is tried. A message whose
    ``next_attempt`` is later than ``now()`` is skipped unless ``retry_now`` or a newer message
    is due (then the older ones go first, so builds reach the list in order); so are the
    later messages of a batch with a message still waiting. Any other exception (including
    ``BaseException``) propagates and leaves ``state = "sending"``: an uncertain delivery,
    handled on the next run as described in the module docstring (``resend_uncertain``).

    A :class:`Refused` failure is not retried: the message goes to ``failed/`` (state
    ``refused``, ``last_error`` the reason) and is reported in ``refused``.

    Returns:
        The keys sent, ``(key, reason)`` for each failure, ``(key, next attempt)`` for each
        message skipped, in the order tried; ``(key, reason)`` for each refused for good.
    """
    sent: list[str] = []
    failed: list[tuple[str, str]] = []
    refused: list[tuple[str, str]] = []
    deferred: list[tuple[str, float]] = []
    blocked: dict[str, float] = {}  # batch -> when its first waiting message is due
    pending = list_pending(outbox_dir, suffix)
    due_index = _pull_forward_index(pending, now())
    for index, item in enumerate(pending):
        due = item.next_attempt or 0.0
        if item.batch in blocked or (due > now() and not retry_now and index > due_index):
            deferred.append((item.key, max(due, blocked.get(item.batch or "", 0.0))))
        elif item.state == "sending" and not resend_uncertain:
            _mark_sent(item.path, uncertain=True)
            continue
        else:
            error = _deliver_one(item.path, send, now)
            if error is None:
                sent.append(item.key)
                continue
            if isinstance(error, Refused):
                refused.append((item.key, str(error)))
                continue  # filed in failed/: the later messages of its batch go on
            failed.append((item.key, str(error)))
            due = float(_read_status(item.path).get("next_attempt") or 0.0)
        if item.batch:
            blocked.setdefault(item.batch, due)
    return DeliveryReport(tuple(sent), tuple(failed), tuple(deferred), tuple(refused))


def _pull_forward_index(pending: list[PendingEmail], now: float) -> int:
    """Return the index up to which waiting messages are tried despite their backoff.

    A message queued *after* the last failed attempt of an older waiting one (a new build
    announced since) takes the older ones with it, so builds reach the list in order and a
    new build never waits an hour behind an old failure. Messages queued together with the
    failed one (its own batch) do not: otherwise the backoff would never hold.
    """
    last_failure = float("-inf")
    index = -1
    for i, item in enumerate(pending):
        if item.attempts == 0 and (item.next_attempt or 0) <= now and item.queued_at > last_failure:
            index = i
        if item.last_attempt is not None:
            last_failure = max(last_failure, item.last_attempt)
    return index


def _deliver_one(
    path: Path, send: Callable[[bytes], None], now: Callable[[], float]
) -> NotifyError | None:
    """Send one message; return None when sent, else the failure (its text the one-line
    reason); a :class:`Refused` message is filed in ``failed/`` already."""
    message = path.read_bytes()
    status = _read_status(path)
    uncertain = status.get("state") == "sending"
    # A failed attempt may have written part (a cut that failed too) or all of it (an fsync
    # error after the write): a transport that can look does so after a failure as well.
    tried = uncertain or status.get("state") == "failed"
    attempts = int(status.get("attempts", 0)) + 1
    status.update(
        state="sending",
        attempts=attempts,
        last_attempt=now(),
        uncertain_before=uncertain or bool(status.get("uncertain_before")),
    )
    write_json(_sidecar(path), status)
    checkpoint.reached(checkpoint.BEFORE_SEND, path.parent)
    try:
        if tried and isinstance(send, SendAgain):
            send.send_again(message)
        else:
            send(message)
    except Refused as exc:
        status.update(state=REFUSED, last_error=str(exc), next_attempt=None)
        _file(path, path.parent / FAILED_DIR, status)
        return exc
    except NotifyError as exc:
        next_attempt = now() + backoff_delay(attempts)
        status.update(state="failed", last_error=str(exc), next_attempt=next_attempt)
        write_json(_sidecar(path), status)
        return exc
    _mark_sent(path, uncertain=False)
    return None


def read_status(path: Path) -> dict[str, Any]:
    """The sidecar fields of the message at ``path`` (pending, sent or superseded)."""
    return _read_status(path)


def withdraw(paths: list[Path], into: Path | None = None) -> None:
    """Move never-delivered messages (and sidecars) to ``superseded/`` beside them, or to
    the folder ``into`` (the outbox's own ``superseded/`` for one refused in ``failed/``).

    Used when the messages are replaced by others covering the same commits (a summary email
    replacing combined ones). The caller checks that none is ``sending`` or sent. As in
    :func:`_mark_sent`, the sidecar is written there first and the message move commits, so
    a kill in between never leaves a superseded message without its sidecar (which would
    hide it from the next announcement, and lose it).
    """
    for path in paths:
        folder = into or path.parent / SUPERSEDED_DIR
        folder.mkdir(mode=0o700, exist_ok=True)
        if _sidecar(path).exists():
            write_json(_sidecar(folder / path.name), _read_status(path))
        os.replace(path, folder / path.name)
        private.fsync_folder(folder)
        private.fsync_folder(path.parent)
        _sidecar(path).unlink(missing_ok=True)


PRUNED = (SENT_DIR, SUPERSEDED_DIR, DROPPED_DIR)
"""The folders :func:`prune_delivered` empties of what is older than :data:`KEEP_SENT`."""
KEEP_SENT = 90 * 24 * 3600.0
"""Seconds a delivered (or superseded) message stays in ``sent/`` (``superseded/``)."""


def prune_delivered(
    outbox_dir: Path, *, older_than: float = KEEP_SENT, now: Callable[[], float] = time.time
) -> int:
    """Delete messages (and sidecars) filed in ``sent/`` or ``superseded/`` more than
    ``older_than`` seconds ago, or dropped (``dropped/``); return how many files went.
    Waiting messages are never touched, nor refused ones (``failed/``: a person decides).
    A re-queue of a pruned key is still refused by the last-emailed record."""
    removed = 0
    cutoff = now() - older_than
    for folder in (outbox_dir / name for name in PRUNED):
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
    return removed


def _mark_sent(path: Path, *, uncertain: bool) -> None:
    """Move ``path`` and its sidecar to ``sent/``: the new sidecar first, then the message
    (the move that commits), then the old sidecar goes. A kill between two steps leaves
    either the message waiting with its ``sending`` sidecar (uncertain: see the module
    docstring) or an orphan sidecar that nothing reads; never a waiting message without
    its sidecar, which would look freshly queued and be sent again."""
    status = _read_status(path)
    status.update(state="sent", sent_at=time.time(), uncertain=uncertain)
    _file(path, path.parent / SENT_DIR, status)


def _file(path: Path, folder: Path, status: Mapping[str, Any]) -> Path:
    """Move ``path`` into ``folder`` (made when missing) with the sidecar ``status``, in
    the order :func:`_mark_sent` gives (the new sidecar, then the message, then the old
    sidecar goes); return its new path."""
    folder.mkdir(mode=0o700, exist_ok=True)
    target = folder / path.name
    write_json(_sidecar(target), status)
    os.replace(path, target)
    private.fsync_folder(folder)
    private.fsync_folder(path.parent)
    _sidecar(path).unlink(missing_ok=True)
    return target


def list_refused(outbox_dir: Path, suffix: str = EMAIL) -> list[PendingEmail]:
    """The messages refused for good (``failed/``), oldest first, as :func:`list_pending`."""
    return list_pending(outbox_dir / FAILED_DIR, suffix)


def find_waiting(outbox_dir: Path, key: str) -> list[Path]:
    """The messages (either kind) waiting in ``outbox_dir`` or refused in ``failed/`` that
    ``key`` names: the one whose key is ``key``, else every one whose key starts with it
    (the 12 hex a run prints). Empty when none does."""
    found: list[Path] = []
    for folder in (outbox_dir, outbox_dir / FAILED_DIR):
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix in KINDS and _KEY_RE.match(path.stem):
                if path.stem == key:
                    return [path]
                if key and path.stem.startswith(key):
                    found.append(path)
    return found


def drop(path: Path) -> Path:
    """Move the waiting or refused message ``path`` (:func:`find_waiting`) and its sidecar
    to ``dropped/`` of the outbox, never to be sent (pruned as ``sent/`` is); return its
    new path. The caller holds the state directory's lock."""
    outbox_dir = path.parent.parent if path.parent.name == FAILED_DIR else path.parent
    status = {**_read_status(path), "state": "dropped", "dropped_at": time.time()}
    return _file(path, outbox_dir / DROPPED_DIR, status)


def requeue(path: Path) -> Path:
    """Make the waiting or refused message ``path`` (:func:`find_waiting`) due now: a
    refused one goes back into the outbox (state ``queued``; its attempts and last error
    are kept), a waiting one loses its backoff. Returns its path in the outbox. The caller
    holds the state directory's lock."""
    status = {**_read_status(path), "next_attempt": None}
    if path.parent.name != FAILED_DIR:
        write_json(_sidecar(path), status)
        return path
    status["state"] = "queued"
    return _file(path, path.parent.parent, status)


def _check_key(key: str) -> None:
    if not _KEY_RE.match(key):
        raise ValueError(f"outbox key must match {_KEY_RE.pattern}: {key!r}")


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def _new_status() -> dict[str, Any]:
    return {
        "queued_at": time.time(),
        "attempts": 0,
        "state": "queued",
        "last_error": None,
        "last_attempt": None,
        "next_attempt": None,
    }


def _read_status(path: Path) -> dict[str, Any]:
    """The sidecar's fields; a missing or unreadable sidecar counts as freshly queued."""
    try:
        data = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"attempts": 0, "state": "queued"}
    return data if isinstance(data, dict) else {"attempts": 0, "state": "queued"}


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented, key-sorted JSON, atomically (:func:`write_atomic`)."""
    write_atomic(path, json.dumps(data, sort_keys=True, indent=1).encode("utf-8") + b"\n")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder, fsync and rename.

    The file is readable by its owner only (0600): outbox messages and records are private.
    A failed write removes its temp file and leaves ``path`` as it was.

    Raises:
        DiskFullError: no space left (or quota exceeded); names ``path``.
        OSError: the folder cannot be written.
    """
    try:
        private.write_file(path, data)
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full(exc, path) from exc
        raise


def short_key(key: str) -> str:
    """The start of ``key`` that names it for ``outbox retry`` and ``drop``: 12 characters
    (a commit id's start), or a commit status's whole key (its commit's states share the
    start)."""
    return key if key.startswith(STATUS_KEY_PREFIX) else key[:12]


def describe_key(key: str) -> str:
    """Name an outbox key for people: ``email for <commit>``, ``summary email for
    <old>..<new>``, ``webhook post for <commit>``, ``commit status success for <commit>``."""
    if key.startswith(WEBHOOK_KEY_PREFIX):
        return f"webhook post for {key.removeprefix(WEBHOOK_KEY_PREFIX)[:12]}"
    if key.startswith(STATUS_KEY_PREFIX):
        sha, _, state = key.removeprefix(STATUS_KEY_PREFIX).partition("-")
        return f"commit status {state.partition('-')[0]} for {sha[:12]}"
    old, dash, new = key.partition("-")
    if dash and len(old) == len(new) == 40:
        return f"summary email for {old[:7]}..{new[:7]}"
    return f"email for {key[:12]}"


def refusal_line(key: str, reason: str, config_path: Path | None) -> str:
    """The one line telling that the message ``key`` was refused for good (``reason``: the
    transport's, naming the recipients and the server's reply), where it is kept and what
    to do: check ``notify.to`` in the config file (``config_path``), then ``deploybot outbox
    retry``. ``run-once`` prints it, the daemon and the fleet log it."""
    where = f" in {config_path}" if config_path is not None else ""
    check = "notify.to"
    if key.startswith(STATUS_KEY_PREFIX):
        check = "status.repository and the token of status.token_env"
    shown = short_key(key)
    return (
        f"{describe_key(key)} refused, not retried (kept in the outbox's failed/): {reason}; "
        f"check {check}{where}, then deploybot outbox retry {shown} sends it again"
    )
