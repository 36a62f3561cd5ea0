"""``deploybot build SOURCE OUT``: render a folder or a git revision into a folder.

No git writes: a repository is only read. This is the preview path; the pipeline never
calls it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from deploybot.config.schema import RenderConfig
from deploybot.git import path_rules, repository
from deploybot.git.rev_parse import commit_datetime, resolve_commit
from deploybot.pipeline.theme import ThemeFetch, themed_source
from deploybot.render.engine.cache import BuildCache, renderer_version
from deploybot.render.engine.incremental import build_into
from deploybot.render.highlight import cache as highlight_cache
from deploybot.render.model import RenderOptions, SiteBuild, layout_limits, liquid_limits
from deploybot.render.outputs.sinks import BuildReport, PackedSink
from deploybot.render.read.source import DirTree, SourceTree
from deploybot.support.errors import (
    DamagedRepositoryError,
    SourceError,
    UsageError,
    disk_full,
    is_disk_full,
)


def build_to_folder(
    source: Path,
    out: Path,
    *,
    rev: str | None = None,
    render_config: RenderConfig | None = None,
    cache_dir: Path | None = None,
    cutoff: datetime | None = None,
    themes_dir: Path | None = None,
    theme_commit: str | None = None,
) -> SiteBuild:
    """Render ``source`` into the folder ``out`` and return the build.

    A bare repository, or any repository when ``rev`` is given, is read from git objects at
    ``rev`` (default ``HEAD``) and the feeds' build time is that commit's committer date; a
    folder is read from disk and the build time is now. ``cutoff`` (aware) is the future
    cut-off (default: the build time). ``out`` must be missing, empty, or a
    folder an earlier build made (it holds :data:`MANIFEST`): files of that earlier build
    that this one does not produce are removed; nothing else in ``out`` is touched.

    The build is the pipeline's full build
    (:func:`deploybot.render.engine.incremental.build_into`: worker processes per ``[render]
    jobs``), with a throw-away cache in ``out`` (:data:`SCRATCH`)
    and its outputs kept compressed until they are written
    (:class:`~deploybot.render.outputs.sinks.PackedSink`), so memory stays small whatever the
    site's size. ``cache_dir`` (the state folder's ``cache/``) keeps highlighted code
    blocks across builds; ``None``: none kept. The Jekyll theme ``_config.yml`` names is
    found as a run finds it (:mod:`deploybot.pipeline.theme`), a git theme fetched into
    ``themes_dir`` (the state folder's ``themes/``; ``None``: a temporary folder) at
    ``theme_commit`` when given (a build record's ``theme`` pin), else where its ref points.

    Nothing is read outside ``source`` (:class:`~deploybot.render.read.source.DirTree` follows
    no symlink) and nothing is written outside ``out`` (and ``cache_dir``): a path
    :mod:`deploybot.git.path_rules` refuses, in the source or the output, stops the build before
    anything is written.

    Raises:
        SourceError: ``rev`` is given for a folder that is not a repository, or the source
            has bad input.
        UsageError: ``rev`` is empty or names no commit (saying so when it names a blob or
            a tree, or when ``HEAD`` has no commit yet).
        UsageError: ``out`` is ``source``, or holds it, or is inside a ``source`` read from
            git objects (inside a folder read from disk it is fine: it is not read, as
            Jekyll skips its destination), or is a non-empty folder no earlier build made.
        DamagedRepositoryError: a git object the revision's trees name is missing from the
            repository or cannot be read (exit 1: waiting does not mend it).
    """
    if rev is not None and not rev.strip():
        raise UsageError("--rev is empty: give a commit id, a branch or a tag")
    skip = _check_out(source, out, from_disk=_reads_folder(source, rev))
    cfg = render_config or RenderConfig()
    with _damage_named(source):  # the root tree is read here
        tree, build_time = _open_source(source, rev, skip)
    options = render_options(cfg, build_time, cutoff)
    made = not out.exists()
    sink = PackedSink()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            fetch = ThemeFetch(themes_dir or Path(scratch), pinned=theme_commit)
            with themed_source(tree, cfg, fetch) as themed:
                report = _build(themed.tree, options, sink, cache_dir, out)
                _write(out, sink)  # static files are read from the trees here: still open
    except BaseException as exc:
        if made and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # a failed build leaves no trace of the folder it made
        _raise_damage_named(exc, source)
        raise
    finally:
        if isinstance(tree, repository.GitTree):
            tree.close()
    return SiteBuild(sink, report.warnings, report.timezone)


@contextlib.contextmanager
def _damage_named(source: Path) -> Iterator[None]:
    """Around reads of ``source``'s git objects: see :func:`_raise_damage_named`."""
    try:
        yield
    except BaseException as exc:
        _raise_damage_named(exc, source)
        raise


def _raise_damage_named(exc: BaseException, source: Path) -> None:
    """Raise DamagedRepositoryError when ``exc`` says an object the repository's trees
    name is not in it, or cannot be read (:func:`deploybot.git.repository.damaged_object`):
    the repository the user named does not heal by waiting."""
    damage = repository.damaged_object(exc) if isinstance(exc, repository.DAMAGE_ERRORS) else None
    if damage is not None:
        raise DamagedRepositoryError(damage.message(fallback=source)) from exc


def render_options(
    cfg: RenderConfig, build_time: datetime, cutoff: datetime | None
) -> RenderOptions:
    """The render options of ``[render]`` ``cfg`` for a build at ``build_time`` (aware)
    with the future ``cutoff`` (None: the build time)."""
    return RenderOptions(
        theme=cfg.theme,
        timezone=cfg.timezone,
        feed_limit=cfg.feed_limit,
        build_time=build_time,
        cutoff=cutoff,
        typography=cfg.typography,
        footnotes=cfg.footnotes,
        layout_limits=layout_limits(cfg),
        liquid_limits=liquid_limits(cfg),
        max_file_bytes=cfg.max_file_bytes,
        max_page_bytes=cfg.max_page_bytes,
        max_yaml_size=cfg.max_yaml_size,
        markdown_max_elements=cfg.markdown_max_elements,
        highlight_timeout=cfg.highlight_timeout,
        max_site_bytes=cfg.max_site_bytes,
        jobs=cfg.jobs,
        highlight_cache_bytes=cfg.highlight_cache_bytes,
    )


def _build(
    tree: SourceTree,
    options: RenderOptions,
    sink: PackedSink,
    cache_dir: Path | None,
    out: Path,
) -> BuildReport:
    """Build fully into ``sink``, with a throw-away build cache in :data:`SCRATCH` inside
    ``out`` (on disk: a 10k-post cache in memory would hold every post's content)."""
    scratch = out / SCRATCH
    try:
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            cache = BuildCache.open(scratch / "build.sqlite", renderer_version(), durable=False)
        except OSError:  # no room for it in OUT (too deep a path…): the writing says why
            cache = BuildCache.open(None, renderer_version())
        with highlight_cache.opened(cache_dir, options.highlight_cache_bytes), cache:
            return build_into(tree, options, cache, sink, None, full_reason="preview")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


MANIFEST = ".deploybot-build"
"""The file in a ``deploybot build`` output folder listing the paths that build wrote."""
SCRATCH = ".deploybot-build.scratch"
"""The folder in ``OUT`` holding a running build's cache (removed when it ends; one a killed
build left is removed by the next)."""


def _check_out(source: Path, out: Path, *, from_disk: bool) -> str | None:
    """Check ``out`` (see :func:`build_to_folder`); return its path inside ``source``
    (``/``-separated) when the build reads ``source`` from disk (``from_disk``) and ``out``
    is inside it: the folder the source's reading skips. Raises UsageError."""
    try:
        return _check_out_folder(source, out, from_disk)
    except OSError as exc:  # ENAMETOOLONG, EACCES, ELOOP…
        raise UsageError(f"OUT ({out}) cannot be used: {exc.strerror or exc}") from exc


def _check_out_folder(source: Path, out: Path, from_disk: bool) -> str | None:
    src, dst = source.resolve(), out.resolve()
    if dst == src or dst in src.parents:
        raise UsageError(f"OUT ({out}) must not be SOURCE ({source}) or hold it")
    inside = src in dst.parents
    if inside and not from_disk:
        raise UsageError(
            f"OUT ({out}) must not be inside SOURCE ({source}) when it is read from git objects"
        )
    if dst.exists() and not dst.is_dir():
        raise UsageError(f"OUT ({out}) is not a folder")
    if (
        dst.is_dir()
        and any(p.name != SCRATCH for p in dst.iterdir())
        and not ((dst / MANIFEST).is_file())
    ):
        raise UsageError(
            f"OUT ({out}) is not empty and no earlier 'deploybot build' made it; "
            "choose an empty or new folder"
        )
    return dst.relative_to(src).as_posix() if inside else None


def _reads_folder(source: Path, rev: str | None) -> bool:
    """Whether the build reads ``source`` from disk (a folder, or a work tree without
    ``rev``), not from git objects (see :func:`build_to_folder`)."""
    try:
        with Repo(str(source)) as repo:
            return not repo.bare and rev is None
    except NotGitRepository:
        return True


def _open_source(
    source: Path, rev: str | None, skip: str | None = None
) -> tuple[SourceTree, datetime]:
    """The tree to build and its build time (see :func:`build_to_folder`); ``skip``: a
    folder of a source read from disk that is not read (OUT)."""
    try:
        repo = Repo(str(source))
    except NotGitRepository:
        if rev is not None:
            raise SourceError(f"--rev given but {source} is not a git repository") from None
        return DirTree(source, skip), datetime.now(UTC)
    with repo:
        if not repo.bare and rev is None:
            return DirTree(source, skip), datetime.now(UTC)
        return _tree_at(repo, source, rev or "HEAD")


def _tree_at(repo: Repo, source: Path, rev: str) -> tuple[SourceTree, datetime]:
    try:
        commit = resolve_commit(repo, rev)
    except KeyError as exc:
        raise UsageError(f"{source}: {_no_commit(repo, rev) or exc.args[0]}") from None
    when = commit_datetime(commit.commit_time, commit.commit_timezone, commit.id.decode())
    return repository.GitTree(Path(repo.path), commit.tree.decode("ascii")), when


_HEAD_RE = re.compile(r"HEAD([~^]|$)")


def _no_commit(repo: Repo, rev: str) -> str | None:
    """Why ``rev``, which resolves to no commit of ``repo``, does not, when more can be said
    than git's "unknown revision": ``HEAD`` names a branch with no commit yet (the
    repository has none, or its branches are listed), or ``rev`` is the (abbreviated) id
    of a blob or a tree. None otherwise."""
    if _HEAD_RE.match(rev):
        target = repo.refs.read_ref(Ref(b"HEAD")) or b""
        if target.startswith(b"ref: ") and Ref(target[5:]) not in repo.refs:
            branches = sorted(
                name.decode("utf-8", "replace") for name in repo.refs.keys(base=Ref(b"refs/heads/"))
            )
            if not branches:
                return "the repository has no commits yet (no branch at all)"
            unborn = target[5:].decode("utf-8", "replace")
            return (
                f"HEAD is {unborn}, which has no commits yet; its branches: "
                f"{', '.join(branches)} (give one with --rev)"
            )
    if _HEX_RE.fullmatch(rev):
        kinds = {repo.object_store[sha].type_name for sha in _with_prefix(repo, rev)}
        if len(kinds) == 1 and b"commit" not in kinds:
            return f"{rev!r} is a {kinds.pop().decode()}, not a commit"
    return None


_HEX_RE = re.compile(r"[0-9a-f]{4,40}")


def _with_prefix(repo: Repo, rev: str) -> list[ObjectID]:
    """The ids of ``repo``'s objects starting with the hex ``rev`` (at most a few)."""
    found = []
    for sha in repo.object_store.iter_prefix(rev.encode("ascii")):
        found.append(sha)
        if len(found) > 2:
            break
    return found


def _write(out: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` under ``out``, remove what the previous build wrote and this one did
    not, and record the new list in :data:`MANIFEST`.

    Everything that can be known is checked before anything is written: every path
    (:mod:`deploybot.git.path_rules`), its length once inside ``out`` (``PATH_MAX``), and what
    is in the way on disk (a stale file of ours where a folder is needed, or a stale
    folder of ours where a file goes, is removed; anything else is refused). The manifest
    lists the earlier build's files and this one's before the first write, so a write
    that fails half-way (disk full) leaves ``out`` a folder the next build recognises and
    cleans up.

    Raises:
        SourceError: a refused output path; nothing was written.
        UsageError: ``out`` is too deep for an output path, or something no build made is
            in the way; nothing was written.
        DiskFullError: the disk filled while writing.
    """
    for rel in files:
        path_rules.check_path(rel, "output path")
    _check_lengths(out, files)
    manifest = out / MANIFEST
    previous = manifest.read_text("utf-8").splitlines() if manifest.is_file() else []
    stale = set(previous) - set(files)
    _check_room(out, files, stale)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_manifest(manifest, {*previous, *files})
        for rel in sorted(stale, reverse=True):
            target = out / rel
            inside = out.resolve() in target.resolve().parents  # no symlink on the way
            if inside and target.is_file() and not target.is_symlink():
                target.unlink()
                _remove_empty_parents(target.parent, out)
        for rel, data in files.items():
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        _write_manifest(manifest, set(files))
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full(exc, getattr(exc, "filename", None) or out) from exc
        raise


def _check_room(out: Path, files: Mapping[str, bytes], stale: set[str]) -> None:
    """Refuse, before anything is written, anything on disk in an output path's way but a
    stale file of ours (``stale``)."""
    checked: set[str] = set()
    for rel in sorted(files):
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in checked:
                continue
            checked.add(folder)
            where = out / folder
            if where.is_symlink() or (
                where.exists() and not where.is_dir() and folder not in stale
            ):
                _in_the_way(out, folder, rel)
        target = out / rel
        if target.is_dir() and not target.is_symlink():
            for inner in _files_under(target):
                if inner.relative_to(out).as_posix() not in stale:
                    _in_the_way(out, inner.relative_to(out).as_posix(), rel)


def _check_lengths(out: Path, files: Mapping[str, bytes]) -> None:
    """Refuse an output path (or the manifest's) longer than ``PATH_MAX`` inside ``out``."""
    base = len(os.fsencode(out.absolute())) + 1
    for rel in [MANIFEST + ".tmp", *sorted(files)]:
        if base + len(os.fsencode(rel)) > path_rules.MAX_PATH_BYTES:
            raise UsageError(
                f"OUT ({out}) is too deep for the output path "
                f"{path_rules.shortened(rel)}: over {path_rules.MAX_PATH_BYTES} bytes in all"
            )


def _files_under(folder: Path) -> Iterator[Path]:
    for root, dirs, names in os.walk(folder):
        for name in [*names, *(d for d in dirs if Path(root, d).is_symlink())]:
            yield Path(root, name)


def _in_the_way(out: Path, blocker: str, rel: str) -> None:
    raise UsageError(
        f"OUT ({out}) holds {path_rules.shortened(blocker)}, which no earlier build made, "
        f"where the output {path_rules.shortened(rel)} goes; move it away"
    )


def _write_manifest(manifest: Path, paths: set[str]) -> None:
    """Replace :data:`MANIFEST` atomically (a temp file renamed over it)."""
    temporary = manifest.with_name(MANIFEST + ".tmp")
    temporary.write_text("".join(f"{rel}\n" for rel in sorted(paths)), "utf-8")
    temporary.replace(manifest)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
