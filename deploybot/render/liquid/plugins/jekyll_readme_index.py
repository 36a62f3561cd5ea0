"""jekyll-readme-index 0.3: a folder's README is its index when it has none.

As the plugin's ``generator.rb`` and ``static_file_ext.rb`` (Debian's
ruby-jekyll-readme-index 0.3.0): each static file named ``README`` with a Markdown
extension (``markdown_ext``, any case), in source-path order, becomes a page with the
permalink of its folder (``File.dirname(url) + "/"``) when no page or static file of the
site has the folder's URL or its ``index.html``/``index.htm``/``index.xhtml``/``index.xml``
(any case; a README made an index counts for the next); its original is still copied
unless ``readme_index.remove_originals: true``. With ``readme_index.with_frontmatter:
true`` every README page of a folder without an index (one with front matter, and one
just made an index, whose folder is then its URL's parent) takes its folder's permalink
(:func:`promotions`). ``readme_index.enabled: false`` turns it off. A README's page
depends on the other files of the site: every build decides again, and an incremental
one re-reads the READMEs whose decision changed. As the generator adds them,
``site.pages`` lists these pages last (after jekyll-optional-front-matter's), in
source-path order, and ``site.static_files`` the kept originals. Not followed: a README
without front matter in a collection's folder, which the plugin makes a page too, stays
a static file (its URL counts as a folder's index when it is one, as in Jekyll).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from posixpath import basename

from deploybot.render.liquid.plugins.jekyll_optional_front_matter import markdown_exts
from deploybot.render.liquid.plugins.registry import Entry, Plugin, Promotion
from deploybot.render.model import SiteConfig

NAME = "jekyll-readme-index"
_INDEX = re.compile(r"/index\.(?:html?|xhtml|xml)\Z", re.I)


def _option(config: SiteConfig, key: str) -> object:
    settings = config.data.get("readme_index")
    return settings.get(key) if isinstance(settings, Mapping) else None


def is_readme(path: str, config: SiteConfig) -> bool:
    """Whether ``path`` is a README (``readme_regex``: ``/readme(EXT)$``, any case)."""
    name = posixpath.basename(path).lower()
    stem, ext = posixpath.splitext(name)
    return stem == "readme" and ext in markdown_exts(config)


def index_folder(url: str) -> str | None:
    """Return the folder (lower case, ending in ``/``) whose index ``url`` is, if any
    (``dir_has_index?``'s pattern)."""
    if url.endswith("/"):
        return url.lower()
    m = _INDEX.search(url)
    return url[: m.start() + 1].lower() if m else None


def ruby_dirname(path: str) -> str:
    """Ruby's ``File.dirname``: trailing slashes ignored (``/a/b/`` -> ``/a``)."""
    stripped = path.rstrip("/")
    if not stripped:
        return "/"
    return posixpath.dirname(stripped).rstrip("/") or "/"


def _folder(url: str) -> tuple[str, str, str]:
    """Return the folder key of a README's ``url`` (``dir_has_index?``'s argument, lower
    case), the permalink it gets (``File.dirname(url) + "/"``: ``//`` for the root) and
    the URL that gives (Jekyll's URL collapses ``//``)."""
    folder = ruby_dirname(url)
    key = folder if folder.endswith("/") else folder + "/"
    permalink = folder + "/"
    return key.lower(), permalink, re.sub(r"/{2,}", "/", permalink)


def promotions(found: Sequence[Entry], config: SiteConfig) -> dict[str, Promotion]:
    """Return what each README of ``found`` becomes, by path (the READMEs left as they
    are left out; nothing with ``enabled: false``).

    As ``Generator#generate``: the static READMEs in source-path order, each made a page
    when its folder has no index yet; then, with ``with_frontmatter: true``, every README
    page (those with front matter in ``site.pages`` order, then the ones just made, in
    order) moved to its URL's folder when that has no index: a README made the index of
    ``/a/b/`` moves to ``/a/`` then, when ``/a/`` has none, as the plugin does."""
    if _option(config, "enabled") is False:
        return {}
    items = list(found)
    indexed = Counter(f for f in (index_folder(e.url) for e in items) if f is not None)
    readmes = [e for e in items if not e.collection and is_readme(e.path, config)]
    copied = _option(config, "remove_originals") is not True
    chosen: dict[str, Promotion] = {}
    made: list[tuple[str, str]] = []
    for entry in sorted((e for e in readmes if e.static), key=lambda e: e.path):
        key, permalink, url = _folder(entry.url)
        if not indexed[key]:
            chosen[entry.path] = (permalink, copied)
            indexed[url.lower()] += 1
            made.append((entry.path, url))
    if _option(config, "with_frontmatter") is not True:
        return chosen
    pages = sorted((e for e in readmes if not e.static), key=lambda e: (basename(e.path), e.path))
    for path, now in [(e.path, e.url) for e in pages] + made:
        key, permalink, url = _folder(now)
        if not indexed[key]:
            before = index_folder(now)
            if before is not None:
                indexed[before] -= 1
            indexed[url.lower()] += 1
            chosen[path] = (permalink, chosen[path][1] if path in chosen else False)
    return chosen


PLUGIN = Plugin(NAME, "a folder's README is its index when it has none", promote=promotions)
