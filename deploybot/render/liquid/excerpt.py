"""Post excerpts: Jekyll's ``post.excerpt``, rendered only when a template prints it.

Jekyll (``lib/jekyll/excerpt.rb``, ``extract_excerpt``; docs "Posts", "Post excerpts"): the
excerpt is the post's content up to the first ``excerpt_separator`` (front matter, else
``_config.yml``, default ``"\\n\\n"``: the first paragraph), plus the Markdown link reference
definitions of the rest so its links still resolve; it is rendered like the post (Liquid,
then Markdown). A front-matter ``excerpt`` is used as written instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from deploybot.render.limits import LimitError
from deploybot.render.liquid.templates import render_liquid, restore_fragments
from deploybot.render.model import Document
from deploybot.support.errors import SourceError

DEFAULT_SEPARATOR = "\n\n"
CUT = "\x00\x00excerpt\x00\x00"
"""A separator standing for "the body is already the excerpt's source" (the build cache
keeps only that part of a post); no text holds it."""
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:.+$", re.MULTILINE)

MarkdownFn = Callable[[str], str]
"""Markdown text -> HTML (the build's Markdown instance)."""


def excerpt_source(body: str, separator: str = DEFAULT_SEPARATOR) -> str:
    """Return the excerpt's source text of a document ``body`` (leading blank lines skipped).

    The whole body when ``separator`` does not occur (or is empty).
    """
    text = body.lstrip("\n")
    if not separator:
        return text
    head, found, tail = text.partition(separator)
    if not found:
        return head
    definitions = _LINK_DEFINITION.findall(tail)
    return head + "\n\n" + "\n".join(definitions) if definitions else head


class Excerpt:
    """A lazily rendered excerpt: ``str()`` and ``__html__()`` give the HTML.

    ``repr`` and equality use the source text only, so a dependency fingerprint of an
    excerpt changes exactly when its source does.
    """

    def __init__(
        self,
        source: str,
        doc: Document,
        markdown: MarkdownFn,
        page: Mapping[str, Any] | None = None,
    ) -> None:
        self.source = source
        self._doc = doc
        self._markdown = markdown
        self._page = page
        self._html: str | None = None

    def __html__(self) -> str:
        """Return the rendered HTML (trusted markup, for Jinja2's autoescape)."""
        if self._html is None:
            # Jekyll renders the excerpt with its post's ``page`` (no ``site`` here: the
            # excerpt is a listing detail, made wherever a template prints it).
            page = {} if self._page is None else {"page": self._page}
            liquid = render_liquid(self.source, path=self._doc.path, variables=page)
            try:
                text = self._markdown(liquid.text) if self._doc.markdown else liquid.text
            except LimitError as exc:  # the Markdown's own output limit
                raise SourceError(f"excerpt: {exc.message}", self._doc.path) from exc
            self._html = restore_fragments(text, liquid.fragments)
        return self._html

    def __str__(self) -> str:
        return self.__html__()

    def _fields(self) -> list[tuple[str, Any]]:
        """The ``page`` fields the excerpt's Liquid may show (not the excerpt itself, nor the
        neighbours)."""
        page: Mapping[str, Any] = self._page or {}
        skip = ("excerpt", "previous", "next")
        return sorted(((k, v) for k, v in page.items() if k not in skip), key=repr)

    def __repr__(self) -> str:
        return f"Excerpt({self.source!r}, {self._fields()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Excerpt) and repr(other) == repr(self)

    def __hash__(self) -> int:
        return hash(self.source)


def post_excerpt(
    doc: Document,
    separator: str,
    markdown: MarkdownFn,
    page: Mapping[str, Any] | None = None,
) -> Any:
    """Return ``doc``'s ``excerpt``: front matter's value when set, '' when ``separator``
    is empty (Jekyll's ``generate_excerpt?``: no excerpt), else an :class:`Excerpt`
    rendered with the post's ``page`` mapping."""
    given = doc.front_matter.get("excerpt")
    if given is not None:
        return given
    if not separator:
        return ""
    return Excerpt(excerpt_source(doc.body, separator), doc, markdown, page)
