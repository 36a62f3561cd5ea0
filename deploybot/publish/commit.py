"""The publish stage: build output -> one ``Build at ...`` commit on the publish branch -> push.

The new tree is built from git objects in a local bare mirror, with no work tree, on top of
the remote publish head as just fetched. The build owns every path not under a ``keep``
prefix: owned paths are replaced by the build output and owned paths the build no longer
makes are deleted; kept paths (``.asf.yaml``, ``CNAME``, a ``docs/`` folder maintained by
hand) keep their blob ids. A build whose tree equals its parent's makes no commit.

The push is never forced. ``send_pack`` gets a compare-and-swap: when the advertised tip is
not the head the commit was built on, nothing is sent, and the build is redone on the new tip
(up to :data:`MAX_TRIES` times). The server's per-ref status is checked, because dulwich does
not raise on a server-side rejection. The mirror's refs move only after a successful push.

What each build commit records, and where (the notes ref ``refs/notes/deploybot``), is
:mod:`deploybot.record.note`'s; this stage writes the record in the same push as the branch.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from dulwich.object_store import iter_tree_contents
from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.git import path_rules, repository, tree_edit
from deploybot.git import tree as gittree
from deploybot.git.remote import Remote
from deploybot.git.repository import MODE_FILE, RemoteMovedError
from deploybot.record.note import (
    FUTURE_CUTOFF,
    GUARD,
    GUARD_OVERRIDDEN,
    NEXT_FUTURE,
    SOURCE_COMMIT,
    note_fields,
    restamped,
)
from deploybot.record.notes_tree import find_note, note_path, read_note
from deploybot.record.refs import NOTES_REF
from deploybot.support.errors import EX_INPUT, ConfigError, DeploybotError, PublishError
from deploybot.support.redact import redact_url

log = logging.getLogger("deploybot.publish")

NOJEKYLL = ".nojekyll"
"""The file at a publish tree's root that tells GitHub Pages not to run Jekyll over it."""

MAX_TRIES = 3
"""How many times a build is redone on a new remote tip before giving up."""

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class PublishHead:
    """The remote publish branch as last fetched.

    Attributes:
        commit: the branch head (40 hex), ``None`` when the branch does not exist.
        source_commit: the source commit that head was built from, per the record in
            :data:`NOTES_REF`; ``None`` when unknown.
        published_at: the head's committer time (seconds since the epoch): when a build
            commit was made, the time of its build. ``None`` without a head.
        record: the other ``key value`` lines of the head's record (``future-cutoff``...).
        notes: the tip of :data:`NOTES_REF` as fetched (40 hex), ``None`` when absent.
    """

    commit: str | None
    source_commit: str | None
    published_at: int | None = field(default=None, compare=False)
    record: Mapping[str, str] = field(default_factory=dict, compare=False)
    notes: str | None = field(default=None, compare=False)

    @property
    def next_future(self) -> datetime | None:
        """The record's :data:`NEXT_FUTURE` date (aware); None when there is none, or it is
        not a date with a zone as :func:`future_record` writes it (someone else's record:
        not ours to act on)."""
        try:
            when = datetime.fromisoformat(self.record.get(NEXT_FUTURE) or "")
        except ValueError:
            return None
        return when if when.tzinfo is not None else None


@dataclass(frozen=True)
class PublishResult:
    """What :func:`publish_build` did.

    Attributes:
        repo_path: the local bare mirror holding ``old`` and ``new`` (for the commit email).
        refname: the publish branch's full ref name, e.g. ``refs/heads/asf-site``.
        old: the previous head (40 hex), ``None`` when the branch was created.
        new: the build commit (40 hex), ``None`` when the tree did not change.
        changed_paths: the sorted paths that differ between the old and new trees.
    """

    repo_path: Path
    refname: str
    old: str | None
    new: str | None
    changed_paths: tuple[str, ...]


