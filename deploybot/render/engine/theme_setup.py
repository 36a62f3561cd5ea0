"""The part of :class:`~deploybot.render.engine.full.Engine` that picks the theme of a build: the
site's own Liquid layouts (``_layouts/``) or a Jinja2 theme, the ``_data/`` files, and the
render context made from them (see :mod:`deploybot.render.theme.site_theme` for the precedence).

A full build lists the tree; an incremental one takes the layout names and data files from
the cache meta and updates them from the changed paths, so it never lists the tree.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import mistune

from deploybot.render.engine import build
from deploybot.render.engine.cache import BuildCache
from deploybot.render.engine.contents import Contents
from deploybot.render.engine.deps import Key, Kind, LazySite, Recorder, SiteContent, TrackingTree
from deploybot.render.liquid.layouts import LiquidLayouts
from deploybot.render.model import RenderOptions, SiteConfig, SiteModel
from deploybot.render.read.collections import POSTS
from deploybot.render.read.data import is_data_file, read_data
from deploybot.render.read.layered import LayeredTree
from deploybot.render.read.source import SourceTree
from deploybot.render.theme import site_theme
from deploybot.render.theme.deferred import DeferredEnvironment


class ThemeSetup:
    """Mixin of :class:`~deploybot.render.engine.full.Engine`: ``ctx`` for the build's theme."""

    tree: SourceTree
    options: RenderOptions
    cache: BuildCache
    config: SiteConfig
    recorder: Recorder
    env: DeferredEnvironment
    md: mistune.Markdown
    time: datetime
    tracked_tree: TrackingTree
    layout_names: dict[str, str]
    data_paths: list[str]
    ctx: build.RenderContext
    layered: LayeredTree | None
    contents: Contents

    def site_content(self) -> SiteContent:
        """Return where ``site``'s lists come from (the engine itself)."""
        raise NotImplementedError

    def _setup(self, names: dict[str, str], data_paths: list[str]) -> None:
        """Make ``site`` and the render context for the site's layouts ``names`` (name ->
        path; ``{}``: a Jinja2 theme) and data files ``data_paths``."""
        self.layout_names, self.data_paths = dict(names), sorted(data_paths)
        data = build.site_variables(SiteModel(self.config, (), (), (), self.time), self.md)
        labels = tuple(label for label in self.config.collections if label != POSTS)
        lists = ("posts", "pages", "html_pages", "static_files", "categories", "tags")
        for key in (*lists, "collections"):
            del data[key]
        for label in labels:
            data.pop(label, None)
        liquid_theme = bool(names) or self.jekyll_theme
        if liquid_theme:
            data.update(site_theme.liquid_site(self.config))
        site = LazySite(data, self.recorder, self.site_content(), labels)
        liquid = site_theme.make_liquid(self.tracked_tree, self.config, self.md, self.options)
        layouts = None
        if liquid_theme:
            max_yaml = self.options.max_yaml_size
            note = self._note_layout
            layouts = LiquidLayouts(self.tracked_tree, names, max_yaml, note)
        self.ctx = build.RenderContext(
            self.env,
            self.md,
            site,
            self.tracked_tree,
            self.options.max_page_bytes,
            liquid,
            layouts,
            self.options.highlight_timeout,
            self.contents,
        )

    @property
    def jekyll_theme(self) -> bool:
        """Whether a Jekyll theme (``theme:``, ``remote_theme:``) renders the site: then its
        Liquid layouts do, even when there is none (never the bundled theme)."""
        return self.layered is not None and self.options.theme == "default"

    def _note_layout(self, name: str, path: str) -> None:
        self.recorder.add(Kind.LAYOUT + name, path)

    @property
    def liquid_theme(self) -> bool:
        """Whether the site's own ``_layouts/`` render it."""
        return self.ctx.layouts is not None

    def setup_full(self) -> None:
        """List the tree for the site's layouts and data files (a full build)."""
        paths = list(self.tree.paths())
        self._setup(
            site_theme.site_layouts(paths, self.options.theme),
            [p for p in paths if is_data_file(p)],
        )

    def setup_incremental(self, changed: list[str]) -> bool:
        """Take the layouts and data files from the cache, updated for ``changed``; return
        whether the theme kind (own layouts or not) is the cached build's."""
        before: dict[str, str] = json.loads(self.cache.meta("layouts") or "{}")
        data: list[str] = json.loads(self.cache.meta("data") or "[]")
        names, files = site_theme.update_theme_files(
            before, data, changed, self.tree, self.options.theme
        )
        self._setup(names, files)
        return self.jekyll_theme or bool(before) == bool(names)

    def site_data(self) -> dict[str, Any]:
        """Return ``site.data`` (reading each data file through the tracking tree, and
        recording the list of data files)."""
        self.recorder.add(Key.DATA)
        return read_data(self.ctx.tree or self.tree, self.data_paths, self.options.max_yaml_size)
