"""``deploybot log``: what was published when, from which source commit, and why.

Read from the publish repository itself, its branch and the build notes
(:mod:`deploybot.publish.commit`), fetched into the state folder's publish mirror: so the log shows
every build, made by ``run-once``, the daemon or a fleet worker from any state folder, and
the commits someone else pushed (without a record). :func:`entry` is the shape of one build
in ``--json``; :func:`describe` says in words why it was built.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.config.schema import Config
from deploybot.git import repository
from deploybot.publish import commit
from deploybot.record import note, reasons
from deploybot.state import statedir


def read(config: Config, limit: int) -> list[commit.BuildRecord]:
    """The newest ``limit`` commits of ``config``'s publish branch with their records,
    newest first (:func:`deploybot.publish.commit.history`), fetched now, holding the state
    directory (as a run does: the mirror is the run's).

    A damaged publish mirror is fetched anew once, as ``run-once`` does it
    (:func:`deploybot.state.statedir.drop_damaged_mirror`, one warning line).

    Raises:
        LockHeldError: a run holds the state directory (exit 75).
        PublishError: the publish repository cannot be reached (75).
        ConfigError: ``state.dir`` or ``publish.url`` is unusable (78).
        DamagedRepositoryError: the damage is still there after a fresh fetch (1).
    """
    with statedir.held(config, sweep=False) as paths:
        for attempt in (1, 2):
            try:
                head = commit.fetch_publish_head(
                    config.publish.remote(), config.publish.branch, paths.publish
                )
                return commit.history(paths.publish, head, limit)
            except repository.DAMAGE_ERRORS as exc:
                statedir.drop_damaged_mirror(exc, paths, last_try=attempt == 2)
    raise AssertionError("unreachable")


def read_mirror(config: Config, limit: int) -> list[commit.BuildRecord]:
    """The newest ``limit`` commits of ``config``'s publish branch with their records, as
    the last run fetched them into the state folder's publish mirror: no fetch and no
    lock (the daemon's status page reads it while a run may hold the lock); empty when
    there is no mirror yet.

    Raises:
        KeyError, SourceError: as :func:`deploybot.publish.commit.history` (a mirror
            damaged, or changed under the reader by a run: read again later).
    """
    mirror = statedir.state_paths(config).publish
    head = commit.local_publish_head(mirror, config.publish.branch)
    if head is None or head.commit is None:
        return []
    return commit.history(mirror, head, limit)


def describe(build: commit.BuildRecord) -> str:
    """Why ``build`` was made, in words: ``incremental build: the source moved (3 source
    paths changed)``, ``full build: render settings changed (feed_limit)``
    (:func:`deploybot.record.reasons.why_built`), or ``no record (not built by deploybot):
    "<subject>"``; ``; source at <id> since, with the same published tree`` when the
    record names a later source commit than the one the tree was built from (whose changes
    the build does not read, or builds into the same tree)."""
    record = build.record
    if record is None:
        return f'no record (not built by deploybot): "{build.subject}"'
    kind = record.get(note.BUILD_KIND)
    text = f"{kind} build" if kind else "build"
    why = reasons.why_built(record)
    if why is not None:
        text += f": {why}"
    changed = _count(record.get(note.CHANGED_SOURCES))
    if changed is not None and reasons.reason(record) is note.Reason.SOURCE:
        text += f" ({changed} source path{'s' if changed != 1 else ''} changed)"
    if record.get(note.BUILD_SOURCE) and build.source_commit:
        text += f"; source at {build.source_commit[:12]} since, with the same published tree"
    if record.get(note.GUARD) == note.GUARD_OVERRIDDEN:
        text += "; the publish guard was overridden (run-once --force)"
    broken = _count(record.get(note.BROKEN_LINKS))
    if broken:
        text += f"; {broken} broken link{'s' if broken != 1 else ''}"
    return text


def built_from(build: commit.BuildRecord) -> str | None:
    """The source commit (40 hex) ``build``'s tree was built from
    (:func:`deploybot.record.reasons.built_from`), None when unknown."""
    if build.record is None or build.source_commit is None:
        return build.source_commit
    return reasons.built_from({**build.record, note.SOURCE_COMMIT: build.source_commit})


def display_zone(config: Config) -> tzinfo | None:
    """The zone ``deploybot log`` shows every build's date in, so the lines compare at a
    glance whatever zone each commit was made in: ``publish.timezone`` (the zone of the
    build commits' ``{date}``), else ``render.timezone``, else None (the local time)."""
    name = config.publish.timezone or config.render.timezone
    return ZoneInfo(name) if name else None


def entry(build: commit.BuildRecord) -> dict[str, Any]:
    """``build`` as ``deploybot log --json`` gives it: ``commit``, ``date`` (ISO 8601 with
    the committer's offset), ``subject``, ``source_commit``, ``build_source`` (the source
    commit the tree was built from when the record names another), ``reason`` (a
    :class:`deploybot.record.note.Reason` value), ``build`` (``full``/``incremental``),
    ``changed_sources`` (a number), ``broken_links`` (how many the build found: null when
    links were not checked; the first ones are the record's ``broken-links-first``) and
    ``record`` (every line of the note but ``source-commit``; null without a note). Unknown
    values are null."""
    record = build.record
    fields = record or {}
    return {
        "commit": build.commit,
        "date": build.committed.isoformat(),
        "subject": build.subject,
        "source_commit": build.source_commit,
        "build_source": fields.get(note.BUILD_SOURCE),
        "reason": fields.get(note.REASON),
        "build": fields.get(note.BUILD_KIND),
        "changed_sources": _count(fields.get(note.CHANGED_SOURCES)),
        "broken_links": _count(fields.get(note.BROKEN_LINKS)),
        "record": None if record is None else dict(record),
    }


def _count(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None
