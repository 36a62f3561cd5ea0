"""The site's Jekyll theme, between the watch and render stages: read which theme
``_config.yml`` names (:func:`deploybot.render.read.layered.theme_request`), find it
(``render.themes`` and the defaults for a gem theme, the spec itself for a remote theme:
:mod:`deploybot.watch.theme`), fetch it when it is a git repository, and hand the render stage
the site's tree with the theme's files under it
(:class:`~deploybot.render.read.layered.LayeredTree`). The render stage never touches git.

The build record keeps the theme's name and pin (:data:`deploybot.record.note.THEME`,
:data:`~deploybot.record.note.THEME_COMMIT`: the theme's commit, or a digest of a folder's
files), so a moved theme builds again and ``deploybot build --theme-commit`` remakes a
published build with the same theme.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from deploybot.config.schema import RenderConfig
from deploybot.git.remote import DEFAULT_MAX_FETCH_BYTES, DEFAULT_TIMEOUT
from deploybot.git.repository import GitTree
from deploybot.record import note
from deploybot.render.read.gemspec import runtime_dependencies, ships_file
from deploybot.render.read.layered import THEME_CONFIG, LayeredTree, Theme, ThemeRequest, folder_pin
from deploybot.render.read.layered import theme_request as request_of
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import DirTree, SourceTree
from deploybot.support.errors import ConfigError
from deploybot.watch import theme as watch_theme


@dataclass(frozen=True)
class ThemeFetch:
    """How a git theme is fetched: its mirrors' folder (``themes_dir``, in the state folder),
    the bounds of one fetch (the source's), and the commit to pin it to (``pinned``: a
    build record's, to remake that build; None: where its ref points now)."""

    themes_dir: Path
    timeout: float = DEFAULT_TIMEOUT
    max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES
    pinned: str | None = None


@dataclass(frozen=True)
class ThemedSource:
    """The tree the render stage builds (the site's, or a :class:`LayeredTree`) and the
    theme's build record fields (``{}`` without a theme)."""

    tree: SourceTree
    record: dict[str, str]

    def __enter__(self) -> ThemedSource:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the theme's repository handle, if any (a later read reopens it)."""
        if isinstance(self.tree, LayeredTree) and isinstance(self.tree.theme.tree, GitTree):
            self.tree.theme.tree.close()


def themed_source(site: SourceTree, render: RenderConfig, fetch: ThemeFetch) -> ThemedSource:
    """Return the site ``site`` with the Jekyll theme its ``_config.yml`` names under it.

    Raises:
        SourceError: ``_config.yml`` cannot be read (as the build would).
        ConfigError: a gem theme ``render.themes`` does not map (names the key), a folder
            that is not there, a remote with no such ref or commit.
        FetchError: the theme's repository cannot be reached for now.
    """
    config = load_config(site, render.timezone, render.max_yaml_size)
    request = request_of(config)
    if request is None:
        return ThemedSource(site, {})
    theme = _resolve(request, render, fetch)
    label = theme.label.replace("%", "%25").replace(" ", "%20")
    record = {note.THEME: label, note.THEME_COMMIT: theme.pin}
    return ThemedSource(LayeredTree(site, theme), record)


def _resolve(request: ThemeRequest, render: RenderConfig, fetch: ThemeFetch) -> Theme:
    base = Path.cwd()
    if request.remote:
        location = watch_theme.remote_location(request.name, base)
    else:
        location = watch_theme.gem_location(request.name, render.themes, base)
    if location.folder:
        folder = Path(location.url)
        if not folder.is_dir():
            raise ConfigError(
                f"'{location.key}': the folder of the theme {request.name!r} ({folder}) is missing"
            )
        tree = DirTree(folder)
        spec = watch_theme.folder_gemspec(folder)
        needs = runtime_dependencies(spec)
        installed = watch_theme.is_installed_gem(folder)
        ships = True if installed else _ships(spec)
        pin = _with_needs(folder_pin(tree), needs)
        gem = not request.remote
        return Theme(request.name, tree, pin, gem, needs, ships_config=ships and gem)
    commit, git_tree = watch_theme.fetch_theme(
        location, fetch.themes_dir, pinned=fetch.pinned, timeout=fetch.timeout,
        max_fetch_bytes=fetch.max_fetch_bytes,
    )  # fmt: skip
    if request.remote:  # jekyll-remote-theme requires none of the theme's dependencies
        return Theme(request.name, git_tree, commit, gem=False)
    spec = watch_theme.tree_gemspec(git_tree)
    needs = runtime_dependencies(spec)
    return Theme(request.name, git_tree, commit, dependencies=needs, ships_config=_ships(spec))


def _ships(spec: str) -> bool | None:
    """Whether the gem built from a repository (or a folder that is no installed gem) with
    the gemspec ``spec`` ('' for none: no gem to tell by) has its ``_config.yml`` (None:
    cannot tell)."""
    return ships_file(spec, THEME_CONFIG) if spec else None


def _with_needs(pin: str, needs: tuple[str, ...]) -> str:
    """A folder theme's pin, changed when its dependencies are (they decide its plugins)."""
    if not needs:
        return pin
    return hashlib.sha1(f"{pin}\0{','.join(needs)}".encode()).hexdigest()
