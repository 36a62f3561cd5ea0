"""The render stage's data: its options and result, and the site model built from the source.

The site model (:class:`SiteConfig`, :class:`Document`, :class:`Post`, :class:`Page`,
:class:`SiteModel`) is what the source *says*; turning it into output bytes happens elsewhere
(:mod:`deploybot.render.engine.build`), so an incremental build can re-render one post from its own
model entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from deploybot.config.schema import RenderConfig

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Jekyll's ``site.time`` when :attr:`RenderOptions.build_time` is ``None``."""
MAX_FILE_BYTES = 50_000_000
"""Default :attr:`RenderOptions.max_file_bytes` (50 MB)."""
MAX_PAGE_BYTES = 50_000_000
"""Default :attr:`RenderOptions.max_page_bytes` (50 MB)."""
MAX_YAML_SIZE = 10_000_000
"""Default :attr:`RenderOptions.max_yaml_size`."""
MARKDOWN_MAX_ELEMENTS = 1_000_000
"""Default :attr:`RenderOptions.markdown_max_elements`: at a few hundred bytes each, a few
hundred MB; real posts make one element per 15-50 characters."""
HIGHLIGHT_TIMEOUT = 10.0
PARALLEL_FROM = 32
"""Below this many source files a full build works in one process: starting workers
and giving them the site (tens of milliseconds) would cost more than they save."""
HIGHLIGHT_CACHE_BYTES = 100_000_000
"""``[render] highlight_cache_bytes``' default: 100 MB of compressed highlighted blocks."""
"""Default :attr:`RenderOptions.highlight_timeout`, in seconds."""
MAX_SITE_BYTES = 1_000_000_000
"""Default :attr:`RenderOptions.max_site_bytes` (1 GB)."""


@dataclass(frozen=True)
class LayoutLimits:
    """What one render of a layout may use (the ``[render] layout_max_*`` keys); see
    :mod:`deploybot.render.theme.sandbox` for what counts.

    Attributes:
        max_steps: loop iterations, calls, filters, tests and operators, plus one per list
            item and per 1,000 characters they handle.
        max_output: characters written in total, and the largest value a layout may make.
        max_depth: calls nested in calls (macro, ``caller()``, ``loop()`` recursion).
    """

    max_steps: int = 10_000_000
    max_output: int = 50_000_000
    max_depth: int = 50


@dataclass(frozen=True)
class LiquidLimits:
    """What Liquid may use for one page (its body and its layouts together): the
    ``[render] liquid_max_*`` keys, passed to python-liquid's ``Environment`` limits.

    Attributes:
        max_loop_iterations: loop iterations: nested loops whose lengths multiply past it
            stop before they start (python-liquid's ``loop_iteration_limit``), and all the
            loops of the page together may not run more.
        max_local_bytes: bytes held by ``assign``/``capture`` variables
            (``local_namespace_limit``, ``sys.getsizeof`` of each value).
        max_depth: includes nested in includes, and blocks in blocks
            (``context_depth_limit``, ``block_nesting_limit``).
    """

    max_loop_iterations: int = 1_000_000
    max_local_bytes: int = 50_000_000
    max_depth: int = 50