class OlderSourceError(PublishError):
    """The publish head was built from a source commit that descends from this build's:
    pushing would take the site backwards. Raised by the caller's ``check_head`` (see
    :func:`publish_build`); ``source`` and ``published`` are the two source commits and
    ``head`` the publish head built from ``published`` (40 hex). ``certain`` False: it
    cannot be told whether ``published`` descends from ``source`` (it is gone from the
    source repository), which stops the publish too.
    """

    def __init__(
        self, source: str, published: str, head: str | None, *, certain: bool = True
    ) -> None:
        self.source, self.published, self.head = source, published, head
        self.certain = certain
        super().__init__(
            f"not publishing: source {source[:12]} is older than the published {published[:12]}"
            if certain
            else f"not publishing: cannot tell whether source {source[:12]} is older than the "
            f"published {published[:12]}, which is no longer in the source repository"
        )


class GuardError(DeploybotError):
    """The publish guard stopped a build (:func:`guard_problem`): nothing was pushed. Exit 1:
    the source (or the build of it) is what is wrong, and waiting does not mend it."""

    exit_code = EX_INPUT


@dataclass(frozen=True)
class Guard:
    """The publish guard, as ASF's site builder keeps one (``minimum_page_count``): a build
    that would remove more than ``max_removed`` (a fraction) of the published files, or
    leave fewer than ``min_files`` files, is not pushed (``publish.max_removed``,
    ``publish.min_files``), unless ``forced`` (``run-once --force``)."""

    max_removed: float = 0.5
    min_files: int = 1
    forced: bool = False


def guard_problem(repo: Repo, old_tree: str | None, new_tree: str, guard: Guard) -> str | None:
    """What the publish guard finds wrong with replacing the published tree ``old_tree``
    (``None``: nothing published yet, which no removal limit applies to) by ``new_tree``,
    both in ``repo``, in one line (``the build would remove 8 of the 14 published files
    (57%, more than publish.max_removed = 0.5)``); None when it passes. Files are every
    entry that is not a folder, kept paths included. The trees are compared folder by
    folder (:func:`deploybot.git.tree.iter_changes`); the published files are counted only
    when something is removed or too few files are added to tell otherwise, and only as far
    as the verdict needs (a one-post delete counts two files, not every tree of the site)."""
    removed = added = 0
    old_id = repository.oid(old_tree) if old_tree else None
    for _path, before, after in gittree.iter_changes(repo, old_id, repository.oid(new_tree)):
        if after is None:
            removed += 1
        elif before is None:
            added += 1
    if removed == 0 and added >= guard.min_files:
        return None  # nothing removed, and the new tree holds at least what was added
    published = 0
    if old_id is not None:
        # The verdict only improves with more published files, so the count stops at the
        # first number that passes; the message of a tripped guard has the whole count.
        for _entry in iter_tree_contents(repo.object_store, old_id):
            published += 1
            if _guard_verdict(published, removed, added, guard) is None:
                return None
    return _guard_verdict(published, removed, added, guard)


def _guard_verdict(published: int, removed: int, added: int, guard: Guard) -> str | None:
    """:func:`guard_problem`'s answer for ``published`` files of which the build removes
    ``removed`` and to which it adds ``added``."""
    if published and removed > guard.max_removed * published:
        return (
            f"the build would remove {removed} of the {published} published files "
            f"({removed / published:.0%}, more than publish.max_removed = {guard.max_removed:g})"
        )
    left = published - removed + added
    if left < guard.min_files:
        return (
            f"the build would leave {left} file{'s' if left != 1 else ''} "
            f"(fewer than publish.min_files = {guard.min_files})"
        )
    return None


class StaleBaseError(PublishError):
    """The publish head is no longer the commit an incremental build was made on top of;
    the caller builds fully and publishes again."""


@dataclass(frozen=True)
class TreePatch:
    """Apply a build onto ``base``'s tree instead of replacing every owned path.

    Attributes:
        base: the publish head (40 hex) the build's outputs were computed against.
        deletions: output paths to remove (kept paths and absent paths are ignored).
    """

    base: str
    deletions: frozenset[str] = field(default_factory=frozenset)


