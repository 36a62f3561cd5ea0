"""The second channel: a JSON summary of each build commit POSTed to an incoming webhook.

Targets chat systems whose incoming webhooks take a JSON object with a ``text`` field and
ignore the other fields: Slack ("Sending messages using incoming webhooks": ``text``, with
``\\n`` line breaks), Mattermost and Rocket.Chat (Slack-compatible ``text``), and any HTTP
endpoint that wants the structured fields. Those fields follow the shape of GitHub's
``push`` webhook event where one exists (``ref``, ``before``, ``after``, ``compare``), with
git-multimail's vocabulary for the rest (``refname``, ``subject``, the diffstat lines).

Entries wait in the same outbox as the emails, as ``webhook-<commit>.http`` (the exact body
to POST) beside their sidecar, with the same retries and backoff
(:mod:`deploybot.notify.deliver.outbox`), so a webhook that is down never holds up an email and
the other way round.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from deploybot import __version__
from deploybot.config.schema import WebhookConfig
from deploybot.notify.compose.email import ZERO_SHA, one_line, redact_url
from deploybot.notify.compose.envelope import BRANCH_PREFIX
from deploybot.notify.deliver.outbox import WEBHOOK_KEY_PREFIX, queue_email
from deploybot.support.deadline import Deadline
from deploybot.support.errors import ConfigError, NotifyError
from deploybot.support.redact import register_url_secrets, url_origin

if TYPE_CHECKING:
    import requests

    from deploybot.notify.gitlog.summary import DiffTree

WEBHOOK = ".http"
"""The outbox suffix of a webhook entry."""
MAX_ANSWER = 64 * 1024
"""The most bytes of a webhook's answer body read (streamed); the rest is never read."""

Send = Callable[[bytes], None]
log = logging.getLogger("deploybot.notify.webhook")


def webhook_payload(
    *,
    repo_name: str,
    repository_url: str,
    refname: str,
    old: str | None,
    new: str,
    subject: str,
    author: str,
    diff: DiffTree,
) -> dict[str, Any]:
    """Return the JSON object announcing build commit ``new`` (``old`` its parent or None).

    Shape (all strings unless said)::

        text            the chat message: "[repo] branch B updated: <subject>" + the
                        diffstat summary line, or "... created (now abc1234)"
        repository      short name; repository_url (any user:password@ removed)
        branch, ref, refname   "asf-site", "refs/heads/asf-site" (ref = refname, GitHub's name)
        commit, after   the 40-hex build commit; old (null when created), before (zeros then)
        compare         "old7..new7" (null when created)
        subject, author the commit subject and "Name <email>"
        diffstat        list of git's --stat lines, the summary line last
        summary         list of --summary lines (" create mode 100644 P", ...)
        files_changed, insertions, deletions   integers
    """
    branch = refname[len(BRANCH_PREFIX) :]
    repo, subject = one_line(repo_name), one_line(subject)
    headline = (
        f"[{repo}] branch {branch} updated: {subject}"
        if old
        else f"[{repo}] branch {branch} created (now {new[:7]})"
    )
    total = diff.stat[-1].strip() if diff.stat else "no files changed"
    return {
        "text": f"{headline}\n{total}",
        "repository": repo,
        "repository_url": redact_url(one_line(repository_url)),
        "branch": branch,
        "ref": refname,
        "refname": refname,
        "commit": new,
        "after": new,
        "old": old,
        "before": old or ZERO_SHA,
        "compare": f"{old[:7]}..{new[:7]}" if old else None,
        "subject": subject,
        "author": one_line(author),
        "diffstat": list(diff.stat),
        "summary": list(diff.summary),
        "files_changed": diff.files,
        "insertions": diff.insertions,
        "deletions": diff.deletions,
    }


