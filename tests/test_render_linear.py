"""Parse work stays linear: each pathological body does at most
:data:`~tests.pathological.LINEAR_LIMIT` times more work at 8 times its size (linear: about
8; quadratic: 64; cubic: 512), measured as a ratio of CPU time per call by
:func:`tests.pathological.work_growth` in a child process. The ratio does
not depend on the machine's speed or load, so nothing here asserts a speed; the child's
time bound is only a safety net, so that a hang fails instead of stopping the suite. The
speeds themselves are measured by ``python -m tests.bench.render_limits`` (``make bench``).
"""

from __future__ import annotations

from typing import Any

import pytest

from deploybot.render.markdown.kramdown.attrs import parse_attribute_list
from deploybot.render.markdown.kramdown.links import angle_spaced_urls
from tests.pathological import CASES, HANG_S, render_body, run_in_child, work_growth
from tests.pathological import LINEAR_LIMIT as LIMIT

SMALL = 5_000


def _growth(fn: Any, small: str, large: str) -> float:
    return float(run_in_child(HANG_S, work_growth, fn, (small,), (large,)))


def _body_growth(name: str, size: int) -> float:
    return _growth(render_body, CASES[name](size), CASES[name](8 * size))


@pytest.mark.parametrize("name", sorted(CASES))
def test_pathological_body_renders_in_linear_work(name: str) -> None:
    growth = _body_growth(name, SMALL)
    assert growth < LIMIT, f"{name!r}: x{growth:.1f} the work at 8x the size"


def test_long_attribute_list_of_unclosed_values_parses_in_linear_work() -> None:
    # Every value's closing quote is followed by "\" rather than a space: kramdown's regex
    # then searched to the end of the list again from each value (quadratic).
    growth = _growth(parse_attribute_list, 'a="\\} ' * 2_500, 'a="\\} ' * 20_000)
    assert growth < LIMIT


@pytest.mark.parametrize("name", ["table cell of dashes", "table cell of - -"])
def test_long_table_row_of_dashes_parses_in_linear_work(name: str) -> None:
    # A row that is almost a separator line: the separator regex backtracked over the
    # dashes (quadratic; 7 s at 40,000, minutes at 200,000).
    assert _body_growth(name, 25_000) < LIMIT


def test_extension_start_tags_without_a_closing_brace_parse_in_linear_work() -> None:
    # Each "{::comment x " searched to the end of the paragraph for a "}" (quadratic: 4 s at
    # 40,000 characters, minutes at 200,000).
    assert _body_growth("{::comment x run", 25_000) < LIMIT


def test_a_long_block_quote_parses_in_linear_work() -> None:
    # mistune joined a quote's lines with += (quadratic: 10 s at 1 MB, 40 s at 2 MB); the
    # copying outweighs the rest of the parse only at megabytes, hence the size (with +=
    # back: x35 from 250 KB to 2 MB; x21 from 125 KB to 1 MB).
    assert _body_growth("> blank lines", 250_000) < LIMIT


@pytest.mark.parametrize("unit", ["](", "[a](b c ", "[a](b", "](" + " w" * 40])
def test_unclosed_link_urls_with_spaces_are_looked_for_in_linear_work(unit: str) -> None:
    # kramdown takes a URL up to its balancing ")": a scan from every "](" to the end of
    # the paragraph was quadratic.
    growth = _growth(angle_spaced_urls, unit * 2_000 + " )", unit * 16_000 + " )")
    assert growth < LIMIT, f"x{growth:.1f} the work at 8x the size"