class BlobWriter:
    """Stores build outputs as blobs in the publish mirror as they are produced, so a build
    never holds every output in memory (the render stage's ``OutputSink``).

    ``blobs`` maps each written output path to its blob id; ``deleted`` holds the deleted
    paths. Use as a context manager; the mirror is created when missing.
    """

    def __init__(self, mirror: Path) -> None:
        self.repo = repository.open_bare(mirror)
        self.blobs: dict[str, str] = {}
        self.deleted: set[str] = set()

    def write(self, path: str, data: bytes) -> None:
        """Store ``data`` as the output ``path``."""
        self.blobs[path] = repository.add_blob(self.repo, data)
        self.deleted.discard(path)

    def copy(self, path: str, blob_id: str, read: Callable[[], bytes]) -> None:
        """Use the blob ``blob_id`` for ``path``; ``read()`` is only called when the mirror
        does not have it yet."""
        if repository.oid(blob_id) in self.repo.object_store:
            self.blobs[path] = blob_id
            self.deleted.discard(path)
        else:
            self.write(path, read())

    def delete(self, path: str) -> None:
        """Remove the output ``path``."""
        self.blobs.pop(path, None)
        self.deleted.add(path)

    def close(self) -> None:
        """Close the mirror."""
        self.repo.close()

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True)
class _Plan:
    updates: dict[str, tuple[str | None, str]]  # refname -> (expected remote tip, new tip)
    result: PublishResult


def future_record(cutoff: datetime, waiting: datetime | None) -> dict[str, str]:
    """The build record's future lines, for :func:`publish_build`'s ``record``:
    :data:`FUTURE_CUTOFF` ``cutoff`` (so the same build can be made again: ``deploybot
    build --rev SOURCE --cutoff``) and, when a post was held back, :data:`NEXT_FUTURE`
    ``waiting``; both aware datetimes, written in UTC to the second (``...T...Z``)."""
    record = {FUTURE_CUTOFF: _iso(cutoff)}
    if waiting is not None:
        record[NEXT_FUTURE] = _iso(waiting)
    return record


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_build_message(template: str, when: datetime) -> str:
    """Return ``template`` with ``{date}`` replaced by ``when`` as date(1) prints it.

    The format is ``date``'s default, ``%a %b %e %H:%M:%S %Z %Y`` in the C locale, e.g.
    ``Sun Jul  5 09:12:04 PDT 2020`` (``%e`` pads the day with a space). ``when`` must be
    aware; its zone abbreviation is ``%Z``. Other braces in ``template`` are left alone.
    Raises ``ValueError`` for a naive ``when``.
    """
    return template.replace("{date}", format_date(when))


def format_date(when: datetime) -> str:
    """Return ``when`` (aware) in date(1)'s default C-locale format; see above."""
    offset = when.utcoffset()
    if offset is None:
        raise ValueError("the build time must be a timezone-aware datetime")
    zone = when.tzname() or _numeric_offset(int(offset.total_seconds()))
    day, month = _DAYS[when.weekday()], _MONTHS[when.month - 1]
    clock = f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}"
    return f"{day} {month} {when.day:2d} {clock} {zone} {when.year}"


def _numeric_offset(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}{minutes % 60:02d}"


def fetch_publish_head(url: Remote | str, branch: str, mirror: Path) -> PublishHead:
    """Fetch the publish ``branch`` and the record from ``url`` (``publish.url`` with its
    keys, or a plain URL) into the bare ``mirror``.

    ``mirror`` is created when missing; a brand-new mirror recovers the source commit from
    the remote's :data:`NOTES_REF`.

    Raises:
        PublishError: the remote cannot be reached or read for now.
        ConfigError: the URL is a local path with no repository, or the remote is not
            there, wants credentials, or its host does not resolve (names ``publish.url``:
            :func:`deploybot.git.repository.fetch_refs`).
    """
    remote = repository.as_remote(url, "publish.url")
    repository.check_local_repository(remote.url, "publish.url")
    refname = f"refs/heads/{branch}"
    with repository.bare_repo(mirror) as repo:
        tips = repository.fetch_refs(remote, repo, [refname, NOTES_REF], PublishError)
        return _publish_head(repo, tips[refname], tips[NOTES_REF])


