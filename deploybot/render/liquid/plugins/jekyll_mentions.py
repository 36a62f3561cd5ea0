"""jekyll-mentions 1.6: ``@name`` in a page's HTML becomes a link to the user on GitHub.

As the plugin's ``jekyll-mentions.rb`` and html-pipeline 2.14's ``MentionFilter``
(``@mention_filter.rb``), on each written page and document whose output is HTML
(``output_ext`` ``.html`` or a permalink ending in ``/``) and whose front matter does not
say ``jekyll-mentions: false``: when the body (:func:`~.html_pipeline.split_body`) holds
a mention, every text node outside ``pre``, ``code``, ``a``, ``style`` and ``script`` has
each ``@name`` (a word character, then word characters or ``-``; before it the start of a
line or a non-word character; after it no ``/``, and no word character but dots followed
by a non-word character or the end of the line) replaced by
``<a href="BASE/name" class="user-mention">@name</a>``; ``@mention``, ``@mentions``,
``@mentioned`` and ``@mentioning`` stay text. The body is then written as libxml2 writes
it (:mod:`.html_pipeline`). ``BASE`` is ``https://github.com``, or ``jekyll-mentions``
(a string, or a mapping's ``base_url``) of the site settings, or of the document's front
matter, which wins; another kind of value stops the build, as the plugin raises
``InvalidJekyllMentionConfig``. The ``SSL``/``GITHUB_HOSTNAME`` environment of GitHub
Enterprise is not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deploybot.render.liquid.plugins.html_pipeline import (
    LIMITS_WARNING,
    Filtered,
    filter_fragment,
    split_body,
)
from deploybot.render.liquid.plugins.registry import DocumentInfo, Plugin
from deploybot.render.model import RenderWarning
from deploybot.support.errors import SourceError

NAME = "jekyll-mentions"
GITHUB = "https://github.com"
MENTION = re.compile(
    r"(?:^|\W)@((?>[\w][\w-]*))(?!/)(?=\.+[ \t\W]|\.+$|[^0-9a-zA-Z_.]|$)",
    re.I | re.M | re.A,
)
"""``MentionPatterns[/[\\w][\\w-]*/]``: Ruby's ``\\w`` is ASCII, ``^``/``$`` match at lines."""
MENTION_LOGINS = frozenset({"mention", "mentions", "mentioned", "mentioning"})
IGNORED = frozenset({"pre", "code", "a", "style", "script"})


def base_url(settings: Mapping[str, Any], path: str) -> str:
    """Return the base URL of the links (``mention_base``) given the settings (the site's,
    or its front matter merged over them). Raises ``SourceError`` for a value neither a
    string nor a mapping."""
    value = settings.get(NAME)
    if value is None:
        return GITHUB
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        found = value.get("base_url", GITHUB)
        return "" if found is None else str(found)
    kind = {bool: "TrueClass" if value else "FalseClass", int: "Integer", float: "Float"}
    name = kind.get(type(value), "Array" if isinstance(value, list) else type(value).__name__)
    raise SourceError(
        "Your jekyll-mentions config has to either be a string or a hash. "
        f"It's a {name} right now.",
        path,
    )


def mentionify(html: str, base: str) -> Filtered | None:
    """Return the HTML fragment ``html`` with its mentions linked (``base``: the base URL),
    written as libxml2 writes it; ``None`` when it holds no mention (left as it is)."""
    if "@" not in html or MENTION.search(html) is None:
        return None
    url = base if base.endswith(("/", "~")) else base + "/"

    def link(m: re.Match[str]) -> str:
        login = m[1]
        if login.lower() in MENTION_LOGINS:
            return m[0]
        anchor = f"<a href='{url}{login}' class='user-mention'>@{login}</a>"
        return m[0].replace(f"@{login}", anchor, 1)

    def text_filter(text: str) -> str | None:
        if "@" not in text:
            return None
        replaced = MENTION.sub(link, text)
        return None if replaced == text else replaced

    return filter_fragment(html, text_filter, IGNORED, raw=False)


def mentionable(info: DocumentInfo) -> bool:
    """``Mentions.mentionable?``: HTML output (or a permalink ending in ``/``), not switched
    off in the front matter."""
    permalink = info.front_matter.get("permalink")
    html = info.output_ext == ".html" or (isinstance(permalink, str) and permalink.endswith("/"))
    return html and info.front_matter.get(NAME) is not False


def adjust(info: DocumentInfo, output: bytes) -> tuple[bytes, tuple[RenderWarning, ...]]:
    """Return the document's ``output`` with its mentions linked, and a warning where
    Jekyll's HTML parser would cut the page (:data:`~.html_pipeline.LIMITS_WARNING`)."""
    if not mentionable(info) or b"@" not in output:
        return output, ()
    settings: Mapping[str, Any] = info.config.data
    if NAME in info.front_matter:
        settings = {**settings, **info.front_matter}
    base = base_url(settings, info.path)
    try:
        before, body, after = split_body(output.decode("utf-8"))
    except UnicodeDecodeError:  # not UTF-8: no HTML this filter reads
        return output, ()
    done = mentionify(body, base)
    if done is None:
        return output, ()
    notes = (RenderWarning(info.path, None, f"{NAME}: {LIMITS_WARNING}"),) if done.beyond else ()
    return (before + done.html + after).encode("utf-8"), notes


PLUGIN = Plugin(NAME, "@mentions in HTML link to GitHub users", post_render=adjust)
