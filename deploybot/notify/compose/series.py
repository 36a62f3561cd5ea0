"""Compose git-multimail's summary ("refchange") email and its ``NN/TT`` commit emails.

Pure, like :mod:`.email`: the caller passes the git data (brief list, diff-tree lines,
``git log`` text), the :class:`.envelope.Envelope` and the :class:`.envelope.Limits`. Used
when the publish branch gained several commits since the last email; one new commit keeps the
combined email of :mod:`.email`.

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

from deploybot.notify.compose.email import (
    DEFAULT_LIMITS,
    assemble,
    brief_line,
    check_args,
    cut_subject,
    envelope_headers,
    intro_lines,
    links_section,
    message_id,
    one_line,
    source_section,
)
from deploybot.notify.compose.envelope import Envelope, Limits
from deploybot.notify.compose.links import BrokenLinks
from deploybot.notify.compose.sources import SourceLog
from deploybot.notify.gitlog.excerpt import LogExcerpt, as_excerpt, limit_body, limit_log_body

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
    envelope: Envelope,
    old: str,
    new: str,
    old_brief: tuple[str, str],
    new_brief: Sequence[tuple[str, str]],
    changes: Sequence[str],
    limits: Limits = DEFAULT_LIMITS,
) -> bytes:
    """Return the summary email for a fast-forward of ``envelope.refname`` from ``old`` to
    ``new``.

    Args:
        old_brief: ``(short id, subject)`` of ``old`` (the ``from`` line).
        new_brief: ``(short id, subject)`` per new commit, oldest first (``new`` lines).
        changes: ``git diff-tree --stat --summary --find-copies-harder old..new`` lines.
        limits: only ``max_line_length`` and ``max_lines`` apply (no commit subject here).
        Others: as :func:`.email.compose_combined_email`.

    Returns:
        The message bytes (UTF-8, ``\\n`` line ends, a final empty line).

    Raises:
        ValueError: as :func:`.email.compose_combined_email`.
    """
    check_args(envelope, old, new)
    repo = one_line(envelope.repo_name)
    subject = f"[{repo}] branch {envelope.branch} updated ({old_brief[0]} -> {new_brief[-1][0]})"
    headers = envelope_headers(
        envelope,
        subject,
        summary_message_id(old, new, envelope.to, envelope.host),
        [("X-Git-Oldrev", old), ("X-Git-Newrev", new), ("X-Git-NotificationType", "ref_changed")],
    )
    intro = intro_lines(envelope, "a change", url_end=".")
    body = [brief_line("from", *old_brief), *(brief_line("new", s, t) for s, t in new_brief)]
    body += ["", *NEW_REVISIONS.format(tot=len(new_brief)).split("\n"), "", ""]
    body += ["Summary of changes:", *changes]
    return assemble(headers, intro, limit_body(body, limits.max_line_length, limits.max_lines))


def compose_commit_email(
    *,
    envelope: Envelope,
    log_text: str | LogExcerpt,
    commit: str,
    num: int,
    tot: int,
    subject_line: str,
    in_reply_to: str,
    limits: Limits = DEFAULT_LIMITS,
    sources: SourceLog | None = None,
    broken: BrokenLinks | None = None,
) -> bytes:
    """Return the ``[repo] NN/TT: <subject>`` email for one commit of a summarised push.

    Args:
        log_text: ``git log -C --stat -p --cc -1 <commit>`` output, or its excerpt (as
            :func:`.email.compose_combined_email`).
        commit: the commit (40 hex); ``X-Git-Rev`` and the Message-ID.
        num, tot: its 1-based position and the number of new commits (``%02d/%02d``).
        in_reply_to: the summary's Message-ID (``<...>``).
        sources: the build's source commits, after the intro (:func:`.email.source_section`).
        broken: the build's broken links, after them (:func:`.email.links_section`).
        Others: as :func:`.email.compose_combined_email`.

    Raises:
        ValueError: as :func:`.email.compose_combined_email`; ``in_reply_to`` not one
            ``<...>`` token; ``num`` not in ``1..tot``.
    """
    check_args(envelope, None, commit)
    if not (in_reply_to.startswith("<") and in_reply_to.endswith(">")) or " " in in_reply_to:
        raise ValueError(f"in_reply_to must be one <message-id>: {in_reply_to!r}")
    if not 1 <= num <= tot:
        raise ValueError(f"num must be in 1..{tot}: {num}")
    cut = cut_subject(subject_line, limits.subject_max_length)
    subject = f"[{one_line(envelope.repo_name)}] {num:02d}/{tot:02d}: {cut}"
    headers = envelope_headers(
        envelope,
        subject,
        message_id(commit, envelope.to, envelope.host),
        [("X-Git-Rev", commit), ("X-Git-NotificationType", "diff")],
        in_reply_to=in_reply_to,
    )
    intro = intro_lines(envelope, "a commit", blank_lines=1) + source_section(sources, limits)
    intro += links_section(broken, limits)
    log = as_excerpt(log_text, limits.max_lines, limits.max_line_length)
    body = limit_log_body([], log, limits.max_line_length, limits.max_lines)
    return assemble(headers, intro, body)
