"""jekyll-redirect-from 0.16: ``redirect_from``, ``redirect_to`` and ``redirects.json``.

For each written post, collection document and page (``generator.rb``,
``redirectable.rb``, ``redirect_page.rb``):

- each ``redirect_from`` path (one, or a list) gets a redirect page at that path (a leading
  ``/`` added; ``/old/`` -> ``old/index.html``, ``/old`` -> ``old.html``, ``/old.php``
  stays), pointing at the
  document's absolute URL;
- ``redirect_to`` (one, or the first of a list) replaces the document's own output by a
  redirect page to that URL (made absolute unless it starts with ``http://`` or
  ``https://``), and its content (the feeds') by nothing; such a document is left out of
  the sitemap (the plugin sets ``sitemap: false``);
- ``redirects.json`` maps every redirect's path to its target (posts oldest first, then the
  other collections, then the pages by name; each document's ``redirect_from`` before its
  ``redirect_to``), unless the source has one or ``redirect_from.json`` is ``false``.

A redirect page is the plugin's ``redirect.html`` layout. A site with its own
``_layouts/redirect.html`` gets a warning: deploybot writes the plugin's page all the same.
A path that would leave the site gets a warning and no page.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins.registry import (
    DocumentInfo,
    DocumentResult,
    Needs,
    Plugin,
    SiteView,
)
from deploybot.render.model import RenderWarning, SiteConfig
from deploybot.render.read.permalink import output_path

NAME = "jekyll-redirect-from"
JSON_PATH = "redirects.json"
_HTTP = re.compile(r"^https?://")
OWN_LAYOUT = (
    "the site's own _layouts/redirect.html is not used: deploybot writes "
    "jekyll-redirect-from's redirect page"
)


def redirect_html(target: str) -> bytes:
    """Return the plugin's redirect page to ``target`` (its ``redirect.html``, with
    ``page.redirect.to`` printed as it is)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en-US">\n'
        '  <meta charset="utf-8">\n'
        "  <title>Redirecting&hellip;</title>\n"
        f'  <link rel="canonical" href="{target}">\n'
        f'  <script>location="{target}"</script>\n'
        f'  <meta http-equiv="refresh" content="0; url={target}">\n'
        '  <meta name="robots" content="noindex">\n'
        "  <h1>Redirecting&hellip;</h1>\n"
        f'  <a href="{target}">Click here if you are not redirected.</a>\n'
        "</html>\n"
    ).encode()


def redirect_from(front_matter: Mapping[str, Any]) -> list[str]:
    """Return a document's ``redirect_from`` paths (``Redirectable#redirect_from``)."""
    value = front_matter.get("redirect_from")
    items = value if isinstance(value, list) else [value]
    return [jf.to_text(item) for item in items if item is not None]


def redirect_to(front_matter: Mapping[str, Any]) -> str | None:
    """Return a document's ``redirect_to`` target (``Redirectable#redirect_to``)."""
    value = front_matter.get("redirect_to")
    if isinstance(value, list):
        value = next((v for v in value if v is not None), None)
    return None if value is None else jf.to_text(value)


def _leading_slash(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def _output_ext(url: str) -> str:
    """A redirect page's output extension: its path's (Jekyll's ``permalink_ext``: a page
    at ``/old.php`` is written as ``old.php``), else ``.html``."""
    if url.endswith("/"):
        return ".html"
    return posixpath.splitext(url.rsplit("/", 1)[-1])[1] or ".html"


def _target(config: SiteConfig, to: str) -> str:
    return to if _HTTP.match(to) else jf.absolute_url(to, config.url, config.baseurl)


def redirects(
    config: SiteConfig, url: str, front_matter: Mapping[str, Any]
) -> Iterator[tuple[str, str]]:
    """Yield ``(from, to)`` of a document at ``url``: its ``redirect_from`` paths, then its
    ``redirect_to``."""
    for path in redirect_from(front_matter):
        yield _leading_slash(path), _target(config, url)
    to = redirect_to(front_matter)
    if to is not None:
        yield _leading_slash(url), _target(config, to)


def document(info: DocumentInfo) -> DocumentResult:
    """The plugin's work on one document (see the module docstring)."""
    fm = info.front_matter
    froms = redirect_from(fm)
    to = redirect_to(fm)
    if not froms and to is None:
        return DocumentResult()
    warnings: list[RenderWarning] = []
    if "redirect" in info.layouts:
        warnings.append(RenderWarning(info.path, None, OWN_LAYOUT))
    extra = []
    target = _target(info.config, info.url)
    for path in froms:
        url = _leading_slash(path)
        try:
            out = output_path(url, _output_ext(url))
        except ValueError as exc:
            warnings.append(RenderWarning(info.path, None, f"redirect_from: {exc}"))
            continue
        extra.append((out, redirect_html(target)))
    layouts = ("redirect",)
    if to is None:
        return DocumentResult(tuple(extra), warnings=tuple(warnings), layouts=layouts)
    page = redirect_html(_target(info.config, to))
    return DocumentResult(tuple(extra), page, "", tuple(warnings), layouts)


def generate(view: SiteView) -> list[tuple[str, bytes]]:
    """Return ``redirects.json`` (see the module docstring)."""
    config = view.config
    setting = config.data.get("redirect_from")
    if isinstance(setting, Mapping) and setting.get("json") is False:
        return []
    if view.exists(JSON_PATH):
        return []
    found: dict[str, str] = {}
    documents: list[tuple[str, Mapping[str, Any]]] = [
        (p.url, p.doc.front_matter) for p in reversed(view.posts())
    ]
    for docs in view.docs().values():
        documents.extend((d.url, d.doc.front_matter) for d in docs)
    pages = sorted(view.pages(), key=lambda p: (p.doc.path.rsplit("/", 1)[-1], p.doc.path))
    documents.extend((p.url, p.doc.front_matter) for p in pages)
    for url, front_matter in documents:
        found.update(redirects(config, url, front_matter))
    text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
    return [(JSON_PATH, text.encode("utf-8"))]


def hides_from_sitemap(front_matter: Mapping[str, Any]) -> bool:
    """Whether a document leaves the sitemap for its ``redirect_to`` (the plugin merges
    ``sitemap: false`` into its data)."""
    return redirect_to(front_matter) is not None


PLUGIN = Plugin(
    NAME,
    "redirect pages for redirect_from and redirect_to, and redirects.json",
    generate=generate,
    needs=frozenset({Needs.POSTS, Needs.PAGES, Needs.DOCS, Needs.STATIC}),
    post_fields=("url", "redirect_from", "redirect_to"),
    document=document,
)
