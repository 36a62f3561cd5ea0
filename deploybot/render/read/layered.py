"""A Jekyll theme (a gem theme or a remote theme) laid under the site's own files.

Jekyll 4.3 reads a theme from four folders of its root (``lib/jekyll/theme.rb``) and ``_data``
(``reader.rb``): layouts (``layout_reader.rb``: the site's layouts first, then the theme's of
a name the site has none of), includes (``includes_load_paths``: the site's ``_includes``,
then the theme's), Sass partials (jekyll-sass-converter's load paths: the site's ``_sass``,
then the theme's), ``assets/`` (``theme_assets_reader.rb``: a file with front matter is a
page, any other a static file, unless the site has a file at the same relative path; a
symlinked asset is ignored with a warning) and data files (the theme's, under the site's).

:class:`LayeredTree` shows that as one :class:`~deploybot.render.read.source.SourceTree`:
the theme's ``_layouts/x``, ``_includes/x``, ``_sass/x``, ``assets/x`` and ``_data/x`` at the
same paths unless the site has them (a layout: unless the site has a layout of that name),
with the theme's blob ids; so the reader, the includes, the Sass load path and the
incremental engine all see one tree. The render stage never fetches a theme: the pipeline
resolves it (:mod:`deploybot.watch.theme`) and hands render this tree.

A gem theme's ``_config.yml`` is not a file of the tree: Jekyll merges it under the site's
(``Site#load_theme_configuration``, a gem theme's only: jekyll-remote-theme 0.5 sets the theme
after the config is read and reads none), when the gem ships it (:attr:`Theme.ships_config`)
and it is no symlink; :meth:`LayeredTree.theme_config` hands it to
:func:`~deploybot.render.read.siteconfig.load_config`.

Differences from Jekyll, each told by a warning where a theme has it: a theme data file the
site also has is replaced whole (Jekyll deep-merges the two), theme assets are listed in
path order among the site's own files (Jekyll appends them after the site's pages and static
files), and a ``_config.yml`` whose gemspec's ``files`` this cannot read is not merged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from deploybot.render.model import RenderWarning, SiteConfig
from deploybot.render.read.siteconfig import ThemeConfig
from deploybot.render.read.source import SourceTree
from deploybot.render.read.symlinks import is_submodule, is_symlink, submodules
from deploybot.support.errors import SourceError

LAYOUTS_DIR = "_layouts/"


def layout_name(path: str) -> str | None:
    """Return the layout name of the source ``path`` (``None`` outside ``_layouts/`` or
    without an extension, as Ruby's ``Dir["**/*.*"]`` skips such files): its path below
    ``_layouts/`` without the last extension (``layout_reader.rb``)."""
    if not path.startswith(LAYOUTS_DIR):
        return None
    rel = path[len(LAYOUTS_DIR) :]
    base = rel.rsplit("/", 1)[-1]
    if "." not in base or base.startswith("."):
        return None
    return rel.rsplit(".", 1)[0]


THEME_FOLDERS = ("_layouts/", "_includes/", "_sass/", "assets/", "_data/")
"""The folders of a theme's root Jekyll reads (``Theme#*_path``)."""
THEME_CONFIG = "_config.yml"


@dataclass(frozen=True)
class ThemeRequest:
    """What ``_config.yml`` asks for: ``remote`` (``remote_theme: OWNER/NAME[@REF]`` or a
    git URL with ``@REF``) or a gem theme (``theme: NAME``); ``name`` as written, and the
    ``key`` (``theme`` or ``remote_theme``) that names it."""

    name: str
    remote: bool

    @property
    def key(self) -> str:
        """The ``_config.yml`` key that asked for the theme."""
        return "remote_theme" if self.remote else "theme"


def theme_request(config: SiteConfig) -> ThemeRequest | None:
    """Return the theme ``config`` (``_config.yml``) asks for, or None for none.

    ``remote_theme`` wins over ``theme`` (jekyll-remote-theme replaces the site's theme).
    A value that is no string is no theme (Jekyll warns "value of 'theme' in config should
    be String"; deploybot does not warn yet)."""
    for key, remote in (("remote_theme", True), ("theme", False)):
        value = config.data.get(key)
        if isinstance(value, str) and value.strip():
            return ThemeRequest(value.strip() if remote else value.strip().lower(), remote)
    return None


@dataclass(frozen=True)
class Theme:
    """A theme resolved for one build: ``label`` (``minima``, ``owner/name``) names it in
    messages, ``tree`` holds its files at its root (``_layouts/``, ``assets/``...), ``pin``
    says which version (a commit id, or a digest of a folder's files: :func:`folder_pin`).
    ``gem``: a gem theme, whose ``_config.yml`` Jekyll merges under the site's (a remote
    theme's it does not: jekyll-remote-theme sets the theme after the config is read).
    ``dependencies``: a gem theme's runtime dependencies (:mod:`.gemspec`), which Jekyll
    requires as plugins. ``ships_config``: whether the gem has the ``_config.yml`` of
    ``tree`` (an installed gem's folder: True; a repository's: as its gemspec's ``files``
    says, :func:`~.gemspec.ships_file`; None when that cannot be read)."""

    label: str
    tree: SourceTree
    pin: str
    gem: bool = True
    dependencies: tuple[str, ...] = ()
    ships_config: bool | None = False


def folder_pin(tree: SourceTree) -> str:
    """Return a digest (40 hex) of the theme files of ``tree`` (paths and blob ids) and of its
    ``_config.yml``: the pin of a theme read from a folder, which has no commit."""
    digest = hashlib.sha1()
    listing = theme_listing(tree)
    if config_blob(tree):
        listing[THEME_CONFIG] = config_blob(tree)
    for path, blob in sorted(listing.items()):
        digest.update(f"{path}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def config_blob(tree: SourceTree) -> str:
    """Return the blob id of the ``_config.yml`` at the root of the theme's ``tree`` ('' when
    there is none, or it is a symlink: Jekyll reads no symlinked theme config)."""
    if is_symlink(tree, THEME_CONFIG):
        return ""
    try:
        return tree.blob_id(THEME_CONFIG)
    except KeyError:
        return ""


def theme_listing(tree: SourceTree) -> dict[str, str]:
    """Return ``{path: blob id}`` of the files of ``tree`` Jekyll reads as a theme's (under
    :data:`THEME_FOLDERS`, not symlinks, not submodules)."""
    found: dict[str, str] = {}
    for path in tree.paths():
        if path.startswith(THEME_FOLDERS) and not is_symlink(tree, path):
            found[path] = tree.blob_id(path)
    return found


class LayeredTree:
    """The site's tree ``site`` with ``theme``'s files under it (the module docstring says
    which). Reads, blob ids and sizes of a theme path come from the theme's tree; symlinks
    and submodules are the site's only (a theme's symlinks are not shown: Jekyll ignores a
    symlinked theme asset)."""

    def __init__(self, site: SourceTree, theme: Theme) -> None:
        self.site = site
        self.theme = theme
        # path -> whether it reads from the theme. A tree is one build's, and the build asks
        # this of every layout and include of every page, three times a read (blob id, size,
        # bytes), each ask 2 to 3 walks of the site folder: 21,000 walks a 1,000-post
        # minima site.
        self._theme_side: dict[str, bool] = {}

    @cached_property
    def _theme_files(self) -> dict[str, str]:
        return theme_listing(self.theme.tree)

    @cached_property
    def _site_layout_names(self) -> frozenset[str]:
        names = (layout_name(p) for p in self.site.paths() if p.startswith("_layouts/"))
        return frozenset(n for n in names if n is not None)

    def _from_theme(self, path: str) -> bool:
        """Whether ``path`` reads from the theme (it shows there, the site hides it not)."""
        found = self._theme_side.get(path)
        if found is None:
            found = self._theme_side[path] = self._shows_theme(path)
        return found

    def _shows_theme(self, path: str) -> bool:
        if path not in self._theme_files or self._in_site(path):
            return False
        name = layout_name(path)
        return name is None or name not in self._site_layout_names

    def _in_site(self, path: str) -> bool:
        if is_symlink(self.site, path) or is_submodule(self.site, path):
            return True
        try:
            self.site.size(path)
        except KeyError:
            return False
        return True

    def paths(self) -> Iterator[str]:
        site = set(self.site.paths())
        shown = [p for p in self._theme_files if p not in site and self._from_theme(p)]
        return iter(sorted(site.union(shown)))

    def read(self, path: str) -> bytes:
        return self.theme.tree.read(path) if self._from_theme(path) else self.site.read(path)

    def blob_id(self, path: str) -> str:
        if self._from_theme(path):
            return self._theme_files[path]
        return self.site.blob_id(path)

    def size(self, path: str) -> int:
        return self.theme.tree.size(path) if self._from_theme(path) else self.site.size(path)

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` is a symlink of the site."""
        # A path read from the theme is none of the site's (asking the site folder walks it).
        return not self._from_theme(path) and is_symlink(self.site, path)

    def is_submodule(self, path: str) -> bool:
        """Whether ``path`` is a submodule of the site."""
        return is_submodule(self.site, path)

    def submodules(self) -> list[str]:
        """The site's submodules, sorted."""
        return submodules(self.site)

    def from_theme(self, path: str) -> bool:
        """Whether the file at ``path`` is the theme's (not the site's)."""
        return self._from_theme(path)

    def listing_json(self) -> str:
        """Return the theme's files (``{path: blob id}``), pin and merged config's blob id as
        JSON, as the build cache keeps them (:meth:`changed_since`)."""
        listing = {"pin": self.theme.pin, "files": self._theme_files, "config": self.config_key()}
        return json.dumps({**listing, "plugins": list(self.theme.dependencies)}, sort_keys=True)

    def _merges_config(self) -> bool:
        return self.theme.gem and self.theme.ships_config is True

    def config_key(self) -> str:
        """Return the blob id of the theme's ``_config.yml`` that Jekyll merges under the
        site's ('' when none is): what a build's config depends on besides the site's."""
        return config_blob(self.theme.tree) if self._merges_config() else ""

    def theme_config(self, max_file_bytes: int) -> ThemeConfig | None:
        """Return the theme's ``_config.yml`` Jekyll merges under the site's (None when there
        is none: a remote theme's, one the gem does not ship, a symlink). Raises
        ``SourceError`` naming it when it is larger than ``max_file_bytes``."""
        if not self.config_key():
            return None
        where = f"theme {self.theme.label}: {THEME_CONFIG}"
        size = self.theme.tree.size(THEME_CONFIG)
        if size > max_file_bytes:
            limit = f"more than render.max_file_bytes ({max_file_bytes:,})"
            raise SourceError(f"{size:,} bytes, {limit}", where)
        return ThemeConfig(where, self.theme.tree.read(THEME_CONFIG))

    def plugins_changed(self, before: str) -> bool:
        """Whether the theme's :attr:`Theme.dependencies` differ from those of the build
        whose :meth:`listing_json` was ``before``. Raises ``ValueError`` for a ``before``
        that is not such JSON."""
        old = json.loads(before).get("plugins", []) if before else []
        return list(old) != list(self.theme.dependencies)

    def changed_since(self, before: str, site_changed: Iterable[str]) -> list[str]:
        """Return the paths of this tree that may differ from the layered tree of a build
        whose :meth:`listing_json` was ``before`` ('' for a build without a theme), given
        the site paths ``site_changed`` since it: those, each theme file added, removed or
        edited, and the theme layouts of every name a changed site layout has (a site
        layout coming or going shows or hides them). Raises ``ValueError`` for a
        ``before`` that is not such JSON."""
        old: dict[str, Any] = json.loads(before)["files"] if before else {}
        if not isinstance(old, dict):
            raise ValueError("the theme listing is not a mapping")
        new = self._theme_files
        changed = set(site_changed)
        changed.update(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
        names = {layout_name(p) for p in site_changed} - {None}
        changed.update(p for p in old.keys() | new.keys() if layout_name(p) in names)
        return sorted(changed)

    def warnings(self) -> list[RenderWarning]:
        """Return what Jekyll reads of the theme and this tree does not, one warning each:
        its ``_config.yml`` when the gemspec does not tell whether the gem ships it, its
        symlinks, its data files the site also has."""
        label = f"theme {self.theme.label}"
        found: list[RenderWarning] = []
        tree = self.theme.tree
        for path in tree.paths():
            if path == THEME_CONFIG and self.theme.gem and self.theme.ships_config is None:
                message = (
                    "not merged under the site's: the gemspec's files do not say whether the "
                    "gem ships it (Jekyll merges a gem's _config.yml)"
                )
                found.append(RenderWarning(f"{label}: {path}", None, message))
            elif path.startswith(THEME_FOLDERS) and is_symlink(tree, path):
                message = "a symlink in the theme: ignored (as Jekyll ignores a symlinked asset)"
                found.append(RenderWarning(f"{label}: {path}", None, message))
            elif path.startswith("_data/") and self._in_site(path):
                message = "the site's data file replaces the theme's (Jekyll merges the two)"
                found.append(RenderWarning(path, None, message))
        return found
