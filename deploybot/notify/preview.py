"""Announce a branch preview: its email (:mod:`deploybot.notify.compose.preview`) queued in the
previews' own outbox and delivered through [notify]'s transport, with the outbox's retries."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from deploybot.config.schema import NotifyConfig
from deploybot.notify.compose.envelope import Envelope
from deploybot.notify.compose.preview import PreviewNews, compose_preview_email, preview_subject
from deploybot.notify.deliver.outbox import DeliveryReport, queue_email
from deploybot.notify.stage import deliver_all


def announce_preview(
    news: PreviewNews,
    notify: NotifyConfig,
    *,
    repo_path: Path,
    refname: str,
    outbox: Path,
    now: datetime,
    retry_now: bool = False,
) -> DeliveryReport:
    """Queue the email of ``news`` (the preview commit on ``refname`` of the mirror
    ``repo_path``) in ``outbox`` under the key ``<commit>.preview``, once, then deliver
    what waits there. Nothing is queued with ``transport = "none"``.

    Raises:
        ConfigError: an unusable transport setting.
        OSError: the outbox cannot be written.
        ValueError: as :func:`deploybot.notify.compose.preview.compose_preview_email`.
    """
    if notify.transport != "none":
        envelope = Envelope.from_config(notify, repo_path=repo_path, refname=refname, date=now)
        message = compose_preview_email(envelope, news, notify.subject_max_length)
        meta = {
            "queued_at": time.time(),
            "subject": preview_subject(envelope.repo_name, news.branch, news.source_commit),
            "role": "preview",
            "refname": refname,
            "new": news.commit,
        }
        queue_email(outbox, f"{news.commit}.preview", message, meta=meta)
    return deliver_all(notify, outbox, retry_now=retry_now)
