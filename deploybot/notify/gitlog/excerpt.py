"""The size-limited body of a git-multimail email, and the part of a ``git log`` text it shows.

Pure: no git, no I/O. git-multimail filters every body line (research §1.5, §1.6):

- ``dateSubstitute``: in the commit header of the ``git log`` text (the lines before the first
  empty line) ``Date:   `` becomes ``AuthorDate: ``;
- ``emailMaxLineLength``: a line of more than ``max_line_length`` characters becomes its first
  ``max_line_length - 7`` characters + ``" [...]"``;
- ``emailMaxLines``: after ``max_lines`` lines the rest is dropped and one line
  ``... N lines suppressed ...`` is appended, N = total lines - ``max_lines``.

A commit email of a huge build commit must cost what it sends, not what the commit holds, so
the ``git log`` text reaches the email as a :class:`LogExcerpt`: the lines the email can show,
already filtered, plus the number of lines of the whole text. :class:`ExcerptBuilder` makes one
line by line (from git objects, :func:`deploybot.notify.gitlog.commit_log.read_log_excerpt`, or from
a whole text, :func:`excerpt_from_text`); both give the same excerpt for the same text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DATE_SUBSTITUTE = "AuthorDate: "
DEFAULT_ABBREV = 7
_DATE = "Date:   "
_INDEX_RE = re.compile(r"^index ([0-9a-f]{4,40})(?:,[0-9a-f]+)*\.\.[0-9a-f]+", re.MULTILINE)

__all__ = [
    "ExcerptBuilder",
    "LogExcerpt",
    "abbrev_length",
    "as_excerpt",
    "cut_line",
    "excerpt_from_text",
    "index_abbrev",
    "limit_body",
    "limit_log_body",
    "log_lines",
]


@dataclass(frozen=True)
class LogExcerpt:
    """The first lines of a ``git log`` text as an email body shows them, and its size.

    Attributes:
        lines: the first ``min(total, max_lines)`` lines (all of them when ``max_lines`` is 0),
            without newlines, decoded as UTF-8 with ``errors="replace"``, ``dateSubstitute``
            applied, each cut by :func:`cut_line` with ``max_line_length``.
        total: the number of lines of the whole text.
        short_length: :func:`abbrev_length` of the whole text (the ``new abc1234`` width).
        max_lines, max_line_length: the limits the excerpt was made for (0 = none).
    """

    lines: tuple[str, ...]
    total: int
    short_length: int
    max_lines: int
    max_line_length: int


class ExcerptBuilder:
    """Collects a :class:`LogExcerpt` one line at a time, keeping only what an email shows.

    Memory: the kept lines (at most ``max_lines`` of at most ``max_line_length`` characters);
    lines past the budget are only counted (:meth:`add` or, cheaper, :meth:`skip`).
    """

    def __init__(
        self,
        max_lines: int,
        max_line_length: int,
        *,
        keep: int | None = None,
        in_header: bool = True,
    ) -> None:
        """Args:
        max_lines, max_line_length: the email's limits (0 = none).
        keep: keep this many lines instead of ``max_lines`` (for a part of the text that
            starts further down, see :meth:`extend`).
        in_header: the first line added belongs to the commit header (``dateSubstitute``).
        """
        self.max_lines = max_lines
        self.max_line_length = max_line_length
        self.lines: list[str] = []
        self.total = 0
        self._keep = keep if keep is not None else max_lines if max_lines > 0 else None
        self._in_header = in_header

    @property
    def room(self) -> int:
        """How many more lines will be kept (a huge number when unlimited)."""
        if self._keep is None:
            return 1 << 62
        return max(self._keep - len(self.lines), 0)

    def add(self, line: str | bytes) -> None:
        """One line of the log, without its newline (bytes are decoded UTF-8, "replace")."""
        self.total += 1
        if self._keep is not None and len(self.lines) >= self._keep:
            return
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if self._in_header:
            if text == "":
                self._in_header = False
            elif text.startswith(_DATE):
                text = DATE_SUBSTITUTE + text[len(_DATE) :]
        self.lines.append(cut_line(text, self.max_line_length))

    def add_text(self, data: bytes) -> None:
        """Several lines, each ending in ``\\n`` (split at LF only)."""
        for line in data.split(b"\n")[:-1]:
            self.add(line)

    def skip(self, count: int) -> None:
        """Count ``count`` lines that lie past the budget (:attr:`room` must be 0).

        Raises:
            ValueError: there is still room, so the lines would have to be kept.
        """
        if count and self.room > 0:
            raise ValueError("skip() before the line budget is spent")
        self.total += count

    def extend(self, later: ExcerptBuilder) -> None:
        """Append the lines another builder collected for the text that follows."""
        self.lines.extend(later.lines[: self.room])
        self.total += later.total
        self._in_header = self._in_header and later._in_header

    def build(self, short_length: int) -> LogExcerpt:
        """The excerpt; ``short_length`` as :attr:`LogExcerpt.short_length`."""
        return LogExcerpt(
            tuple(self.lines), self.total, short_length, self.max_lines, self.max_line_length
        )


def excerpt_from_text(log_text: str, max_lines: int, max_line_length: int) -> LogExcerpt:
    """The :class:`LogExcerpt` of a whole ``git log`` text (split at ``\\n`` only)."""
    builder = ExcerptBuilder(max_lines, max_line_length)
    for line in _split_lines(log_text):
        builder.add(line)
    return builder.build(abbrev_length(log_text))


def as_excerpt(log_text: str | LogExcerpt, max_lines: int, max_line_length: int) -> LogExcerpt:
    """``log_text`` itself when it is an excerpt, else :func:`excerpt_from_text` of it."""
    if isinstance(log_text, LogExcerpt):
        return log_text
    return excerpt_from_text(log_text, max_lines, max_line_length)


def abbrev_length(log_text: str) -> int:
    """Return the short-SHA length the log text uses (its first ``index a..b`` line), else 7.

    git abbreviates every object of a repository to the same automatic length
    (``core.abbrev``: 7 below 2^14 objects, 8 from 16384, ...), so the ``new abc1234`` line
    then matches the ``index`` lines of the diff below it.
    """
    return index_abbrev(log_text) or DEFAULT_ABBREV


def index_abbrev(text: str) -> int | None:
    """The length of the old id on the first ``index a..b`` line of ``text``, or None."""
    match = _INDEX_RE.search(text)
    return len(match.group(1)) if match else None


def cut_line(line: str, max_line_length: int) -> str:
    """multimail's ``limit_linelength`` for one line: > N characters -> first N-7 + ``" [...]"``;
    ``max_line_length`` 0 disables."""
    if 0 < max_line_length < len(line):
        return line[: max_line_length - 7] + " [...]"
    return line


def log_lines(log_text: str) -> list[str]:
    """The ``git log`` text as body lines, with multimail's dateSubstitute applied."""
    return list(excerpt_from_text(log_text, 0, 0).lines)


