"""YAML front matter: detect, split and parse it, with errors that name the file and line.

Follows Jekyll's rules (``Document::YAML_FRONT_MATTER_REGEXP``, ``Utils.has_yaml_header?``):
the file must begin with ``---`` on its first line (after an optional UTF-8 BOM); the front
matter ends at the next line that is ``---`` or ``...``. Values are read with PyYAML's safe
loader (libyaml's when available, like Jekyll's Psych), aliases expanded at most to a limit
(:func:`~deploybot.render.read.yamlload.load_yaml`). A BOM is dropped and CRLF becomes LF;
indented keys, blank lines between keys and tabs after ``key:`` parse as in Jekyll; a tab in
the indentation or a non-mapping document is a ``SourceError`` naming the file and line. A
body that starts with a ``---`` rule keeps it (the first fence line after the opening one
closes the front matter). A front matter that is never closed is no front matter, as in
Jekyll (``YAML_FRONT_MATTER_REGEXP`` does not match): the whole file is the body (its
``---`` renders as a rule) with no values, and :attr:`FrontMatter.closed` is false so the
reader can warn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from deploybot.render.model import MAX_YAML_SIZE
from deploybot.render.read.yamlload import ExpansionError, load_yaml
from deploybot.support.errors import SourceError, one_line

_OPEN_RE = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_CLOSE_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
# What YAML_FRONT_MATTER_REGEXP takes after the closing fence: ``\s*$\n?`` (Ruby's ``$``
# is any line end), so the blank lines that follow the fence are no part of the body.
_AFTER_CLOSE_RE = re.compile(r"\s*$\n?", re.MULTILINE)


@dataclass(frozen=True)
class FrontMatter:
    """A file split at its front matter.

    Attributes:
        data: the YAML mapping (empty when the front matter is empty).
        body: the text after the closing fence.
        body_line: the 1-based line of the file on which ``body`` starts.
        yaml_text: the raw YAML, for finding a key's line (see :func:`key_line`).
        closed: false when no fence closes the front matter (``data`` is empty, ``body``
            the whole file).
    """

    data: Mapping[str, Any]
    body: str
    body_line: int
    yaml_text: str
    closed: bool = True


UNCLOSED = (
    "front matter is not closed (no '---' line after the first): read as text, as Jekyll does"
)
"""The warning for a file whose front matter never closes."""


def has_front_matter(data: bytes) -> bool:
    """Return whether ``data`` begins with a front-matter fence (Jekyll's ``has_yaml_header?``)."""
    return _OPEN_RE.match(data) is not None


def decode(data: bytes, path: str) -> str:
    """Decode UTF-8 (dropping a BOM, turning CRLF into LF).

    Raises ``SourceError`` naming ``path`` and the line of the first invalid byte.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError("not valid UTF-8", path, line) from exc
    return text.replace("\r\n", "\n")


def parse_front_matter(
    data: bytes, path: str, max_yaml_size: int = MAX_YAML_SIZE
) -> FrontMatter | None:
    """Split and parse the front matter of ``data`` (the bytes of source file ``path``).

    Returns ``None`` when the file has no front matter, and an empty, unclosed
    :class:`FrontMatter` holding the whole text when no fence closes it. Raises
    ``SourceError`` (with ``path`` and the file's line number) when the YAML is malformed
    or larger than ``max_yaml_size`` with its aliases expanded (at the top-level key where
    it passes the limit), or the YAML is not a mapping.
    """
    if not has_front_matter(data):
        return None
    text = decode(data, path)
    split = _split(text)
    if split is None:
        return FrontMatter({}, text, 1, "", closed=False)
    yaml_text, body_start = split
    body_line = text.count("\n", 0, body_start) + 1
    values = _load_yaml(yaml_text, path, max_yaml_size)
    return FrontMatter(values, text[body_start:], body_line, yaml_text)


def body_text(data: bytes, path: str) -> str:
    """Return the body of the source file ``data`` (``path``) without parsing its YAML: the
    text after the front matter (:attr:`FrontMatter.body` of :func:`parse_front_matter`),
    or the whole decoded text when it has none or it is not closed. Raises ``SourceError``
    for text that is not UTF-8."""
    text = decode(data, path)
    split = _split(text) if has_front_matter(data) else None
    return text if split is None else text[split[1] :]


def _split(text: str) -> tuple[str, int] | None:
    """Return the YAML of ``text`` (which opens a front matter) and where its body starts,
    or ``None`` when no fence closes it."""
    first_nl = text.index("\n") + 1
    close = _CLOSE_RE.search(text, first_nl)
    if close is None:
        return None
    after = _AFTER_CLOSE_RE.match(text, close.start() + 3)
    return text[first_nl : close.start()], after.end() if after is not None else close.end()


def _load_yaml(yaml_text: str, path: str, max_size: int) -> Mapping[str, Any]:
    try:
        loaded = load_yaml(yaml_text, max_size)
    except yaml.MarkedYAMLError as exc:
        # Where the construct began (e.g. an unclosed quote) says more than where the
        # scanner gave up (often the end of the front matter).
        mark = exc.context_mark or exc.problem_mark
        # YAML line 0 is file line 2: the opening fence is line 1.
        line = mark.line + 2 if mark is not None else 1
        problem = exc.problem or exc.context or "malformed YAML"
        if exc.context and exc.problem:
            problem = f"{exc.problem} {exc.context}"
        tab = mark is not None and _tab_indented(yaml_text, mark.line)
        if tab and not isinstance(exc, ExpansionError):
            problem = "a tab in the indentation (YAML indents with spaces only)"
        raise SourceError(f"front matter: {problem}", path, line) from exc
    except yaml.reader.ReaderError as exc:
        message, line = reader_error(exc, yaml_text)
        raise SourceError(f"front matter: {message}", path, line + 1) from exc
    except yaml.YAMLError as exc:
        raise SourceError(f"front matter: {one_line(exc)}", path, 1) from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise SourceError(
            f"front matter must be a mapping of keys to values, not {type(loaded).__name__}",
            path,
            2,
        )
    return {str(key): value for key, value in loaded.items()}


def reader_error(exc: yaml.reader.ReaderError, text: str) -> tuple[str, int]:
    """Return ``(message, 1-based line in text)`` for PyYAML's ``ReaderError`` (a character
    YAML 1.1 does not allow, e.g. a control character): one line, naming the code point."""
    position = exc.position if isinstance(exc.position, int) else 0
    line = text.count("\n", 0, position) + 1
    char = exc.character
    code = ord(char) if isinstance(char, str) and char else int(char or 0)
    return f"character U+{code:04X} is not allowed in YAML ({exc.reason})", line


def _tab_indented(yaml_text: str, index: int) -> bool:
    lines = yaml_text.split("\n")
    if index >= len(lines):
        return False
    line = lines[index]
    return "\t" in line[: len(line) - len(line.lstrip(" \t"))]


def key_line(front: FrontMatter, key: str) -> int | None:
    """Return the 1-based file line where top-level ``key`` is set, or ``None``."""
    pattern = re.compile(rf"^[ \t]*{re.escape(key)}[ \t]*:", re.MULTILINE)
    m = pattern.search(front.yaml_text)
    if m is None:
        return None
    return front.yaml_text.count("\n", 0, m.start()) + 2
