"""What a build commit was made from: the source commits its email names, as data and text.

Pure: records and their text; the git reads are :mod:`deploybot.notify.source_read`. A build
commit's email says where the build came from (git-multimail has no such part: its emails describe
commits people pushed; a build commit's own log says only ``Build at ...``). The section goes into
the intro, before the ``git log`` text, so everything from ``commit <id>`` on stays git's
output byte for byte. Its lines (:func:`source_lines`), for a build whose previous build was
made from ``d42ee2f`` and which is made from ``0eaf077``::

    Built from https://github.com/apache/tvm-site.git (branch main):
    3 source commits, d42ee2f..0eaf077, newest first:
        0eaf077 Tweak img size (tqchen)
        4f1c2a9 Fix the feed (Jane Doe)
        a11ce55 Add the PyTorch post (Jane Doe)

The commits are ``git log old..new`` in the source repository: every commit the new source
commit has and the old one has not, merged ones too, newest first by commit date; at most
:data:`MAX_LISTED`, then ``... and K more``. ``new`` and ``old`` are the source commits the
two builds' trees were built from (a note's ``build-source``, else its ``source-commit``):
commits that touched only paths the build does not read, published with no build of their
own, are in the source this build was made from, so they are listed too. The first build of
a branch says ``first build, from <id>`` and lists the newest commits of the source; so does
a build whose previous build has no record (``the previous build's source commit is not
known``). A build of no new source commit says why it was built (its note's reason)::

    no new source commits since 0eaf077; built again: render settings changed (feed_limit)

and so does one of new source commits that was not built for them alone (a setting changed
too, ``run-once --full``), after the list: ``built: render settings changed (feed_limit)``.
A build made because the source moved says nothing more: the list is why.

A source branch that went back (reset to an older commit, published with ``run-once
--allow-older``) has no new commits but drops some: ``git log new..old``, listed as dropped,
never as new::

    the source branch went back from 0eaf077 to d42ee2f; 2 source commits dropped, newest first:
        0eaf077 Tweak img size (tqchen)
        4f1c2a9 Fix the feed (Jane Doe)

and one rewritten (force-pushed from an older commit) lists its new commits as usual, then
``the source branch was rewritten from 0eaf077; 2 source commits dropped, newest first:``
and those.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deploybot.notify.gitlog.excerpt import cut_line
from deploybot.support.redact import redact_url

MAX_LISTED = 20
"""The most source commits an email lists; the others are counted (``... and K more``)."""

INDENT = "    "


@dataclass(frozen=True)
class SourceRepo:
    """Where the source commits of a publish branch can be read, and how an email names it.

    Attributes:
        path: a repository holding the source history (the run's source mirror).
        url: the source repository as the config names it (credentials are removed when
            shown).
        branch: the source branch built.
    """

    path: Path
    url: str
    branch: str


@dataclass(frozen=True)
class SourceCommit:
    """One source commit as its email line shows it: git's short id (``%h``), the author's
    name (``%an``) and the subject (``%s``)."""

    short: str
    author: str
    subject: str


@dataclass(frozen=True)
class SourceLog:
    """The source commits one build publishes.

    Attributes:
        url, branch: the source repository and branch (:class:`SourceRepo`).
        new: the source commit the build was made from (short id).
        old: the previous build's source commit (short id); None when there is no previous
            build (``first``) or its source commit is not known.
        first: the build is the first of its publish branch.
        commits: ``old..new``, newest first, at most :data:`MAX_LISTED`; without ``old``,
            the newest commits of ``new``'s history.
        more: how many commits of the range are not listed.
        complete: False when the walk stopped at its limit: ``more`` is then a lower bound.
        why: why the build was made, in words (:func:`deploybot.record.reasons.why_built`);
            shown when the range is empty, or when it is not ``source_moved``. None when
            its note does not say.
        source_moved: the build was made because the source moved (its note's reason is
            :attr:`deploybot.record.note.Reason.SOURCE`): the commits listed say why.
        dropped: ``new..old``, newest first, at most :data:`MAX_LISTED`: the commits the
            previous build's source had and this one's has not (the branch went back or
            was rewritten); ``dropped_more`` counts those not listed, a lower bound when
            ``dropped_complete`` is False.
    """

    url: str
    branch: str
    new: str
    old: str | None
    first: bool
    commits: tuple[SourceCommit, ...]
    more: int
    complete: bool = True
    why: str | None = None
    source_moved: bool = False
    dropped: tuple[SourceCommit, ...] = ()
    dropped_more: int = 0
    dropped_complete: bool = True


def source_lines(log: SourceLog, max_line_length: int = 0) -> list[str]:
    """The intro lines naming ``log``'s source commits (see the module docstring), each cut
    to ``max_line_length`` characters as body lines are (:func:`.body.cut_line`; 0: none).
    Control characters of commit data are made spaces by the caller's line filter."""
    total = len(log.commits) + log.more
    at_least = "" if log.complete else "at least "
    dropped = _dropped(log)
    if log.old is not None and total:
        word = "commit" if total == 1 else "commits"
        what = f"{at_least}{total} source {word}, {log.old}..{log.new}"
        what += ", newest first:" if log.commits else ""
    elif log.old is not None and dropped:  # the source went back to an older commit
        what = f"the source branch went back from {log.old} to {log.new}; {dropped}"
    elif log.old == log.new:  # built again from the same source commit
        what = f"no new source commits since {log.new}"
        what += f"; built again: {log.why}" if log.why else ""
    elif log.old is not None:  # neither new nor dropped commits can be told
        what = f"no new source commits, {log.old}..{log.new}"
        what += f"; built: {log.why}" if log.why else ""
    else:
        start = "first build" if log.first else "the previous build's source commit is not known"
        what = f"{start}, from {log.new}; the newest source commits:"
    lines = [f"Built from {redact_url(log.url)} (branch {log.branch}):", what]
    if total or not dropped:
        lines += _listed(log.commits, log.more, at_least)
    if log.old is not None and (total or dropped) and log.why and not log.source_moved:
        lines.append(f"built: {log.why}")
    if dropped:
        if total:
            lines.append(f"the source branch was rewritten from {log.old}; {dropped}")
        lines += _listed(log.dropped, log.dropped_more, "" if log.dropped_complete else "at least ")
    return [cut_line(line, max_line_length) for line in lines]


def _dropped(log: SourceLog) -> str:
    """``2 source commits dropped, newest first:`` for ``log``'s dropped commits; "" for none."""
    total = len(log.dropped) + log.dropped_more
    if not total:
        return ""
    at_least = "" if log.dropped_complete else "at least "
    word = "commit" if total == 1 else "commits"
    return f"{at_least}{total} source {word} dropped" + (", newest first:" if log.dropped else "")


def _listed(commits: tuple[SourceCommit, ...], more: int, at_least: str) -> list[str]:
    """One indented line per commit, then ``... and K more`` when ``more``."""
    lines = [f"{INDENT}{c.short} {c.subject} ({c.author})" for c in commits]
    if more:
        lines.append(f"{INDENT}... and {at_least}{more} more")
    return lines
