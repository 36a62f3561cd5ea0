"""Parse time stays linear: each pathological body of 40,000 characters renders well within
a generous bound (a child process, killed at the bound, so a regression fails instead of
hanging the suite). The growth ratios themselves are measured by
``python -m tests.bench.render_limits`` (``make bench``), not here.
"""

from __future__ import annotations

import pytest

from deploybot.render.markdown.kramdown.attrs import parse_attribute_list
from tests.pathological import CASES, render_case, run_bounded

SIZE = 40_000
BOUND_S = 8.0  # linear code renders each case in well under a second


@pytest.mark.parametrize("name", sorted(CASES))
def test_pathological_body_renders_in_linear_time(name: str) -> None:
    assert run_bounded(BOUND_S, render_case, name, SIZE) is not None, f"{name!r}: over {BOUND_S} s"


def test_long_attribute_list_of_unclosed_values_parses_in_linear_time() -> None:
    # Every value's closing quote is followed by "\" rather than a space: kramdown's regex
    # then searched to the end of the list again from each value (quadratic).
    body = 'a="\\} ' * 20_000
    assert run_bounded(BOUND_S, parse_attribute_list, body) is not None


@pytest.mark.parametrize("name", ["table cell of dashes", "table cell of - -"])
def test_long_table_row_of_dashes_parses_in_linear_time(name: str) -> None:
    # A row that is almost a separator line: the separator regex backtracked over the
    # dashes (quadratic; 7 s at 40,000, minutes at 200,000).
    assert run_bounded(BOUND_S, render_case, name, 200_000) is not None


def test_extension_start_tags_without_a_closing_brace_parse_in_linear_time() -> None:
    # Each "{::comment x " searched to the end of the paragraph for a "}" (quadratic: 4 s at
    # 40,000 characters, minutes at 200,000).
    assert run_bounded(BOUND_S, render_case, "{::comment x run", 200_000) is not None


def test_a_long_block_quote_parses_in_linear_time() -> None:
    # mistune joined a quote's lines with += (quadratic: 10 s at 1 MB, 40 s at 2 MB).
    assert run_bounded(BOUND_S, render_case, "> blank lines", 2_000_000) is not None
