"""The email of a branch preview: short, and saying it is a preview where a reader looks first.

Pure: no git, no network, no clock. Its subject is ``[<repo>] Preview of <branch> at <short>``
and its body's first line ``This is a preview of the branch <branch>, not the published
site.``, so that neither a list's reader nor a filter takes it for a production build; then
the source commit, the preview branch's commit, the folder and the preview's address. The
headers are the commit email's (:func:`~deploybot.notify.compose.email.envelope_headers`,
ASF's order), with ``X-Deploybot-Preview`` naming the branch for filters.
"""

from __future__ import annotations

from dataclasses import dataclass

from deploybot.notify.compose.email import (
    assemble,
    check_args,
    cut_subject,
    envelope_headers,
    message_id,
    one_line,
)
from deploybot.notify.compose.envelope import Envelope


@dataclass(frozen=True)
class PreviewNews:
    """What a preview email tells: the source ``branch`` and ``source_commit`` (40 hex) it
    was built from, the ``commit`` (40 hex) on the preview branch (``envelope.refname``) that
    published it, the ``folder`` (``preview/feature-x``), the preview's ``url`` (None when
    ``preview.site_url`` is unset) and the number of ``changed`` files."""

    branch: str
    source_commit: str
    commit: str
    folder: str
    url: str | None
    changed: int


def preview_subject(repo_name: str, branch: str, source_commit: str) -> str:
    """``[<repo>] Preview of <branch> at <source commit, 12 hex>``."""
    return f"[{one_line(repo_name)}] Preview of {one_line(branch)} at {source_commit[:12]}"


def compose_preview_email(envelope: Envelope, news: PreviewNews, subject_max: int = 500) -> bytes:
    """The preview email of ``news``, sent as ``envelope`` says, as bytes (UTF-8, ``\\n``
    line ends); the subject cut at ``subject_max`` characters
    (:func:`~deploybot.notify.compose.email.cut_subject`; 0: no limit).

    Raises:
        ValueError: as :func:`~deploybot.notify.compose.email.check_args` (commit ids,
            refname, host, addresses, a naive date).
    """
    check_args(envelope, None, news.commit)
    subject = cut_subject(preview_subject(envelope.repo_name, news.branch, news.source_commit),
                          subject_max)  # fmt: skip
    headers = envelope_headers(
        envelope,
        subject,
        message_id(news.commit, envelope.to, envelope.host),
        [
            ("X-Git-Newrev", news.commit),
            ("X-Git-Rev", news.commit),
            ("X-Deploybot-Preview", one_line(news.branch)),
        ],
    )
    branch = one_line(news.branch)
    intro = [
        f"This is a preview of the branch {branch}, not the published site.",
        "",
        f"The branch {branch} at {news.source_commit} was built as a preview",
        f"into {news.folder}/ of the branch {envelope.branch}, commit {news.commit[:12]}",
        f"({news.changed} file{'' if news.changed == 1 else 's'} changed).",
        "",
    ]
    where = [f"See it at {one_line(news.url)}", ""] if news.url else []
    return assemble(headers, intro, where)
