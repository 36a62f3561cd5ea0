"""Read a source tree into a :class:`~deploybot.render.model.SiteModel` (Jekyll 4.3's reading
rules; which file is what: :mod:`.entries`).

- Posts: ``[folder/]_posts/[sub/]YYYY-MM-DD-slug.ext`` of any extension
  (``document.rb``'s ``DATE_FILENAME_MATCHER``), front matter or not; the folders before
  ``_posts`` are categories; ``published: false`` posts are left out, and so are posts dated
  after the cut-off (``publisher.rb``) unless ``future: true``.
- Collection documents: files with front matter in ``<collections_dir>/_<label>/``
  (:mod:`.collections`); listed in ``site.<label>`` even when their collection is not
  written or they are dated in the future (then they are not written).
- Pages: any other file the folder walk reaches that starts with front matter (any
  extension: ``feed.xml`` is rendered with Liquid and stays XML; Markdown becomes HTML);
  a root ``404.html``/``404.md`` is written to ``404.html`` unless it has its own
  permalink (what GitHub Pages and most hosts serve). ``published: false`` skips a page.
- Static files: every other file the walk reaches, and the files without front matter in
  a collection's folder (written at the collection's permalink when it is written).
- Plugins may read a file without front matter as a page (jekyll-optional-front-matter:
  a rule the engine passes in from the plugin registry, per file) and, once everything is
  read, a README as its folder's index (jekyll-readme-index: :func:`promote`, given the
  READMEs the registry chose over the whole site).
- Front matter ``defaults`` (:mod:`.defaults`) apply to all of them; a front matter that
  never closes is no front matter, with a warning (Jekyll reads such a file as text).
- ``_drafts/`` is published only with ``show_drafts`` (``jekyll --drafts``; ``deploybot preview
  --drafts``): its files are posts with ``draft: true`` and the date of their front matter,
  else the build's ``site.time`` when it reads them (Jekyll takes the file's modification
  time: the same moment for a draft just saved; a git tree has no such time).
- A Sass or SCSS file with front matter is a page written with ``.css``
  (:mod:`deploybot.render.sass.convert` compiles it).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from posixpath import basename, dirname, splitext
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.render.model import (
    EPOCH,
    MAX_YAML_SIZE,
    Document,
    Frontless,
    FrontlessRule,
    IndexOf,
    Page,
    Post,
    RenderWarning,
    SiteConfig,
    SiteModel,
    StaticFile,
)
from deploybot.render.read.collections import POSTS, Collection
from deploybot.render.read.data import is_data_file
from deploybot.render.read.dates import front_matter_date
from deploybot.render.read.defaults import deep_merge, defaults_for
from deploybot.render.read.entries import POST_NAME_RE, classify
from deploybot.render.read.frontmatter import (
    UNCLOSED,
    FrontMatter,
    decode,
    key_line,
    parse_front_matter,
)
from deploybot.render.read.permalink import (
    expand,
    output_path,
    page_template,
    post_placeholders,
    post_template,
)
from deploybot.render.read.publisher import in_the_future, published
from deploybot.render.read.siteconfig import CONFIG_PATH, line_of_keys
from deploybot.render.read.source import SourceTree
from deploybot.render.read.symlinks import SUBMODULE, ResolvedTree
from deploybot.support.errors import SourceError

# Jekyll's default ``markdown_ext``: "markdown,mkdown,mkdn,mkd,md".
MARKDOWN_EXTS = frozenset({".md", ".markdown", ".mkdown", ".mkdn", ".mkd"})
HTML_EXTS = frozenset({".html", ".xhtml", ".htm"})
SASS_EXTS = frozenset({".sass", ".scss"})
NOT_FOUND_PAGES = frozenset({"404.html", "404.md", "404.markdown"})
_DATELESS_RE = re.compile(r"^(?:.+/)*(.*)(\.[^.]+)$")
_DATE_PART_RE = re.compile(
    r":(year|short_year|month|i_month|short_month|long_month|day|i_day|y_day|w_year|week|"
    r"w_day|short_day|long_day|hour|minute|second)"
)


@dataclass(frozen=True)
class SourceFile:
    """What reading one source path gave: ``post`` or ``doc`` (a :class:`Post`), ``page``,
    ``static`` (a :class:`StaticFile`) or nothing, and the warnings."""

    post: Post | None = None
    page: Page | None = None
    static: StaticFile | None = None
    warnings: tuple[RenderWarning, ...] = ()


def load_site(
    tree: SourceTree,
    config: SiteConfig,
    time: datetime | None,
    hidden: tuple[str, ...] = (),
    *,
    max_yaml_size: int = MAX_YAML_SIZE,
    cutoff: datetime | None = None,
    links: ResolvedTree | None = None,
    frontless: FrontlessRule | None = None,
) -> tuple[SiteModel, list[RenderWarning]]:
    """Read posts, collection documents, pages and static files of ``tree`` under
    ``config``.

    ``time`` (aware; :data:`EPOCH` when ``None``) is ``site.time``; ``cutoff`` (aware, or
    ``None`` for none; :func:`~deploybot.render.read.publisher.future_cutoff`) leaves out the
    posts dated after it (with a warning). Documents after it are listed and not written (see
    :func:`~deploybot.render.engine.build.render_documents`). Returns the model and the warnings.
    Raises ``SourceError`` (path, line) for broken front matter (or front matter over
    ``max_yaml_size`` with its aliases expanded), dates or permalinks. ``links`` resolves
    the symlinks of ``tree`` (which reads through it) and lists its submodules
    (:func:`read_source_file`); ``frontless`` is the plugins' rule on files without front
    matter (:func:`read_source_file`).
    """
    tz = ZoneInfo(config.timezone)
    now = (time or EPOCH).astimezone(tz)
    warnings: list[RenderWarning] = []
    posts: list[Post] = []
    docs: list[Post] = []
    pages: list[Page] = []
    static: list[StaticFile] = []
    gitlinks = [] if links is None else links.submodules()
    for path in sorted([*tree.paths(), *gitlinks]):
        found = read_source_file(
            tree, path, config, now, hidden, max_yaml_size, links, frontless=frontless
        )
        warnings.extend(found.warnings)
        if found.post is not None and found.post.is_post:
            if in_the_future(found.post.date, cutoff):
                message = "skipped: the post has a future date"
                warnings.append(RenderWarning(path, None, message))
            else:
                posts.append(found.post)
        elif found.post is not None:
            docs.append(found.post)
        elif found.page is not None:
            pages.append(found.page)
        elif found.static is not None:
            static.append(found.static)
    posts.sort(key=lambda p: (p.date, p.doc.path), reverse=True)
    model = SiteModel(config, tuple(posts), tuple(pages), tuple(static), now, tuple(docs))
    return model, warnings


def promote(
    model: SiteModel,
    tree: SourceTree,
    chosen: Mapping[str, tuple[str, bool]],
    hidden: tuple[str, ...] = (),
    max_yaml: int = MAX_YAML_SIZE,
    links: ResolvedTree | None = None,
) -> SiteModel:
    """Return ``model`` with the files ``chosen`` names (path -> ``(permalink, copied)``:
    the plugins' promotions, jekyll-readme-index's READMEs) read again as those pages
    (:func:`read_source_file`'s ``index``); their warnings were given when they were first
    read."""
    if not chosen:
        return model
    pages = {page.doc.path: page for page in model.pages}
    for path, index in chosen.items():
        found = read_source_file(
            tree, path, model.config, model.time, hidden, max_yaml, links, index
        )
        pages.pop(path, None)
        if found.page is not None:
            pages[path] = found.page
    static = tuple(s for s in model.static if s.path not in chosen)
    ordered = tuple(pages[p] for p in sorted(pages))
    return dataclasses.replace(model, pages=ordered, static=static)


def read_source_file(
    tree: SourceTree,
    path: str,
    config: SiteConfig,
    time: datetime,
    hidden: tuple[str, ...] = (),
    max_yaml: int = MAX_YAML_SIZE,
    links: ResolvedTree | None = None,
    index: tuple[str, bool] | None = None,
    frontless: FrontlessRule | None = None,
) -> SourceFile:
    """Read the one source ``path`` as Jekyll would (``time``: ``site.time``, the date of a
    collection document without one). ``published: false`` posts, documents and pages
    give nothing; so does a symlink that ``links`` (the tree's symlinks, under ``tree``)
    cannot resolve inside the tree, with a warning, and a submodule, with a warning
    (:mod:`.symlinks`). ``index``: ``(permalink, copied)`` when a plugin makes the file
    (a page or a static file) a page with that permalink, its folder's index, whose
    original is still copied when ``copied`` and it has no front matter
    (jekyll-readme-index); ``frontless``: what a file without front matter becomes (the
    plugins' rule; ``None``: a static file). Raises ``SourceError`` as :func:`load_site`."""
    entry = classify(path, config, hidden)
    if entry.kind == "not-a-post":
        message = "not a post name (YYYY-MM-DD-slug.ext): not published"
        return SourceFile(warnings=(RenderWarning(path, None, message),))
    if not entry.kind and is_ruby_plugin(path, config):
        return SourceFile(warnings=(RenderWarning(path, None, RUBY_PLUGIN),))
    if not entry.kind:
        why = None if links is None or not read_by_name(path) else links.read_problem(path)
        return SourceFile(warnings=() if why is None else (RenderWarning(path, None, why),))
    why = None if links is None else links.problem(path)
    if why is None and links is not None and links.is_submodule(path):
        why = SUBMODULE
    if why is not None:
        return SourceFile(warnings=(RenderWarning(path, None, why),))
    data = tree.read(path)
    if entry.kind == "post":
        draft = time.replace(microsecond=0) if entry.draft else None
        return _read_post(
            data, path, entry.collection, entry.categories, config, time, max_yaml, draft
        )
    front = parse_front_matter(data, path, max_yaml)
    if entry.kind == "doc" and entry.collection is not None:
        if front is None:
            static = _collection_static(path, entry.collection, config)
            notes = _frontless_in_collection(path, config, frontless)
            return SourceFile(static=static, warnings=notes)
        return _read_document(front, path, entry.collection, (), config, time)
    if index is not None:
        return _read_index(front, data, path, config, time, index)
    if front is None:
        kind = Frontless.STATIC if frontless is None else frontless(path, config)
        return _read_frontless(data, path, config, time, kind)
    return _read_page(front, path, config, time)


def _read_index(
    front: FrontMatter | None,
    data: bytes,
    path: str,
    config: SiteConfig,
    time: datetime,
    index: tuple[str, bool],
) -> SourceFile:
    """The page a plugin makes of the file ``path`` (``front``: its front matter, if any)
    with the permalink of ``index`` (see :func:`read_source_file`)."""
    permalink, copied = index
    if front is None:
        url, made = "/" + path, FrontMatter({"permalink": permalink}, decode(data, path), 1, "")
    else:
        plain = _read_page(front, path, config, time).page
        if plain is None:
            return SourceFile()
        url = plain.url
        made = dataclasses.replace(front, data={**front.data, "permalink": permalink})
    found = _read_page(made, path, config, time)
    if found.page is None:
        return found
    readme = IndexOf(url, front is None)
    if front is None:
        original = _static(path, config) if copied else None
        page = dataclasses.replace(found.page, original=original, appended=INDEX_RANK)
    else:
        page = found.page
    return dataclasses.replace(found, page=dataclasses.replace(page, readme=readme))


def _read_frontless(
    data: bytes, path: str, config: SiteConfig, time: datetime, kind: Frontless
) -> SourceFile:
    """A file without front matter outside collections: a static file, or the page a plugin
    makes of it (``kind``: jekyll-optional-front-matter), its original copied too or not."""
    static = _static(path, config)
    if kind is Frontless.STATIC or static is None:  # the plugin reads the static files
        return SourceFile(static=static)
    found = _read_page(FrontMatter({}, decode(data, path), 1, ""), path, config, time)
    if found.page is None:
        return found
    original = static if kind is Frontless.BOTH else None
    page = dataclasses.replace(found.page, original=original, appended=FRONTLESS_RANK)
    return dataclasses.replace(found, page=page)


FRONTLESS_RANK = 1
""":attr:`Page.appended` of jekyll-optional-front-matter's pages (its generator's priority
is ``normal``)."""
INDEX_RANK = 2
""":attr:`Page.appended` of jekyll-readme-index's pages (``low``: after the former)."""


FRONTLESS_IN_COLLECTION = (
    "jekyll-optional-front-matter: a collection's Markdown file without front matter is "
    "not made a page (Jekyll writes one under the collection's folder): only copied"
)


def _frontless_in_collection(
    path: str, config: SiteConfig, frontless: FrontlessRule | None
) -> tuple[RenderWarning, ...]:
    if frontless is None or frontless(path, config) is Frontless.STATIC:
        return ()
    return (RenderWarning(path, None, FRONTLESS_IN_COLLECTION),)


RUBY_PLUGIN = (
    "a Ruby plugin of the site: not run (deploybot runs no Ruby; its tags stop the build, "
    "its pages and filters are left out)"
)


def is_ruby_plugin(path: str, config: SiteConfig) -> bool:
    """Whether ``path`` is a ``.rb`` file in the site's ``plugins_dir`` (Jekyll's default
    ``_plugins``; a list names several), which Jekyll runs outside ``--safe``."""
    folders = config.data.get("plugins_dir", "_plugins")
    names = folders if isinstance(folders, list) else [folders]
    return path.endswith(".rb") and any(
        isinstance(name, str) and name.strip("/") and path.startswith(name.strip("/") + "/")
        for name in names
    )


def read_by_name(path: str) -> bool:
    """Whether the build reads the file ``path`` by its name, though it is no page, post
    or static file: ``_config.yml``, a data file, a layout or an include."""
    return path == CONFIG_PATH or is_data_file(path) or path.startswith(_READ_FOLDERS)


_READ_FOLDERS = ("_layouts/", "_includes/")


def _unclosed(front: FrontMatter, path: str) -> tuple[RenderWarning, ...]:
    return () if front.closed else (RenderWarning(path, 1, UNCLOSED),)


def _document(path: str, front: FrontMatter, data: Mapping[str, Any]) -> Document:
    markdown = splitext(path)[1].lower() in MARKDOWN_EXTS
    return Document(path, data, front.body, front.body_line, markdown)


def _output_ext(path: str, permalink: object) -> str:
    """``Renderer#output_ext``: the permalink's extension, else the converter's (Markdown:
    ``.html``; Sass and SCSS: ``.css``; anything else keeps its own)."""
    if isinstance(permalink, str) and permalink and not permalink.endswith("/"):
        ext = splitext(permalink)[1]
        if ext:
            return ext
    ext = splitext(path)[1]
    if ext.lower() in SASS_EXTS:
        return ".css"
    return ".html" if ext.lower() in MARKDOWN_EXTS else ext


def _date(value: object, front: FrontMatter, path: str, config: SiteConfig) -> datetime:
    """Read the ``date`` of the file ``path``. Raises ``SourceError`` at its line, or, for a
    date its front matter does not set, naming the ``_config.yml`` defaults it came from."""
    try:
        return front_matter_date(value, ZoneInfo(config.timezone))
    except ValueError as exc:
        if "date" in front.data:
            raise SourceError(str(exc), path, key_line(front, "date")) from exc
        line = line_of_keys(config.text, ("defaults", "date"))
        where = "" if line is None else f", line {line}"
        raise SourceError(f"{exc} (from _config.yml defaults{where})", path) from exc


def _words(value: Any) -> tuple[str, ...]:
    """The names of a ``categories`` or ``tags`` value: a string's words, a list's items
    (nested lists flattened, as Jekyll's ``flatten!``), nothing for a mapping (see
    :func:`_mapping_notes`)."""
    if value is None or isinstance(value, dict):
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in _items(value) if v is not None and not isinstance(v, dict))
    return tuple(str(value).split())


def _items(value: list[Any]) -> list[Any]:
    """The items of ``value`` with nested lists flattened (no recursion: YAML nests deep)."""
    out: list[Any] = []
    stack = [iter(value)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                stack.append(iter(item))
                break
            out.append(item)
        else:
            stack.pop()
    return out


def _mapping_notes(
    data: Mapping[str, Any], keys: tuple[str, ...], front: FrontMatter, path: str
) -> tuple[RenderWarning, ...]:
    """A warning for each of ``keys`` (``categories``, ``tags``…) whose value is or holds
    a mapping, which names no category or tag: Jekyll 4.3 fails to read the post for
    ``categories`` ("no implicit conversion of Hash into Array") and goes on with it half
    read, writes the mapping's Ruby ``to_s`` into the URL for ``category``, and leaves
    ``tags`` out silently. Here it is left out, with this warning."""
    notes = []
    for key in keys:
        value = data.get(key)
        if isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(v, dict) for v in _items(value))
        ):
            message = f"{key}: a mapping is no category or tag name: left out"
            notes.append(RenderWarning(path, key_line(front, key), message))
    return tuple(notes)


def _read_post(
    raw: bytes,
    path: str,
    collection: Collection | None,
    categories: tuple[str, ...],
    config: SiteConfig,
    time: datetime,
    max_yaml: int,
    draft: datetime | None = None,
) -> SourceFile:
    """A post, or a draft (``draft``: its date when its front matter gives none)."""
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError:  # PostReader#processable?: not valid UTF-8, not a post
        return SourceFile(warnings=(RenderWarning(path, None, "not valid UTF-8: skipped"),))
    front = parse_front_matter(raw, path, max_yaml)
    if front is None:  # a post needs no front matter: the whole file is its body
        text = raw.decode("utf-8-sig").replace("\r\n", "\n")
        front = FrontMatter({}, text, 1, "")
    assert collection is not None
    if draft is not None:
        front = dataclasses.replace(front, data={**front.data, "draft": True})
        if front.data.get("date") is None:
            front = dataclasses.replace(front, data={**front.data, "date": draft})
    return _read_document(front, path, collection, categories, config, time)


def _relative(path: str, config: SiteConfig) -> str:
    """A document's ``relative_path``: below ``collections_dir``."""
    prefix = config.collections_dir + "/" if config.collections_dir else ""
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def _read_document(
    front: FrontMatter,
    path: str,
    collection: Collection,
    categories: tuple[str, ...],
    config: SiteConfig,
    time: datetime,
) -> SourceFile:
    """Jekyll's ``Document#read``: defaults, front matter, the file name's date and slug."""
    label = collection.label
    tz = ZoneInfo(config.timezone)
    data = deep_merge(
        defaults_for(config.defaults, path, label, config.collections_dir), front.data
    )
    notes = _unclosed(front, path) + _mapping_notes(data, _NAME_KEYS, front, path)
    if not published(data):
        return SourceFile(warnings=notes)
    relative = _relative(path, config)
    m = POST_NAME_RE.match(relative)
    dated = True
    if m is not None:
        name_date, slug, ext = m.group(1), m.group(2), m.group(3)
    else:
        plain = _DATELESS_RE.match(relative)
        name_date = None
        slug, ext = (plain.group(1), plain.group(2)) if plain else (basename(path), "")
    slug = re.sub(r"\.*\Z", "", slug or splitext(basename(path))[0])
    date = _date(data["date"], front, path, config) if data.get("date") is not None else None
    # Jekyll's Document#modify_date also replaces a date equal to site.time (to the
    # second) by the file name's; not followed: it would tie every post's date to the
    # build time, and no site means it.
    if name_date is not None and date is None:
        try:
            date = front_matter_date(name_date, tz)
        except ValueError as exc:
            raise SourceError(f"bad date in the file name: {exc}", path) from exc
    if date is None:
        date, dated = time, False
    own_slug = data.get("slug")
    slug_text = slug if own_slug is None else str(own_slug)
    given = data.get("title")  # Jekyll's data["title"] ||= titleize(slug): false is none
    title = _titleize(slug) if given is None or given is False else str(given)
    fm_categories = _words(data.get("categories", data.get("category")))
    cats = tuple(dict.fromkeys(categories + fm_categories))
    tags = _words(data.get("tags", data.get("tag")))
    permalink = data.get("permalink")
    out_ext = _output_ext(path, permalink)
    stem = splitext(basename(path))[0]
    cleaned = re.sub(r"\.*\Z", "", relative[: len(relative) - len(ext)] if ext else relative)
    values = post_placeholders(
        date,
        slug_text,
        cats,
        out_ext,
        name=stem,
        collection=label,
        path=cleaned.replace(collection.relative_directory, "", 1),
    )
    template = str(permalink) if permalink else post_template(collection.permalink)
    url, out = _url(template, values, out_ext, front, path, bool(permalink))
    separator = data.get("excerpt_separator")
    if separator is None or separator is False:
        separator = config.data.get("excerpt_separator", "\n\n")
    doc = _document(path, front, {**data, "slug": slug_text, "ext": ext})
    written = out if collection.output else ""
    timed = not dated and _DATE_PART_RE.search(template) is not None
    post = Post(
        doc, slug_text, date, title, cats, tags, url, written,
        "" if separator is None else str(separator), label, out_ext, dated, timed,
    )  # fmt: skip
    return SourceFile(post=post, warnings=notes)


_NAME_KEYS = ("categories", "category", "tags", "tag")


def _titleize(slug: str) -> str:
    """``Utils.titleize_slug``."""
    return " ".join(word.capitalize() for word in slug.split("-"))


def _url(
    template: str,
    values: dict[str, str],
    out_ext: str,
    front: FrontMatter,
    path: str,
    from_front: bool,
    index_ext: str = ".html",
) -> tuple[str, str]:
    try:
        url = expand(template, values)
        return url, output_path(url, out_ext, index_ext)
    except ValueError as exc:
        line = key_line(front, "permalink") if from_front else None
        where = path if from_front else "_config.yml"
        raise SourceError(str(exc), where, line) from exc


def _read_page(front: FrontMatter, path: str, config: SiteConfig, time: datetime) -> SourceFile:
    """Jekyll's ``Page``: defaults under the front matter, its URL and output extension."""
    data = dict(deep_merge(defaults_for(config.defaults, path, "pages"), front.data))
    for key, value in front.data.items():
        if value is None:  # a page's own null wins (Page#data, not to_liquid)
            data[key] = None
    notes = _unclosed(front, path)
    if not published(data):
        return SourceFile(warnings=notes)
    name = basename(path)
    ext = splitext(name)[1]
    stem = re.sub(r"\.*\Z", "", name[: len(name) - len(ext)] if ext else name)
    permalink = data.get("permalink")
    out_ext = _output_ext(path, permalink)
    folder = dirname(path)
    values = {"path": folder, "basename": stem, "output_ext": out_ext, "name": stem}
    if permalink:
        template = str(permalink)
    elif path in NOT_FOUND_PAGES:
        template = "/404.html"
    else:
        html = out_ext.lower() in HTML_EXTS
        template = page_template(config.permalink, index=stem == "index", html=html)
    # a page's folder URL is written as index + its own extension (Page#destination)
    url, out = _url(template, values, out_ext, front, path, bool(permalink), out_ext)
    title = data.get("title")
    date = _date(data["date"], front, path, config) if data.get("date") else None
    page = Page(
        _document(path, front, data), "" if title is None else str(title), url, out, date, out_ext
    )
    return SourceFile(page=page, warnings=notes)


def _static(path: str, config: SiteConfig) -> StaticFile | None:
    """A static file outside collections (``published: false`` defaults hide it)."""
    url = "/" + path
    if not published(defaults_for(config.defaults, path, None)):
        return None
    return StaticFile(path, url, path)


def _collection_static(path: str, collection: Collection, config: SiteConfig) -> StaticFile:
    """A collection's file without front matter (``StaticFile`` with a collection): its URL
    is the collection's permalink with ``:path`` and ``:name`` of the file, no extension,
    then the file's extension; written when the collection is."""
    name = basename(path)
    ext = splitext(name)[1]
    relative = _relative(path, config)
    cleaned = re.sub(r"\.*\Z", "", relative[: len(relative) - len(ext)] if ext else relative)
    cleaned = cleaned.replace(collection.relative_directory, "", 1)
    stem = re.sub(r"\.*\Z", "", splitext(name)[0])
    values = {"collection": collection.label, "path": cleaned, "output_ext": "", "name": stem}
    values["title"] = ""
    try:
        url = expand(post_template(collection.permalink), values).rstrip("/") + ext
        out = output_path(url, ext or ".html") if collection.output else ""
    except ValueError as exc:
        raise SourceError(str(exc), "_config.yml") from exc
    shown = published(defaults_for(config.defaults, url.lstrip("/"), collection.label))
    return StaticFile(path, url, out if shown else "", collection.label)


__all__ = ["POSTS", "SourceFile", "load_site", "read_source_file"]
