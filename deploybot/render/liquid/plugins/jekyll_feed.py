"""jekyll-feed 0.17: the Atom feed ``/feed.xml`` and ``{% feed_meta %}``.

The feed is the plugin's ``feed.xml`` template minified as the plugin minifies it
(``MINIFY_REGEX``: the whitespace after ``>`` and ``}`` is dropped, so it is one line but
inside the post contents), written here in Python:

- the newest ``feed.posts_limit`` (10) posts, those with ``draft: true`` left out (unless
  ``show_drafts``), each with its title (``smartify | strip_html | normalize_whitespace |
  xml_escape``), link, ``published`` and ``updated`` (``last_modified_at``) dates in the
  site's zone, id (``post.id``), full content (not with ``feed.excerpt_only`` in the site
  settings or the post's own ``feed``), author (``post.author``, the first of
  ``post.authors`` or ``site.author``, looked up in ``site.data.authors``), categories
  (``category``, else ``categories``) and tags, summary (``description`` or the
  excerpt, HTML stripped) and image (``image`` or ``image.path``, made absolute);
- ``feed.path`` moves it (default ``/feed.xml``); ``feed.categories`` adds
  ``/feed/CATEGORY.xml``; ``feed.collections`` (a list, or a mapping with ``path`` and
  ``categories``) adds ``/feed/COLLECTION.xml`` (and ``/feed/COLLECTION/CATEGORY.xml``)
  for those collections' documents; ``feed.tags`` (``true``, or ``only``/``except``/
  ``path``) adds ``/feed/by_tag/TAG.xml`` for each tag of plain letters, digits and ``_``;
- a feed whose path the source already has is not written, and ``feed.xslt.xml`` in the
  source adds its stylesheet line.

``smartify`` is kramdown's SmartyPants as deploybot's Markdown makes it, with ``&`` escaped
as the kramdown HTML converter escapes it. Where Ruby's unstable ``sort: "date"`` may order
posts of the same date either way, the feed keeps ``site.posts``' order.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins.jekyll_seo_tag import (
    JEKYLL_VERSION,
    normalize_whitespace,
    strip_html,
    truthy,
)
from deploybot.render.liquid.plugins.registry import Needs, Plugin, SiteView
from deploybot.render.markdown.kramdown.typography import smarten
from deploybot.render.model import Post

NAME = "jekyll-feed"
DEFAULT_LIMIT = 10
_MEDIA = "http://search.yahoo.com/mrss/"
_TAG_NAME = re.compile(r"[^a-zA-Z0-9_]")
_BARE_AMP = re.compile(r"&(?!(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);)")


@dataclass(frozen=True)
class FeedPage:
    """One feed to write: its URL (``/feed.xml``), the collection it lists, and the
    category or tag it is narrowed to (``None``: all)."""

    url: str
    collection: str = "posts"
    category: str | None = None
    tag: str | None = None


def settings(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the ``feed`` site setting (``{}`` when it is not a mapping)."""
    found = data.get("feed")
    return found if isinstance(found, Mapping) else {}


def feed_pages(data: Mapping[str, Any], tags: Sequence[str]) -> list[FeedPage]:
    """Return the feeds the settings ``data`` ask for, in the plugin's order (each
    collection's category feeds, then its own; then the tag feeds of ``tags``, the site's
    tags in ``site.tags`` order)."""
    config = settings(data)
    wanted = config.get("collections")
    if isinstance(wanted, list):
        collections: dict[str, Any] = {str(c): {} for c in wanted}
    elif isinstance(wanted, Mapping):
        collections = {str(k): (v if isinstance(v, Mapping) else {}) for k, v in wanted.items()}
    else:
        collections = {}
    posts = dict(collections.get("posts") or {})
    posts.setdefault("path", config.get("path"))
    if posts.get("path") is None:
        posts["path"] = config.get("path")
    if posts.get("categories") is None:
        posts["categories"] = config.get("categories")
    collections["posts"] = posts
    found: list[FeedPage] = []
    for name, meta in collections.items():
        prefix = "/feed" if name == "posts" else f"/feed/{name}"
        categories = meta.get("categories") or []
        for category in [*dict.fromkeys(str(c) for c in _as_list(categories)), None]:
            if category is not None:
                url = f"{prefix}/{category}.xml"
            else:
                url = str(meta.get("path") or f"{prefix}.xml")
            found.append(FeedPage(_url(url), name, category))
    if truthy(config.get("tags")) and tags:
        found.extend(_tag_pages(config.get("tags"), tags))
    return found


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if truthy(value) else []


def _url(path: str) -> str:
    """The URL of a page at ``path`` (``PageWithoutAFile``'s: a leading ``/``)."""
    return posixpath.normpath("/" + path.lstrip("/")) if path.strip("/") else "/"


