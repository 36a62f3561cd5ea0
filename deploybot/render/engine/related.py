"""``site.related_posts``: the posts Jekyll 4.3.1 shows as related to the document it renders.

Jekyll without ``lsi`` (``lib/jekyll/related_posts.rb``, ``most_recent_posts``): the 10 most
recent posts other than the document itself, newest first; ``[]`` when the site has fewer
than two posts. ``SiteDrop#related_posts`` (``lib/jekyll/drops/site_drop.rb``) gives it to a
post or collection document only: a page reads ``nil``. ``lsi: true`` (classifier-reborn, which
Jekyll here cannot run) is not read: the most recent posts are used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, TypeVar

from deploybot.render.liquid.documents import is_document

RELATED_POSTS = "related_posts"
"""The ``site`` key."""
LIMIT = 10
"""How many posts ``most_recent_posts`` keeps."""

T = TypeVar("T", bound=Mapping[str, Any])


def related_posts(posts_newest_first: Sequence[T], current_path: str) -> list[T]:
    """The posts related to the document at ``current_path`` (its source path): of the
    ``LIMIT + 1`` newest of ``posts_newest_first``, those that are not it, at most
    ``LIMIT`` (``site.posts.docs.last(11).reverse - [post]``, then ``first(10)``)."""
    if len(posts_newest_first) < 2:
        return []
    newest = posts_newest_first[: LIMIT + 1]
    return [post for post in newest if post.get("path") != current_path][:LIMIT]


@contextlib.contextmanager
def rendering(site: Mapping[str, Any], page: Mapping[str, Any]) -> Iterator[None]:
    """While the document whose ``page`` mapping this is renders, ``site.related_posts``
    is its related posts (``nil`` for a page), as Jekyll's renderer sets
    ``SiteDrop#current_document``; the previous value comes back after (a render inside a
    render). ``site`` is the engine's :class:`~.deps.LazySite` (which makes the list when it
    is read, from its ``current_document``) or :func:`~.build.site_variables`' plain
    mapping (given the list now, from its ``posts``)."""
    current = str(page.get("path")) if is_document(page) else None
    if hasattr(site, "current_document"):
        before = site.current_document
        site.current_document = current
        try:
            yield
        finally:
            site.current_document = before
        return
    if not isinstance(site, MutableMapping):
        yield
        return
    saved = site.get(RELATED_POSTS)
    site[RELATED_POSTS] = None if current is None else related_posts(site["posts"], current)
    try:
        yield
    finally:
        site[RELATED_POSTS] = saved
