"""jekyll-seo-tag 2.8.0: ``{% seo %}`` (``{% seo title=false %}`` leaves the ``<title>`` out).

What the tag writes is the plugin's ``template.html`` minified as the plugin minifies it
(``MINIFY_REGEX``: the whitespace after ``{``/``}`` and after ``>``/``,`` ending a line is
dropped), filled from its drops (``drop.rb``, ``author_drop.rb``, ``image_drop.rb``,
``json_ld_drop.rb``), read here as the Ruby reads them:

- texts (titles, descriptions, names) go through ``markdownify``, ``strip_html``,
  ``normalize_whitespace`` and ``escape_once``, and an empty result is none;
- the title is ``PAGE | SITE`` (or ``SITE | TAGLINE-or-DESCRIPTION`` on a page titled as
  the site), after ``Page N of M for `` on page N > 1 of a paginated index;
- the author is ``page.author``, the first of ``page.authors`` or ``site.author``; a name
  is looked up in ``site.data.authors``;
- the image is ``page.image`` (a URL or a mapping with ``path``/``facebook``/``twitter``,
  ``height``, ``width``, ``alt``), made absolute and URI-escaped;
- the JSON-LD object has its keys sorted and no ``null`` values.

Values the template prints as they are (``site.facebook.admins``, the canonical URL) are
printed as Liquid prints them, unescaped, as the plugin does.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, TypeVar

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins.registry import Plugin

NAME = "jekyll-seo-tag"
VERSION = "2.8.0"
JEKYLL_VERSION = "4.3.1"
"""The Jekyll version deploybot follows (``jekyll.version``)."""
TITLE_SEPARATOR = " | "
_HOME_OR_ABOUT = re.compile(r"^/(about/)?(index.html?)?$", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_RUBY_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_STRIP_BLOCKS = re.compile(r"<script.*?</script>|<!--.*?-->|<style.*?</style>", re.S)
_STRIP_TAGS = re.compile(r"<.*?>", re.S)
_ESCAPE_ONCE = re.compile(r"[\"><']|&(?!([a-zA-Z]+|(#\d+));)")
_ESCAPES = {"&": "&amp;", ">": "&gt;", "<": "&lt;", '"': "&quot;", "'": "&#39;"}
_FORMAT = re.compile(r"%<(current|total)>s")


def strip_html(text: str) -> str:
    """Liquid 5.4's ``strip_html``: scripts, comments and styles, then every tag, removed."""
    return _STRIP_TAGS.sub("", _STRIP_BLOCKS.sub("", text))


def escape_once(text: str) -> str:
    """Liquid 5.4's ``escape_once``: ``& < > " '`` escaped, entities left as they are."""
    return _ESCAPE_ONCE.sub(lambda m: _ESCAPES[m.group(0)[0]], text)


def normalize_whitespace(text: str) -> str:
    """Jekyll's ``normalize_whitespace``: runs of (ASCII) whitespace -> one space, stripped."""
    return _RUBY_SPACE.sub(" ", text).strip(" \t\r\n\f\v\0")


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 ,:()?!]*")
"""Text that Markdown writes as one paragraph of the same words (no markup, list marker,
typography, entity or line): its ``format_string`` is its whitespace normalised."""


@functools.lru_cache(maxsize=1024)
def formatted(markdown: Callable[[str], str], text: str) -> str | None:
    """The plugin's ``format_string`` of ``text`` with the build's ``markdown`` (cached: a
    site's title and description are the same on every page). A :data:`_PLAIN` text, as
    most page titles are, is not converted (a third of the tag's time on a minima post)."""
    if _PLAIN.fullmatch(text):
        return normalize_whitespace(text) or None
    found = escape_once(normalize_whitespace(strip_html(markdown(text))))
    return found or None


def truthy(value: Any) -> bool:
    """Ruby's (and Liquid's) truth: all but ``nil`` and ``false``."""
    return value is not None and value is not False


