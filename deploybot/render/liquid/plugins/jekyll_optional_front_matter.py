"""jekyll-optional-front-matter 0.3: Markdown files without front matter become pages.

As the plugin's ``generator.rb`` (Debian's ruby-jekyll-optional-front-matter 0.3.2): a
static file whose extension is one of ``markdown_ext`` (any case) is read as a page with
empty front matter (the defaults apply), unless its name without the extension is, in
upper case, one of ``FILENAME_BLACKLIST`` (``README``, ``LICENSE``, ``LICENCE``,
``COPYING``, ``CODE_OF_CONDUCT``, ``CONTRIBUTING``, ``ISSUE_TEMPLATE``,
``PULL_REQUEST_TEMPLATE``) and ``include`` does not name it. The original is still
copied as it is, unless ``optional_front_matter.remove_originals: true``.
``optional_front_matter.enabled: false`` or ``require_front_matter: true`` turns it off.
As the generator adds them, ``site.pages`` lists these pages after the pages read, in
source-path order, and ``site.static_files`` the kept originals. Not followed: the pages
the plugin also makes of a collection's Markdown files without front matter (at
``/_label/...``; a warning names each).
"""

from __future__ import annotations

from collections.abc import Mapping
from posixpath import basename, splitext

from deploybot.render.liquid.plugins.registry import Plugin
from deploybot.render.model import Frontless, SiteConfig
from deploybot.render.read.entries import includes

NAME = "jekyll-optional-front-matter"
FILENAME_BLACKLIST = frozenset(
    {
        "README",
        "LICENSE",
        "LICENCE",
        "COPYING",
        "CODE_OF_CONDUCT",
        "CONTRIBUTING",
        "ISSUE_TEMPLATE",
        "PULL_REQUEST_TEMPLATE",
    }
)
DEFAULT_MARKDOWN_EXT = "markdown,mkdown,mkdn,mkd,md"


def _option(config: SiteConfig, key: str) -> object:
    settings = config.data.get("optional_front_matter")
    return settings.get(key) if isinstance(settings, Mapping) else None


def markdown_exts(config: SiteConfig) -> frozenset[str]:
    """Return the Markdown extensions of ``config`` (``markdown_ext``; ``.md`` form, lower
    case: ``Converters::Markdown#extname_list``)."""
    value = config.data.get("markdown_ext", DEFAULT_MARKDOWN_EXT)
    return frozenset(f".{e.strip().lower()}" for e in str(value).split(","))


def blacklisted(path: str, config: SiteConfig) -> bool:
    """Whether the plugin leaves the file ``path`` a static file by its name
    (``blacklisted?``: the list, unless ``include`` names the file)."""
    if includes(config.include, path):
        return False
    return splitext(basename(path))[0].upper() in FILENAME_BLACKLIST


def read_as(path: str, config: SiteConfig) -> Frontless:
    """Return what the file ``path`` without front matter becomes (see the module
    docstring)."""
    if _option(config, "enabled") is False or config.data.get("require_front_matter"):
        return Frontless.STATIC
    if splitext(path)[1].lower() not in markdown_exts(config) or blacklisted(path, config):
        return Frontless.STATIC
    return Frontless.PAGE if _option(config, "remove_originals") is True else Frontless.BOTH


PLUGIN = Plugin(NAME, "a Markdown file without front matter is a page", frontless=read_as)