@dataclass(frozen=True)
class RenderOptions:
    """How to build the site.

    Attributes:
        theme: ``"default"`` for the bundled Jinja2 theme (the repository's ``templates/``),
            else a folder inside the source tree holding Jinja2 layouts ``<theme>/NAME.html``.
        timezone: an IANA zone name; overrides ``_config.yml``'s ``timezone``.
        feed_limit: how many posts (newest first) the feeds carry.
        build_time: an aware datetime used as Jekyll's ``site.time`` (feed-level timestamps)
            and, when ``cutoff`` is ``None``, the future cut-off. ``None`` means
            1970-01-01T00:00:00Z (and no cut-off unless ``cutoff`` is set).
        cutoff: the future cut-off (aware): posts dated after it are not published, nor
            collection documents written (Jekyll's ``Publisher#hidden_in_the_future?``,
            in whole seconds); ``None``: ``build_time``. ``_config.yml``'s ``time`` wins
            over both, and ``future: true`` turns the cut-off off
            (:func:`deploybot.render.read.publisher.future_cutoff`).
        typography: kramdown's smart quotes and dashes in Markdown text.
        footnotes: footnote markup: ``"kramdown"`` (2.x), ``"kramdown1"`` (1.x, no
            ``rel``/``role``), ``"mistune"`` or ``"none"`` (no footnote syntax).
        layout_limits: the budget of each layout render (Jinja2 themes).
        liquid_limits: what Liquid may use for one page (bodies, includes, Liquid layouts).
        max_file_bytes: the largest source file read (post, page, layout, include, static
            file, ``_config.yml``), in bytes; a larger one is a ``SourceError``, refused
            before its bytes are read where the tree can tell its size.
        max_page_bytes: the largest rendered page (after Liquid, Markdown and the layout),
            in bytes (UTF-8); Liquid and Markdown stop as soon as they pass it.
        max_yaml_size: the largest YAML document (front matter, ``_config.yml``) with its
            aliases expanded: one per node plus the characters of each scalar
            (:func:`~deploybot.render.read.yamlload.expanded_size`).
        markdown_max_elements: the most elements (blocks, spans, HTML elements) the
            Markdown of one page or excerpt may make
            (:func:`~deploybot.render.markdown.budget.markdown_elements`).
        max_site_bytes: the most bytes of output one build writes (every page, feed and
            theme file it renders; static files are copied blobs and do not count): a full
            build, the whole site; an incremental one, what it renders again.
        highlight_timeout: the seconds one page (its content, and the excerpts its layout
            shows) may spend highlighting code; past it the build fails naming the block
            (:mod:`~deploybot.render.highlight.clock`).
        jobs: how many processes render a full build's pages and posts: 0 for one per CPU,
            1 to render in this process (:mod:`~deploybot.render.engine.parallel`). The output
            does not depend on it.
        parallel_from: the fewest source files a full build reads and renders in parallel.
        highlight_cache_bytes: the bound of the highlighted code blocks kept across builds
            (:mod:`~deploybot.render.highlight.cache`), in bytes; 0: none kept.
        repository: the source's repository on github.com (``owner/name``, '' when it is
            elsewhere): jekyll-github-metadata's ``site.github`` when ``_config.yml`` names
            none.
        baseurl: overrides ``_config.yml``'s ``baseurl`` (``/preview/feature-x``: a branch
            preview, :mod:`deploybot.pipeline.preview`); None: the file's.
        url: overrides ``_config.yml``'s ``url`` (a branch preview's ``preview.site_url``);
            None: the file's.
        config_overrides: ``(key, value)`` pairs set over ``_config.yml``'s top level, as
            Jekyll's command-line flags are (``jekyll serve --future`` sets ``future: true``,
            ``--drafts`` sets ``show_drafts: true``); ``()`` for none.
        check_links: record each written HTML page's links in the build cache and keep
            the broken ones there (:mod:`deploybot.render.links`); off: no page is parsed.
        kept: the publish branch's ``publish.keep`` prefixes: a link to a path under one is
            served (the publish stage keeps those files), so it is never broken.
    """

    theme: str = "default"
    timezone: str | None = None
    feed_limit: int = 20
    build_time: datetime | None = None
    cutoff: datetime | None = None
    typography: bool = True
    footnotes: str = "kramdown"
    layout_limits: LayoutLimits = field(default_factory=LayoutLimits)
    liquid_limits: LiquidLimits = field(default_factory=LiquidLimits)
    max_file_bytes: int = MAX_FILE_BYTES
    max_page_bytes: int = MAX_PAGE_BYTES
    max_yaml_size: int = MAX_YAML_SIZE
    markdown_max_elements: int = MARKDOWN_MAX_ELEMENTS
    highlight_timeout: float = HIGHLIGHT_TIMEOUT
    max_site_bytes: int = MAX_SITE_BYTES
    jobs: int = 0
    parallel_from: int = PARALLEL_FROM
    highlight_cache_bytes: int = HIGHLIGHT_CACHE_BYTES
    repository: str = ""
    baseurl: str | None = None
    url: str | None = None
    config_overrides: tuple[tuple[str, bool], ...] = ()
    check_links: bool = False
    kept: tuple[str, ...] = ()


@dataclass(frozen=True)
class RenderWarning:
    """Something the build skipped or approximated; ``line`` is 1-based in ``path``."""

    path: str
    line: int | None
    message: str


