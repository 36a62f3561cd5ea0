"""Compose git-multimail's summary ("refchange") email and its ``NN/TT`` commit emails.

Pure, like :mod:`.email`: the caller passes the git data (brief list, diff-tree lines,
``git log`` text) and the send time. Used when the publish branch gained several commits
since the last email; one new commit keeps the combined email of :mod:`.email`.

Formats followed (ASF's git-multimail fork, ``notifier-research.md`` §1.2-§1.5):

- Summary: ``REFCHANGE_HEADER_TEMPLATE`` (type ``ref_changed``, no ``X-Git-Rev``),
  ``REFCHANGE_INTRO_TEMPLATE`` (``pushed a change to``, the URL ends with a period, two blank
  lines), then ``generate_revision_change_summary`` for a fast-forward update: the ``from``
  line, one ``new`` line per commit (``%8s %-8s %s``), a blank line, ``NEW_REVISIONS_TEMPLATE``,
  a blank line, ``Summary of changes:`` and the ``git diff-tree --stat --summary
  --find-copies-harder old..new`` lines.
- Commit ``NN/TT``: ``REVISION_HEADER_TEMPLATE`` (``In-Reply-To`` and ``References`` = the
  summary's Message-ID, type ``diff``), ``REVISION_INTRO_TEMPLATE`` (one blank line), then
  ``git log -C --stat -p --cc -1`` with ``AuthorDate:``.
- Both: the body (after the intro) goes through emailMaxLineLength/emailMaxLines; the footer
  is one empty line; RFC 5322 dates; deterministic Message-IDs.

Deliberate differences from ASF, as in :mod:`.email` (intro wording, ``X-Deploybot-Version``),
plus: a commit email carries a ``Message-ID`` (ASF leaves it to the MTA), placed where the
combined email has it, and equal to the one a combined email for that commit would carry
(:func:`.email.message_id`), so a commit re-announced in another form is still one message
to a de-duplicating archive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from email.utils import format_datetime

from deploybot import __version__
from deploybot.notify.body import LogExcerpt, as_excerpt, limit_body, limit_log_body
from deploybot.notify.email import (
    BRANCH_PREFIX,
    INTRO_LINE,
    assemble,
    brief_line,
    check_args,
    cut_subject,
    format_recipients,
    format_sender,
    header_line,
    message_id,
    one_line,
    redact_url,
)

NEW_REVISIONS = (
    'The {tot} revisions listed above as "new" are entirely new to this\n'
    "repository and will be described in separate emails.  The revisions\n"
    'listed as "add" were already present in the repository and have only\n'
    "been added to this reference."
)


def summary_message_id(old: str, new: str, to: Sequence[str], host: str) -> str:
    """Return the summary email's deterministic Message-ID (RFC 5322 §3.6.4).

    Shape: ``<{old}-{new}.{sha1(sorted lowercased addresses)[:12]}.deploybot@{host}>``, so the
    same range announced to the same list always has the same id.
    """
    digest = hashlib.sha1(",".join(sorted(a.lower() for a in to)).encode("utf-8")).hexdigest()
    return f"<{old}-{new}.{digest[:12]}.deploybot@{host}>"


def compose_summary_email(
    *,
    repo_name: str,
    repository_url: str,
    refname: str,
    old: str,
    new: str,
    old_brief: tuple[str, str],
    new_brief: Sequence[tuple[str, str]],
    changes: Sequence[str],
    pusher: str,
    sender: str,
    to: Sequence[str],
    host: str,
    date: datetime,
    max_line_length: int = 500,
    max_lines: int = 10000,
) -> bytes:
    """Return the summary email for a fast-forward of ``refname`` from ``old`` to ``new``.

    Args:
        old_brief: ``(short id, subject)`` of ``old`` (the ``from`` line).
        new_brief: ``(short id, subject)`` per new commit, oldest first (``new`` lines).
        changes: ``git diff-tree --stat --summary --find-copies-harder old..new`` lines.
        Others: as :func:`.email.compose_combined_email`.

    Returns:
        The message bytes (UTF-8, ``\\n`` line ends, a final empty line).

    Raises:
        ValueError: as :func:`.email.compose_combined_email`.
    """
    check_args(refname, old, new, host, to, date)
    repo, branch = one_line(repo_name), refname[len(BRANCH_PREFIX) :]
    subject = f"[{repo}] branch {branch} updated ({old_brief[0]} -> {new_brief[-1][0]})"
    fields = [
        ("Date", format_datetime(date)),
        ("To", format_recipients(to)),
        ("Subject", subject),
        *_mime_fields(),
        ("Message-ID", summary_message_id(old, new, to, host)),
        ("From", format_sender(sender)),
        *_git_fields(host, repo, refname),
        ("X-Git-Oldrev", old),
        ("X-Git-Newrev", new),
        ("X-Git-NotificationType", "ref_changed"),
        *_trailer_fields(),
    ]
    url = redact_url(one_line(repository_url))
    intro = [INTRO_LINE, "", f"{one_line(pusher)} pushed a change to branch {branch}"]
    intro += [f"in repository {url}.", "", ""]
    body = [brief_line("from", *old_brief), *(brief_line("new", s, t) for s, t in new_brief)]
    body += ["", *NEW_REVISIONS.format(tot=len(new_brief)).split("\n"), "", ""]
    body += ["Summary of changes:", *changes]
    headers = [header_line(name, value) for name, value in fields]
    return assemble(headers, intro, limit_body(body, max_line_length, max_lines))


def compose_commit_email(
    *,
    log_text: str | LogExcerpt,
    repo_name: str,
    repository_url: str,
    refname: str,
    commit: str,
    num: int,
    tot: int,
    subject_line: str,
    in_reply_to: str,
    pusher: str,
    sender: str,
    to: Sequence[str],
    host: str,
    date: datetime,
    max_line_length: int = 500,
    max_lines: int = 10000,
    subject_max_length: int = 500,
) -> bytes:
    """Return the ``[repo] NN/TT: <subject>`` email for one commit of a summarised push.

    Args:
        log_text: ``git log -C --stat -p --cc -1 <commit>`` output, or its excerpt (as
            :func:`.email.compose_combined_email`).
        commit: the commit (40 hex); ``X-Git-Rev`` and the Message-ID.
        num, tot: its 1-based position and the number of new commits (``%02d/%02d``).
        in_reply_to: the summary's Message-ID (``<...>``).
        Others: as :func:`.email.compose_combined_email`.

    Raises:
        ValueError: as :func:`.email.compose_combined_email`; ``in_reply_to`` not one
            ``<...>`` token; ``num`` not in ``1..tot``.
    """
    check_args(refname, None, commit, host, to, date)
    if not (in_reply_to.startswith("<") and in_reply_to.endswith(">")) or " " in in_reply_to:
        raise ValueError(f"in_reply_to must be one <message-id>: {in_reply_to!r}")
    if not 1 <= num <= tot:
        raise ValueError(f"num must be in 1..{tot}: {num}")
    repo, branch = one_line(repo_name), refname[len(BRANCH_PREFIX) :]
    subject = f"[{repo}] {num:02d}/{tot:02d}: {cut_subject(subject_line, subject_max_length)}"
    fields = [
        ("Date", format_datetime(date)),
        ("To", format_recipients(to)),
        ("Subject", subject),
        *_mime_fields(),
        ("Message-ID", message_id(commit, to, host)),
        ("From", format_sender(sender)),
        ("In-Reply-To", one_line(in_reply_to)),
        ("References", one_line(in_reply_to)),
        *_git_fields(host, repo, refname),
        ("X-Git-Rev", commit),
        ("X-Git-NotificationType", "diff"),
        *_trailer_fields(),
    ]
    url = redact_url(one_line(repository_url))
    intro = [INTRO_LINE, "", f"{one_line(pusher)} pushed a commit to branch {branch}"]
    intro += [f"in repository {url}", ""]
    headers = [header_line(name, value) for name, value in fields]
    log = as_excerpt(log_text, max_lines, max_line_length)
    return assemble(headers, intro, limit_log_body([], log, max_line_length, max_lines))


def _mime_fields() -> list[tuple[str, str]]:
    return [
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Transfer-Encoding", "8bit"),
    ]


def _git_fields(host: str, repo: str, refname: str) -> list[tuple[str, str]]:
    return [
        ("X-Git-Host", host),
        ("X-Git-Repo", repo),
        ("X-Git-Refname", refname),
        ("X-Git-Reftype", "branch"),
    ]


def _trailer_fields() -> list[tuple[str, str]]:
    return [("X-Deploybot-Version", __version__), ("Auto-Submitted", "auto-generated")]
