"""jekyll-relative-links 0.7: Markdown links to source files become links to their pages.

As the plugin's ``generator.rb``: in a Markdown page (and, with
``relative_links.collections: true``, a written collection document or post), an inline
link ``[text](path#fragment "title")`` or a reference ``[ref]: path`` whose path (from the
page's folder, or from the root with a leading ``/``; ``%XX`` and ``+`` unescaped) is the
source path of a page, a static file, a post or a written document becomes a link to
that file's URL (``relative_url``); absolute URLs and ``#fragment`` links stay. A
rewritten reference loses its indentation and gains a line break before it, as the
plugin writes it. ``relative_links.enabled: false`` turns it off; ``relative_links.exclude``
(globs) is not read: a warning names it.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping
from urllib.parse import unquote_plus

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins.registry import (
    Needs,
    Plugin,
    PrerenderContext,
    Reads,
)
from deploybot.render.model import Page, Post, RenderWarning, SiteConfig
from deploybot.render.read.siteconfig import CONFIG_PATH, line_of_keys

NAME = "jekyll-relative-links"
_TITLE = r"""(\s+"(?:\\"|[^"])*(?<!\\)"|\s+"(?:\\'|[^'])*(?<!\\)')?"""
_INLINE = r"\[(.*?)\]\(([^)]+?)(#.+?|)?" + _TITLE + r"\)"
_REFERENCE = r"^\s*?\[(.*?)\]: (.+?)(#.+?|)?" + _TITLE + r"\s*?$"
LINK = re.compile(f"({_INLINE}|{_REFERENCE})", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_READS = Reads(needs=frozenset({Needs.PAGES, Needs.STATIC, Needs.POSTS, Needs.DOCS}))


def _option(context: PrerenderContext, key: str) -> object:
    settings = context.config.data.get("relative_links")
    return settings.get(key) if isinstance(settings, Mapping) else None


def rewrite(body: str, folder: str, urls: Mapping[str, str], baseurl: str) -> str:
    """Return ``body`` (Markdown of a file in ``folder``) with its relative links to the
    source paths of ``urls`` (path -> URL) pointing at their URLs."""

    def replace(m: re.Match[str]) -> str:
        inline = m.group(2) is not None
        groups = (2, 3, 4, 5) if inline else (6, 7, 8, 9)
        text, path, fragment, title = (m.group(i) for i in groups)
        if path.startswith("#") or _SCHEME.match(path):
            return m.group(0)
        base = "" if path.startswith("/") else folder
        target = posixpath.normpath(posixpath.join(base, path.lstrip("/")))
        url = urls.get(unquote_plus(target))
        if url is None:
            return m.group(0)
        link = jf.relative_url(url, baseurl) + (fragment or "")
        if inline:
            return f"[{text}]({link}{title or ''})"
        return f"\n[{text}]: {link}{title or ''}"

    return LINK.sub(replace, body)


def adjust(doc: Post | Page, context: PrerenderContext) -> tuple[Post | Page, Reads]:
    """Return ``doc`` with its relative links rewritten, and the lists that read."""
    if _option(context, "enabled") is False or not doc.doc.markdown:
        return doc, Reads()
    if isinstance(doc, Post) and _option(context, "collections") is not True:
        return doc, Reads()
    if "](" not in doc.doc.body and "]: " not in doc.doc.body:
        return doc, Reads()
    folder = posixpath.dirname(doc.doc.path)
    body = rewrite(doc.doc.body, folder, context.urls(), context.config.baseurl)
    if body == doc.doc.body:
        return doc, _READS
    return dataclasses.replace(doc, doc=dataclasses.replace(doc.doc, body=body)), _READS


EXCLUDE_WARNING = (
    "relative_links.exclude is not supported: every Markdown page's links are rewritten"
)


def check_config(config: SiteConfig, repository: str) -> tuple[SiteConfig, list[RenderWarning]]:
    """Return ``config`` as it is, and a warning for ``relative_links.exclude``."""
    settings = config.data.get("relative_links")
    if isinstance(settings, Mapping) and settings.get("exclude"):
        line = line_of_keys(config.text, ("relative_links", "exclude"))
        return config, [RenderWarning(CONFIG_PATH, line, EXCLUDE_WARNING)]
    return config, []


PLUGIN = Plugin(
    NAME,
    "Markdown links to source files point at their pages",
    prerender=adjust,
    config=check_config,
)
