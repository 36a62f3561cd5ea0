"""The jekyll-toc plugin's table of contents (``{% toc %}``, ``{{ content | toc_only }}``).

jekyll-toc 0.18 (``lib/table_of_contents/parser.rb``, ``helper.rb``, ``configuration.rb``)
reads HTML and lists its headings:

- ``h{min_level}``…``h{max_level}`` (1-6), in document order, except those with the class
  ``no_toc`` and those inside an element with the class ``no_toc_section`` (a name or a
  list of names);
- each entry links to the heading's ``id``, or to one made from its text (lower-cased;
  every character but word characters, ``-`` and space dropped; spaces -> ``-``;
  URL-escaped as Ruby's ``CGI.escape``), ``-1``, ``-2``… added to repeats of a made id;
- the list is ``<ul id="toc" class="section-nav">``, items
  ``<li class="toc-entry toc-hN"><a href="#ID">TEXT</a>`` (TEXT escaped by
  ``CGI.escapeHTML``), a deeper heading nested in a ``<ul>`` of the item before it.

The ``toc`` site setting (``list_id``, ``list_class``, ``sublist_class``, ``item_class``,
``item_prefix``, ``ordered_list``, ``min_level``, ``max_level``, ``no_toc_section_class``)
changes these. The Liquid tag only renders when the page has ``toc`` set (jekyll-toc's
``TocTag``), and reads ``page.content``: the page's source before conversion, so headings
written in Markdown are not in it (only HTML ones), as in Jekyll.

Hook for the Liquid layer: ``{% toc %}`` is :func:`toc_tag`; the filters ``toc_only`` and
``toc`` (``toc`` also needs ``inject_anchors``, not provided) call :func:`build_toc`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

from deploybot.render.html_elements import VOID_ELEMENTS
from deploybot.render.liquid.plugins.registry import Plugin
from deploybot.render.markdown.kramdown.headings import _is_word

PLUGIN = Plugin("jekyll-toc", "{% toc %} and the toc_only filter (the tag is always there)")

_DEFAULTS: dict[str, Any] = {
    "min_level": 1,
    "max_level": 6,
    "ordered_list": False,
    "no_toc_section_class": "no_toc_section",
    "list_id": "toc",
    "list_class": "section-nav",
    "sublist_class": "",
    "item_class": "toc-entry",
    "item_prefix": "toc-",
}


@dataclass(frozen=True)
class TocEntry:
    """One listed heading: its ``id`` (escaped for HTML), its text (``CGI.escapeHTML``),
    its tag name (``h2``) and level (2)."""

    ident: str
    text: str
    tag: str
    level: int


def toc_tag(page: Mapping[str, Any], site_toc: object) -> str:
    """Return what ``{% toc %}`` renders: ``""`` unless ``page['toc']`` is set (Ruby truth:
    anything but nil/false), else :func:`build_toc` of ``page['content']`` (the page's
    source text when the tag runs inside the page itself). ``site_toc`` is the site's
    ``toc`` setting (a mapping, else ignored)."""
    if page.get("toc") in (None, False):
        return ""
    return build_toc(str(page.get("content") or ""), site_toc)


def options(site_toc: object) -> dict[str, Any]:
    """Return jekyll-toc's options: its defaults updated with ``site_toc`` when that is a
    mapping (a non-mapping setting is ignored, as the plugin ignores it)."""
    found = dict(_DEFAULTS)
    if isinstance(site_toc, Mapping):
        found.update({str(k): v for k, v in site_toc.items()})
    return found


def build_toc(content: str, site_toc: object = None) -> str:
    """Return jekyll-toc's ``build_toc`` for the HTML ``content`` (see module docstring):
    the whole ``<ul id="toc" …>…</ul>``, with an empty list when there is no heading."""
    opts = options(site_toc)
    entries = toc_entries(content, opts)
    tag = "ol" if opts["ordered_list"] else "ul"
    head = f'<{tag} id="{opts["list_id"]}" class="{opts["list_class"]}">\n'
    return head + _toc_list(entries, opts, tag) + f"</{tag}>"


def toc_entries(content: str, opts: Mapping[str, Any]) -> list[TocEntry]:
    """Return the headings of ``content`` that jekyll-toc lists, with their final ids."""
    levels = range(int(opts["min_level"]), int(opts["max_level"]) + 1)
    skip = opts["no_toc_section_class"]
    sections = {str(c) for c in skip} if isinstance(skip, list) else {str(skip)}
    parser = _Headings(levels, sections)
    parser.feed(content)
    parser.close()
    seen: dict[str, int] = {}
    entries = []
    for heading in parser.found:
        if heading.given is not None:
            ident = heading.given  # as written, and never suffixed (the plugin's Attr keys)
        else:
            base = generate_toc_id(heading.text)
            count = seen.get(base, 0)
            seen[base] = count + 1
            ident = base if count == 0 else f"{base}-{count}"
        text = html.escape(heading.text, quote=True).replace("&#x27;", "&#39;")
        entries.append(TocEntry(ident, text, heading.tag, int(heading.tag[1])))
    return entries


def generate_toc_id(text: str) -> str:
    """Return jekyll-toc's ``generate_toc_id``: lower-case, keep word characters, ``-`` and
    spaces, spaces -> ``-``, then ``CGI.escape`` (UTF-8 bytes of other characters as
    ``%XX``)."""
    kept = "".join(c for c in text.lower() if _is_word(c) or c in "- ")
    return quote(kept.replace(" ", "-"), safe="-_.~")


def _toc_list(entries: list[TocEntry], opts: Mapping[str, Any], tag: str) -> str:
    # build_toc_list, as the plugin writes it (iterative where it loops, recursive where
    # it recurses: nesting is at most six levels deep).
    out: list[str] = []
    i = 0
    low = min((e.level for e in entries), default=0)
    sub = f' class="{opts["sublist_class"]}"' if opts["sublist_class"] else ""
    while i < len(entries):
        entry = entries[i]
        if entry.level == low:
            out.append(
                f'<li class="{opts["item_class"]} {opts["item_prefix"]}{entry.tag}">'
                f'<a href="#{entry.ident}">{entry.text}</a>'
            )
            if i + 1 < len(entries) and entries[i + 1].level > low:
                nested = _nested(entries[i + 1 :], low)
                out.append(f"\n<{tag}{sub}>\n{_toc_list(nested, opts, tag)}</{tag}>\n")
                i += len(nested)
            out.append("</li>\n")
        elif entry.level > low:
            nested = _nested(entries[i:], low)
            out.append(_toc_list(nested, opts, tag))
            i += len(nested) - 1
        i += 1
    return "".join(out)


def _nested(entries: list[TocEntry], low: int) -> list[TocEntry]:
    found = []
    for entry in entries:
        if entry.level == low:
            break
        found.append(entry)
    return found


@dataclass
class _Heading:
    tag: str
    given: str | None
    text: str = ""


class _Headings(HTMLParser):
    """Collects the headings to list (text, tag, ``id``), skipping ``.no_toc`` headings and
    those inside a ``no_toc_section`` element. Linear: each tag is pushed and popped once;
    open names and skipped sections are counted, not searched for."""

    def __init__(self, levels: range, sections: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.levels = levels
        self.sections = sections
        self.found: list[_Heading] = []
        self.stack: list[tuple[str, bool, _Heading | None]] = []
        self.names: dict[str, int] = {}
        self.skipped = 0
        self.open: list[_Heading] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_ELEMENTS:
            return
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        skipped = bool(classes & self.sections)
        heading = None
        listed = len(tag) == 2 and tag[0] == "h" and tag[1].isdigit()
        if listed and int(tag[1]) in self.levels and "no_toc" not in classes and not self.skipped:
            heading = _Heading(tag, values.get("id"))
            self.found.append(heading)
            self.open.append(heading)
        self.stack.append((tag, skipped, heading))
        self.names[tag] = self.names.get(tag, 0) + 1
        self.skipped += skipped

    def handle_endtag(self, tag: str) -> None:
        if not self.names.get(tag):
            return  # closes nothing open: ignored, as an HTML parser does
        while self.stack:
            name, skipped, heading = self.stack.pop()
            self.names[name] -= 1
            self.skipped -= skipped
            if heading is not None:
                self.open.remove(heading)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        for heading in self.open:
            heading.text += data
