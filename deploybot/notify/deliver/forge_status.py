"""The third channel: a commit status for each build, posted to the forge of the source.

A status waits in the outbox as ``status-<sha>-<state>.status`` (:func:`queue_status`): the
forge-neutral :class:`~deploybot.config.forges.CommitStatus` as JSON, turned into the
forge's request (:mod:`.forges`) only when it is sent, with the config of that moment. It has
the outbox's retries and backoff (:mod:`.outbox`), so a forge that is down never holds up an
email or a publish, and the key makes each ``(commit, state)`` post at most once in a row:
a key already sent is never queued again, and a state is posted anew (``-2``, ``-3``...)
only when another one was posted after it (:func:`key_for`), so the forge always shows the
last build's.

**Superseding.** A later state for a commit withdraws the earlier ones still waiting
(``superseded/``): a ``pending`` not yet delivered when ``success`` is queued is never
posted; only ``success`` is. A forge shows the latest status of each context, so the
pending one would be overwritten at once (and, were a retry of it ever to land after the
success, the commit would show "pending" for good); posting only the last state costs one
request instead of two and cannot arrive out of order. The new status is queued before the
old ones are withdrawn, so a kill in between leaves both, posted oldest first.

**Answers.** 2xx: delivered. 408 and 429 (the forge asks to come back later), 5xx, a
timeout or a connection that fails: retried with backoff. Any other answer (401 bad token,
403, 404 no such repository, 422 a body refused, a redirect) is a refusal for good
(:class:`~deploybot.notify.deliver.outbox.Refused`): filed in the outbox's ``failed/`` and
told once. At most :data:`MAX_ANSWER` bytes of an answer are read, and ``status.timeout``
bounds the whole exchange (:mod:`.webhook_http`). The token comes from the environment
(``status.token_env``), goes only into a header, and is registered with
:func:`deploybot.support.redact.register_secret`, so no log line or error shows it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from deploybot import __version__
from deploybot.config.forges import FORGES, BuildState, CommitStatus, Forge
from deploybot.config.schema import StatusConfig
from deploybot.notify.deliver.outbox import (
    DROPPED_DIR,
    FAILED_DIR,
    SENT_DIR,
    STATUS_KEY_PREFIX,
    SUPERSEDED_DIR,
    DeliveryReport,
    Refused,
    deliver_pending,
    queue_email,
    read_status,
    withdraw,
)
from deploybot.support.deadline import Deadline
from deploybot.support.errors import ConfigError, NotifyError, one_line
from deploybot.support.redact import redact_text, register_secret, url_origin

if TYPE_CHECKING:
    import requests

STATUS = ".status"
"""The outbox suffix of a commit status entry."""
MAX_ANSWER = 64 * 1024
"""The most bytes of a forge's answer read (streamed); the rest is never read."""
MAX_REASON = 200
"""The most characters of a forge's own error message an error line quotes."""
RETRIED = frozenset({408, 429})
"""The 4xx answers that ask to come back later (RFC 9110 §15.5.9, RFC 6585 §4)."""

Send = Callable[[bytes], None]
log = logging.getLogger("deploybot.notify.status")


def is_on(config: StatusConfig) -> bool:
    """Whether commit statuses are posted (``status.api`` is set)."""
    return bool(config.api)


def status_key(sha: str, state: BuildState) -> str:
    """The outbox key of ``state`` for the source commit ``sha``: ``status-<sha>-<state>``."""
    return f"{STATUS_KEY_PREFIX}{sha}-{state.value}"


