"""What the emails of one announcement share: who pushed where, to whom (:class:`Envelope`),
and git-multimail's size limits (:class:`Limits`).

Plain frozen data, built once per announcement and handed to every composer
(:func:`.email.compose_combined_email`, :func:`.series.compose_summary_email`,
:func:`.series.compose_commit_email`). Nothing is validated here: the composers check the
values they use and raise ``ValueError`` (see :func:`.email.check_args`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from deploybot.config.schema import NotifyConfig
from deploybot.notify.compose.names import default_host, repo_name_for

BRANCH_PREFIX = "refs/heads/"


@dataclass(frozen=True)
class Envelope:
    """Who pushed to which branch of which repository, and who hears of it when.

    Attributes:
        repo_name: short name for the ``[repo]`` subject prefix and ``X-Git-Repo``.
        repository_url: shown in the intro; any ``user:password@`` part is removed there.
        refname: full ref, ``refs/heads/<branch>``.
        pusher: name shown in ``<pusher> pushed a commit to branch ...``.
        sender: ``From`` address (``addr`` or ``Name <addr>``).
        to: list addresses (bare ``addr``), each rendered ``"addr" <addr>``.
        host: FQDN for ``X-Git-Host`` and the Message-ID domain.
        date: send time, timezone-aware; goes into ``Date`` (RFC 5322).
    """

    repo_name: str
    repository_url: str
    refname: str
    pusher: str
    sender: str
    to: tuple[str, ...]
    host: str
    date: datetime

    @classmethod
    def from_config(
        cls,
        notify: NotifyConfig,
        *,
        repo_path: Path,
        refname: str,
        date: datetime,
        host: str | None = None,
    ) -> Envelope:
        """Return the envelope of an announcement of ``refname`` in ``repo_path``.

        The ``[repo]`` name comes from ``notify.repository_url``, else from ``repo_path``
        (:func:`.names.repo_name_for`); ``host`` None means :func:`.names.default_host`.
        Recipients, sender, pusher and URL are ``notify``'s.
        """
        return cls(
            repo_name=repo_name_for(notify.repository_url, repo_path),
            repository_url=notify.repository_url,
            refname=refname,
            pusher=notify.pusher,
            sender=notify.sender,
            to=notify.to,
            host=host or default_host(),
            date=date,
        )

    @property
    def branch(self) -> str:
        """The branch name: ``refname`` without ``refs/heads/``."""
        return self.refname[len(BRANCH_PREFIX) :]


@dataclass(frozen=True)
class Limits:
    """git-multimail's size limits (research §1.6); 0 disables each.

    Attributes:
        max_line_length: emailMaxLineLength: body lines longer than this many characters are
            cut to ``max_line_length - 7`` characters + ``" [...]"``.
        max_lines: emailMaxLines: at most this many body lines (from "The following
            commit(s)" on), then ``... N lines suppressed ...``.
        subject_max_length: subjectMaxLength: a longer commit subject is cut to
            ``subject_max_length - 6`` characters + ``" [...]"`` in the Subject header.
    """

    max_line_length: int = 500
    max_lines: int = 10000
    subject_max_length: int = 500

    @classmethod
    def from_config(cls, notify: NotifyConfig) -> Limits:
        """Return ``notify``'s limits (``[notify]`` keys of the same names)."""
        return cls(notify.max_line_length, notify.max_lines, notify.subject_max_length)