@dataclass(frozen=True)
class SiteBuild:
    """A built site.

    Attributes:
        files: output path (POSIX, relative, e.g. ``"2020/07/14/bert-pytorch-tvm.html"``) ->
            file bytes.
        warnings: what was skipped or approximated, in source-path order.
        timezone: the IANA name of the site timezone in force (``"UTC"`` when none was set).
    """

    files: Mapping[str, bytes]
    warnings: tuple[RenderWarning, ...]
    timezone: str


ConfigProblem = tuple[tuple[str, ...], str]
"""A setting of ``_config.yml`` the build cannot use: the keys leading to it (``("collections",
"recipes", "order")``, to find its line) and the warning."""


@dataclass(frozen=True)
class SiteConfig:
    """The ``_config.yml`` settings the build uses (Jekyll's names and defaults).

    ``url`` falls back to Jekyll-Bootstrap's ``production_url`` when unset; ``baseurl`` has
    no trailing slash; ``data`` is the whole parsed file, for templates (``site.*``).
    ``include`` and ``exclude`` are Jekyll's lists in force (defaults included, see
    :mod:`deploybot.render.read.entries`); ``collections`` maps each label (``posts`` too) to its
    :class:`~deploybot.render.read.collections.Collection`; ``defaults`` holds the front matter
    defaults (:mod:`deploybot.render.read.defaults`); ``time`` is ``_config.yml``'s ``time`` (aware;
    Jekyll's ``site.time`` and future cut-off when set); ``show_drafts`` publishes the
    posts of ``_drafts/`` (``jekyll --drafts``). ``warnings`` are about the settings the
    build cannot use; ``text`` is the file as written (to find a key's line).
    """

    title: str = ""
    description: str = ""
    url: str = ""
    baseurl: str = ""
    author_name: str = ""
    author_email: str = ""
    permalink: str = "date"
    timezone: str = "UTC"
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    future: bool = False
    show_drafts: bool = False
    data: Mapping[str, Any] = field(default_factory=dict)
    collections: Mapping[str, Any] = field(default_factory=dict)
    collections_dir: str = ""
    defaults: tuple[Any, ...] = ()
    time: datetime | None = None
    warnings: tuple[RenderWarning, ...] = ()
    text: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class Document:
    """A source file with front matter.

    Attributes:
        path: source path in the tree.
        front_matter: the parsed YAML mapping.
        body: the text after the closing fence (UTF-8 decoded, BOM removed).
        body_line: the 1-based file line on which ``body`` starts.
        markdown: whether the body is Markdown (``.md``/``.markdown``) rather than HTML.
    """

    path: str
    front_matter: Mapping[str, Any]
    body: str
    body_line: int
    markdown: bool


@dataclass(frozen=True)
class Post:
    """A document: a blog post (``_posts/YYYY-MM-DD-slug.ext``), or a document of another
    collection (``collection`` names it).

    ``date`` is aware, in the site timezone; ``url`` is the escaped, usually extensionless
    link (Jekyll's ``post.url``); ``output_path`` the file it is written to ('' when its
    collection is not written); ``excerpt_separator`` ends the excerpt (front matter, else
    ``_config.yml``, else a blank line; '' for none); ``output_ext`` is the extension of
    its output (``.html`` for Markdown); ``dated`` is false for a collection document with
    no date of its own (Jekyll gives it the build time), and ``timed_url`` true when such a
    document's URL then holds a part of that date.
    """

    doc: Document
    slug: str
    date: datetime
    title: str
    categories: tuple[str, ...]
    tags: tuple[str, ...]
    url: str
    output_path: str
    excerpt_separator: str = "\n\n"
    collection: str = "posts"
    output_ext: str = ".html"
    dated: bool = True
    timed_url: bool = False

    @property
    def id(self) -> str:
        """Jekyll's ``post.id``: the URL's folder joined with the slug."""
        folder = self.url.rsplit("/", 1)[0]
        return f"{folder}/{self.slug}"

    @property
    def is_post(self) -> bool:
        """Whether it is a blog post (of the ``posts`` collection)."""
        return self.collection == "posts"


class Frontless(StrEnum):
    """What a source file without front matter becomes (:data:`FrontlessHook`)."""

    STATIC = "static"
    """A static file, as Jekyll reads it."""
    PAGE = "page"
    """A page with empty front matter; the original is not written."""
    BOTH = "both"
    """A page with empty front matter, and the original copied as it is."""


