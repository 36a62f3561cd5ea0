"""``deploybot log``: what was published when, from which source commit, and why.

Read from the publish repository itself, its branch and the build notes
(:mod:`deploybot.publish`), fetched into the state folder's publish mirror: so the log shows
every build, made by ``run-once``, the daemon or a fleet worker from any state folder, and
the commits someone else pushed (without a record). :func:`entry` is the shape of one build
in ``--json``; :func:`describe` says in words why it was built.
"""

from __future__ import annotations

from typing import Any

from deploybot import publish, statedir
from deploybot.config import Config

_WHY = {
    publish.Reason.FORCED: "run-once --full",
    publish.Reason.FIRST: "the first build",
    publish.Reason.NO_RECORD: "the publish head had no record",
    publish.Reason.RENDER: "the render settings or the renderer changed",
    publish.Reason.SOURCE: "the source moved",
    publish.Reason.DUE: "a held-back post came due",
}


def read(config: Config, limit: int) -> list[publish.BuildRecord]:
    """The newest ``limit`` commits of ``config``'s publish branch with their records,
    newest first (:func:`deploybot.publish.history`), fetched now, holding the state
    directory (as a run does: the mirror is the run's).

    Raises:
        LockHeldError: a run holds the state directory (exit 75).
        PublishError: the publish repository cannot be reached (75).
        ConfigError: ``state.dir`` or ``publish.url`` is unusable (78).
    """
    with statedir.held(config, sweep=False) as paths:
        mirror = paths["publish"]
        head = publish.fetch_publish_head(config.publish.remote(), config.publish.branch, mirror)
        return publish.history(mirror, head, limit)


def describe(build: publish.BuildRecord) -> str:
    """Why ``build`` was made, in words: ``incremental build: the source moved (3 source
    paths changed)``, ``full build: the render settings or the renderer changed``, or
    ``no record (not built by deploybot): "<subject>"``."""
    record = build.record
    if record is None:
        return f'no record (not built by deploybot): "{build.subject}"'
    kind = record.get(publish.BUILD_KIND)
    text = f"{kind} build" if kind else "build"
    reason = _reason(record.get(publish.REASON))
    why = None if reason is None else _WHY[reason]
    if why is not None:
        text += f": {why}"
    changed = _count(record.get(publish.CHANGED_SOURCES))
    if changed is not None and reason is publish.Reason.SOURCE:
        text += f" ({changed} source path{'s' if changed != 1 else ''} changed)"
    built_from = record.get(publish.BUILD_SOURCE)
    if built_from:
        text += f"; built from source {built_from[:12]}, only paths the build does not read "
        text += "changed since"
    if record.get(publish.GUARD) == publish.GUARD_OVERRIDDEN:
        text += "; the publish guard was overridden (run-once --force)"
    return text


def entry(build: publish.BuildRecord) -> dict[str, Any]:
    """``build`` as ``deploybot log --json`` gives it: ``commit``, ``date`` (ISO 8601 with
    the committer's offset), ``subject``, ``source_commit``, ``build_source`` (the source
    commit the tree was built from when the record names another), ``reason`` (a
    :class:`deploybot.publish.Reason` value), ``build`` (``full``/``incremental``),
    ``changed_sources`` (a number) and ``record`` (every line of the note but
    ``source-commit``; null without a note). Unknown values are null."""
    record = build.record
    fields = record or {}
    return {
        "commit": build.commit,
        "date": build.committed.isoformat(),
        "subject": build.subject,
        "source_commit": build.source_commit,
        "build_source": fields.get(publish.BUILD_SOURCE),
        "reason": fields.get(publish.REASON),
        "build": fields.get(publish.BUILD_KIND),
        "changed_sources": _count(fields.get(publish.CHANGED_SOURCES)),
        "record": None if record is None else dict(record),
    }


def _reason(value: str | None) -> publish.Reason | None:
    """The :class:`deploybot.publish.Reason` ``value`` names; None for none (an older
    version's record) or one this version does not know."""
    try:
        return publish.Reason(value or "")
    except ValueError:
        return None


def _count(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None
