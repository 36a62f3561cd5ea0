"""Regular expressions compiled at their first use, not when their module is imported.

A module-level ``re.compile`` runs in every process that imports the module, used or not:
Ruby's ``Date._parse`` (:mod:`deploybot.render.read.rubytime`, some thirty patterns, about
3 ms) is needed only for a date YAML did not read, and every ``python -m deploybot`` pays
for its imports. :class:`LazyPattern` stands where the compiled pattern stood and has the
methods deploybot calls on one; the first call compiles it (``re``'s own cache then
holds it too).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """``re.compile(source, flags)``, done at the first call of a method (or of
    :attr:`compiled`). Raises ``re.error`` then, not when it is made, for a bad pattern."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        """The source of the pattern, as ``re.Pattern.pattern``."""
        return self._source

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """As ``re.Pattern.search``."""
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """As ``re.Pattern.match``."""
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        """As ``re.Pattern.fullmatch``."""
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        """As ``re.Pattern.finditer``."""
        return self.compiled.finditer(string)

    def findall(self, string: str) -> list[Any]:
        """As ``re.Pattern.findall``."""
        return self.compiled.findall(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """As ``re.Pattern.sub``."""
        return self.compiled.sub(repl, string, count)