def _tag_pages(given: Any, tags: Sequence[str]) -> list[FeedPage]:
    config = given if isinstance(given, Mapping) else {}
    only = config.get("only")
    pool = [str(t) for t in (only if isinstance(only, list) else tags)]
    excluded = {str(t) for t in _as_list(config.get("except"))}
    path = str(config.get("path") or "/feed/by_tag/")
    return [
        FeedPage(_url(f"{path}{tag}.xml"), tag=tag)
        for tag in dict.fromkeys(pool)
        if tag not in excluded and not _TAG_NAME.search(tag)
    ]


def generate(view: SiteView) -> list[tuple[str, bytes]]:
    """Return the feeds of the site ``view`` (``(output path, bytes)``), see the module
    docstring. Raises ``KeyError`` when a listed post's content is not known."""
    data = view.config.data
    tags = (
        list(dict.fromkeys(t for p in view.posts() for t in p.tags))
        if "tags" in settings(data)
        else []
    )
    outputs = []
    xsl = view.exists("feed.xslt.xml")
    for page in feed_pages(data, tags):
        path = page.url.lstrip("/")
        if view.exists(path):
            continue
        outputs.append((path, feed_xml(view, page, xsl).encode("utf-8")))
    return outputs


def _entries(view: SiteView, page: FeedPage) -> list[Post]:
    data = view.config.data
    limit = _limit(settings(data).get("posts_limit"))
    drafts = truthy(data.get("show_drafts"))
    narrowed = page.category is not None or page.tag is not None or page.collection != "posts"
    if page.collection == "posts":
        posts = list(view.posts(None if narrowed or drafts else limit))
        if not narrowed and not drafts and any(_draft(p) for p in posts):
            posts = list(view.posts())
    else:
        docs = view.docs().get(page.collection, [])
        posts = sorted(docs, key=lambda d: d.date, reverse=True)
    if page.tag is not None:
        posts = [p for p in posts if page.tag in p.tags]
    if page.category is not None:
        posts = [p for p in posts if page.category in [str(c) for c in p.categories]]
    if not drafts:
        posts = [p for p in posts if not _draft(p)]
    return posts[:limit]


def _draft(post: Post) -> bool:
    return post.doc.front_matter.get("draft") is True


def _limit(value: Any) -> int:
    if not truthy(value) or value == "":
        return DEFAULT_LIMIT
    try:
        return max(int(jf.to_text(value)), 0)
    except ValueError:
        return 0


def smartify(text: str) -> str:
    """Jekyll's ``smartify`` (kramdown's SmartyPants): smart quotes and dashes, ``&``
    escaped unless it starts an entity."""
    return _BARE_AMP.sub("&amp;", smarten(text))


def capitalize(text: str) -> str:
    """Ruby's ``String#capitalize``."""
    return text[:1].upper() + text[1:].lower()


def feed_xml(view: SiteView, page: FeedPage, xsl: bool = False) -> str:
    """Return the feed ``page`` of ``view`` as the plugin's template writes it."""
    config = view.config
    data = config.data
    tz = ZoneInfo(config.timezone)

    def absolute(value: Any) -> str:
        return jf.absolute_url(value, config.url, config.baseurl)

    lang = data.get("lang")
    out = ['<?xml version="1.0" encoding="utf-8"?>']
    if xsl:
        out.append(f'<?xml-stylesheet type="text/xml" href="{absolute("/feed.xslt.xml")}"?>')
    lang_attr = f'xml:lang="{jf.to_text(lang)}"' if truthy(lang) else ""
    out.append(f'<feed xmlns="http://www.w3.org/2005/Atom" {lang_attr}>')
    out.append(
        f'<generator uri="https://jekyllrb.com/" version="{JEKYLL_VERSION}">Jekyll</generator>'
    )
    out.append(f'<link href="{absolute(page.url)}" rel="self" type="application/atom+xml" />')
    hreflang = f'hreflang="{jf.to_text(lang)}" ' if truthy(lang) else ""
    out.append(f'<link href="{absolute("/")}" rel="alternate" type="text/html" {hreflang}/>')
    out.append(f"<updated>{jf.date_to_xmlschema(view.time, tz=tz)}</updated>")
    out.append(f"<id>{jf.xml_escape(absolute(page.url))}</id>")
    title = _default(data.get("title"), data.get("name"))
    if page.collection != "posts":
        title = f"{jf.to_text(title)} | {capitalize(page.collection)}"
    if page.category is not None:
        title = f"{jf.to_text(title)} | {capitalize(page.category)}"
    if truthy(title):
        out.append(f'<title type="html">{jf.xml_escape(smartify(jf.to_text(title)))}</title>')
    if truthy(data.get("description")):
        out.append(f"<subtitle>{jf.xml_escape(data['description'])}</subtitle>")
    out.extend(_site_author(data.get("author")))
    for post in _entries(view, page):
        out.append(_entry(view, post, absolute, tz))
    out.append("</feed>")
    return "".join(out)


def _default(*values: Any) -> Any:
    """Liquid's ``a | default: b``: ``nil``, ``false`` and empty values fall through."""
    for value in values[:-1]:
        if truthy(value) and not (isinstance(value, str | list | dict) and not value):
            return value
    return values[-1]


