"""Compose the commit email: git-multimail's "combined" email, as ASF's gitbox sends it.

Pure: no git, no network, no clock. The caller passes the ``git log -C --stat -p --cc -1``
text of the build commit, the commit subject, the :class:`.envelope.Envelope` (repository,
branch, pusher, addresses, host, send time) and the :class:`.envelope.Limits`;
:func:`compose_combined_email` returns the whole message as bytes (UTF-8, ``\\n`` line
endings; the SMTP transport turns them into CRLF on the wire). The header block and intro
every email kind shares are built here too (:func:`envelope_headers`, :func:`intro_lines`).

Formats followed:

- Header order and values: git-multimail's ``COMBINED_HEADER_TEMPLATE`` in ASF's fork
  (``apache/infrastructure-puppet`` ``modules/gitbox/files/asfgit/git_multimail.py``); see
  ``notifier-research.md`` §1.4. Address headers are built like multimail's
  ``addr_header_encode`` (``"addr" <addr>`` for a bare list address), other headers like its
  ``header_encode``: :class:`email.header.Header` folding at 76 columns, RFC 2047 encoded words
  (utf-8) only for non-ASCII text.
- ``Date``: RFC 5322 §3.3 (``email.utils.format_datetime``).
- Body: multimail's combined intro + ``generate_update_summary`` + ``Revision`` body, with
  ``emailMaxLineLength`` / ``emailMaxLines`` / ``dateSubstitute`` (research §1.5, §1.6).

Deliberate differences from ASF (documented in the project's notes):

- Intro line 1 reads ``This is an automated email from the git repository.`` (ASF's says
  "ASF dual-hosted git repository", upstream's "git hooks/post-receive script").
- ``X-Git-Multimail-Version`` is replaced by ``X-Deploybot-Version`` in the same place: the mail
  is not produced by git-multimail, so it should not claim to be.
- ``Message-ID`` is deterministic (:func:`message_id`) instead of ``make_msgid()``, so a re-send
  after an uncertain delivery carries the same id and recipients can drop the duplicate.
- A created branch (``old is None``) still gets one combined-style email (intro, "new" line,
  full log), with ``X-Git-Oldrev`` all zeros and multimail's create-summary subject
  ``[repo] branch B created (now abc1234)``.
- After the intro, the source commits the build was made from (:mod:`.sources`), when the
  caller knows them: a build commit's own log says only ``Build at ...``; then the build's
  broken links, when it has some (:mod:`.links`).
- Short ids are ``git rev-parse --short``'s (as multimail's), given by the caller; without
  one, the log's ``index`` length.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from email.charset import Charset
from email.header import Header
from email.utils import format_datetime, formataddr

from deploybot import __version__
from deploybot.notify.compose.envelope import BRANCH_PREFIX, Envelope, Limits
from deploybot.notify.compose.links import BrokenLinks, broken_lines
from deploybot.notify.compose.names import is_host_name
from deploybot.notify.compose.sources import SourceLog, source_lines
from deploybot.notify.gitlog.excerpt import LogExcerpt, as_excerpt, limit_log_body
from deploybot.support.redact import redact_url as redact_url  # re-exported

ZERO_SHA = "0" * 40
INTRO_LINE = "This is an automated email from the git repository."
DEFAULT_LIMITS = Limits()

_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
# Every character str.splitlines() breaks at, plus the other C0 controls and DEL: none of them
# may reach a header value (header injection) or split a one-line body field.
_NAME_ADDR_RE = re.compile(r"^(.*?)\s*<([^<>]*)>$")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def compose_combined_email(
    *,
    envelope: Envelope,
    log_text: str | LogExcerpt,
    old: str | None,
    new: str,
    subject_line: str,
    limits: Limits = DEFAULT_LIMITS,
    short: str | None = None,
    sources: SourceLog | None = None,
    broken: BrokenLinks | None = None,
) -> bytes:
    """Return the combined commit email for one new commit on a branch, as bytes.

    Args:
        envelope: repository, branch, pusher, sender, recipients, host and send time
            (:class:`.envelope.Envelope`).
        log_text: output of ``git log -C --stat -p --cc -1 <new>`` (``Date:   `` line as git
            prints it; it becomes ``AuthorDate: ``), or its :class:`.body.LogExcerpt` made
            with ``limits.max_line_length`` and at least ``limits.max_lines`` (what a huge
            commit needs: :func:`deploybot.notify.gitlog.commit_log.read_log_excerpt`).
        old: previous 40-hex tip, or None when the branch was created.
        new: the new 40-hex tip (the build commit).
        subject_line: the commit subject (``git log --format=%s``; see
            :func:`deploybot.notify.gitlog.message.commit_subject`).
        limits: line length, line count and subject length limits (:class:`.envelope.Limits`;
            default 500 / 10000 / 500 as git-multimail).
        short: ``new`` abbreviated as ``git rev-parse --short`` does in its repository
            (:func:`deploybot.notify.gitlog.summary.short_id`), for the ``new`` line, the ``is
            described below`` line and a created branch's subject; None: as long as the log's
            ``index`` lines (no uniqueness check; for callers without the repository).
        sources: the source commits the build was made from (:mod:`.sources`), shown
            after the intro, before ``The following commit(s)``; None: no such section.
        broken: the build's broken links (:mod:`.links`), after the sources; None: no such
            section.

    Returns:
        The message: ASCII headers (folded by :class:`email.header.Header` at 76 columns; a
        line of encoded words may reach 78, RFC 5322's limit), a blank line, the UTF-8 body
        (unencodable lone surrogates become ``?``), every line ending in ``\\n``.

    Raises:
        ValueError: ``log_text`` an excerpt made for other limits (see
            :func:`.body.limit_log_body`); ``old``/``new`` not 40 lowercase hex, ``refname``
            not under ``refs/heads/``, ``host`` not a host name, ``to`` empty or an address
            not a bare ASCII addr-spec, ``sender`` without an ASCII address, ``date`` naive.
    """
    check_args(envelope, old, new)
    log = as_excerpt(log_text, limits.max_lines, limits.max_line_length)
    if short is None:
        short = new[: log.short_length]
    elif not new.startswith(short) or len(short) < 4:
        raise ValueError(f"short must be a prefix of new: {short!r}")
    subject = _email_subject(
        one_line(envelope.repo_name),
        envelope.branch,
        old,
        short,
        cut_subject(subject_line, limits.subject_max_length),
    )
    headers = envelope_headers(
        envelope,
        subject,
        message_id(new, envelope.to, envelope.host),
        [
            ("X-Git-Oldrev", old or ZERO_SHA),
            ("X-Git-Newrev", new),
            ("X-Git-Rev", new),
            ("X-Git-NotificationType", "ref_changed_plus_diff"),
        ],
    )
    intro = intro_lines(envelope, "a commit") + source_section(sources, limits)
    intro += links_section(broken, limits)
    head = _body_head(envelope.refname, short, subject_line)
    body = limit_log_body(head, log, limits.max_line_length, limits.max_lines)
    return assemble(headers, intro, body)


def assemble(headers: Sequence[str], intro: Sequence[str], body: Sequence[str]) -> bytes:
    """Return the message bytes: header lines, a blank line, intro, body, the blank footer.

    ASF's footer template is a single empty line (research §1.5), so every message ends with
    one empty line. Unencodable lone surrogates become ``?``.
    """
    text = "".join(line + "\n" for line in [*headers, "", *intro, *body, ""])
    return text.encode("utf-8", "replace")


def message_id(new: str, to: Sequence[str], host: str) -> str:
    """Return the deterministic Message-ID (RFC 5322 §3.6.4) for commit ``new`` sent to ``to``.

    Shape: ``<{new}.{sha1(sorted lowercased addresses joined by ",")[:12]}.deploybot@{host}>``.
    The same commit announced to the same list always gets the same id, so a re-send after an
    uncertain delivery is recognisable as a duplicate; a different list gets a different id.
    """
    digest = hashlib.sha1(",".join(sorted(a.lower() for a in to)).encode("utf-8")).hexdigest()
    return f"<{new}.{digest[:12]}.deploybot@{host}>"


def one_line(text: str) -> str:
    """Return ``text`` with every line break and control character replaced by a space."""
    return _CONTROL_RE.sub(" ", text)


def check_args(envelope: Envelope, old: str | None, new: str) -> None:
    """Validate the arguments every email kind shares: the envelope and the commit ids.

    Raises:
        ValueError: see :func:`compose_combined_email`.
    """
    refname, host, to, date = envelope.refname, envelope.host, envelope.to, envelope.date
    for name, value in (("new", new), ("old", old)):
        if value is not None and not _SHA_RE.match(value):
            raise ValueError(f"{name} must be a 40-character lowercase hex commit id: {value!r}")
    if not refname.startswith(BRANCH_PREFIX) or one_line(refname) != refname or " " in refname:
        raise ValueError(f"refname must be a branch ref (refs/heads/...): {refname!r}")
    if not is_host_name(host):
        raise ValueError(f"host must be a host name: {host!r}")
    if not to:
        raise ValueError("to must list at least one address")
    for addr in to:
        if not addr.isascii() or re.search(r"[\x00-\x20\x7f<>\",]", addr):
            raise ValueError(f"addresses must be bare ASCII addr-specs: {addr!r}")
    if date.tzinfo is None or date.utcoffset() is None:
        raise ValueError("date must be timezone-aware")


def _email_subject(repo: str, branch: str, old: str | None, short: str, subject: str) -> str:
    if old is None:
        return f"[{repo}] branch {branch} created (now {short})"
    return f"[{repo}] branch {branch} updated: {subject}"


def cut_subject(subject: str, max_length: int = 500) -> str:
    """multimail's subjectMaxLength: a commit subject (made one line) longer than
    ``max_length`` characters becomes its first ``max_length - 6`` + ``" [...]"``; 0 disables.
    """
    subject = one_line(subject)
    if max_length > 0 and len(subject) > max_length:
        return subject[: max_length - 6] + " [...]"
    return subject


def envelope_headers(
    envelope: Envelope,
    subject: str,
    msgid: str,
    rev_fields: Sequence[tuple[str, str]],
    in_reply_to: str | None = None,
) -> list[str]:
    """Return the header lines (folded, without line ends) in ASF's order for every kind.

    ``Date``, ``To``, ``Subject``, the MIME fields, ``Message-ID`` (``msgid``), ``From``,
    ``In-Reply-To`` and ``References`` when ``in_reply_to`` is given (a ``NN/TT`` email),
    ``X-Git-Host``/``-Repo``/``-Refname``/``-Reftype``, then ``rev_fields`` (the kind's
    ``X-Git-Oldrev``/``-Newrev``/``-Rev`` and ``X-Git-NotificationType``), then
    ``X-Deploybot-Version`` and ``Auto-Submitted`` (multimail's ``*_HEADER_TEMPLATE``s).

    Raises:
        ValueError: ``envelope.sender`` has no usable address (:func:`format_sender`).
    """
    fields: list[tuple[str, str]] = [
        ("Date", format_datetime(envelope.date)),
        ("To", format_recipients(envelope.to)),
        ("Subject", subject),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Transfer-Encoding", "8bit"),
        ("Message-ID", msgid),
        ("From", format_sender(envelope.sender)),
    ]
    if in_reply_to is not None:
        fields += [("In-Reply-To", one_line(in_reply_to)), ("References", one_line(in_reply_to))]
    fields += [
        ("X-Git-Host", envelope.host),
        ("X-Git-Repo", one_line(envelope.repo_name)),
        ("X-Git-Refname", envelope.refname),
        ("X-Git-Reftype", "branch"),
        *rev_fields,
        ("X-Deploybot-Version", __version__),
        ("Auto-Submitted", "auto-generated"),
    ]
    return [header_line(name, value) for name, value in fields]


def header_line(name: str, value: str) -> str:
    """Return one header field, ``Name: value``, folded and encoded as multimail does.

    ``value`` is made one line first (no header injection). ``Message-ID``, ``In-Reply-To``,
    ``References``, ``To`` and ``From`` values are used as given (built from validated
    parts); the others go through :func:`_encode`.
    """
    value = one_line(value)
    if name in ("Message-ID", "In-Reply-To", "References", "To", "From"):
        # Built from validated parts. The Message-ID is one token: folding would only move it
        # onto a line of its own.
        return f"{name}: {value}"
    return f"{name}: {_encode(value, name)}"


def _encode(text: str, header_name: str | None) -> str:
    """multimail's ``header_encode``: fold at 76 columns; RFC 2047 (utf-8) only if needed.

    Needed for non-ASCII text, and (as ``email.policy`` does) for ASCII text holding ``=?``,
    so that a literal ``=?utf-8?q?...?=`` in a commit subject is shown as typed, not decoded.
    """
    plain = text.isascii() and "=?" not in text
    charset = Charset("ascii" if plain else "utf-8")
    return Header(text, charset=charset, header_name=header_name).encode()


def format_recipients(to: Sequence[str]) -> str:
    """Return the ``To`` value: ``"addr" <addr>`` per address (as ASF), joined by ``, ``."""
    joined = ", ".join(formataddr((addr, addr)) for addr in to)
    return Header(joined, charset=Charset("ascii"), header_name="To").encode()


def format_sender(sender: str) -> str:
    """Return the ``From`` value for ``addr`` or ``Name <addr>``: the name RFC 2047 encoded
    when needed (multimail's ``addr_header_encode``), the address never.

    Raises:
        ValueError: the address is empty, not ASCII, or holds spaces or angle brackets.
    """
    match = _NAME_ADDR_RE.match(one_line(sender).strip())
    name, addr = (match.group(1), match.group(2)) if match else ("", one_line(sender).strip())
    if not addr or not addr.isascii() or re.search(r"[\s<>]", addr):
        raise ValueError(f"sender must be 'addr' or 'Name <addr>' with an ASCII addr: {sender!r}")
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    if not name:
        return addr
    if name.isascii() and "=?" not in name:
        return formataddr((name, addr))
    # One RFC 2047 word. Also for ASCII with "=?": readers decode encoded words even inside a
    # quoted string, so only encoding keeps a literal "=?...?=" literal.
    return f"{Charset('utf-8').header_encode(name)} <{addr}>"


def intro_lines(
    envelope: Envelope, pushed: str, url_end: str = "", blank_lines: int = 2
) -> list[str]:
    """Return the intro: :data:`INTRO_LINE`, who ``pushed`` (``a commit``, ``a change``) to
    which branch, the repository URL (credentials removed) + ``url_end``, ``blank_lines``
    empty lines. Combined: ``"a commit"``; REFCHANGE_INTRO_TEMPLATE: ``"a change"``, ``"."``;
    REVISION_INTRO_TEMPLATE: ``"a commit"``, one blank line (research §1.5)."""
    pusher, url = one_line(envelope.pusher), redact_url(one_line(envelope.repository_url))
    return [
        INTRO_LINE,
        "",
        f"{pusher} pushed {pushed} to branch {envelope.branch}",
        f"in repository {url}{url_end}",
        *[""] * blank_lines,
    ]


def source_section(sources: SourceLog | None, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The intro's lines naming the source commits of a build (:func:`.sources.source_lines`,
    each made one line and cut at ``limits.max_line_length``), then an empty line; none
    when ``sources`` is None. They sit in the intro, so they do not count against
    ``max_lines`` (they are at most :data:`.sources.MAX_LISTED` + 3)."""
    if sources is None:
        return []
    return [one_line(line) for line in source_lines(sources, limits.max_line_length)] + [""]


def links_section(broken: BrokenLinks | None, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The intro's "Broken links" lines (:func:`.links.broken_lines`, each made one line and
    cut at ``limits.max_line_length``), then an empty line; none when ``broken`` is None.
    In the intro, they do not count against ``max_lines`` (at most
    :data:`deploybot.record.note.BROKEN_LINKS_LISTED` + 3)."""
    return [one_line(line) for line in broken_lines(broken, limits.max_line_length)]


def _body_head(refname: str, short: str, subject: str) -> list[str]:
    """The body lines before the git log text: the "new" list."""
    return [
        f"The following commit(s) were added to {refname} by this push:",
        brief_line("new", short, subject),
        f"{short} is described below",
        "",
    ]


def brief_line(action: str, short: str, subject: str) -> str:
    """multimail's BRIEF_SUMMARY_TEMPLATE ``%(action)8s %(rev_short)-8s %(text)s``."""
    return f"{action:>8} {short:<8} {one_line(subject)}"
