"""deploybot.support.lazy_regex: a pattern compiled at its first use, then kept."""

from __future__ import annotations

import re

import pytest

from deploybot.support.lazy_regex import LazyPattern


def test_a_lazy_pattern_compiles_at_its_first_use_and_answers_as_re_does() -> None:
    lazy = LazyPattern(r"(\d+)-(\d+)", re.ASCII)
    assert lazy._compiled is None  # nothing compiled yet
    assert lazy.search("a 12-34 b") is not None
    assert lazy.compiled is re.compile(r"(\d+)-(\d+)", re.ASCII)
    assert lazy.match("12-34 b") is not None and lazy.fullmatch("12-34 b") is None
    assert lazy.findall("1-2 3-4") == [("1", "2"), ("3", "4")]
    assert [m.group(0) for m in lazy.finditer("1-2 3-4")] == ["1-2", "3-4"]
    assert lazy.sub("x", "1-2 3-4", count=1) == "x 3-4"
    assert lazy.pattern == r"(\d+)-(\d+)"


def test_a_bad_lazy_pattern_fails_when_first_used() -> None:
    lazy = LazyPattern("(")
    with pytest.raises(re.error):
        lazy.search("x")
