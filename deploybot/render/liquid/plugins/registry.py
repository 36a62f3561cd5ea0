"""The registry of Jekyll plugins deploybot has, and which of them a site switches on.

A plugin is one module of this package holding ``PLUGIN``, a :class:`Plugin`: its gem name
and what it adds to a build (Liquid tags, a generator of outputs beyond the documents, a
hook on each rendered document: :class:`DocumentInfo` -> :class:`DocumentResult`).
:func:`known` finds them all, so a new plugin is one new
file. As in Jekyll, a plugin works only when ``_config.yml`` names it in ``plugins`` (or
in ``gems``, its name before Jekyll 3.5: both lists count, :func:`named`); a name deploybot
does not have gets one warning per build (:func:`unknown_warnings`), where Jekyll would stop
on the missing gem.

A generator sees the built site through a :class:`SiteView` (the full build gives its
model, the incremental engine its cache) and returns ``(output path, bytes)`` pairs. What
it reads is declared in :attr:`Plugin.needs`, so an incremental build re-runs it exactly
when one of those changed (:class:`Needs`).

Hooks on reading decide what a file is: :data:`FrontlessHook` per file without front matter
(jekyll-optional-front-matter), :data:`PromoteHook` over the whole site as read
(jekyll-readme-index: the incremental engine decides again on every build); a
:data:`PostRenderHook` rewrites each output a document renders to (jekyll-mentions,
jemoji, Jekyll's ``:post_render``). Modules without ``PLUGIN`` are their helpers
(:mod:`.html_pipeline`, :mod:`.gemoji_names`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cache
from typing import Any, Protocol

from deploybot.render.model import (
    Frontless,
    FrontlessRule,
    Page,
    Post,
    RenderWarning,
    SiteConfig,
    StaticFile,
)
from deploybot.render.read.siteconfig import CONFIG_PATH, line_of_keys

PLUGIN_KEYS = ("plugins", "gems")
"""The ``_config.yml`` lists that switch plugins on (``gems``: before Jekyll 3.5)."""


class Needs(StrEnum):
    """What a generator reads of the site, for the incremental build."""

    POSTS = "posts"
    """The visible posts, their order and front matter."""
    PAGES = "pages"
    """The pages and their front matter."""
    DOCS = "docs"
    """The documents of the collections other than ``posts``."""
    STATIC = "static"
    """The static files."""
    EVERY_BUILD = "every-build"
    """Something no dependency records (the rendered contents of posts): re-run on every
    build."""


class SiteView(Protocol):
    """The built site as a generator reads it. Lists hold only what is written: visible
    posts (newest first), pages, each written collection's visible documents (in its
    order) and static files."""

    @property
    def config(self) -> SiteConfig:
        """The site settings."""

    @property
    def time(self) -> datetime:
        """``site.time`` (aware)."""

    def posts(self, limit: int | None = None) -> Sequence[Post]:
        """Return the newest ``limit`` visible posts (all of them for ``None``)."""

    def pages(self) -> Sequence[Page]:
        """Return the pages, in source-path order."""

    def docs(self) -> Mapping[str, Sequence[Post]]:
        """Return the written documents of each collection other than ``posts``, by label
        in ``_config.yml`` order, each in its collection's order."""

    def static(self) -> Sequence[StaticFile]:
        """Return the written static files, in source-path order."""

    def content(self, path: str) -> str:
        """Return the rendered content (before layouts) of the post or document ``path``.
        Raises ``KeyError`` when it was not rendered."""

    def excerpt(self, post: Post) -> str:
        """Return the rendered excerpt of ``post`` (``page.excerpt``)."""

    def data(self) -> Mapping[str, Any]:
        """Return ``site.data``."""

    def exists(self, path: str) -> bool:
        """Return whether the source tree holds the file ``path``."""

    def site(self) -> Mapping[str, Any]:
        """Return the Liquid ``site`` the documents rendered with (``site.posts``,
        ``site.tags``...)."""

    def render(self, path: str, front_matter: Mapping[str, Any], page: Mapping[str, Any]) -> bytes:
        """Return a page of no body written to ``path`` rendered through the layout
        ``front_matter`` names (and its parents) with ``page`` (a generator's page:
        jekyll-archives'). Raises ``SourceError`` as a document's render does."""


