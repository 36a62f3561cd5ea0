"""Which source files Jekyll reads, and as what (Jekyll 4.3's ``entry_filter.rb``,
``reader.rb``, ``readers/post_reader.rb``, ``collection.rb``).

A folder or file is skipped when its name starts with ``.``, ``_``, ``#`` or ``~``, ends
with ``~`` or ``.``, or it matches ``exclude`` (the site's list plus Jekyll's defaults:
``.sass-cache``, ``.jekyll-cache``, ``gemfiles``, ``Gemfile``, ``Gemfile.lock``,
``node_modules``, ``vendor/bundle/``, ``vendor/cache/``, ``vendor/gems/``,
``vendor/ruby/``), unless ``include`` names it (default ``[.htaccess]``; a site's
``include`` replaces it). A pattern matches a path as Ruby's ``File.fnmatch?`` without
flags (``*`` crosses ``/``) or as a plain prefix of it (``exclude: [docs]`` also hides
``docs2.md``), or names the folder with a trailing ``/``. ``include`` is matched against a
name (at any depth); a file path in ``include`` is read even inside a skipped folder.

Inside ``_posts`` (``<folder>/_posts/**``, the folders before it being categories) and a
collection's folder, the same test is made on the path below that folder and its last
name (so a name in the middle starting with ``.`` or ``_`` is not checked, as in Jekyll);
``_posts`` also skips every path with a part starting with ``.`` (Ruby's ``Dir["**/*"]``).
With ``show_drafts`` (``jekyll --drafts``), ``<folder>/_drafts/**`` is read the same way, as
posts whose names need no date (``PostReader#read_drafts``: ``DATELESS_FILENAME_MATCHER``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from posixpath import basename

from deploybot.render.model import SiteConfig
from deploybot.render.read.collections import POSTS, Collection, collection_of

_SPECIAL = (".", "_", "#", "~")
# Document::DATE_FILENAME_MATCHER
POST_NAME_RE = re.compile(r"^(?:.+/)*?(\d{2,4}-\d{1,2}-\d{1,2})-([^/]*)(\.[^.]+)$")
# Document::DATELESS_FILENAME_MATCHER: a draft's name
DRAFT_NAME_RE = re.compile(r"^(?:.+/)*(.*)(\.[^.]+)$")


def _glob(patterns: Iterable[str], entry: str, folder: bool) -> bool:
    """``EntryFilter#glob_include?`` for the source-relative ``entry``."""
    for pattern in patterns:
        pat = pattern.lstrip("/")
        if fnmatch.fnmatchcase(entry, pat) or entry.startswith(pat):
            return True
        if folder and pat == entry + "/":
            return True
    return False


def includes(patterns: Iterable[str], path: str) -> bool:
    """``EntryFilter#included?``: whether the ``include`` ``patterns`` name the file ``path``
    (source-relative) or its name."""
    return _glob(patterns, path, False) or _glob(patterns, basename(path), False)


@dataclass(frozen=True)
class Filter:
    """The site's ``include`` and ``exclude`` lists (``exclude`` without what ``include``
    names, Jekyll's ``site.exclude - site.include``) and extra hidden folders (a theme)."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @classmethod
    def of(cls, config: SiteConfig, hidden: Sequence[str] = ()) -> Filter:
        """Return the filter of ``config`` (``hidden`` folders excluded too)."""
        exclude = (*config.exclude, *hidden)
        return cls(config.include, tuple(p for p in exclude if p not in config.include))

    def keeps(self, entry: str, name: str, folder: bool) -> bool:
        """``EntryFilter#filter`` for one entry: ``entry`` is its path as the filter sees
        it (from the source root, for exclusion), ``name`` the name(s) ``include`` is
        matched against."""
        if name.endswith("."):
            return False
        included = _glob(self.include, name, folder) or _glob(self.include, basename(name), folder)
        if _glob(self.exclude, entry, folder) and not included:
            return False
        if included:
            return True
        return not (name.startswith(_SPECIAL) or basename(name).startswith(_SPECIAL)) and (
            not name.endswith("~")
        )

    def walk(self, path: str) -> bool:
        """Whether Jekyll's folder walk (``read_directories``) reaches the file ``path``:
        each of its folders and itself pass :meth:`keeps`."""
        parts = path.split("/")
        for i, name in enumerate(parts):
            prefix = "/".join(parts[: i + 1])
            if not self.keeps(prefix, name, i < len(parts) - 1):
                return False
        return True

    def included_file(self, path: str) -> bool:
        """Whether ``include`` names the file ``path`` itself (``read_included_excludes``)."""
        return any(pattern.strip("/") == path for pattern in self.include)


@dataclass(frozen=True)
class Entry:
    """What one source path is to Jekyll: ``kind`` is ``"post"``, ``"doc"`` (a
    collection's file; ``draft``: a post of ``_drafts/``), ``"regular"`` (a page or static
    file by its front matter) or
    ``""`` (not read); ``collection`` the collection it belongs to, ``categories`` the
    folders before ``_posts``."""

    kind: str
    collection: Collection | None = None
    categories: tuple[str, ...] = ()
    draft: bool = False


NOT_READ = Entry("")


def classify(path: str, config: SiteConfig, hidden: Sequence[str] = ()) -> Entry:
    """Return what ``path`` is to Jekyll (see the module docstring)."""
    rules = Filter.of(config, hidden)
    collection = collection_of(path, config.collections)
    if collection is not None:
        inner = path[len(collection.folder) + 1 :]
        if rules.keeps(f"{collection.relative_directory}/{inner}", inner, False):
            return Entry("doc", collection)
        return NOT_READ
    parts = path.split("/")
    if "_posts" in parts[:-1]:
        return _post_entry(path, parts, rules, config)
    if config.show_drafts and "_drafts" in parts[:-1]:
        return _post_entry(path, parts, rules, config, "_drafts")
    if rules.walk(path) or rules.included_file(path):
        return Entry("regular")
    return NOT_READ


def _post_entry(
    path: str, parts: list[str], rules: Filter, config: SiteConfig, folder_name: str = "_posts"
) -> Entry:
    index = parts.index(folder_name)
    before, inner_parts = parts[:index], parts[index + 1 :]
    folder = "/".join(before)
    container = config.collections_dir
    if container and not (folder == container or folder.startswith(container + "/")):
        return NOT_READ  # outside_configured_directory?
    if folder and not rules.walk(folder):
        return NOT_READ
    if any(p.startswith(".") for p in inner_parts):
        return NOT_READ  # Dir["**/*"] lists no dot files
    inner = "/".join(inner_parts)
    base = "/".join([*before, folder_name])
    if not rules.keeps(f"{base}/{inner}", inner, False):
        return NOT_READ
    draft = folder_name == "_drafts"
    if (DRAFT_NAME_RE if draft else POST_NAME_RE).match(inner) is None:
        return Entry("not-a-post")
    categories = tuple(before[len(container.split("/")) :] if container else before)
    return Entry("post", config.collections[POSTS], categories, draft)
