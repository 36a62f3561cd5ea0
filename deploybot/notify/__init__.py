"""The notify stage: the commit email for a build commit, its outbox and its delivery.

What the pipeline calls::

    message = build_email(repo, "refs/heads/asf-site", old, new, config.notify, now=now)
    queue_email(config.state.dir / "outbox", new, message)
    report = deliver_pending(config.state.dir / "outbox", make_sender(config.notify))

With ``notify.transport = "none"`` the pipeline should not queue at all (the ``none`` sender
would file every message as sent). Composition is pure (:mod:`deploybot.notify.email`); the git
reads live here; transports in :mod:`deploybot.notify.transport`; the outbox in
:mod:`deploybot.notify.outbox`.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from deploybot.config import NotifyConfig
from deploybot.notify.email import (
    commit_subject,
    compose_combined_email,
    is_host_name,
    message_id,
)
from deploybot.notify.outbox import (
    DeliveryReport,
    PendingEmail,
    deliver_pending,
    list_pending,
    queue_email,
)
from deploybot.notify.transport import make_transport

__all__ = [
    "DeliveryReport",
    "PendingEmail",
    "build_email",
    "default_host",
    "deliver_pending",
    "list_pending",
    "make_sender",
    "message_id",
    "queue_email",
    "read_commit_subject",
    "repo_name_from_url",
]


def build_email(
    repo_path: Path,
    refname: str,
    old: str | None,
    new: str,
    notify: NotifyConfig,
    *,
    now: datetime,
    host: str | None = None,
) -> bytes:
    """Return the combined commit email (bytes, see :func:`compose_combined_email`) for ``new``.

    Args:
        repo_path: a git repository (bare or not) that holds ``new``.
        refname: ``refs/heads/<publish branch>``.
        old: the branch's previous tip (40 hex), or None when the push created it.
        new: the build commit (40 hex).
        notify: recipients, sender, pusher and ``repository_url`` (its last path component
            without ``.git`` is the ``[repo]`` name).
        now: send time, timezone-aware (the ``Date`` header).
        host: ``X-Git-Host`` and Message-ID domain; default :func:`default_host`.

    Raises:
        ValueError: see :func:`compose_combined_email`.
        KeyError: ``new`` is not in the repository.
    """
    from deploybot.notify.gitlog import format_commit_log  # a sibling module, written later

    return compose_combined_email(
        log_text=format_commit_log(repo_path, new),
        repo_name=repo_name_from_url(notify.repository_url) or repo_name_from_url(str(repo_path)),
        repository_url=notify.repository_url,
        refname=refname,
        old=old,
        new=new,
        subject_line=read_commit_subject(repo_path, new),
        pusher=notify.pusher,
        sender=notify.sender,
        to=notify.to,
        host=host or default_host(),
        date=now,
    )


def make_sender(notify: NotifyConfig) -> Callable[[bytes], None]:
    """Return ``send(message: bytes)`` for ``notify.transport``; see
    :func:`deploybot.notify.transport.make_transport` (raises ConfigError)."""
    return make_transport(notify)


def read_commit_subject(repo_path: Path, commit: str) -> str:
    """Return commit ``commit``'s subject as ``git log --format=%s`` prints it (dulwich read).

    The message is decoded with the commit's ``encoding`` header (default UTF-8), invalid
    bytes replaced by U+FFFD.

    Raises:
        KeyError: no such commit, or the object is not a commit.
    """
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    with Repo(str(repo_path)) as repo:
        obj = repo[commit.encode("ascii")]
    if not isinstance(obj, Commit):
        raise KeyError(f"{commit} is not a commit")
    encoding = (obj.encoding or b"utf-8").decode("ascii", "replace")
    try:
        text = obj.message.decode(encoding, "replace")
    except LookupError:  # an unknown encoding name in the commit header
        text = obj.message.decode("utf-8", "replace")
    return commit_subject(text)


def repo_name_from_url(url: str) -> str:
    """Return the repository's short name: the URL's last path component without ``.git``.

    ``https://gitbox.apache.org/repos/asf/tvm-site.git`` -> ``tvm-site``; also scp-like
    ``git@host:org/site.git`` and local paths. Empty for an empty URL.
    """
    last = url.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    return last.removesuffix(".git")


def default_host() -> str:
    """Return this machine's FQDN (``socket.getfqdn()``), as git-multimail does.

    Falls back to ``socket.gethostname()`` when the FQDN is ``localhost``-ish (git-multimail
    1.6), and to ``localhost`` when neither is a plain host name.
    """
    for name in (socket.getfqdn(), socket.gethostname()):
        if not name.startswith("localhost") and is_host_name(name):
            return name
    return "localhost"
