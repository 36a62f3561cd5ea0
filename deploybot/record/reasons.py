"""What a build's record (its note, :mod:`deploybot.record.note`) says in words: why it was
built, and which source commit its tree was built from. One home for the words
``deploybot log`` (:mod:`deploybot.publish.history`) and the build's email (:mod:`deploybot.notify`)
use.
"""

from __future__ import annotations

from collections.abc import Mapping

from deploybot.git.tree import is_object_id
from deploybot.record import note
from deploybot.record.refs import RENDERER

_WHY = {
    note.Reason.FORCED: "run-once --full",
    note.Reason.FIRST: "the first build",
    note.Reason.NO_RECORD: "the publish head had no record",
    note.Reason.THEME: "the theme moved",
    note.Reason.SOURCE: "the source moved",
    note.Reason.DUE: "a held-back post came due",
}


def reason(record: Mapping[str, str]) -> note.Reason | None:
    """The :class:`deploybot.record.note.Reason` the record's ``reason`` names; None for none
    (an older version's record) or one this version does not know."""
    try:
        return note.Reason(record.get(note.REASON) or "")
    except ValueError:
        return None


def why_built(record: Mapping[str, str]) -> str | None:
    """Why the build of ``record`` was made, in words: ``the source moved``, ``run-once
    --full``, ``render settings changed (feed_limit)``, ``publish settings changed
    (nojekyll)`` (what :data:`deploybot.record.note.CHANGED_SETTINGS` names, in
    :func:`describe_changes`'s words; ``the render settings or the
    renderer changed`` when the note does not say); None when the record gives no reason
    this version knows."""
    known = reason(record)
    if known is None:
        return None
    if known is note.Reason.RENDER:
        names = [name for name in record.get(note.CHANGED_SETTINGS, "").split(",") if name]
        return describe_changes(names)
    return _WHY[known]


def built_from(record: Mapping[str, str]) -> str | None:
    """The source commit (40 hex) the tree of the build of ``record`` was built from: its
    ``build-source`` when the source moved since only in paths the build does not read (or
    to the same tree), else its ``source-commit``; None when the record names neither."""
    for key in (note.BUILD_SOURCE, note.SOURCE_COMMIT):
        value = record.get(key) or ""
        if is_object_id(value):
            return value
    return None


def describe_changes(names: tuple[str, ...] | list[str]) -> str:
    """``names`` (:func:`deploybot.render.fingerprint.changed_settings`) in words:
    ``render settings changed (feed_limit, theme) and publish settings changed (nojekyll)``,
    ``the renderer changed (deploybot, its bundled theme or a library it renders with)``; an
    empty list is the general ``the render settings or the renderer changed``."""
    parts = []
    for section in ("render", "publish"):
        keys = [name.split(".", 1)[1] for name in names if name.startswith(section + ".")]
        if keys:
            parts.append(f"{section} settings changed ({', '.join(keys)})")
    if RENDERER in names:
        parts.append(
            "the renderer changed (deploybot, its bundled theme or a library it renders with)"
        )
    return " and ".join(parts) or "the render settings or the renderer changed"