def limit_body(lines: Iterable[str], max_line_length: int, max_lines: int) -> list[str]:
    """multimail's body filter: cut long lines, then cap the line count (research §1.6)."""
    cut = [cut_line(line, max_line_length) for line in lines]
    if max_lines <= 0 or len(cut) <= max_lines:
        return cut
    return [*cut[:max_lines], _suppressed(len(cut) - max_lines)]


def limit_log_body(
    head: Sequence[str], log: LogExcerpt, max_line_length: int, max_lines: int
) -> list[str]:
    """:func:`limit_body` of ``head`` followed by the whole log text that ``log`` excerpts.

    Returns:
        The body lines, ending ``... N lines suppressed ...`` when the total exceeds
        ``max_lines``; N counts the log's lines that the excerpt only counted.

    Raises:
        ValueError: ``log`` was made with another ``max_line_length``, or holds fewer lines
            than the body shows (its ``max_lines`` too small).
    """
    if log.max_line_length != max_line_length:
        raise ValueError(
            f"log excerpt cut at {log.max_line_length} characters, the email at {max_line_length}"
        )
    total = len(head) + log.total
    shown = total if max_lines <= 0 else min(total, max_lines)
    if len(head) + len(log.lines) < shown:
        raise ValueError(f"log excerpt holds {len(log.lines)} lines, the email shows more")
    body = [cut_line(line, max_line_length) for line in head] + list(log.lines)
    if shown == total:
        return body[:total]
    return [*body[:shown], _suppressed(total - shown)]


def _suppressed(count: int) -> str:
    return f"... {count} lines suppressed ..."


def _split_lines(text: str) -> list[str]:
    """Split git output at ``\\n`` only (a ``\\r`` or ``\\f`` inside a diff line stays there)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
