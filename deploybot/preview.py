"""``deploybot build SOURCE OUT``: render a folder or a git revision into a folder.

No git writes: a repository is only read. This is the preview path; the pipeline never
calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.objectspec import parse_commit
from dulwich.repo import Repo

from deploybot import gitutil, render
from deploybot.config import RenderConfig
from deploybot.errors import SourceError
from deploybot.render.source import DirTree, SourceTree


def build_to_folder(
    source: Path, out: Path, *, rev: str | None = None, render_config: RenderConfig | None = None
) -> render.SiteBuild:
    """Render ``source`` into the folder ``out`` and return the build.

    A bare repository, or any repository when ``rev`` is given, is read from git objects at
    ``rev`` (default ``HEAD``) and the feeds' build time is that commit's committer date; a
    folder is read from disk and the build time is now. Files in ``out`` that the build does
    not produce are left alone.

    Raises:
        SourceError: ``rev`` does not name a commit, or the source has bad input.
    """
    cfg = render_config or RenderConfig()
    tree, build_time = _open_source(source, rev)
    options = render.RenderOptions(
        theme=cfg.theme,
        timezone=cfg.timezone,
        feed_limit=cfg.feed_limit,
        build_time=build_time,
        typography=cfg.typography,
        footnotes=cfg.footnotes,
    )
    try:
        build = render.build_site(tree, options)
    finally:
        if isinstance(tree, gitutil.GitTree):
            tree.close()
    _write(out, build.files)
    return build


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
        commit = parse_commit(repo, rev.encode())
    except (KeyError, ValueError) as exc:
        raise SourceError(f"no commit {rev!r} in {source}: {gitutil.one_line(exc)}") from None
    offset = timezone(timedelta(seconds=commit.commit_timezone))
    when = datetime.fromtimestamp(commit.commit_time, tz=offset)
    return gitutil.GitTree(Path(repo.path), commit.tree.decode("ascii")), when


def _write(out: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