@dataclass(frozen=True)
class SeoInput:
    """What the tag reads: the ``page``, ``site`` and ``paginator`` mappings (``paginator``
    may be ``None``), the tag's markup, the site's Markdown, ``url``/``baseurl`` (as
    ``absolute_url`` uses them) and zone."""

    page: Mapping[str, Any]
    site: Mapping[str, Any]
    paginator: Mapping[str, Any] | None
    markup: str
    markdown: Callable[[str], str]
    url: str
    baseurl: str
    timezone: tzinfo


def _sub(value: Any, key: str) -> Mapping[str, Any]:
    found = value.get(key) if isinstance(value, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _first(*values: Any) -> Any:
    """Ruby's ``a || b || …``."""
    for value in values:
        if truthy(value):
            return value
    return None


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _once(method: _Method) -> _Method:
    """Memoize a method of :class:`Seo` on its instance (the drop's ``@x ||=``)."""
    name = method.__name__

    @functools.wraps(method)
    def call(self: Seo) -> Any:
        memo = self.__dict__.setdefault("_memo", {})
        if name not in memo:
            memo[name] = method(self)
        return memo[name]

    return call  # type: ignore[return-value]


class Seo:
    """The plugin's ``Drop`` over one :class:`SeoInput` (its methods, same names)."""

    def __init__(self, given: SeoInput) -> None:
        self.given = given
        self.page = given.page
        self.site = given.site
        self._formatted: dict[str, str | None] = {}

    def format_string(self, value: Any) -> str | None:
        """``markdownify | strip_html | normalize_whitespace | escape_once``; ``None`` when
        that leaves nothing (each text converted once per tag)."""
        source = jf.to_text(value)
        if source not in self._formatted:
            self._formatted[source] = formatted(self.given.markdown, source)
        return self._formatted[source]

    def absolute_url(self, value: Any) -> str:
        """Jekyll's ``absolute_url`` with the site's ``url`` and ``baseurl``."""
        return jf.absolute_url(value, self.given.url, self.given.baseurl)

    @_once
    def site_title(self) -> str | None:
        return self.format_string(_first(self.site.get("title"), self.site.get("name")))

    @_once
    def site_description(self) -> str | None:
        return self.format_string(self.site.get("description"))

    @_once
    def page_title(self) -> str | None:
        return self.format_string(self.page.get("title")) or self.site_title()

    @_once
    def title(self) -> str | None:
        site_title, page_title = self.site_title(), self.page_title()
        if site_title and page_title != site_title:
            title: str | None = f"{page_title}{TITLE_SEPARATOR}{site_title}"
        elif self.site_description() and site_title:
            tagline = self.format_string(self.site.get("tagline")) or self.site_description()
            title = f"{site_title}{TITLE_SEPARATOR}{tagline}"
        else:
            title = page_title or site_title
        number = self.page_number()
        return number + (title or "") if number is not None else title

    def page_number(self) -> str | None:
        paginator = self.given.paginator
        current = _get(paginator, "page")
        if not truthy(current) or not isinstance(current, int) or current <= 1:
            return None
        total = _get(paginator, "total_pages")
        message = jf.to_text(
            self.site.get("seo_paginator_message") or "Page %<current>s of %<total>s for "
        )
        values = {"current": jf.to_text(current), "total": jf.to_text(total)}
        return _FORMAT.sub(lambda m: values[m.group(1)], message)

    def show_title(self) -> bool:
        return bool(self.title()) and re.search("title=false", self.given.markup, re.I) is None

    def homepage_or_about(self) -> bool:
        return _HOME_OR_ABOUT.search(jf.to_text(self.page.get("url"))) is not None

    @_once
    def name(self) -> str | None:
        seo_name = _sub(self.page, "seo").get("name")
        if truthy(seo_name):
            return self.format_string(seo_name)
        if not self.homepage_or_about():
            return None
        social = _sub(self.site, "social").get("name")
        return self.format_string(social) if truthy(social) else self.site_title()

    @_once
    def description(self) -> str | None:
        text = _first(self.page.get("description"), self.page.get("excerpt"))
        return self.format_string(text) or self.site_description()

    @_once
    def author(self) -> Mapping[str, Any]:
        """``AuthorDrop``'s hash: the resolved author, ``site.data.authors`` merged in."""
        authors = self.page.get("authors")
        sources = [self.page.get("author")]
        if isinstance(authors, list):
            sources.append(authors[0] if authors else None)
        sources.append(self.site.get("author"))
        resolved = next((s for s in sources if jf.to_text(s) != ""), None)
        if isinstance(resolved, Mapping):
            return resolved
        if isinstance(resolved, str):
            known = _sub(_sub(self.site, "data"), "authors").get(resolved)
            return {"name": resolved, **(known if isinstance(known, Mapping) else {})}
        return {}

    def author_twitter(self) -> str | None:
        author = self.author()
        handle = _first(author.get("twitter"), author.get("name"))
        return (
            handle[1:]
            if isinstance(handle, str) and handle.startswith("@")
            else (handle if isinstance(handle, str) else None)
        )

    @_once
    def image(self) -> dict[str, Any] | None:
        """``ImageDrop``: its keys (``path`` first, then the front matter's), ``path`` the
        absolute, escaped URL; ``None`` without one."""
        meta = self.page.get("image")
        if isinstance(meta, Mapping):
            found: dict[str, Any] = {"path": None, **{str(k): v for k, v in meta.items()}}
        elif isinstance(meta, str):
            found = {"path": meta}
        else:
            found = {"path": None}
        raw = _first(found.get("path"), found.get("facebook"), found.get("twitter"))
        if not truthy(raw):
            return None
        if isinstance(raw, str) and not _SCHEME.match(raw):
            raw = self.absolute_url(raw)
        path = jf.uri_escape(raw)
        return {**found, "path": path} if path else None

    @_once
    def date_modified(self) -> str | None:
        date = _first(
            _sub(self.page, "seo").get("date_modified"),
            self.page.get("last_modified_at"),
            self.page.get("date"),
        )
        return self.xmlschema(date) if truthy(date) else None

    def xmlschema(self, value: Any) -> str:
        return jf.to_text(jf.date_to_xmlschema(value, tz=self.given.timezone))

    @_once
    def type(self) -> Any:
        given = _sub(self.page, "seo").get("type")
        if truthy(given):
            return given
        if self.homepage_or_about():
            return "WebSite"
        return "BlogPosting" if truthy(self.page.get("date")) else "WebPage"

    @_once
    def links(self) -> Any:
        given = _sub(self.page, "seo").get("links")
        if truthy(given):
            return given
        if self.homepage_or_about():
            return _sub(self.site, "social").get("links")
        return None

    @_once
    def logo(self) -> str | None:
        logo = self.site.get("logo")
        if not truthy(logo):
            return None
        text = jf.to_text(logo)
        return jf.uri_escape(text if _SCHEME.match(text) else self.absolute_url(text))

    @_once
    def locale(self) -> str:
        lang = _first(self.page.get("lang"), self.site.get("lang"), "en_US")
        return jf.to_text(_first(self.page.get("locale"), self.site.get("locale"), lang)).replace(
            "-", "_"
        )

    @_once
    def canonical_url(self) -> str:
        given = self.page.get("canonical_url")
        if jf.to_text(given) == "":
            return re.sub(
                r"/index\.html$", "/", self.absolute_url(self.page.get("url")), flags=re.M
            )
        return jf.to_text(given)

    def json_ld(self) -> str:
        """``JSONLDDrop#to_json``: sorted keys, ``null`` values left out."""
        author = self.author()
        values: dict[str, Any] = {
            "@context": "https://schema.org",
            "@type": self.type(),
            "author": self._ld_author(author),
            "dateModified": self.date_modified(),
            "datePublished": self.xmlschema(self.page["date"])
            if truthy(self.page.get("date"))
            else None,
            "description": self.description(),
            "headline": self.page_title(),
            "image": self._ld_image(),
            "mainEntityOfPage": (
                {"@type": "WebPage", "@id": self.canonical_url()}
                if self.type() in ("BlogPosting", "CreativeWork")
                else None
            ),
            "name": self.name(),
            "publisher": self._ld_publisher(author),
            "sameAs": self.links(),
            "url": self.canonical_url(),
        }
        found = {k: _plain(values[k]) for k in sorted(values) if values[k] is not None}
        return json.dumps(found, ensure_ascii=False, separators=(",", ":"))

    def _ld_author(self, author: Mapping[str, Any]) -> dict[str, Any] | None:
        if not truthy(author.get("name")):
            return None
        kind = author.get("type")
        if truthy(kind) and kind not in ("Organization", "Person"):
            return None
        found = {"@type": kind if truthy(kind) else "Person", "name": author["name"]}
        if truthy(author.get("url")):
            found["url"] = author["url"]
        return found

    def _ld_image(self) -> Any:
        image = self.image()
        if image is None:
            return None
        if len(image) == 1:
            return image["path"]
        found = dict(image)
        found["url"] = found.pop("path")
        found["@type"] = "imageObject"
        return found

    def _ld_publisher(self, author: Mapping[str, Any]) -> dict[str, Any] | None:
        logo = self.logo()
        if logo is None:
            return None
        found: dict[str, Any] = {
            "@type": "Organization",
            "logo": {"@type": "ImageObject", "url": logo},
        }
        if truthy(author.get("name")):
            found["name"] = author["name"]
        return found


def _plain(value: Any) -> Any:
    """Values as Ruby's ``to_json`` writes them (times as their ``to_s``)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return jf.to_text(value)


def _text(value: Any) -> str:
    return jf.to_text(value)


def seo_tag(given: SeoInput) -> str:
    """Return what ``{% seo %}`` writes for ``given`` (see the module docstring)."""
    seo = Seo(given)
    site, page = given.site, given.page
    out = [f"<!-- Begin Jekyll SEO tag v{VERSION} -->\n"]
    if seo.show_title():
        out.append(f"<title>{_text(seo.title())}</title>\n")
    out.append(f'<meta name="generator" content="Jekyll v{JEKYLL_VERSION}" />\n')
    page_title = seo.page_title()
    if page_title:
        out.append(f'<meta property="og:title" content="{page_title}" />\n')
    author = seo.author()
    if truthy(author.get("name")):
        out.append(f'<meta name="author" content="{_text(author["name"])}" />\n')
    out.append(f'<meta property="og:locale" content="{seo.locale()}" />\n')
    description = seo.description()
    if description:
        out.append(f'<meta name="description" content="{description}" />\n')
        out.append(f'<meta property="og:description" content="{description}" />\n')
    if truthy(site.get("url")):  # {% if site.url %}: true for url: ""
        canonical = seo.canonical_url()
        out.append(f'<link rel="canonical" href="{canonical}" />\n')
        out.append(f'<meta property="og:url" content="{canonical}" />\n')
    site_title = seo.site_title()
    if site_title:
        out.append(f'<meta property="og:site_name" content="{site_title}" />\n')
    image = seo.image()
    if image is not None:
        out.append(f'<meta property="og:image" content="{image["path"]}" />\n')
        for key in ("height", "width", "alt"):
            if truthy(image.get(key)):
                out.append(f'<meta property="og:image:{key}" content="{_text(image[key])}" />\n')
    if truthy(page.get("date")):
        out.append('<meta property="og:type" content="article" />\n')
        published = seo.xmlschema(page["date"])
        out.append(f'<meta property="article:published_time" content="{published}" />\n')
    else:
        out.append('<meta property="og:type" content="website" />\n')
    out.extend(_pagination(seo))
    out.extend(_twitter(seo, image))
    out.extend(_facebook(site))
    out.extend(_verifications(site))
    out.append(f'<script type="application/ld+json">\n{seo.json_ld()}</script>\n')
    out.append("<!-- End Jekyll SEO tag -->\n")
    return "".join(out)


def _pagination(seo: Seo) -> list[str]:
    paginator = seo.given.paginator
    out = []
    for rel, key in (("prev", "previous"), ("next", "next")):
        if truthy(_get(paginator, f"{key}_page")):
            href = seo.absolute_url(_get(paginator, f"{key}_page_path"))
            out.append(f'<link rel="{rel}" href="{href}" />\n')
    return out


def _default(*values: Any) -> Any:
    """Liquid's ``a | default: b``: ``nil``, ``false`` and empty values fall through."""
    for value in values[:-1]:
        if truthy(value) and value not in ("", [], {}):
            return value
    return values[-1]


def _twitter(seo: Seo, image: Mapping[str, Any] | None) -> list[str]:
    page, site = seo.page, seo.site
    out = []
    if image is not None:
        card = _default(
            _get(page.get("twitter"), "card"),
            _get(site.get("twitter"), "card"),
            "summary_large_image",
        )
        out.append(f'<meta name="twitter:card" content="{_text(card)}" />\n')
        out.append(f'<meta property="twitter:image" content="{image["path"]}" />\n')
    else:
        out.append('<meta name="twitter:card" content="summary" />\n')
    if image is not None and truthy(image.get("alt")):
        out.append(f'<meta name="twitter:image:alt" content="{_text(image["alt"])}" />\n')
    page_title = seo.page_title()
    if page_title:
        out.append(f'<meta property="twitter:title" content="{page_title}" />\n')
    if truthy(site.get("twitter")):
        username = _text(_get(site.get("twitter"), "username")).replace("@", "")
        out.append(f'<meta name="twitter:site" content="@{username}" />\n')
        creator = seo.author_twitter()
        if truthy(creator):
            out.append(
                f'<meta name="twitter:creator" content="@{_text(creator).replace("@", "")}" />\n'
            )
    return out


_FACEBOOK = (
    ("admins", 'property="fb:admins"'),
    ("publisher", 'property="article:publisher"'),
    ("app_id", 'property="fb:app_id"'),
)
_VERIFICATIONS = (
    ("google", "google-site-verification"),
    ("bing", "msvalidate.01"),
    ("alexa", "alexaVerifyID"),
    ("yandex", "yandex-verification"),
    ("baidu", "baidu-site-verification"),
    ("facebook", "facebook-domain-verification"),
)


def _facebook(site: Mapping[str, Any]) -> list[str]:
    facebook = site.get("facebook")
    if not truthy(facebook):
        return []
    return [
        f'<meta {attribute} content="{_text(_get(facebook, key))}" />\n'
        for key, attribute in _FACEBOOK
        if truthy(_get(facebook, key))
    ]


def _verifications(site: Mapping[str, Any]) -> list[str]:
    given = site.get("webmaster_verifications")
    if truthy(given):
        return [
            f'<meta name="{name}" content="{_text(_get(given, key))}" />\n'
            for key, name in _VERIFICATIONS
            if truthy(_get(given, key))
        ]
    google = site.get("google_site_verification")
    if truthy(google):
        return [f'<meta name="google-site-verification" content="{_text(google)}" />\n']
    return []


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import TagCall, simple_tag

    def render(call: TagCall) -> str:
        page, site = call.resolve("page"), call.resolve("site")
        paginator = call.resolve("paginator")
        state = call.state
        given = SeoInput(
            page if isinstance(page, Mapping) else {},
            site if isinstance(site, Mapping) else {},
            paginator if isinstance(paginator, Mapping) else None,
            call.markup,
            state.liquid.markdown,  # the build's own (one per build): formatted() caches by it
            state.url,
            state.baseurl,
            state.timezone,
        )
        # Kept aside from Markdown: kramdown leaves these HTML lines alone (its paragraph
        # around an inline tag aside), deploybot's Markdown would not.
        return str(state.fragment(seo_tag(given)))

    return [simple_tag("seo", render)]


PLUGIN = Plugin(
    NAME, "{% seo %}: title, description, canonical URL, Open Graph, Twitter, JSON-LD", tags=_tags
)
