"""jemoji 0.13: ``:name:`` in a page's HTML becomes GitHub's emoji image.

As jemoji 0.13.0's ``lib/jemoji.rb`` (github.com/jekyll/jemoji, commit 1b3e31f) with
html-pipeline 2.14's ``EmojiFilter`` (``emoji_filter.rb``, Debian's ruby-html-pipeline)
and the names of gemoji 4.1.0 (:mod:`.gemoji_names`; jemoji asks for gemoji >= 3, < 5):
on each page, and each written document, whose output is HTML (``output_ext`` ``.html``),
and on anything whose permalink ends in ``/``, when the output holds ``:name:`` for a
gemoji name, the body (:func:`~.html_pipeline.split_body`) is filtered: in every text node
outside ``pre``, ``code`` and ``tt``, each ``:name:`` becomes
``<img class="emoji" title=":name:" alt=":name:" src="SRC/emoji/FILE.png" height="20"
width="20">`` (``align`` removed, as jemoji's ``img_attrs`` asks), the text read as HTML
again (``node.text`` replaced by markup: ``&lt;b&gt;`` in a text becomes a ``<b>``, as in
jemoji), and the body written as libxml2 writes it (:mod:`.html_pipeline`). ``SRC`` is
``https://github.githubassets.com/images/icons/``, or ``emoji.src`` of ``_config.yml``
(joined as Ruby's ``File.join``); an ``emoji`` setting that is no mapping stops the build,
as jemoji fails on it. The ``ASSET_HOST_URL`` environment is not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache

from deploybot.render.liquid.plugins.gemoji_names import NAMES
from deploybot.render.liquid.plugins.html_pipeline import (
    LIMITS_WARNING,
    Filtered,
    filter_fragment,
    split_body,
)
from deploybot.render.liquid.plugins.registry import DocumentInfo, Plugin
from deploybot.render.model import RenderWarning, SiteConfig
from deploybot.render.read.siteconfig import CONFIG_PATH, line_of_keys
from deploybot.support.errors import SourceError

NAME = "jemoji"
ASSET_ROOT = "https://github.githubassets.com/images/icons/"
IGNORED = frozenset({"pre", "code", "tt"})


@cache
def image_files() -> Mapping[str, str]:
    """Return gemoji's emoji names -> image file (``unicode/1f44d.png``)."""
    pairs = (line.split(" ") for line in NAMES.splitlines() if line)
    return {name: f"{file}.png" for name, file in pairs}


def emoji_codes(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(start, end, name)`` of each ``:name:`` in ``text`` for a gemoji name, as
    ``EmojiFilter.emoji_pattern`` (``:(name|name|...):``) finds them, left to right: no
    name holds a ``:``, so a match starting at a colon ends at the next one, and one that
    fails leaves that next colon to start the following try."""
    names = image_files()
    start = text.find(":")
    while start >= 0:
        end = text.find(":", start + 1)
        if end < 0:
            return
        if text[start + 1 : end] in names:
            yield start, end + 1, text[start + 1 : end]
            start = text.find(":", end + 1)
        else:
            start = end


def asset_root(config: SiteConfig) -> str:
    """Return ``emoji.src`` of ``config``, else GitHub's (``Emoji.emoji_src``). Raises
    ``SourceError`` when ``emoji`` is set to something other than a mapping."""
    settings = config.data.get("emoji")
    if settings is None and "emoji" not in config.data:
        return ASSET_ROOT
    if not isinstance(settings, Mapping):
        line = line_of_keys(config.text, ("emoji",))
        raise SourceError("jemoji: emoji must be a mapping (emoji: src: URL)", CONFIG_PATH, line)
    return str(settings["src"]) if "src" in settings else ASSET_ROOT


def image_tag(name: str, root: str) -> str:
    """Return the ``<img>`` EmojiFilter writes for ``name`` under the asset ``root``."""
    path = "emoji/" + image_files()[name]
    src = root + path if root.endswith("/") else f"{root}/{path}"
    return f'<img class="emoji" title=":{name}:" alt=":{name}:" src="{src}" height="20" width="20">'


def emojify(html: str, root: str) -> Filtered:
    """Return the HTML fragment ``html`` with its emoji codes as images under ``root``,
    written as libxml2 writes it."""

    def text_filter(text: str) -> str | None:
        if ":" not in text:
            return None
        parts, last = [], 0
        for start, end, name in emoji_codes(text):
            parts += [text[last:start], image_tag(name, root)]
            last = end
        return None if last == 0 else "".join(parts) + text[last:]

    return filter_fragment(html, text_filter, IGNORED, raw=True)


def emojiable(info: DocumentInfo) -> bool:
    """``Emoji.emojiable?``: ``(page or written) && .html || permalink ends in /``."""
    permalink = info.front_matter.get("permalink")
    return info.output_ext == ".html" or (isinstance(permalink, str) and permalink.endswith("/"))


def adjust(info: DocumentInfo, output: bytes) -> tuple[bytes, tuple[RenderWarning, ...]]:
    """Return the document's ``output`` with its emoji codes as images, and a warning
    where Jekyll's HTML parser would cut the page (:data:`~.html_pipeline.LIMITS_WARNING`)."""
    if not emojiable(info) or b":" not in output:
        return output, ()
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError:  # not UTF-8: no HTML this filter reads
        return output, ()
    if next(emoji_codes(text), None) is None:
        return output, ()
    before, body, after = split_body(text)
    done = emojify(body, asset_root(info.config))
    notes = (RenderWarning(info.path, None, f"{NAME}: {LIMITS_WARNING}"),) if done.beyond else ()
    return (before + done.html + after).encode("utf-8"), notes


PLUGIN = Plugin(NAME, ":emoji: codes in HTML become GitHub's emoji images", post_render=adjust)