def queue_webhook(outbox_dir: Path, payload: Mapping[str, Any]) -> Path:
    """Queue ``payload`` (as UTF-8 JSON) under key ``webhook-<commit>``; idempotent per commit.

    Raises:
        ValueError: the payload has no 40-hex ``commit``.
        OSError: the outbox cannot be written.
    """
    body = json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
    meta = {"subject": str(payload.get("text", "")).split("\n", 1)[0], "channel": "webhook"}
    key = WEBHOOK_KEY_PREFIX + str(payload.get("commit"))
    return queue_email(outbox_dir, key, body, meta=meta, suffix=WEBHOOK)


def webhook_url(webhook: WebhookConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """Return the URL to POST to, or None when the channel is off.

    Raises:
        ConfigError: ``url_env`` names a variable that is not set.
    """
    if webhook.url_env:
        env = os.environ if environ is None else environ
        url = env.get(webhook.url_env)
        if not url:
            raise ConfigError(
                f"'notify.webhook.url_env': environment variable {webhook.url_env} is not set"
            )
        return url
    return webhook.url or None


def make_webhook_sender(
    webhook: WebhookConfig, environ: Mapping[str, str] | None = None
) -> Send | None:
    """Return ``send(body: bytes)`` POSTing to the webhook, or None when it is off.

    Raises:
        ConfigError: see :func:`webhook_url`.
    """
    url = webhook_url(webhook, environ)
    if url is None:
        return None
    register_url_secrets(url)  # its path is the secret: never in a log line
    return lambda body: post_json(url, body, timeout=webhook.timeout)


def post_json(url: str, body: bytes, *, timeout: float) -> None:
    """POST ``body`` as ``application/json``; any 2xx answer counts as delivered.

    ``timeout`` (seconds) bounds the whole POST, from connect to the end of the answer,
    however slowly the server sends it (:mod:`.webhook_http`). Redirects are not followed
    (a POST must not silently become a GET). Of the answer's body at most
    :data:`MAX_ANSWER` bytes are read, however long it is. Error messages name only
    ``scheme://host:port``: a chat webhook URL's path is its secret.

    Raises:
        NotifyError: connection failure, timeout, or a non-2xx status.
    """
    # Imported here: requests costs ~30 ms to import and a run with nothing to post needs none.
    import requests

    from deploybot.notify.deliver.webhook_http import bounded_session

    where = url_origin(url)
    headers = {
        "Accept-Encoding": "identity",  # the body is not used: nothing to decompress
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": f"deploybot/{__version__}",
    }
    deadline = Deadline(timeout)
    try:
        with bounded_session(deadline) as session:
            response = session.post(
                url, data=body, headers=headers, timeout=timeout, allow_redirects=False, stream=True
            )
            with response:  # closes the connection: what was not read is never read
                _read_some(response, where)
    except requests.RequestException as exc:
        if deadline.passed:
            raise NotifyError(
                f"webhook {where}: no complete answer within the {timeout:g} s timeout"
            ) from exc
        raise NotifyError(f"webhook {where}: {_reason(exc, url)}") from exc
    if not 200 <= response.status_code < 300:
        reason = one_line(response.reason or "")
        raise NotifyError(f"webhook {where}: HTTP {response.status_code} {reason}".rstrip())


def _read_some(response: requests.Response, where: str) -> None:
    """Read at most :data:`MAX_ANSWER` bytes of the answer's body, as sent (never
    decompressed), so a short answer is taken whole and an endless one costs 64 KB. The
    body is not used; a body that breaks off or passes the deadline after the status line
    and headers arrived changes nothing (logged): the status decides."""
    import urllib3

    try:
        response.raw.read(MAX_ANSWER, decode_content=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        log.debug("webhook %s: answer body not read: %s", where, one_line(str(exc)))


def _reason(exc: requests.RequestException, url: str) -> str:
    """A one-line reason with the URL's path and query hidden."""
    parts = urlsplit(url)
    secret = parts.path + (f"?{parts.query}" if parts.query else "")
    text = " ".join(str(exc).split())
    if secret and secret != "/":
        text = text.replace(secret, "/[...]")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