FrontlessRule = Callable[[str, SiteConfig], Frontless]
"""The rule on a source file without front matter at a path, under the settings: what it
becomes (the plugins' rules: :func:`deploybot.render.liquid.plugins.registry.read_frontless`;
the reader gets it from the engine)."""


@dataclass(frozen=True)
class IndexOf:
    """What a page a plugin made its folder's index was (jekyll-readme-index's README):
    its ``url`` before, and whether it was a ``static`` file (no front matter)."""

    url: str
    static: bool


@dataclass(frozen=True)
class Page:
    """A page: any published file with front matter outside collections. ``date`` is the
    front-matter date (site timezone) or ``None``; ``output_ext`` the extension of its
    output (``.html`` for Markdown and HTML, else its own: ``feed.xml`` stays XML).

    A plugin may make a page of a file without front matter (jekyll-optional-front-matter,
    jekyll-readme-index): ``original`` is then the static file it still is (copied as it
    is, listed in ``site.static_files``), ``None`` when the plugin drops it; ``appended``
    the rank of the plugin's generator (1, 2: Jekyll's priority order), which adds the
    page to ``site.pages`` after the pages read (0); ``readme`` what the page was before a
    plugin made it its folder's index (:class:`IndexOf`), ``None`` for other pages."""

    doc: Document
    title: str
    url: str
    output_path: str
    date: datetime | None
    output_ext: str = ".html"
    original: StaticFile | None = None
    appended: int = 0
    readme: IndexOf | None = None


@dataclass(frozen=True)
class StaticFile:
    """A file copied as it is: its source ``path``, Jekyll's ``url`` (``/`` + the path, or
    from its collection's permalink), the ``output_path`` it is written to ('' when it is
    listed but not written) and its ``collection`` (``None`` outside collections)."""

    path: str
    url: str
    output_path: str
    collection: str | None = None


LayoutKind = Literal["post", "page"]


@dataclass(frozen=True)
class SiteModel:
    """Everything read from the source tree, before rendering.

    Attributes:
        config: the site settings.
        posts: published posts, newest first (date, then source path, descending).
        pages: pages in source-path order.
        static: the static files, in source-path order.
        time: Jekyll's ``site.time`` (aware).
        docs: the documents of the other collections, in source-path order.
    """

    config: SiteConfig
    posts: tuple[Post, ...]
    pages: tuple[Page, ...]
    static: tuple[StaticFile, ...]
    time: datetime
    docs: tuple[Post, ...] = ()


def listed_static(static: Iterable[StaticFile], pages: Iterable[Page]) -> list[StaticFile]:
    """Return ``site.static_files``: the ``static`` files and the originals plugins' pages
    keep (:attr:`Page.original`), in source-path order."""
    kept = [page.original for page in pages if page.original is not None]
    return sorted([*static, *kept], key=lambda s: s.path) if kept else list(static)


def site_time(config: SiteConfig, options: RenderOptions) -> datetime:
    """Jekyll's ``site.time`` (aware, in the site's timezone): ``_config.yml``'s ``time``,
    else ``options.build_time``, else :data:`EPOCH`. Raises ``ValueError`` for a naive
    ``build_time``."""
    given = options.build_time
    if given is not None and given.tzinfo is None:
        raise ValueError("RenderOptions.build_time must be timezone-aware")
    return (config.time or given or EPOCH).astimezone(ZoneInfo(config.timezone))


def layout_limits(config: RenderConfig) -> LayoutLimits:
    """Return the ``[render] layout_max_*`` keys of ``config`` as :class:`LayoutLimits`."""
    return LayoutLimits(
        max_steps=config.layout_max_steps,
        max_output=config.layout_max_output,
        max_depth=config.layout_max_depth,
    )


def liquid_limits(config: RenderConfig) -> LiquidLimits:
    """Return the ``[render] liquid_max_*`` keys of ``config`` as :class:`LiquidLimits`."""
    return LiquidLimits(
        max_loop_iterations=config.liquid_max_loop_iterations,
        max_local_bytes=config.liquid_max_local_bytes,
        max_depth=config.liquid_max_depth,
    )
