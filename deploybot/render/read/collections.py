"""Collections: ``collections:`` in ``_config.yml`` (Jekyll 4.3's ``collection.rb``,
``configuration.rb#add_default_collections``, ``drops/collection_drop.rb``).

- ``collections`` is a list of labels or a mapping of label -> metadata (``output``,
  ``permalink``, ``sort_by``, ``order`` and any other key, shown on ``site.collections``);
  ``posts`` is always one (``output: true``, its permalink the site's ``permalink`` style);
- a collection's files are ``<collections_dir>/_<label>/**``; a file with front matter is
  a document (``site.<label>``), any other a static file of the collection;
- documents are written only when the collection has ``output: true``, at the collection's
  ``permalink`` (default ``/:collection/:path`` plus the site style's ending: ``.html``
  for the built-in styles, ``/`` for ``pretty``);
- documents are sorted by date then path, or by ``sort_by`` (documents without the key
  last), or in the ``order`` listed (the rest after, by date then path).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deploybot.render.model import ConfigProblem
from deploybot.render.read.permalink import STYLES, add_permalink_suffix

POSTS = "posts"


@dataclass(frozen=True)
class Collection:
    """One collection's settings.

    Attributes:
        label: the name (``recipes``; Jekyll keeps only ``[a-z0-9_.-]``, any case).
        output: whether its documents are written.
        permalink: the URL template of its documents (already expanded for ``posts``).
        folder: its folder from the source root (``_recipes``, or
            ``<collections_dir>/_recipes``).
        metadata: the settings as written (``site.collections`` shows them).
    """

    label: str
    output: bool
    permalink: str
    folder: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def relative_directory(self) -> str:
        """``_<label>``: the folder below ``collections_dir``."""
        return "_" + self.label

    @property
    def sort_by(self) -> str | None:
        """The front-matter key its documents are sorted by, if any."""
        value = self.metadata.get("sort_by")
        return value if isinstance(value, str) else None

    @property
    def order(self) -> tuple[str, ...] | None:
        """The file names (below its folder) its documents are listed in, if given."""
        value = self.metadata.get("order")
        return tuple(str(v) for v in value) if isinstance(value, list) else None


def sanitize_label(label: str) -> str:
    """``Collection#sanitize_label``: only letters, digits, ``_``, ``-`` and ``.``."""
    return re.sub(r"[^a-z0-9_\-.]", "", label, flags=re.IGNORECASE)


def read_collections(
    config: Mapping[str, Any], permalink: str
) -> tuple[dict[str, Collection], list[ConfigProblem]]:
    """Return the site's collections by label, ``posts`` included, from the parsed
    ``_config.yml`` ``config`` (``permalink``: the site's permalink setting), and the
    settings ignored as unusable (``collections: 5``, a collection's settings or its
    ``order`` of the wrong type; Jekyll stops on the first two, ignores the third)."""
    problems: list[ConfigProblem] = []
    raw = config.get("collections", {})
    if raw is None:
        raw = {}
    if isinstance(raw, list):
        raw = {str(label): {} for label in raw}
    if not isinstance(raw, Mapping):
        message = "'collections' is neither a list of labels nor a mapping: ignored"
        problems.append((("collections",), message))
        raw = {}
    container = str(config.get("collections_dir") or "").strip("/")
    found: dict[str, Collection] = {}
    for name, meta in {POSTS: {}, **raw}.items():
        label = sanitize_label(str(name))
        keys = ("collections", str(name))
        if meta is not None and not isinstance(meta, Mapping):
            message = f"collection {str(name)!r}: its settings are not a mapping: ignored"
            problems.append((keys, message))
        metadata = dict(meta) if isinstance(meta, Mapping) else {}
        if metadata.get("order") is not None and not isinstance(metadata["order"], list):
            message = f"collection {str(name)!r}: 'order' is not a list of file names: ignored"
            problems.append(((*keys, "order"), message))
        if label == POSTS:
            metadata["output"] = True
            metadata.setdefault("permalink", STYLES.get(permalink, permalink))
        default = add_permalink_suffix("/:collection/:path", permalink)
        template = metadata.get("permalink")
        folder = f"{container}/_{label}" if container else f"_{label}"
        found[label] = Collection(
            label,
            bool(metadata.get("output", False)),
            str(template) if template else default,
            folder,
            metadata,
        )
    return found, problems


def collection_of(path: str, collections: Mapping[str, Collection]) -> Collection | None:
    """Return the collection (not ``posts``) whose folder holds ``path``, or ``None``."""
    for collection in collections.values():
        if collection.label != POSTS and path.startswith(collection.folder + "/"):
            return collection
    return None


def ordered(
    collection: Collection, docs: Sequence[tuple[str, Any, Any]]
) -> list[tuple[str, Any, Any]]:
    """Return ``docs`` (``(path below the source, date, front matter)``) in the
    collection's order (``Collection#sort_docs!``)."""
    by_date = sorted(docs, key=lambda d: (d[1], d[0]))
    if collection.order is not None:
        wanted = {f"{collection.folder}/{name}": i for i, name in enumerate(collection.order)}
        listed = sorted((d for d in by_date if d[0] in wanted), key=lambda d: wanted[d[0]])
        return listed + [d for d in by_date if d[0] not in wanted]
    key = collection.sort_by
    if key is not None:
        return sorted(by_date, key=lambda d: _comparable(d[2].get(key)))
    return by_date


def _comparable(value: Any) -> tuple[int, int, Any]:
    """Missing values last; numbers before text; Ruby's ``<=>`` fails across kinds, where
    Jekyll keeps the date-then-path order: so does the stable sort here."""
    if value is None:
        return (1, 0, 0)
    if isinstance(value, bool):
        return (0, 2, str(value))
    if isinstance(value, int | float):
        return (0, 0, value)
    return (0, 1, str(value))
