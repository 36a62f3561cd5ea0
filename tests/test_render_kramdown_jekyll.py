"""kramdown constructs rendered as real Jekyll renders them: one page per construct.

The site is ``tests/fixtures/jekyll/kramdown/`` (each ``<case>.md`` has ``layout: null``, so
a page's output is its content alone) and ``expected/<case>.html`` is what Jekyll 4.3.1
(kramdown 2.4.0, kramdown-parser-gfm 1.1.0, jekyll-toc 0.18.0) wrote for it; regenerate with
``python -m tests.make_kramdown_fixtures``. Jekyll is not needed here.

Whitespace normalisation (:func:`normalise`), the least that hides kramdown's indentation:
each line's leading and trailing whitespace and blank lines are ignored, and a run of two
or more spaces between two tags is dropped (kramdown indents a closing tag after a code
block inside block HTML: ``</div>  </div>``). Everything else must be equal.

Constructs deploybot does not render as kramdown does are listed in :data:`KNOWN_GAPS`
with the reason; they are strict xfails, so one that starts matching fails the suite until
it is moved out of the list.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import DirTree

SITE = Path(__file__).resolve().parent / "fixtures" / "jekyll" / "kramdown"
CASES = sorted(p.stem for p in (SITE / "expected").glob("*.html"))
KNOWN_GAPS = {
    "code-spans": "a lone backtick between spaces is text in kramdown, a code span in mistune",
    "lists-marker-change": "a list whose marker changes (- then *) is one list in kramdown",
    "smart-quotes": "<<word>>: mistune reads <word> as an HTML tag before typography",
    "span-ial-emphasis": "a code span's IAL class goes before highlighter-rouge in kramdown",
}
_BETWEEN_TAGS = re.compile(r">[ \t]{2,}<")


def normalise(html: str) -> str:
    """Return ``html`` with the whitespace kramdown and deploybot may lay out differently
    removed (module docstring)."""
    html = _BETWEEN_TAGS.sub("><", html)
    lines = (line.strip() for line in html.strip().splitlines())
    return "\n".join(line for line in lines if line)


@cache
def built() -> dict[str, str]:
    """Return deploybot's output for every case page (case -> HTML)."""
    build = build_site(DirTree(SITE), RenderOptions())
    return {case: build.files[f"{case}.html"].decode("utf-8") for case in CASES}


def test_known_gaps_are_cases() -> None:
    assert set(KNOWN_GAPS) <= set(CASES)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[c]))
        if c in KNOWN_GAPS
        else c
        for c in CASES
    ],
)
def test_page_renders_as_jekyll(case: str) -> None:
    expected = (SITE / "expected" / f"{case}.html").read_text(encoding="utf-8")
    assert normalise(built()[case]) == normalise(expected)


def test_normalise_keeps_single_spaces_between_tags() -> None:
    assert normalise("<b>a</b> <i>b</i>\n\n  <p>x</p>  ") == "<b>a</b> <i>b</i>\n<p>x</p>"
    assert normalise("</code></pre></div>  </div>") == "</code></pre></div></div>"