def queue_status(outbox_dir: Path, status: CommitStatus) -> Path:
    """Queue ``status`` under its key (:func:`key_for`), then withdraw the other states of
    its commit still waiting (the module docstring). Idempotent per key: a key waiting or
    already sent, refused or dropped is not queued again (then nothing is withdrawn).

    Returns the entry's path. Raises OSError (DiskFullError) when the outbox cannot be written.
    """
    key = key_for(outbox_dir, status.sha, status.state)
    body = json.dumps(status.to_json(), ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
    meta = {"subject": f"{status.state.value}: {status.description}", "channel": "status"}
    path = queue_email(outbox_dir, key, body, meta=meta, suffix=STATUS)
    if path.parent != outbox_dir:
        return path  # filed already (sent, refused, dropped): posted once, or never
    prefix = f"{STATUS_KEY_PREFIX}{status.sha}-"
    earlier = [p for p in outbox_dir.glob(f"{prefix}*{STATUS}") if p.stem != key]
    # and those refused before: retried by hand after this one (outbox retry), a pending
    # would be the forge's last word on the commit for good
    refused = sorted((outbox_dir / FAILED_DIR).glob(f"{prefix}*{STATUS}"))
    if earlier or refused:
        shown = ", ".join(p.stem for p in sorted(earlier + refused))
        log.info("%s supersedes %s", key, shown)
        withdraw(sorted(earlier))
        withdraw(refused, into=outbox_dir / SUPERSEDED_DIR)
    return path


def key_for(outbox_dir: Path, sha: str, state: BuildState) -> str:
    """The outbox key of ``state`` for ``sha``: :func:`status_key`, unless a final state
    (not ``pending``) the commit had before was followed by another one (the same commit
    built again: success, then failure, then success). The forge shows the latest post,
    so the state is posted again, under the first of ``status-<sha>-<state>-2``, ``-3``...
    not yet sent, refused or dropped. A state that is already the latest posted keeps its
    key: never posted twice in a row."""
    key = status_key(sha, state)
    if state is BuildState.PENDING:
        return key
    prefix = f"{STATUS_KEY_PREFIX}{sha}-"
    posted = [
        (float(read_status(path).get("sent_at") or 0.0), path.stem)
        for path in (outbox_dir / SENT_DIR).glob(f"{prefix}*{STATUS}")
        if not path.stem.endswith(f"-{BuildState.PENDING.value}")
    ]
    if not posted or _state_of(max(posted)[1], prefix) == state.value:
        return key
    filed = {
        path.stem
        for folder in (SENT_DIR, FAILED_DIR, DROPPED_DIR)
        for path in (outbox_dir / folder).glob(f"{prefix}*{STATUS}")
    }
    n = 1
    while (candidate := key if n == 1 else f"{key}-{n}") in filed:
        n += 1
    return candidate


def _state_of(stem: str, prefix: str) -> str:
    """``success`` of ``status-<sha>-success`` or ``status-<sha>-success-2``."""
    return stem.removeprefix(prefix).partition("-")[0]


def read_token(config: StatusConfig, environ: Mapping[str, str] | None = None) -> str:
    """The token in the environment variable ``status.token_env``, registered as a secret.

    Raises:
        ConfigError: the variable is not set, or is empty (naming the key and the variable).
    """
    env = os.environ if environ is None else environ
    name = config.token_env or ""
    token = env.get(name, "").strip()
    if not token:
        raise ConfigError(f"'status.token_env': environment variable {name} is not set")
    register_secret(token)
    return token


def make_status_sender(
    config: StatusConfig,
    environ: Mapping[str, str] | None = None,
    *,
    timeout: float | None = None,
) -> Send | None:
    """Return ``send(entry: bytes)`` posting a queued status to the forge, or None when
    statuses are off. ``timeout`` (seconds) replaces ``status.timeout``.

    Raises:
        ConfigError: see :func:`read_token`.
    """
    if not is_on(config):
        return None
    forge = FORGES[str(config.api)]
    token = read_token(config, environ)
    seconds = config.timeout if timeout is None else timeout

    def send(entry: bytes) -> None:
        try:
            status = CommitStatus.from_json(json.loads(entry))
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused(f"not a commit status entry: {one_line(exc)}") from exc
        url, headers, body = forge.request(
            status, url=config.url, repository=config.repository, token=token
        )
        post_status(forge, url, headers, body, timeout=seconds, repository=config.repository)

    return send


def post_status(
    forge: Forge,
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    timeout: float,
    repository: str = "",
) -> None:
    """POST ``body`` as JSON to ``url`` with ``headers``; any 2xx answer counts as delivered.

    ``timeout`` (seconds) bounds the whole exchange, connect to the last byte read, however
    slowly the forge answers; redirects are not followed; at most :data:`MAX_ANSWER` bytes
    of the answer are read. Error lines name the forge, its origin and ``repository``, and
    quote the forge's own ``message`` (cut to :data:`MAX_REASON`), never a header.

    Raises:
        Refused: a 3xx, or a 4xx other than 408 and 429: sending again cannot help.
        NotifyError: 5xx, 408, 429, a timeout or a connection failure: try again later.
    """
    # Imported here: requests costs ~30 ms to import and a run with nothing to post needs none.
    import requests

    from deploybot.notify.deliver.webhook_http import bounded_session

    where = f"{forge.title} {url_origin(url)}" + (f" ({repository})" if repository else "")
    sent = {
        **headers,
        "Accept-Encoding": "identity",  # the answer is read raw: nothing to decompress
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": f"deploybot/{__version__}",
    }
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    deadline = Deadline(timeout)
    try:
        with bounded_session(deadline) as session:
            response = session.post(
                url, data=data, headers=sent, timeout=timeout, allow_redirects=False, stream=True
            )
            with response:  # closes the connection: what was not read is never read
                answer = _read_answer(response, where)
    except requests.RequestException as exc:
        if deadline.passed:
            raise NotifyError(
                f"commit status {where}: no complete answer within the {timeout:g} s timeout"
            ) from exc
        text = redact_text(one_line(exc)).replace(urlsplit(url).path, "/...")
        raise NotifyError(f"commit status {where}: {type(exc).__name__}: {text}") from exc
    code = response.status_code
    if 200 <= code < 300:
        return
    line = f"commit status {where}: HTTP {code} {_reason(response, answer)}".rstrip()
    if code >= 500 or code in RETRIED:
        raise NotifyError(line)
    raise Refused(line)


def _read_answer(response: requests.Response, where: str) -> bytes:
    """At most :data:`MAX_ANSWER` bytes of the answer's body, as sent; b"" when the body
    breaks off or passes the deadline (the status line decides, not the body)."""
    import urllib3

    try:
        return bytes(response.raw.read(MAX_ANSWER, decode_content=False) or b"")
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        log.debug("commit status %s: answer body not read: %s", where, one_line(str(exc)))
        return b""


def _reason(response: requests.Response, answer: bytes) -> str:
    """The reason phrase, and the forge's own ``message`` (GitHub, Gitea, GitLab all send
    one in a JSON error body) when there is one: one line, redacted, cut."""
    reason = one_line(response.reason or "")
    try:
        data = json.loads(answer.decode("utf-8", "replace")) if answer else None
    except ValueError:
        data = None
    message = (data.get("message") or data.get("error")) if isinstance(data, dict) else None
    if message and not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    if not message:
        return reason
    text = redact_text(one_line(message))
    if len(text) > MAX_REASON:
        text = text[: MAX_REASON - 1] + "…"
    return f"{reason}: {text}" if reason else text


def deliver_statuses(
    config: StatusConfig,
    outbox: Path,
    *,
    retry_now: bool = False,
    clock: Callable[[], float] = time.time,
    timeout: float | None = None,
) -> DeliveryReport:
    """Post the due statuses in ``outbox`` (oldest first; :func:`~.outbox.deliver_pending`).
    ``timeout`` replaces ``status.timeout`` for each POST. Nothing when statuses are off or
    none waits.

    Raises:
        ConfigError: the token's variable is not set (:func:`read_token`).
    """
    if not is_on(config) or not any(outbox.glob(f"*{STATUS}")):
        return DeliveryReport(sent=(), failed=())
    send = make_status_sender(config, timeout=timeout)
    assert send is not None
    return deliver_pending(outbox, send, retry_now=retry_now, now=clock, suffix=STATUS)