Generator = Callable[[SiteView], list[tuple[str, bytes]]]
"""A plugin's generator: the site -> ``(output path, bytes)`` pairs it writes."""


@dataclass(frozen=True)
class DocumentInfo:
    """A rendered post, page or collection document, as a document hook sees it: its
    source ``path``, ``url``, ``output_path``, front matter, the site settings, the
    names of the site's own layouts and its ``output_ext`` (``.html`` for Markdown)."""

    path: str
    url: str
    output_path: str
    front_matter: Mapping[str, Any]
    config: SiteConfig
    layouts: frozenset[str] = frozenset()
    output_ext: str = ".html"


@dataclass(frozen=True)
class DocumentResult:
    """What a document hook makes of a document: ``extra`` outputs (``(path, bytes)``),
    a replacement of its ``output`` and of its ``content`` (``None``: kept),
    ``warnings``, and the ``layouts`` whose presence it read (an incremental build
    re-runs it when one comes or goes)."""

    extra: tuple[tuple[str, bytes], ...] = ()
    output: bytes | None = None
    content: str | None = None
    warnings: tuple[RenderWarning, ...] = ()
    layouts: tuple[str, ...] = ()


DocumentHook = Callable[[DocumentInfo], DocumentResult]
"""A plugin's hook on each rendered document (jekyll-redirect-from's pages)."""

PostRenderHook = Callable[[DocumentInfo, bytes], tuple[bytes, tuple[RenderWarning, ...]]]
"""A plugin's hook on each output a post, page or collection document renders to (its own
and a paginated index's copies; Jekyll's ``:post_render`` hook): the output it writes
instead (jekyll-mentions' links), and its warnings."""

ReadHook = Callable[[Any, SiteConfig, Callable[[str], str]], Any]
"""A plugin's hook on each post, page or collection document as it is read (a
:class:`~deploybot.render.model.Post` or :class:`~deploybot.render.model.Page`), given the
settings and the site's Markdown: the document it makes of it (its title, its body)."""


@dataclass(frozen=True)
class PrerenderContext:
    """What a prerender hook sees besides the document: the settings, the site's own layout
    names, and ``urls()``: the URL of every written page, static file, post and collection
    document by source path (made once per build, on first call)."""

    config: SiteConfig
    layouts: frozenset[str]
    urls: Callable[[], Mapping[str, str]]


@dataclass(frozen=True)
class Reads:
    """What a prerender hook read: the layout names whose presence it looked at, and the
    lists it looked in (:class:`Needs`): an incremental build re-renders the document when
    one of them changes."""

    layouts: tuple[str, ...] = ()
    needs: frozenset[Needs] = frozenset()


PrerenderHook = Callable[[Any, PrerenderContext], tuple[Any, Reads]]
"""A plugin's hook on a post, page or collection document about to render: the document to
render (its layout set, its body rewritten) and what the hook read (:class:`Reads`)."""


@dataclass(frozen=True)
class Entry:
    """A page or static file, as a promote hook sees it: its source ``path``, its ``url``
    as read (before a plugin promoted it), whether it is a ``static`` file (it has no front
    matter), and whether it is a ``collection``'s file."""

    path: str
    url: str
    static: bool
    collection: bool = False


Promotion = tuple[str, bool]
"""What a promote hook makes of a file: ``(permalink, copied)``: it is read as a page with
that permalink, and ``copied``: its original is still copied
(:func:`~deploybot.render.read.site.read_source_file`'s ``index``)."""

PromoteHook = Callable[[Sequence[Entry], SiteConfig], Mapping[str, Promotion]]
"""A plugin's rule on the site as read (jekyll-readme-index): the files it re-reads as
pages with a permalink, by path."""


