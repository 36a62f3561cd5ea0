"""The combined email of one build commit, read from a repository: what ``deploybot notify
--commit`` and the tests compose."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from deploybot.config.schema import NotifyConfig
from deploybot.notify.compose.email import compose_combined_email
from deploybot.notify.compose.envelope import Envelope, Limits
from deploybot.notify.compose.sources import SourceLog, SourceRepo


def build_email(
    repo_path: Path,
    refname: str,
    old: str | None,
    new: str,
    notify: NotifyConfig,
    *,
    now: datetime,
    host: str | None = None,
    sources: SourceRepo | None = None,
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
        sources: where ``new``'s source commits can be read: the email names them when
            ``new``'s record (its note) names its source commit
            (:mod:`deploybot.notify.compose.sources`).

    Raises:
        ValueError: see :func:`compose_combined_email`.
        KeyError: ``new`` is not in the repository.
    """
    from deploybot.notify.gitlog.commit_log import read_log_excerpt
    from deploybot.notify.gitlog.summary import brief_summary

    limits = Limits.from_config(notify)
    log = read_log_excerpt(
        repo_path, new, max_lines=limits.max_lines, max_line_length=limits.max_line_length
    )
    [(short, subject)] = brief_summary(repo_path, [new])
    return compose_combined_email(
        envelope=Envelope.from_config(
            notify, repo_path=repo_path, refname=refname, date=now, host=host
        ),
        log_text=log,
        old=old,
        new=new,
        subject_line=subject,
        limits=limits,
        short=short,
        sources=source_log(repo_path, new, sources),
    )


def source_log(repo_path: Path, build: str, sources: SourceRepo | None) -> SourceLog | None:
    """What build commit ``build`` of ``repo_path`` was made from
    (:func:`.source_read.read_source_log`), or None without ``sources``."""
    if sources is None:
        return None
    from deploybot.notify.source_read import read_source_log

    return read_source_log(repo_path, build, sources)
