"""The part of a site's state directory that every worker sees: its notify records and its
outbox, kept in Redis (``deploybot:files:<site>``) and copied to the state directory of
whichever worker holds the site's lease.

Why these and only these: the exactly-once rules of the notify stage decide from them what
a build owes (:func:`deploybot.notify.stage.unannounced`: the last commit emailed, the build
commit about to be pushed) and what still waits to be sent (the outbox, with each
message's ``sending`` mark). Mirrors and the render cache stay on the worker's disk: any
worker can rebuild them from the source and the publish repository's record.

How, so that a worker may die at any moment (:mod:`deploybot.state.checkpoint`):

- when a run takes the state directory's lock, the files stored in Redis replace the
  worker's own copies (a worker that never saw the site, or saw it long ago, starts from
  what the fleet knows); a site with nothing stored yet keeps the worker's files (a
  worker taking over a state directory that ``run-once`` used);
- before each push and before each send, and at the end of the job, the files that
  changed are stored, in one Lua script that first checks that this worker's token still
  holds the site's lease (a worker whose lease expired can no longer write, and its run
  stops with :class:`LeaseLostError` before it pushes or sends).

So a build pushed by a worker that died before its email was even queued is owed by the
record stored before the push, and the next worker sends it; an email being sent when the
worker died is marked ``sending`` in Redis and is checked (mbox) or sent again with the same
Message-ID (SMTP), exactly as one machine does after a ``kill -9``.

What is stored: ``notify/*.json``, ``outbox/*`` and ``outbox/superseded/*`` exactly (files
named with a leading dot are a write in progress); of ``outbox/sent/``, the sidecars of
the newest :data:`SENT_KEPT` messages and of every message of a batch that still has one
waiting, each with an empty stand-in for the message (what sent messages are consulted
for is that they exist: whether a batch was partly delivered, and not to queue a key
twice; older ones the last-emailed record covers).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from deploybot.notify.deliver.outbox import FAILED_DIR, write_atomic
from deploybot.serve.fleet import keys
from deploybot.state import checkpoint
from deploybot.support.errors import TemporaryError

log = logging.getLogger("deploybot.fleet")

EXACT = ("notify", "outbox", "outbox/superseded", f"outbox/{FAILED_DIR}")
"""The folders shared whole: a refused email in ``failed/`` goes with the site to any worker."""
SENT = "outbox/sent"
SENT_KEPT = 20
PRESENT = ".present"

_SAVE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do redis.call('HSET', KEYS[2], ARGV[3 + 2 * i], ARGV[4 + 2 * i]) end
for i = 3 + 2 * n, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
redis.call('HSET', KEYS[2], '.present', '1')
return 1
"""


class LeaseLostError(TemporaryError):
    """The worker no longer holds the site's lease (it expired: another worker may build
    the site now), so this run stops before its next push or send (exit 75)."""


class SharedState:
    """The shared files of ``site`` for the worker holding its lease with ``token``, whose
    state directory for the site is ``state_dir``. :meth:`hook` is the checkpoint hook."""

    def __init__(self, client: keys.Client, site: str, token: str, state_dir: Path) -> None:
        self.r = client
        self.site = site
        self.token = token
        self.state_dir = state_dir
        self.known: dict[str, bytes] | None = None  # as stored; None: not read yet
        self._lock = threading.Lock()  # the two delivery channels run in threads
        self._save = client.register_script(_SAVE)

    def hook(self, moment: str, folder: Path) -> None:
        """The :mod:`deploybot.state.checkpoint` hook: fetch at ``locked``, store before a push
        or a send. Raises LeaseLostError, or redis' errors (the run stops)."""
        if moment == checkpoint.LOCKED:
            if folder == self.state_dir:
                self.restore()
        elif folder == self.state_dir or self.state_dir in folder.parents:
            self.save(moment)

    def restore(self) -> None:
        """Make the state directory's shared files those stored in Redis (see the module
        doc); with nothing stored, keep this worker's."""
        stored = self.r.hgetall(keys.files(self.site))
        if not stored.get(PRESENT.encode()):
            log.info(
                "site %s: nothing shared yet: this worker's records are the fleet's", self.site
            )
            self.known = {}
            return
        snapshot = {k.decode(): v for k, v in stored.items() if k != PRESENT.encode()}
        local = read_files(self.state_dir)
        for rel in local:
            if rel not in snapshot and not rel.startswith(SENT + "/"):
                (self.state_dir / rel).unlink(missing_ok=True)
        for rel, data in snapshot.items():
            if rel in local and (rel.startswith(SENT + "/") or local[rel] == data):
                continue
            path = self.state_dir / rel
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(path, data)
        self.known = snapshot

    def save(self, moment: str = "end") -> None:
        """Store what changed since the last save, if this worker still holds the lease.

        Raises:
            LeaseLostError: the lease is no longer this worker's (nothing was stored).
        """
        with self._lock:
            if self.known is None:
                return  # the run never took the state directory: nothing of it is known
            current = read_files(self.state_dir)
            changed = {k: v for k, v in current.items() if self.known.get(k) != v}
            removed = [k for k in self.known if k not in current]
            args: list[str | bytes | int] = [self.token, len(changed)]
            for rel, data in changed.items():
                args += [rel, data]
            args += removed
            if not self._save(keys=[keys.lease(self.site), keys.files(self.site)], args=args):
                raise LeaseLostError(
                    f"site {self.site}: this worker's lease was lost (it expired, and another "
                    f"worker may build the site now): stopped at {moment}"
                )
            self.known = current


def read_files(state_dir: Path) -> dict[str, bytes]:
    """The shared files of ``state_dir`` as ``{relative path: bytes}`` (see the module doc)."""
    out: dict[str, bytes] = {}
    for folder in EXACT:
        base = state_dir / folder
        for path in sorted(base.iterdir()) if base.is_dir() else []:
            if path.is_file() and not path.name.startswith("."):
                out[f"{folder}/{path.name}"] = path.read_bytes()
    sent = state_dir / SENT
    if sent.is_dir():
        sidecars = [p for p in sent.glob("*.json") if not p.name.startswith(".")]
        sidecars.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        batches = _waiting_batches(out)
        kept = sidecars[:SENT_KEPT] + [p for p in sidecars[SENT_KEPT:] if p.stem in batches]
        for sidecar in kept:
            out[f"{SENT}/{sidecar.name}"] = sidecar.read_bytes()
            for message in sent.glob(f"{sidecar.stem}.*"):
                if message.suffix != ".json":
                    out[f"{SENT}/{message.name}"] = b""
    return out


def _waiting_batches(files: dict[str, bytes]) -> set[str]:
    """The keys of every batch (a summary and its commit emails) with a message still
    waiting or withdrawn: whether its other messages were sent decides how the next
    announcement treats it (:func:`deploybot.notify.announce.plan`)."""
    out: set[str] = set()
    for rel, data in files.items():
        if rel.startswith("outbox/") and rel.endswith(".json"):
            try:
                keys_ = json.loads(data).get("batch_keys") or []
            except (ValueError, AttributeError):
                continue
            out.update(k for k in keys_ if isinstance(k, str))
    return out