FrontlessHook = FrontlessRule
"""A plugin's rule on a source file without front matter (jekyll-optional-front-matter):
what the file at the path becomes under the settings
(:class:`~deploybot.render.model.Frontless`)."""

ConfigHook = Callable[[SiteConfig, str], tuple[SiteConfig, list[RenderWarning]]]
"""A plugin's hook on the site settings, given the source's GitHub repository (``owner/name``
or ''): the settings it makes (``site.github``) and its warnings."""


@dataclass(frozen=True)
class Plugin:
    """One Jekyll plugin deploybot has.

    Attributes:
        name: the gem's name, as ``plugins:`` lists it (``jekyll-seo-tag``).
        tags: returns the python-liquid ``Tag`` classes it adds (called when the Liquid
            environment is made, so python-liquid is imported only then).
        generate: writes its outputs beyond the documents (``feed.xml``).
        needs: what ``generate`` reads (:class:`Needs`); ``site.time`` it need not name:
            reading :attr:`SiteView.time` (or an undated document) is noticed.
        post_fields: with :attr:`Needs.POSTS`, the post fields it reads (``url``,
            front-matter keys): a change to another field does not re-run it; empty: any
            field.
        document: a hook on each rendered document: its extra outputs, or its output
            replaced (:class:`DocumentResult`).
        config: a hook on the site settings (:data:`ConfigHook`), before anything is read.
        read: a hook on each document as it is read (:data:`ReadHook`).
        prerender: a hook on each post or page about to render (:data:`PrerenderHook`).
        post_render: a hook on each output a document renders to (:data:`PostRenderHook`).
        frontless: what a file without front matter at a path becomes, given the
            settings (:data:`FrontlessHook`).
        promote: the files of the site as read it makes pages with a permalink
            (:data:`PromoteHook`).
        summary: one line for the docs.
    """

    name: str
    summary: str
    tags: Callable[[], Sequence[type[Any]]] | None = None
    generate: Generator | None = None
    needs: frozenset[Needs] = field(default_factory=frozenset)
    post_fields: tuple[str, ...] = ()
    document: DocumentHook | None = None
    config: ConfigHook | None = None
    read: ReadHook | None = None
    prerender: PrerenderHook | None = None
    post_render: PostRenderHook | None = None
    frontless: FrontlessHook | None = None
    promote: PromoteHook | None = None


@cache
def known() -> Mapping[str, Plugin]:
    """Return every plugin of this package by name (each module holding ``PLUGIN``)."""
    package = importlib.import_module(__package__ or "deploybot.render.liquid.plugins")
    found: dict[str, Plugin] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        plugin = getattr(module, "PLUGIN", None)
        if isinstance(plugin, Plugin):
            found[plugin.name] = plugin
    return found


