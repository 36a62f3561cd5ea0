"""The build record: what each build commit on the publish branch says it was built from, and why.

Each publish push also updates the git notes ref :data:`~deploybot.record.refs.NOTES_REF`
(``refs/notes/deploybot``), in the same (atomic, where the server allows) push as the branch. Its
tree holds one note per build commit, named by the build's 40-hex id (fanned out as ``ab/cdef...``,
as git does for many notes), reading ``source-commit <40 hex>\n``, then what else the caller
records, one ``key value`` line each: the future cut-off the build used (``future-cutoff``) and the
date of the next post it held back (``next-future``),
:func:`deploybot.publish.commit.future_record`'s; the render fingerprint (``render-fingerprint``),
why the run built (``reason``, a :class:`Reason`), ``build full|incremental`` and how many source
paths changed (``changed-sources``), the renderer's digest and each output setting's (``renderer-
digest``, ``output-settings``) and, when those changed, which (``changed-settings``), the
pipeline's. Each record is a new notes commit whose parent is the previous one, so ``git log -p
refs/notes/deploybot`` is the full record and ``git notes --ref=deploybot show <build>`` reads any
build's. Every note stays: only a rewrite of the publish branch by someone else leaves notes of
commits no longer on it (git ignores them; ``git notes prune`` removes them). Notes are plain git
refs, so a fresh machine recovers the record by fetching them
(:func:`deploybot.publish.commit.fetch_publish_head`); unlike a trailer in the commit message, the
record can also be updated without a new commit, for a build whose tree did not change. A head
without a note (someone else pushed) has an unknown source commit, so the next run rebuilds, finds
the same tree, and records it.

A run that finds the same tree as the head (``run-once --full`` with nothing changed, a setting
that makes the same pages, a source that moved without changing them) makes no commit, so it
updates the head's record field by field (:func:`restamped`), not wholesale: the record says why
a commit was made as well as what the next run compares against, and only the second moved.

* Kept as the commit's: :data:`REASON`, :data:`CHANGED_SETTINGS`, :data:`BUILD_KIND`,
  :data:`CHANGED_SOURCES`, :data:`GUARD` (and any key this version does not know). They say why
  and how that commit was made; ``deploybot log``, the build's email and a later ``notify
  --commit`` read them, and a run that made no commit has nothing to add to them.
* This run's (:data:`COMPARED`): :data:`SOURCE_COMMIT` (the next run builds when the source tip
  differs from it), :data:`RENDER_FINGERPRINT`, :data:`RENDERER_DIGEST` and
  :data:`OUTPUT_SETTINGS` (it builds again, and names what changed, against these),
  :data:`FUTURE_CUTOFF` and :data:`NEXT_FUTURE` (it builds again when the held-back post this
  run found comes due; the two are one pair: the post held back under that cut-off). Left as
  they were, every later run would build again for a reason already dealt with.
* :data:`BUILD_SOURCE`: the source commit the tree was first built from, when the source commit
  moved on (as a source that moved only in paths the build does not read records it), so the
  commit's email, and the next build's, still list the source commits from that one on. Beside
  it :data:`FUTURE_CUTOFF` stays the head's: ``deploybot build --rev <build-source> --cutoff
  <future-cutoff>`` remakes the tree byte for byte only with the cut-off that build used (a
  post held back then may have come due since, and been deleted from the newer source).

The publish stage writes the record (:mod:`deploybot.publish.commit`, in the push of the
branch); the notify stage and ``deploybot log`` read it. This module is its one home: the
ref, the keys, the reasons; :mod:`deploybot.record.notes_tree` finds a note in the notes tree.
The two names the no-op ``run-once`` needs before anything loads are in :mod:`.refs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

FUTURE_CUTOFF = "future-cutoff"
"""Record key: the future cut-off the build used (the run's wall clock, UTC, seconds)."""
NEXT_FUTURE = "next-future"
"""Record key: the earliest date of a post the cut-off held back (absent when none)."""
RENDER_FINGERPRINT = "render-fingerprint"
"""Record key: the build's render fingerprint (:mod:`deploybot.render.fingerprint`, 16 hex)."""
REASON = "reason"
"""Record key: why the run built (a :class:`Reason` value)."""
BUILD_KIND = "build"
"""Record key: ``full`` or ``incremental``."""
CHANGED_SOURCES = "changed-sources"
"""Record key: how many source paths changed since the source commit built before (absent
when that is unknown)."""
GUARD = "guard"
"""Record key: :data:`GUARD_OVERRIDDEN` when ``run-once --force`` published a build the
publish guard would have stopped (absent otherwise)."""
GUARD_OVERRIDDEN = "overridden"
RENDERER_DIGEST = "renderer-digest"
"""Record key: the renderer's digest (:func:`deploybot.render.fingerprint.renderer_digest`)."""
OUTPUT_SETTINGS = "output-settings"
"""Record key: a digest of each setting that shapes the output
(:func:`deploybot.render.fingerprint.setting_digests`), so the next build can name what changed."""
CHANGED_SETTINGS = "changed-settings"
"""Record key: with :data:`REASON` ``render-changed``, what changed since the build before
(:func:`deploybot.render.fingerprint.changed_settings`: dotted keys and ``renderer``, comma
separated); absent when that is not known (the build before has an older note)."""
BUILD_SOURCE = "build-source"
"""Record key: the source commit the tree was built from, when it is not ``source-commit``:
the source moved since, but only in paths the build does not read, or in ways that build
the same tree (:func:`restamped`)."""

THEME = "theme"
"""Record key: the site's Jekyll theme as ``_config.yml`` names it (``minima``,
``pages-themes/cayman@v0.2.0``; a space or a ``%`` written ``%20``, ``%25``), absent for a
site without one (:mod:`deploybot.pipeline.theme`)."""
THEME_COMMIT = "theme-commit"
"""Record key: the commit the build's theme was pinned to (40 hex), or a digest of a theme
folder's files; ``deploybot build --theme-commit`` remakes the build with that commit."""

BROKEN_LINKS = "broken-links"
"""Record key: how many broken internal links and assets the build found
(:mod:`deploybot.pipeline.links`); absent when links were not checked."""
BROKEN_LINKS_FIRST = "broken-links-first"
"""Record key: the first :data:`BROKEN_LINKS_LISTED` of them, by page and line, as one line
of JSON: ``[["page", "link", line or null], ...]``; absent when there are none."""
BROKEN_LINKS_LISTED = 20

SOURCE_COMMIT = "source-commit"
"""Record key: the source commit the build stands for (its first line)."""

COMPARED = (
    SOURCE_COMMIT, RENDER_FINGERPRINT, RENDERER_DIGEST, OUTPUT_SETTINGS, FUTURE_CUTOFF, NEXT_FUTURE,
    THEME, THEME_COMMIT,
)  # fmt: skip
"""The record keys the next run compares against: a run that makes no commit writes these
anew on the head's record and keeps the others (:func:`restamped`; the module docstring says
why, key by key)."""


class Reason(StrEnum):
    """Why a run built (the record's :data:`REASON`), first match in this order."""

    FORCED = "forced"
    """``run-once --full``."""
    FIRST = "first-build"
    """The publish branch did not exist."""
    NO_RECORD = "no-record"
    """The publish head had no record (someone else pushed it)."""
    RENDER = "render-changed"
    """The render fingerprint differs from the publish head's: a setting or the renderer."""
    THEME = "theme-moved"
    """The site's Jekyll theme moved (another commit, other files) or came or went."""
    SOURCE = "source-moved"
    """The source branch moved."""
    DUE = "post-due"
    """A post the published build held back for its date came due."""


def note_fields(text: str) -> dict[str, str]:
    """The ``key value`` lines of a record's text (the first of each key), ``source-commit``
    (:data:`SOURCE_COMMIT`) among them."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            fields.setdefault(key, value.strip())
    return fields


def restamped(head: Mapping[str, str], run: Mapping[str, str]) -> dict[str, str]:
    """The record of a publish head whose tree a run found again with no new commit: the
    head's own record ``head`` with the keys of :data:`COMPARED` taken from the run's
    record ``run`` (a key the run does not give is dropped: :data:`NEXT_FUTURE` when it held
    nothing back), and :data:`BUILD_SOURCE` naming the source commit the tree was first built
    from when ``run``'s :data:`SOURCE_COMMIT` is another (then with the head's
    :data:`FUTURE_CUTOFF`, which that build used). Both are :func:`note_fields`
    dicts, ``source-commit`` among their keys; the head's keys keep their order."""
    first = head.get(BUILD_SOURCE) or head.get(SOURCE_COMMIT)
    merged = {key: run.get(key, "") if key in COMPARED else value for key, value in head.items()}
    merged |= {key: run[key] for key in COMPARED if key in run}
    merged.pop(BUILD_SOURCE, None)
    if first and first != run.get(SOURCE_COMMIT):
        merged[BUILD_SOURCE] = first
        merged[FUTURE_CUTOFF] = head.get(FUTURE_CUTOFF, "")  # the cut-off first built with
    return {key: value for key, value in merged.items() if value}
