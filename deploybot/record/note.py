"""The build record: what each build commit on the publish branch says it was built from, and why.

Each publish push also updates the git notes ref :data:`NOTES_REF` (``refs/notes/deploybot``), in
the same (atomic, where the server allows) push as the branch. Its tree holds one note per build
commit, named by the build's 40-hex id (fanned out as ``ab/cdef...``, as git does for many notes),
reading ``source-commit <40 hex>\n``, then what else the caller records, one ``key value`` line
each: the future cut-off the build used (``future-cutoff``) and the date of the next post it held
back (``next-future``), :func:`deploybot.publish.commit.future_record`'s; the render fingerprint
(``render-fingerprint``), why the run built (``reason``, a :class:`Reason`), ``build
full|incremental`` and how many source paths changed (``changed-sources``), the renderer's digest
and each output setting's (``renderer-digest``, ``output-settings``) and, when those changed, which
(``changed-settings``), the pipeline's. Each record is a new notes commit whose parent is the
previous one, so ``git log -p refs/notes/deploybot`` is the full record and ``git notes
--ref=deploybot show <build>`` reads any build's. Every note stays: only a rewrite of the publish
branch by someone else leaves notes of commits no longer on it (git ignores them; ``git notes
prune`` removes them). Notes are plain git refs, so a fresh machine recovers the record by fetching
them (:func:`deploybot.publish.commit.fetch_publish_head`); unlike a trailer in the commit message,
the record can also be updated without a new commit, for a build whose tree did not change. A head
without a note (someone else pushed) has an unknown source commit, so the next run rebuilds, finds
the same tree, and records it.

The publish stage writes the record (:mod:`deploybot.publish.commit`, in the push of the
branch); the notify stage and ``deploybot log`` read it. This module is its one home: the
ref, the keys, the reasons; :mod:`deploybot.record.notes_tree` finds a note in the notes tree.
It imports nothing heavy: the no-op ``run-once`` reads :data:`NOTES_REF` before dulwich loads.
"""

from __future__ import annotations

from enum import StrEnum

NOTES_REF = "refs/notes/deploybot"
"""The git notes ref recording which source commit each publish head was built from."""

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
the source moved since, but only in paths the build does not read."""

SOURCE_COMMIT = "source-commit"
"""Record key: the source commit the build stands for (its first line)."""
RENDERER = "renderer"
"""The name :data:`CHANGED_SETTINGS` gives a change of the renderer (deploybot, its bundled
theme or a library it renders with), beside the dotted setting keys."""


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