def local_publish_head(mirror: Path, branch: str) -> PublishHead | None:
    """The publish ``branch`` and its record as the last fetch left them in the bare
    ``mirror`` (:func:`fetch_publish_head`'s), read with no network and no lock; None
    when there is no mirror yet.

    Raises:
        KeyError: the head commit is missing from ``mirror`` (a damaged mirror).
        SourceError: a notes tree that cannot be parsed.
    """
    if not (mirror / "objects").is_dir():
        return None
    with repository.bare_repo(mirror) as repo:
        head = repository.local_ref(repo, f"refs/heads/{branch}")
        return _publish_head(repo, head, repository.local_ref(repo, NOTES_REF))


def _publish_head(repo: Repo, head: str | None, notes: str | None) -> PublishHead:
    if head is None:
        return PublishHead(None, None, notes=notes)
    commit = repo[repository.oid(head)]
    when = commit.commit_time if isinstance(commit, Commit) else None
    text = read_note(repo, notes, head)
    fields = note_fields(text or "")
    source = fields.pop(SOURCE_COMMIT, None)
    source = source if repository.is_object_id(source or "") else None
    return PublishHead(head, source, when, fields, notes)


@dataclass(frozen=True)
class BuildRecord:
    """One commit of the publish branch and its record (``deploybot log``).

    Attributes:
        commit: the commit (40 hex).
        committed: its committer date, in its own zone (aware).
        subject: the first line of its message.
        source_commit: the source commit its record names, ``None`` when unknown.
        record: the other ``key value`` lines of its note; ``None`` when it has no note
            (not built by deploybot, or its note was removed).
    """

    commit: str
    committed: datetime
    subject: str
    source_commit: str | None
    record: Mapping[str, str] | None


def history(mirror: Path, head: PublishHead, limit: int) -> list[BuildRecord]:
    """The newest ``limit`` commits of the publish branch from ``head`` (as
    :func:`fetch_publish_head` fetched it into ``mirror``), following first parents (the
    branch as deploybot extends it), each with its note, newest first.

    Raises:
        KeyError: a commit is missing from ``mirror`` (a damaged mirror).
        SourceError: a notes tree that cannot be parsed.
    """
    found: list[BuildRecord] = []
    with repository.bare_repo(mirror) as repo:
        current = head.commit
        while current is not None and len(found) < limit:
            commit = repo[repository.oid(current)]
            if not isinstance(commit, Commit):
                break
            zone = timezone(timedelta(seconds=commit.commit_timezone))
            note = read_note(repo, head.notes, current)
            fields = None if note is None else note_fields(note)
            source = None if fields is None else fields.pop(SOURCE_COMMIT, None)
            found.append(
                BuildRecord(
                    current,
                    datetime.fromtimestamp(commit.commit_time, zone),
                    commit.message.decode("utf-8", "replace").split("\n", 1)[0],
                    source if repository.is_object_id(source or "") else None,
                    fields,
                )
            )
            current = commit.parents[0].decode("ascii") if commit.parents else None
    return found


