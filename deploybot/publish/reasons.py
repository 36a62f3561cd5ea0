"""What a build's record (its note, :mod:`deploybot.publish.commit`) says in words: why it was
built, and which source commit its tree was built from. One home for the words
``deploybot log`` (:mod:`deploybot.publish.history`) and the build's email (:mod:`deploybot.notify`)
use.
"""

from __future__ import annotations

from collections.abc import Mapping

from deploybot.git.tree import is_object_id
from deploybot.publish import commit
from deploybot.render import fingerprint

_WHY = {
    commit.Reason.FORCED: "run-once --full",
    commit.Reason.FIRST: "the first build",
    commit.Reason.NO_RECORD: "the publish head had no record",
    commit.Reason.SOURCE: "the source moved",
    commit.Reason.DUE: "a held-back post came due",
}


def reason(record: Mapping[str, str]) -> commit.Reason | None:
    """The :class:`deploybot.publish.commit.Reason` the record's ``reason`` names; None for none
    (an older version's record) or one this version does not know."""
    try:
        return commit.Reason(record.get(commit.REASON) or "")
    except ValueError:
        return None


def why_built(record: Mapping[str, str]) -> str | None:
    """Why the build of ``record`` was made, in words: ``the source moved``, ``run-once
    --full``, ``render settings changed (feed_limit)``, ``publish settings changed
    (nojekyll)`` (what :data:`deploybot.publish.commit.CHANGED_SETTINGS` names, in
    :func:`deploybot.render.fingerprint.describe_changes`'s words; ``the render settings or the
    renderer changed`` when the note does not say); None when the record gives no reason
    this version knows."""
    known = reason(record)
    if known is None:
        return None
    if known is commit.Reason.RENDER:
        names = [name for name in record.get(commit.CHANGED_SETTINGS, "").split(",") if name]
        return fingerprint.describe_changes(names)
    return _WHY[known]


def built_from(record: Mapping[str, str]) -> str | None:
    """The source commit (40 hex) the tree of the build of ``record`` was built from: its
    ``build-source`` when the source moved since only in paths the build does not read,
    else its ``source-commit``; None when the record names neither."""
    for key in (commit.BUILD_SOURCE, commit.SOURCE_COMMIT):
        value = record.get(key) or ""
        if is_object_id(value):
            return value
    return None
