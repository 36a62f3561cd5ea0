"""``deploybot build SOURCE OUT``: render a folder or a git revision into a folder.

No git writes: a repository is only read. This is the preview path; the pipeline never
calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from deploybot import gitutil, pathrules, render
from deploybot.config import RenderConfig
from deploybot.errors import SourceError, UsageError
from deploybot.render.source import DirTree, SourceTree
from deploybot.revision import resolve_commit


def build_to_folder(
    source: Path, out: Path, *, rev: str | None = None, render_config: RenderConfig | None = None
) -> render.SiteBuild:
    """Render ``source`` into the folder ``out`` and return the build.

    A bare repository, or any repository when ``rev`` is given, is read from git objects at
    ``rev`` (default ``HEAD``) and the feeds' build time is that commit's committer date; a
    folder is read from disk and the build time is now. ``out`` must be missing, empty, or a
    folder an earlier build made (it holds :data:`MANIFEST`): files of that earlier build
    that this one does not produce are removed; nothing else in ``out`` is touched.

    Nothing is read outside ``source`` (:class:`~deploybot.render.source.DirTree` follows
    no symlink) and nothing is written outside ``out``: a path :mod:`deploybot.pathrules`
    refuses, in the source or the output, stops the build before anything is written.

    Raises:
        SourceError: ``rev`` does not name a commit, or the source has bad input.
        UsageError: ``out`` is inside ``source`` (or the other way round), or is a non-empty
            folder no earlier build made.
    """
    _check_out(source, out)
    cfg = render_config or RenderConfig()
    tree, build_time = _open_source(source, rev)
    options = render.RenderOptions(
        theme=cfg.theme,
        timezone=cfg.timezone,
        feed_limit=cfg.feed_limit,
        build_time=build_time,
        typography=cfg.typography,
        footnotes=cfg.footnotes,
        layout_limits=render.layout_limits(cfg),
        max_file_bytes=cfg.max_file_bytes,
        max_page_bytes=cfg.max_page_bytes,
        max_yaml_size=cfg.max_yaml_size,
        highlight_timeout=cfg.highlight_timeout,
    )
    try:
        build = render.build_site(tree, options)
    finally:
        if isinstance(tree, gitutil.GitTree):
            tree.close()
    _write(out, build.files)
    return build


MANIFEST = ".deploybot-build"
"""The file in a ``deploybot build`` output folder listing the paths that build wrote."""


def _check_out(source: Path, out: Path) -> None:
    src, dst = source.resolve(), out.resolve()
    if dst == src or src in dst.parents or dst in src.parents:
        raise UsageError(f"OUT ({out}) and SOURCE ({source}) must not contain each other")
    if dst.exists() and not dst.is_dir():
        raise UsageError(f"OUT ({out}) is not a folder")
    if dst.is_dir() and any(dst.iterdir()) and not (dst / MANIFEST).is_file():
        raise UsageError(
            f"OUT ({out}) is not empty and no earlier 'deploybot build' made it; "
            "choose an empty or new folder"
        )


def _open_source(source: Path, rev: str | None) -> tuple[SourceTree, datetime]:
    try:
        repo = Repo(str(source))
    except NotGitRepository:
        if rev is not None:
            raise SourceError(f"--rev given but {source} is not a git repository") from None
        return DirTree(source), datetime.now(UTC)
    with repo:
        if not repo.bare and rev is None:
            return DirTree(source), datetime.now(UTC)
        return _tree_at(repo, source, rev or "HEAD")


def _tree_at(repo: Repo, source: Path, rev: str) -> tuple[SourceTree, datetime]:
    try:
        commit = resolve_commit(repo, rev)
    except KeyError as exc:
        raise UsageError(f"{source}: {exc.args[0]}") from None
    offset = timezone(timedelta(seconds=commit.commit_timezone))
    when = datetime.fromtimestamp(commit.commit_time, tz=offset)
    return gitutil.GitTree(Path(repo.path), commit.tree.decode("ascii")), when


def _write(out: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` under ``out``, remove what the previous build wrote and this one did
    not, and record the new list in :data:`MANIFEST`. Every path is checked first
    (:mod:`deploybot.pathrules`), so a refused one (``SourceError``) leaves ``out`` as it was.
    """
    for rel in files:
        pathrules.check_path(rel, "output path")
    manifest = out / MANIFEST
    previous = manifest.read_text("utf-8").splitlines() if manifest.is_file() else []
    for rel, data in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for rel in sorted(set(previous) - set(files), reverse=True):
        stale = out / rel
        if stale.is_file() and out.resolve() in stale.resolve().parents:
            stale.unlink()
            _remove_empty_parents(stale.parent, out)
    out.mkdir(parents=True, exist_ok=True)
    manifest.write_text("".join(f"{rel}\n" for rel in sorted(files)), "utf-8")


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