def _site_author(author: Any) -> list[str]:
    if not truthy(author):
        return []
    name = _default(_get(author, "name"), author)
    out = [f"<author><name>{jf.xml_escape(name)}</name>"]
    if truthy(_get(author, "email")):
        out.append(f"<email>{jf.xml_escape(author['email'])}</email>")
    if truthy(_get(author, "uri")):
        out.append(f"<uri>{jf.xml_escape(author['uri'])}</uri>")
    out.append("</author>")
    return out


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _entry(view: SiteView, post: Post, absolute: Any, tz: ZoneInfo) -> str:
    fm = post.doc.front_matter
    data = view.config.data
    lang = fm.get("lang")
    out = ["<entry", f' xml:lang="{jf.to_text(lang)}"' if truthy(lang) else "", ">"]
    title = jf.xml_escape(normalize_whitespace(strip_html(smartify(jf.to_text(post.title)))))
    url = absolute(post.url)
    out.append(f'<title type="html">{title}</title>')
    out.append(f'<link href="{url}" rel="alternate" type="text/html" title="{title}" />')
    out.append(f"<published>{jf.date_to_xmlschema(post.date, tz=tz)}</published>")
    updated = _default(fm.get("last_modified_at"), post.date)
    out.append(f"<updated>{jf.to_text(jf.date_to_xmlschema(updated, tz=tz))}</updated>")
    out.append(f"<id>{jf.xml_escape(absolute(post.id))}</id>")
    excerpt_only = _default(
        _get(fm.get("feed"), "excerpt_only"), settings(data).get("excerpt_only")
    )
    if not truthy(excerpt_only):
        content = view.content(post.doc.path).strip()
        out.append(
            f'<content type="html" xml:base="{jf.xml_escape(url)}"><![CDATA[{content}]]></content>'
        )
    out.extend(_post_author(view, post))
    category = fm.get("category")
    if truthy(category):
        out.append(f'<category term="{jf.xml_escape(category)}" />')
    else:
        out.extend(f'<category term="{jf.xml_escape(c)}" />' for c in post.categories)
    out.extend(f'<category term="{jf.xml_escape(t)}" />' for t in post.tags)
    summary = _default(
        fm.get("description"), view.excerpt(post) if "excerpt" not in fm else fm["excerpt"]
    )
    summary_text = jf.to_text(summary)
    if truthy(summary) and summary_text.strip() != "":
        text = normalize_whitespace(strip_html(summary_text))
        out.append(f'<summary type="html"><![CDATA[{text}]]></summary>')
    image = _default(_get(fm.get("image"), "path"), fm.get("image"))
    if truthy(image):
        image_url = jf.to_text(image)
        if "://" not in image_url:
            image_url = absolute(image_url)
        escaped = jf.xml_escape(image_url)
        out.append(
            f'<media:thumbnail xmlns:media="http://search.yahoo.com/mrss/" url="{escaped}" />'
        )
        out.append(f'<media:content medium="image" url="{escaped}" xmlns:media="{_MEDIA}" />')
    out.append("</entry>")
    return "".join(out)


def _post_author(view: SiteView, post: Post) -> list[str]:
    fm = post.doc.front_matter
    authors = fm.get("authors")
    first = authors[0] if isinstance(authors, list) and authors else None
    author = _default(fm.get("author"), first, view.config.data.get("author"))
    known = view.data().get("authors")
    if isinstance(author, str) and isinstance(known, Mapping):
        author = _default(known.get(author), author)
    email, uri = _get(author, "email"), _get(author, "uri")
    name = _default(_get(author, "name"), author)
    out = [f"<author><name>{jf.xml_escape(_default(name, ''))}</name>"]
    if truthy(email):
        out.append(f"<email>{jf.xml_escape(email)}</email>")
    if truthy(uri):
        out.append(f"<uri>{jf.xml_escape(uri)}</uri>")
    out.append("</author>")
    return out


def feed_meta(data: Mapping[str, Any], url: str, baseurl: str) -> str:
    """Return ``{% feed_meta %}``: the ``<link>`` to the posts feed (``meta-tag.rb``)."""
    path = _get(data.get("feed"), "path") or "feed.xml"
    title = data.get("title") if truthy(data.get("title")) else data.get("name")
    attributes = {
        "type": "application/atom+xml",
        "rel": "alternate",
        "href": jf.absolute_url(path, url, baseurl),
    }
    if truthy(title):
        attributes["title"] = jf.to_text(title)
    return "<link " + " ".join(f'{k}="{jf.xml_escape(v)}"' for k, v in attributes.items()) + " />"


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import TagCall, simple_tag

    def render(call: TagCall) -> str:
        site = call.resolve("site")
        data = site if isinstance(site, Mapping) else {}
        return feed_meta(data, call.state.url, call.state.baseurl)

    return [simple_tag("feed_meta", render)]


PLUGIN = Plugin(
    NAME,
    "the Atom feed /feed.xml (and per category, collection and tag) and {% feed_meta %}",
    tags=_tags,
    generate=generate,
    needs=frozenset({Needs.EVERY_BUILD}),
)
