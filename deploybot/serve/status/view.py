"""What a site's status page shows (:class:`SiteView`), read from what lasts, so it is the
same after a restart and holds the builds ``run-once`` made too:

- the build journal of the site's state folder (:mod:`deploybot.state.builds`): each run
  that built or failed, its duration, changed files and log lines;
- the publish branch as the last run fetched it into the state folder's mirror, with each
  build commit's note (:func:`deploybot.publish.history.read_mirror`): builds the journal
  does not hold (made from another state folder, or before it existed) still show, with
  what their note says;
- the outbox (:mod:`deploybot.notify.deliver.outbox`): whether each build's email was
  delivered (``sent/``), waits, or was refused (``failed/``), and what waits now;
- the queue's view of the site (``/healthz``'s document for it): building, queued, retried
  when.

Times are shown in the site's timezone (``render.timezone``, else ``_config.yml``'s
``timezone``, read from the source mirror), else the machine's. Everything here is read
with blocking file reads: call it in a thread. Nothing is fetched, nothing is locked.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from deploybot.config.schema import Config
from deploybot.git import repository
from deploybot.notify import stage as notify
from deploybot.notify.compose.links import BrokenLinks
from deploybot.notify.deliver import outbox as box
from deploybot.notify.deliver.forge_status import STATUS
from deploybot.notify.gitlog.message import read_commit_subject
from deploybot.publish import commit, history
from deploybot.record import note
from deploybot.serve.settings import Site
from deploybot.state import builds, statedir
from deploybot.support.errors import DeploybotError, one_line
from deploybot.support.logs import printable
from deploybot.support.redact import redact_text, redact_url

log = logging.getLogger("deploybot.daemon")

SHORT = 12
"""Hex digits a commit id is shown with."""
TEXT_CHARS = 300
"""Characters an error or an outbox reason keeps."""


@dataclass(frozen=True)
class Mail:
    """What became of a build's email: ``state`` (``delivered``, ``waiting``,
    ``refused``, ``dropped``, ``no email`` or ``unknown``) and ``detail`` (the last error)."""

    state: str
    detail: str = ""


@dataclass(frozen=True)
class Build:
    """One row of a site's builds: ``key`` names its page (the journal entry's id, else
    the build commit); ``when`` (aware, in the site's zone) is when it ended (a build
    known from its note alone: its commit's date); ``seconds`` and ``changed_files``
    are None when unknown; ``why``: the note's reason in words; ``record``: the note's
    ``key value`` lines; ``checks``: ``(check, result)`` pairs of the checks a build
    records beyond its result (the forge's commit status, broken links: :func:`_checks`)."""

    key: str
    when: datetime
    result: str
    source_commit: str | None
    source_subject: str
    build_commit: str | None
    seconds: float | None = None
    changed_files: int | None = None
    mail: Mail = Mail("unknown")
    why: str = ""
    error: str | None = None
    exit_code: int = 0
    repeats: int = 1
    log: tuple[tuple[datetime, str, str], ...] = ()
    log_dropped: int = 0
    record: tuple[tuple[str, str], ...] = ()
    journal: bool = True
    checks: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Waiting:
    """A message in the outbox: ``what`` (``email for 0123456789ab``), ``kind``
    (``email``, ``webhook``, ``commit status``: :data:`~deploybot.notify.deliver.outbox.KINDS`),
    ``state`` (``queued``, ``sending``, ``failed``,
    ``refused``), ``attempts``, ``error``, ``queued`` and ``next_attempt`` (aware or None)."""

    what: str
    kind: str
    state: str
    attempts: int
    error: str
    queued: datetime
    next_attempt: datetime | None


@dataclass(frozen=True)
class Queue:
    """What the queue says of the site now: ``building``, ``fetching``, ``queued``,
    ``retry_at`` (aware or None), ``failures`` in a row, and in the fleet the ``lease``
    holder (None elsewhere); ``last``: the last run the queue knows (the fleet's, from
    Redis: any worker's, since the fleet began; else since the daemon started), or None."""

    building: bool = False
    fetching: bool = False
    queued: bool = False
    retry_at: datetime | None = None
    failures: int = 0
    lease: str | None = None
    last: LastRun | None = None


@dataclass(frozen=True)
class LastRun:
    """``/healthz``'s ``last_run`` of a site: ``when`` it ended (aware), ``result``, the
    commits, ``seconds``, ``error`` and, in the fleet, the ``worker`` that ran it."""

    when: datetime | None
    result: str
    source_commit: str | None
    build_commit: str | None
    seconds: float | None
    error: str
    worker: str


@dataclass(frozen=True)
class SiteView:
    """A site as its page shows it; ``zone`` names the timezone the times are in;
    ``problem``: why part of it could not be read now (a mirror changing under the
    reader), else ""."""

    name: str
    source: str
    source_branch: str
    publish: str
    publish_branch: str
    site_url: str
    zone: str
    builds: tuple[Build, ...]
    more: bool
    queue: Queue
    outbox: tuple[Waiting, ...]
    transport: str
    problem: str = ""


def site_view(site: Site, live: Mapping[str, Any] | None, limit: int) -> SiteView:
    """The view of ``site`` with its newest ``limit`` builds; ``live``: the site's part
    of ``/healthz``'s document (:mod:`deploybot.serve.health`), or None."""
    config = site.config
    paths = statedir.state_paths(config)
    url, zone_name = _site_settings(config)
    zone = _zone(zone_name)
    problem = ""
    try:
        records = history.read_mirror(config, limit + 1)
    except (KeyError, OSError, ValueError, DeploybotError) as exc:
        records, problem = [], f"the publish mirror could not be read now: {one_line(exc)}"
    mails = _mail_states(paths.outbox)
    statuses = _status_states(paths.outbox)
    # More entries than shown: failed runs (no build commit) may fill the newest of them.
    entries = builds.read(config.state.dir, 2 * limit + 10)
    rows = [
        dataclasses.replace(row, checks=_checks(row, statuses))
        for row in _builds(config, entries, records, mails, zone)
    ]
    return SiteView(
        name=site.name,
        source=redact_url(config.source.url),
        source_branch=config.source.branch,
        publish=redact_url(config.publish.url),
        publish_branch=config.publish.branch,
        site_url=url,
        zone=_zone_label(zone_name, zone),
        builds=tuple(rows[:limit]),
        more=len(rows) > limit,
        queue=_queue(live, zone),
        outbox=tuple(_outbox(paths.outbox, zone)),
        transport=config.notify.transport,
        problem=redact_text(problem)[:TEXT_CHARS],
    )


def _builds(
    config: Config,
    entries: Sequence[builds.BuildEntry],
    records: Sequence[commit.BuildRecord],
    mails: Mapping[str, Mail],
    zone: tzinfo,
) -> list[Build]:
    """The journal's entries and the notes' builds, one row per build, newest first."""
    by_commit = {r.commit: r for r in records}
    source_mirror = statedir.state_paths(config).source
    rows = []
    for entry in entries:
        record = by_commit.pop(entry.build_commit, None) if entry.build_commit else None
        rows.append(_from_entry(config, entry, record, mails, zone))
    for record in by_commit.values():
        rows.append(_from_note(config, record, mails, zone, source_mirror))
    return sorted(rows, key=lambda b: b.when, reverse=True)


def _from_entry(
    config: Config,
    entry: builds.BuildEntry,
    record: commit.BuildRecord | None,
    mails: Mapping[str, Mail],
    zone: tzinfo,
) -> Build:
    return Build(
        key=entry.id,
        when=datetime.fromtimestamp(entry.ended, zone),
        result=entry.result,
        source_commit=entry.source_commit,
        source_subject=entry.source_subject,
        build_commit=entry.build_commit,
        seconds=entry.seconds,
        changed_files=entry.changed_files,
        mail=_mail_of(config, entry.build_commit, mails),
        why=history.describe(record) if record is not None else "",
        error=entry.error,
        exit_code=entry.exit_code,
        repeats=entry.repeats,
        log=tuple(
            (datetime.fromtimestamp(line.when, zone), line.level, line.text) for line in entry.log
        ),
        log_dropped=entry.log_dropped,
        record=_record_lines(record),
    )


def _from_note(
    config: Config,
    record: commit.BuildRecord,
    mails: Mapping[str, Mail],
    zone: tzinfo,
    source_mirror: Path,
) -> Build:
    built = record.record is not None
    return Build(
        key=record.commit,
        when=record.committed.astimezone(zone),
        result="published" if built else "pushed by someone else",
        source_commit=record.source_commit,
        source_subject=_subject(source_mirror, record.source_commit),
        build_commit=record.commit,
        mail=_mail_of(config, record.commit, mails),
        why=history.describe(record),
        record=_record_lines(record),
        journal=False,
    )


def _record_lines(record: commit.BuildRecord | None) -> tuple[tuple[str, str], ...]:
    if record is None or record.record is None:
        return ()
    lines = [(note.SOURCE_COMMIT, record.source_commit or "")] if record.source_commit else []
    return tuple(lines + sorted(record.record.items()))


@lru_cache(maxsize=256)
def _subject_cached(mirror: str, commit_id: str) -> str:
    return read_commit_subject(Path(mirror), commit_id)[: builds.SUBJECT_CHARS]


def _subject(mirror: Path, commit_id: str | None) -> str:
    """A source commit's subject from the source mirror, "" when it is not there."""
    if commit_id is None or not (mirror / "objects").is_dir():
        return ""
    try:
        return _subject_cached(str(mirror), commit_id)
    except (KeyError, OSError, ValueError):
        return ""


def _mail_states(outbox: Path) -> dict[str, Mail]:
    """Every outbox key (commit emails, summaries, webhook posts) and what became of it:
    waiting in the outbox, ``sent/``, ``failed/`` (refused), ``dropped/``; a summary's
    ``<old>-<new>`` also under ``<new>``, the build it ends at."""
    found: dict[str, Mail] = {}
    folders = (
        (box.DROPPED_DIR, "dropped"), (box.SENT_DIR, "delivered"),
        (box.FAILED_DIR, "refused"), ("", "waiting"),
    )  # fmt: skip
    for folder, state in folders:
        where = outbox / folder if folder else outbox
        try:
            names = [p for p in where.iterdir() if p.suffix in (box.EMAIL, ".http")]
        except OSError:
            continue
        for path in names:
            detail = ""
            if state in ("waiting", "refused"):
                error = box.read_status(path).get("last_error") or ""
                detail = printable(redact_text(str(error)), TEXT_CHARS)
            found[path.stem] = Mail(state, detail)
    for key, mail in list(found.items()):  # a summary <old>-<new> tells of the build <new>
        old, dash, new = key.partition("-")
        if dash and len(old) == len(new) == 40 and not key.startswith(box.WEBHOOK_KEY_PREFIX):
            found.setdefault(new, mail)
    return found


def _status_states(outbox: Path) -> dict[str, str]:
    """Each source commit's latest commit status in the outbox (:mod:`deploybot.notify.
    deliver.forge_status`), in words: ``success, posted``, ``failure, waiting: <last
    error>``, ``pending, refused: <why>``, ``error, dropped``. A state withdrawn before it
    was posted (``superseded/``) is not one; of the others, the last queued or sent."""
    found: dict[str, tuple[float, str]] = {}
    folders = (
        (box.SENT_DIR, "posted"), (box.FAILED_DIR, "refused"),
        (box.DROPPED_DIR, "dropped"), ("", "waiting"),
    )  # fmt: skip
    for folder, word in folders:
        where = outbox / folder if folder else outbox
        for path in where.glob(f"{box.STATUS_KEY_PREFIX}*{STATUS}"):
            sha, _, rest = path.stem.removeprefix(box.STATUS_KEY_PREFIX).partition("-")
            status = box.read_status(path)
            text = f"{rest.partition('-')[0]}, {word}"
            error = status.get("last_error") if word in ("waiting", "refused") else None
            if error:
                text += f": {printable(redact_text(str(error)), TEXT_CHARS)}"
            when = float(status.get("sent_at") or status.get("queued_at") or 0.0)
            if sha not in found or when >= found[sha][0]:
                found[sha] = (when, text)
    return {sha: text for sha, (_, text) in found.items()}


def _checks(build: Build, statuses: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The ``(check, result)`` pairs of ``build``: its source commit's commit status, and
    the broken links its build record counts (:mod:`deploybot.pipeline.links`: ``none``,
    or how many and the first :data:`LINKS_SHOWN` as ``page:line: link``)."""
    found = []
    status = statuses.get(build.source_commit or "")
    if status is not None:
        found.append(("forge status", status))
    record = dict(build.record)
    if note.BROKEN_LINKS in record:
        found.append(("broken links", _broken_links(record)))
    return tuple(found)


LINKS_SHOWN = 3
"""Broken links a build's Checks names (its email lists up to 20, ``deploybot log --json``
counts them all)."""


def _broken_links(record: Mapping[str, str]) -> str:
    broken = BrokenLinks.from_record(record)
    if broken is None:
        return "none"
    shown = [
        f"{page}:{line}: {link}" if line is not None else f"{page}: {link}"
        for page, link, line in broken.first[:LINKS_SHOWN]
    ]
    more = f", and {broken.total - len(shown)} more" if broken.total > len(shown) else ""
    return printable(redact_text(f"{broken.total} ({', '.join(shown)}{more})"), TEXT_CHARS)


def _mail_of(config: Config, build_commit: str | None, mails: Mapping[str, Mail]) -> Mail:
    """The email of ``build_commit`` (its own, else the summary ending at it:
    :func:`_mail_states`); ``no email`` when the site sends none."""
    if build_commit is None:
        return Mail("")
    if build_commit in mails:
        return mails[build_commit]
    if config.notify.transport == "none":
        return Mail("no email")
    return Mail("unknown")


def _outbox(outbox: Path, zone: tzinfo) -> list[Waiting]:
    try:
        items = notify.list_outbox(outbox)
    except (OSError, ValueError) as exc:  # a status file replaced while read
        log.debug("outbox %s not read: %s", outbox, exc)
        return []
    return [
        Waiting(
            what=box.describe_key(item.key),
            kind=box.KINDS.get(item.kind, "message"),
            state=item.state,
            attempts=item.attempts,
            error=printable(redact_text(item.last_error or ""), TEXT_CHARS),
            queued=datetime.fromtimestamp(item.queued_at, zone),
            next_attempt=_at(item.next_attempt, zone),
        )
        for item in items
    ]


def _at(when: Any, zone: tzinfo) -> datetime | None:
    return datetime.fromtimestamp(float(when), zone) if isinstance(when, int | float) else None


def _queue(live: Mapping[str, Any] | None, zone: tzinfo) -> Queue:
    if not live:
        return Queue()
    return Queue(
        building=bool(live.get("building")),
        fetching=bool(live.get("fetching")),
        queued=bool(live.get("queued")),
        retry_at=_iso(live.get("retry_at"), zone),
        failures=int(live.get("failures_in_a_row") or 0),
        lease=live.get("lease"),
        last=_last_run(live.get("last_run"), zone),
    )


def _last_run(run: Any, zone: tzinfo) -> LastRun | None:
    if not isinstance(run, Mapping) or not run.get("result"):
        return None
    seconds = run.get("seconds")
    return LastRun(
        when=_iso(run.get("time"), zone),
        result=str(run["result"]),
        source_commit=run.get("source_commit"),
        build_commit=run.get("build_commit"),
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
        error=printable(redact_text(str(run.get("error") or "")), TEXT_CHARS),
        worker=str(run.get("worker") or ""),
    )


def _iso(value: Any, zone: tzinfo) -> datetime | None:
    """``/healthz``'s time (ISO 8601 UTC, ``Z``) in ``zone``; None when it is none."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zone)
    except ValueError:
        return None


def _site_settings(config: Config) -> tuple[str, str | None]:
    """``(site URL, the zone the site names)`` from ``_config.yml`` at the source mirror's
    branch head (``url`` + ``baseurl``; ``render.timezone`` wins for the zone); ``("",
    render.timezone)`` when there is no mirror or it does not read."""
    mirror = statedir.state_paths(config).source
    if not (mirror / "objects").is_dir():
        return "", config.render.timezone
    try:
        with repository.bare_repo(mirror) as repo:
            head = repository.local_ref(repo, f"refs/heads/{config.source.branch}")
            tree = repository.commit_tree_id(repo, head) if head else None
    except (KeyError, OSError, ValueError) as exc:
        log.debug("no site settings from %s: %s", mirror, exc)
        return "", config.render.timezone
    if tree is None:
        return "", config.render.timezone
    return _settings_of(str(mirror), tree, config.render.timezone, config.render.max_yaml_size)


@lru_cache(maxsize=64)
def _settings_of(
    mirror: str, tree_id: str, override: str | None, max_yaml: int
) -> tuple[str, str | None]:
    from deploybot.render.read.siteconfig import load_config, named_timezone

    try:
        with repository.GitTree(Path(mirror), tree_id) as tree:
            site = load_config(tree, override, max_yaml)
            return site.url + site.baseurl, named_timezone(tree, override, max_yaml)
    except (KeyError, OSError, ValueError, DeploybotError) as exc:
        log.debug("no site settings from %s: %s", mirror, exc)
        return "", override


def _zone(name: str | None) -> tzinfo:
    """The zone ``name``, else (None or unknown) the machine's."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    local = datetime.now().astimezone().tzinfo
    assert local is not None
    return local


def _zone_label(name: str | None, zone: tzinfo) -> str:
    if name and isinstance(zone, ZoneInfo):
        return name
    return f"this machine's ({datetime.now(zone).strftime('%Z')})"
