"""Which theme renders a site, and what the site's own Liquid theme adds to the build.

Precedence (documented in docs/jekyll.md): an explicit ``render.theme`` (a Jinja2 theme folder
in the source) wins; otherwise a source with its own ``_layouts/`` is rendered with them
(Liquid, as Jekyll does: no bundled index, assets or feeds); otherwise the bundled Jinja2
theme. This module also makes the build's :class:`~deploybot.render.liquid.templates.Liquid` and
finds the page jekyll-paginate paginates (:mod:`deploybot.render.liquid.plugins.paginate`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import mistune

from deploybot.render.liquid.layouts import layout_map
from deploybot.render.liquid.plugins import paginate, registry
from deploybot.render.liquid.settings import liquid_settings
from deploybot.render.liquid.templates import Liquid
from deploybot.render.markdown.renderer import markdown_to_html
from deploybot.render.model import Page, RenderOptions, RenderWarning, SiteConfig
from deploybot.render.read.collections import POSTS
from deploybot.render.read.data import is_data_file
from deploybot.render.read.layered import LayeredTree, layout_name, theme_request
from deploybot.render.read.siteconfig import CONFIG_PATH, ThemeConfig, line_of_keys
from deploybot.render.read.source import SourceTree
from deploybot.support.errors import ConfigError

RAW_SITE_KEYS = ("title", "description", "url", "baseurl", "author")
"""``_config.yml`` keys the site's own layouts see as written (the bundled theme gets them
normalised: ``author.name``, no trailing ``/``)."""


def site_layouts(paths: Iterable[str], theme: str) -> dict[str, str]:
    """Return the site's own layouts (name -> path) when they render it: ``theme`` is
    ``"default"`` and the source has ``_layouts/``; ``{}`` otherwise."""
    return layout_map(p for p in paths if p.startswith("_layouts/")) if theme == "default" else {}


def jekyll_theme_of(tree: SourceTree) -> LayeredTree | None:
    """Return ``tree`` when it carries a Jekyll theme (``theme:``, ``remote_theme:``, laid
    under the site by the pipeline: :class:`~deploybot.render.read.layered.LayeredTree`),
    else None."""
    return tree if isinstance(tree, LayeredTree) else None


def theme_config(layered: LayeredTree | None, max_file_bytes: int) -> ThemeConfig | None:
    """Return the gem theme's ``_config.yml`` that Jekyll merges under the site's (None
    without a theme, or when Jekyll merges none:
    :meth:`~deploybot.render.read.layered.LayeredTree.theme_config`). Raises
    ``SourceError`` when it is larger than ``max_file_bytes``."""
    return None if layered is None else layered.theme_config(max_file_bytes)


def theme_warnings(config: SiteConfig, layered: LayeredTree | None) -> list[RenderWarning]:
    """Return the warnings of the build's Jekyll theme (what Jekyll reads of it and
    deploybot does not: :meth:`~deploybot.render.read.layered.LayeredTree.warnings`), and
    one for a gem ``theme:`` that a ``remote_theme:`` overrides: Jekyll still loads that
    gem first (``Site#configure_theme``; a gem not installed stops it), merges its
    ``_config.yml`` and requires its dependencies, which deploybot does not."""
    if layered is None:
        return []
    found = layered.warnings()
    gem = config.data.get("theme")
    if not layered.theme.gem and isinstance(gem, str) and gem.strip():
        line = line_of_keys(config.text, ("theme",))
        message = (
            f"theme {gem.strip()!r} is not read: remote_theme replaces it (Jekyll still merges "
            "the gem's _config.yml and requires its dependencies)"
        )
        found.append(RenderWarning(CONFIG_PATH, line, message))
    return found


def check_theme_given(config: SiteConfig, layered: LayeredTree | None) -> None:
    """Check that a site whose ``_config.yml`` names a theme is built with it: a build never
    falls back to the bundled theme. Raises ``ConfigError`` naming the key when ``config``
    asks for a theme and ``layered`` is None (the caller did not resolve it)."""
    request = theme_request(config)
    if request is not None and layered is None:
        raise ConfigError(
            f"_config.yml: {request.key} {request.name!r} was not resolved for this build "
            "(deploybot does not fall back to its bundled theme)"
        )


def with_theme_plugins(config: SiteConfig, layered: LayeredTree | None) -> SiteConfig:
    """Return ``config`` with the runtime dependencies of its gem theme added to
    ``plugins`` (Jekyll 4.3's ``require_theme_deps``: ``theme: minima`` switches on
    jekyll-feed and jekyll-seo-tag); ``config`` itself when there are none."""
    if layered is None or not layered.theme.dependencies:
        return config
    listed = config.data.get("plugins")
    plugins = list(listed) if isinstance(listed, list) else [] if listed is None else [listed]
    plugins += [name for name in layered.theme.dependencies if name not in plugins]
    return dataclasses.replace(config, data={**config.data, "plugins": plugins})


def update_theme_files(
    names: dict[str, str],
    data: Iterable[str],
    changed: Iterable[str],
    tree: SourceTree,
    theme: str,
) -> tuple[dict[str, str], list[str]]:
    """Return the layouts (name -> path) and data files of the new ``tree``, given those of
    the previous build and the ``changed`` paths (the tree is listed only when a layout
    file of a name that still has another file goes)."""
    names, files = dict(names), set(data)
    for path in changed:
        present = _exists(tree, path)
        name = layout_name(path)
        if name is not None and theme == "default":
            if present:
                names[name] = min(path, names.get(name, path))
            elif names.get(name) == path:
                del names[name]
                rest = [p for p in tree.paths() if layout_name(p) == name]
                if rest:
                    names[name] = min(rest)
        if is_data_file(path):
            (files.add if present else files.discard)(path)
    return names, sorted(files)


def _exists(tree: SourceTree, path: str) -> bool:
    try:
        tree.blob_id(path)
    except KeyError:
        return False
    return True


def liquid_site(config: SiteConfig) -> dict[str, Any]:
    """Return the ``site`` values the Liquid theme sees in place of the normalised ones:
    :data:`RAW_SITE_KEYS` as ``_config.yml`` has them (absent -> ``nil``, as in Jekyll
    4.3, whose defaults have no ``url`` and a ``nil`` ``baseurl``: ``{% if site.url %}``
    is false for a site without one and true for ``url: ""``)."""
    return {key: config.data.get(key) for key in RAW_SITE_KEYS}


def make_liquid(
    tree: SourceTree, config: SiteConfig, md: mistune.Markdown, options: RenderOptions
) -> Liquid:
    """Return the build's Liquid: includes from ``tree``, ``markdownify`` with ``md``, the
    site's zone and ``liquid:`` settings, and the options' limits."""
    return Liquid(
        tree,
        url=config.url,
        baseurl=config.baseurl,
        timezone=ZoneInfo(config.timezone),
        markdown=lambda text: markdown_to_html(text, md),
        limits=options.liquid_limits,
        max_output=options.max_page_bytes,
        settings=liquid_settings(config.data),
        collections=tuple(
            label for label, c in config.collections.items() if c.output and label != POSTS
        ),
        plugins=registry.named(config.data),
    )


@dataclass(frozen=True)
class Pager:
    """Pagination of the site: its ``settings`` and the ``template`` page's source path."""

    settings: paginate.Pagination
    template: str


def pager_of(config: SiteConfig, pages: Sequence[Page]) -> Pager | None:
    """Return the site's pagination (``None`` when off or when no ``index.html`` fits)."""
    settings = paginate.pagination(config.data)
    if settings is None or not pages:
        return None
    template = paginate.template_page(settings, (p.doc.path for p in pages))
    return None if template is None else Pager(settings, template)


def paginated_posts(site: Mapping[str, Any]) -> list[Any]:
    """Return ``site.posts`` without the ``hidden: true`` ones (jekyll-paginate)."""
    posts = site.get("posts") or []
    return [p for p in posts if not (isinstance(p, Mapping) and p.get("hidden"))]
