"""The email's "Broken links" section: the broken internal links and assets of a build, as its
build record lists them (:data:`deploybot.record.note.BROKEN_LINKS`,
:data:`~deploybot.record.note.BROKEN_LINKS_FIRST`, written by :mod:`deploybot.pipeline.links`).

Pure: a record's fields in, lines out. The section goes into the intro, after the source
commits (:mod:`.sources`) and before the ``git log`` text, so that text stays git's byte for
byte; a build with no broken link (or whose links were not checked) has none. Its lines::

    Broken links: 3 on the published pages, the first 2 (page:line: link):
        2021/01/01/a.html:12: /blog/gone/
        2021/01/01/a.html:14: /blog/img/none.png
        ... and 1 more

At most :data:`deploybot.record.note.BROKEN_LINKS_LISTED` are listed (the record keeps no more);
the state folder's ``broken-links.json`` has the rest (up to a thousand).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from deploybot.notify.gitlog.excerpt import cut_line
from deploybot.record.note import BROKEN_LINKS, BROKEN_LINKS_FIRST

INDENT = "    "


@dataclass(frozen=True)
class BrokenLinks:
    """A build's broken links as its record gives them: how many (``total``), and the first
    ones as ``(page, link, line or None)``."""

    total: int
    first: tuple[tuple[str, str, int | None], ...]

    @classmethod
    def from_record(cls, record: Mapping[str, str]) -> BrokenLinks | None:
        """From a build record's fields (:func:`deploybot.record.note.note_fields`); None when it
        has no broken link, or names none readably."""
        try:
            total = int(record.get(BROKEN_LINKS, "0"))
            rows = json.loads(record.get(BROKEN_LINKS_FIRST, "[]"))
            first = tuple(
                (str(page), str(link), line if isinstance(line, int) else None)
                for page, link, line in rows
            )
        except (ValueError, TypeError):
            return None
        return cls(total, first) if total > 0 else None


def broken_lines(broken: BrokenLinks | None, max_line_length: int = 0) -> list[str]:
    """The section's lines (see the module docstring), then an empty line; none for None.
    Each is cut to ``max_line_length`` as body lines are (0: not cut); the caller makes them
    one line (:func:`deploybot.notify.compose.email.one_line`)."""
    if broken is None:
        return []
    listed = f", the first {len(broken.first)}" if len(broken.first) < broken.total else ""
    lines = [f"Broken links: {broken.total} on the published pages{listed} (page:line: link):"]
    for page, link, line in broken.first:
        where = page if line is None else f"{page}:{line}"
        lines.append(f"{INDENT}{where}: {link}")
    if broken.total > len(broken.first):
        lines.append(f"{INDENT}... and {broken.total - len(broken.first)} more")
    return [cut_line(line, max_line_length) for line in lines] + [""]