@dataclass(frozen=True)
class BuildOutput:
    """What a build commit holds: the build's outputs and how they meet the publish tree
    (:func:`publish_build`)."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    """Outputs as bytes, by path."""
    blobs: Mapping[str, str] = field(default_factory=dict)
    """Outputs already stored in the mirror, by path (blob hex; :class:`BlobWriter`)."""
    patch: TreePatch | None = None
    """For an incremental build: the base the outputs go onto and the paths removed."""
    keep: Sequence[str] = ()
    """``publish.keep``: path prefixes the build never touches."""
    nojekyll: bool = False
    """``publish.nojekyll``: an empty :data:`NOJEKYLL` at the root."""


@dataclass(frozen=True)
class BuildCommit:
    """What a build commit says: who, when, its message and its record."""

    author: str
    """``Name <email>``: author and committer."""
    message: str
    """The commit message (a newline is added)."""
    when: datetime
    """Author and committer time, aware (its zone is the commit's)."""
    source_commit: str
    """The source commit the build stands for (the record's first line)."""
    record: Mapping[str, str] = field(default_factory=dict)
    """More ``key value`` lines of the record (:mod:`deploybot.record.note`)."""


@dataclass(frozen=True)
class PublishHooks:
    """What the caller runs during a publish."""

    before_push: Callable[[str | None, str], None] | None = None
    """``(old head, build commit)``, before each push of a new build commit."""
    check_head: Callable[[PublishHead], None] | None = None
    """The remote head, after every fetch of it, before anything is built on it."""


def publish_build(
    url: Remote | str,
    branch: str,
    mirror: Path,
    output: BuildOutput,
    build_commit: BuildCommit,
    *,
    hooks: PublishHooks | None = None,
    guard: Guard | None = None,
) -> PublishResult:
    """Commit ``output`` (:class:`BuildOutput`) to ``branch`` at ``url`` (``publish.url``
    with its keys, or a plain URL) as ``build_commit`` says (:class:`BuildCommit`); push.

    ``output.blobs`` adds outputs already stored in ``mirror`` (``{path: blob hex}``, e.g.
    from a :class:`BlobWriter`). Without ``output.patch`` the outputs replace every owned path
    of the publish tree. With it they are written onto ``patch.base``'s tree and
    ``patch.deletions`` removed; every other path stays (an incremental build); the push
    then requires the remote head to still be ``patch.base``, else :class:`StaleBaseError`.

    ``output.keep`` lists path prefixes the build never touches (``"docs/"`` is a folder;
    ``"CNAME"`` is that path or a folder of that name), except a ``CNAME`` file the build
    writes (the site's own, which GitHub Pages reads from the publish branch: the source
    wins). ``output.nojekyll``: the new tree gets an empty :data:`NOJEKYLL` at its root
    unless it has one (the build's own, or a kept one).

    ``build_commit.author`` (``Name <email>``) is author and committer, ``when`` (aware) gives
    both times and the zone, the message is ``message`` plus a newline. A missing branch
    is created with a root commit. The record (:mod:`deploybot.record.note`) says
    ``source_commit`` and ``record`` (more ``key value`` lines; keys and values without
    spaces or line breaks); when no commit is made, the head's record takes from them only
    what the next run compares against (:func:`deploybot.record.note.restamped`) and keeps
    why the head was made.

    ``hooks.before_push(old head, build commit)`` runs before each push of a new build
    commit (once per attempt), so the caller can record its intent first; what it raises
    stops the publish before anything is sent. ``hooks.check_head(remote head)`` runs after
    every fetch of the remote head (the first, and again after a lost push race) before
    anything is built on it; it raises (e.g. :class:`OlderSourceError`) to stop the
    publish. ``guard``: a new tree the publish guard refuses (:func:`guard_problem`) is not
    committed: :class:`GuardError`, unless forced.

    Returns:
        A :class:`PublishResult`; ``new`` is ``None`` when the tree did not change.

    Raises:
        PublishError: the remote is unreachable, rejected the push (the server's reason is in
            the message), or moved under us :data:`MAX_TRIES` times.
        ConfigError: a build output path clashes with a kept path (``publish.keep``).
        StaleBaseError: with ``patch``, the remote head is not ``patch.base``.
        GuardError: the publish guard stops the build (nothing is pushed; exit 1).
        SourceError: a path in ``files``, ``blobs`` or ``patch.deletions`` is refused by
            :mod:`deploybot.git.path_rules` (checked before anything is written).
        ValueError: ``when`` is naive.
    """
    files, blobs, patch = output.files, output.blobs, output.patch
    hooks = hooks or PublishHooks()
    remote = repository.as_remote(url, "publish.url")
    refname = f"refs/heads/{branch}"
    for path in [*files, *blobs, *(patch.deletions if patch else ())]:
        path_rules.check_path(path, "output path")  # before anything is written
    keep = _source_wins(output.keep, [*files, *blobs])
    record = dict(build_commit.record)
    for key, value in record.items():
        if not key or any(c.isspace() for c in key + value):
            raise ValueError(f"record: {key!r} {value!r} has a space or a line break")
    with repository.bare_repo(mirror) as repo:
        owned = [(p, data) for p, data in files.items() if not _is_kept(p, keep)]
        built = repository.blob_ids(repo, owned)
        built |= {p: b for p, b in blobs.items() if not _is_kept(p, keep)}
        build = _Build(
            repo, mirror, refname, build_commit.author, build_commit.message, build_commit.when,
            build_commit.source_commit, tuple(record.items()), output.nojekyll, guard,
        )  # fmt: skip
        for _ in range(MAX_TRIES):
            tips = repository.fetch_refs(remote, repo, [refname, NOTES_REF], PublishError)
            remote_head = tips[refname]
            if hooks.check_head is not None and remote_head is not None:
                hooks.check_head(_publish_head(repo, remote_head, tips[NOTES_REF]))
            if patch is not None and tips[refname] != patch.base:
                raise StaleBaseError(f"{refname} moved from {patch.base[:12]}: build again")
            plan = build.plan(tips[refname], tips[NOTES_REF], built, keep, patch)
            if not plan.updates:
                return plan.result
            if hooks.before_push is not None and plan.result.new is not None:
                hooks.before_push(plan.result.old, plan.result.new)
            try:
                repository.push_refs(remote, repo, plan.updates, PublishError)
            except RemoteMovedError:
                continue
            repository.set_local_refs(repo, {ref: new for ref, (_, new) in plan.updates.items()})
            return plan.result
    raise PublishError(
        f"push to {redact_url(remote.url)}: {refname} kept moving; gave up after {MAX_TRIES} tries"
    )


@dataclass(frozen=True)
class _Build:
    """One attempt at a build commit on top of a given remote head."""

    repo: Repo
    mirror: Path
    refname: str
    author: str
    message: str
    when: datetime
    source_commit: str
    record: tuple[tuple[str, str], ...] = ()
    nojekyll: bool = False
    guard: Guard | None = None

    def note(self) -> str:
        """The record's text: ``source-commit <id>`` and the other ``key value`` lines."""
        lines = [(SOURCE_COMMIT, self.source_commit), *self.record]
        return "".join(f"{key} {value}\n" for key, value in lines)

    def plan(
        self,
        old: str | None,
        notes_old: str | None,
        built: Mapping[str, str],
        keep: Sequence[str],
        patch: TreePatch | None = None,
    ) -> _Plan:
        """Write the build commit (if the tree changed) and the record; return the push."""
        old_tree = repository.commit_tree_id(self.repo, old) if old else None
        if patch is None:
            new_tree = self._replace(old_tree, built, keep)
        else:
            edits: dict[str, tuple[int, str] | None] = {
                p: None for p in patch.deletions if not _is_kept(p, keep)
            }
            # As in a full build, kept paths stay as they are even when the build makes them.
            edits.update({p: (MODE_FILE, s) for p, s in built.items() if not _is_kept(p, keep)})
            try:
                new_tree = tree_edit.edit_tree(self.repo, old_tree, edits)
            except ValueError as exc:  # outputs never clash with each other: a kept path does
                raise ConfigError(f"publish.keep: build output and kept path clash: {exc}") from exc
        if self.nojekyll:
            new_tree = self._with_nojekyll(new_tree)
        updates: dict[str, tuple[str | None, str]] = {}
        new: str | None = None
        changed: tuple[str, ...] = ()
        build = self
        if old is None or new_tree != old_tree:
            build = self._guarded(old_tree, new_tree)
            new = repository.make_commit(
                self.repo,
                new_tree,
                [old] if old else [],
                author=self.author,
                message=self.message.rstrip("\n") + "\n",
                when=self.when,
            )
            changed = tuple(sorted(repository.changed_paths(self.repo, old_tree, new_tree)))
            updates[self.refname] = (old, new)
        head = new or old
        assert head is not None
        before = read_note(self.repo, notes_old, head)
        if new is None and before is not None:
            build = build._restamped(note_fields(before))
        if before != build.note():
            updates[NOTES_REF] = (notes_old, build._record(notes_old, head))
        result = PublishResult(self.mirror, self.refname, old, new, changed)
        return _Plan(updates, result)

    def _restamped(self, head_record: Mapping[str, str]) -> _Build:
        """This build, recording no new commit on a head whose record is ``head_record``
        (:func:`deploybot.record.note.note_fields`): that record with what the next run
        compares against taken from this build (:func:`deploybot.record.note.restamped`).
        A head whose note names no source commit (not ours) gets this build's whole record."""
        if not repository.is_object_id(head_record.get(SOURCE_COMMIT, "")):
            return self
        mine = {SOURCE_COMMIT: self.source_commit, **dict(self.record)}
        merged = restamped(head_record, mine)
        merged.pop(SOURCE_COMMIT, None)
        return dataclasses.replace(self, record=tuple(merged.items()))

    def _guarded(self, old_tree: str | None, new_tree: str) -> _Build:
        """This build, checked by the publish guard (:func:`guard_problem`): when it trips,
        GuardError; when it trips but is forced, this build with ``guard overridden`` in
        its record (logged)."""
        if self.guard is None:
            return self
        problem = guard_problem(self.repo, old_tree, new_tree, self.guard)
        if problem is None:
            return self
        if not self.guard.forced:
            raise GuardError(f"not publishing: {problem}; run-once --force publishes it")
        log.warning("%s: publishing it anyway (--force)", problem)
        return dataclasses.replace(self, record=(*self.record, (GUARD, GUARD_OVERRIDDEN)))

    def _with_nojekyll(self, tree_id: str) -> str:
        """``tree_id`` with an empty :data:`NOJEKYLL` at its root, unless it has one."""
        if NOJEKYLL.encode() in gittree.read_tree(self.repo, repository.oid(tree_id)):
            return tree_id
        empty = repository.add_blob(self.repo, b"")
        return tree_edit.edit_tree(self.repo, tree_id, {NOJEKYLL: (MODE_FILE, empty)})

    def _replace(self, old_tree: str | None, built: Mapping[str, str], keep: Sequence[str]) -> str:
        """Return the tree of ``built`` plus the kept paths of ``old_tree``."""
        old_entries = repository.tree_entries(self.repo, old_tree, include_gitlinks=True)
        kept = {p: entry for p, entry in old_entries.items() if _is_kept(p, keep)}
        entries = {p: (MODE_FILE, sha) for p, sha in built.items()} | kept
        _check_no_clash(entries, kept)
        return repository.write_tree(self.repo, entries)

    def _record(self, notes_parent: str | None, head: str) -> str:
        """Write a notes commit saying ``head`` was built from the source commit: the
        previous notes tree with ``head``'s note put in (every build's note stays)."""
        blob = repository.add_blob(self.repo, self.note().encode())
        old_tree = repository.commit_tree_id(self.repo, notes_parent) if notes_parent else None
        edits: dict[str, tuple[int, str] | None] = {}
        found = find_note(self.repo, old_tree, head)
        if found is not None:
            edits[found[0]] = None  # where git (or an older version) put it: never two
        edits[note_path(head)] = (MODE_FILE, blob)
        tree = tree_edit.edit_tree(self.repo, old_tree, edits)
        return repository.make_commit(
            self.repo,
            tree,
            [notes_parent] if notes_parent else [],
            author=self.author,
            message=f"deploybot: {head} built from {self.source_commit}\n",
            when=self.when,
        )


SOURCE_WINS = "CNAME"
"""A kept path the source's own file replaces: GitHub Pages reads the custom domain from
the publish branch's ``CNAME``, and a Jekyll site that has one means it to be published."""


def _source_wins(keep: Sequence[str], outputs: Iterable[str]) -> tuple[str, ...]:
    """``keep`` without ``CNAME`` when the build writes a ``CNAME`` file."""
    if SOURCE_WINS not in outputs:
        return tuple(keep)
    return tuple(k for k in keep if k.rstrip("/") != SOURCE_WINS)


def _is_kept(path: str, keep: Iterable[str]) -> bool:
    """Return whether ``path`` is under a ``keep`` prefix (folder ``x/``, or path-or-folder):
    :func:`deploybot.git.path_rules.is_kept`, the rule's one home (the link check counts a
    kept path as served)."""
    return path_rules.is_kept(path, keep)


def _check_no_clash(entries: Mapping[str, object], kept: Mapping[str, object]) -> None:
    """Raise when a path is both a file and a folder (e.g. ``docs`` and ``docs/x``)."""
    for path in entries:
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in entries:
                if parent in kept or path in kept:
                    raise ConfigError(
                        f"publish.keep: build output and kept path clash: {parent!r} vs {path!r}"
                    )
                raise ValueError(f"build output has both a file and a folder {parent!r}")
