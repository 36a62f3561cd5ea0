"""What a post's or collection document's mapping is, for the renderer's lists and Liquid's
``==``: a leaf module (no python-liquid), so the incremental engine reads it without loading
the Liquid engine (tests/test_imports.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_document(item: Any) -> bool:
    """Whether ``item`` is a post's or a collection document's mapping (it has a
    ``collection`` label and a ``relative_path``; a page's mapping and a static file's have
    not both): what sorts as ``Document#<=>`` and is given ``site.related_posts``."""
    return (
        isinstance(item, Mapping)
        and isinstance(item.get("collection"), str)
        and "relative_path" in item
    )


def document_identity(item: Any) -> tuple[str, str] | None:
    """``(collection, path)`` of a post's or document's mapping (:func:`is_document`), read
    with ``dict``'s own methods (nothing recorded); ``None`` for anything else. Liquid's
    ``==`` compares documents by it: Jekyll caches one ``DocumentDrop`` a document, so
    ``post == page`` is Ruby's ``Object#==`` of the same drop (``Array#include?``, which
    ``contains`` uses, compares the ``Document`` with the drop: never equal)."""
    if not isinstance(item, dict):
        return None
    label = dict.get(item, "collection")
    if not isinstance(label, str) or not dict.__contains__(item, "relative_path"):
        return None
    return (label, str(dict.get(item, "path")))