def named(data: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the plugin names ``_config.yml``'s ``data`` lists in ``plugins`` and
    ``gems`` (a single name counts as a list of one), each once, in order."""
    names: list[str] = []
    for key in PLUGIN_KEYS:
        value = data.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        names.extend(str(item) for item in items if isinstance(item, str | int | float))
    return tuple(dict.fromkeys(names))


def is_enabled(data: Mapping[str, Any], name: str) -> bool:
    """Return whether ``_config.yml``'s ``data`` switches the plugin ``name`` on."""
    return name in named(data)


def enabled(data: Mapping[str, Any]) -> tuple[Plugin, ...]:
    """Return the plugins ``_config.yml``'s ``data`` switches on that deploybot has, in the
    order listed."""
    plugins = known()
    return tuple(plugins[name] for name in named(data) if name in plugins)


GEMS_RENAMED = (
    "'gems' is the old name of 'plugins' (Jekyll 3.5 renamed it; Jekyll 4 ignores it): "
    "its plugins are switched on all the same"
)


def unknown_warnings(config: SiteConfig) -> list[RenderWarning]:
    """Return one warning for each plugin ``config`` lists that deploybot does not have,
    at the line of the list in ``_config.yml`` (Jekyll stops: the gem is missing), and
    Jekyll 3's deprecation warning for a ``gems`` list."""
    plugins = known()
    found = []
    if config.data.get("gems") is not None:
        found.append(RenderWarning(CONFIG_PATH, line_of_keys(config.text, ("gems",)), GEMS_RENAMED))
    for name in named(config.data):
        if name in plugins:
            continue
        key = next((k for k in PLUGIN_KEYS if name in named({k: config.data.get(k)})), "plugins")
        message = f"plugin {name} is not supported by deploybot: its output is left out"
        found.append(RenderWarning(CONFIG_PATH, line_of_keys(config.text, (key,)), message))
    return found


def adjust_config(config: SiteConfig, repository: str) -> tuple[SiteConfig, list[RenderWarning]]:
    """Return ``config`` after the config hooks of the plugins it switches on (in order),
    given the source's GitHub ``repository``, and their warnings."""
    warnings: list[RenderWarning] = []
    for plugin in enabled(config.data):
        if plugin.config is not None:
            config, found = plugin.config(config, repository)
            warnings.extend(found)
    return config, warnings


def adjust_document(doc: Any, config: SiteConfig, markdown: Callable[[str], str]) -> Any:
    """Return the post, page or document ``doc`` after the read hooks of the plugins
    ``config`` switches on."""
    for plugin in enabled(config.data):
        if plugin.read is not None:
            doc = plugin.read(doc, config, markdown)
    return doc


def before_render(doc: Any, context: PrerenderContext) -> tuple[Any, Reads]:
    """Return the post, page or document ``doc`` after the prerender hooks of the plugins
    ``context.config`` switches on, and what they read."""
    layouts: list[str] = []
    needs: set[Needs] = set()
    for plugin in enabled(context.config.data):
        if plugin.prerender is not None:
            doc, read = plugin.prerender(doc, context)
            layouts.extend(read.layouts)
            needs.update(read.needs)
    return doc, Reads(tuple(layouts), frozenset(needs))


def after_render(info: DocumentInfo, output: bytes) -> tuple[bytes, list[RenderWarning]]:
    """Return ``output``, one output of the document ``info``, after the post-render hooks
    of the plugins ``info.config`` switches on, in order, and their warnings."""
    warnings: list[RenderWarning] = []
    for plugin in enabled(info.config.data):
        if plugin.post_render is not None:
            output, found = plugin.post_render(info, output)
            warnings.extend(found)
    return output, warnings


def read_frontless(path: str, config: SiteConfig) -> Frontless:
    """Return what the file ``path``, which has no front matter, becomes under the plugins
    ``config`` switches on: the first one's answer other than :attr:`Frontless.STATIC`."""
    for plugin in enabled(config.data):
        if plugin.frontless is not None:
            found = plugin.frontless(path, config)
            if found is not Frontless.STATIC:
                return found
    return Frontless.STATIC


def promotions(
    pages: Iterable[Page], static: Iterable[StaticFile], config: SiteConfig
) -> dict[str, Promotion]:
    """Return the files the promote hooks of the plugins ``config`` switches on make pages
    (by path), given the site's ``pages`` (as read before any promotion: a promoted page
    counts as what it was, :attr:`Page.readme`) and ``static`` files."""
    hooks = [p.promote for p in enabled(config.data) if p.promote is not None]
    if not hooks:
        return {}
    found = [
        Entry(p.doc.path, p.readme.url, p.readme.static)
        if p.readme is not None
        else Entry(p.doc.path, p.url, False)
        for p in pages
    ]
    found.extend(Entry(s.path, s.url, True, s.collection is not None) for s in static)
    chosen: dict[str, Promotion] = {}
    for hook in hooks:
        chosen.update(hook(found, config))
    return chosen


def liquid_tags(names: Sequence[str]) -> list[type[Any]]:
    """Return the Liquid tag classes of the plugins ``names`` (those deploybot has)."""
    plugins = known()
    tags: list[type[Any]] = []
    for name in names:
        plugin = plugins.get(name)
        if plugin is not None and plugin.tags is not None:
            tags.extend(plugin.tags())
    return tags
