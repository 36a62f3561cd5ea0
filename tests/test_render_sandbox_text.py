"""Layouts turning a value into text, JSON or a comparison: a small value made of shared
references (a list of ten references to a list of ten references to ...) is measured as it
would be written out before anything converts it, so it stops at the budget instead of
filling the memory (deploybot.render.theme.measure; the real CLI in a subprocess with a
timeout and a memory cap, as in test_render_sandbox)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from tests.test_render_sandbox import LIMIT, PAGE, STEPS, build_in_subprocess

# ns.a: 10 ** 9 strings of ten x once written out, made of ten lists in memory.
BOMB = (
    "{% set ns = namespace(a=['xxxxxxxxxx'] * 10) %}{% for i in range(8) %}"
    "{% set ns.a = [ns.a, ns.a, ns.a, ns.a, ns.a, ns.a, ns.a, ns.a, ns.a, ns.a] %}{% endfor %}"
)
PLAIN_BOMB = (
    "{% set a = ['xxxxxxxxxx'] * 10 %}" + "{% set a = [a, a, a, a, a, a, a, a, a, a] %}" * 9
)
# ns.b and ns.c: equal, made of distinct lists, 2 ** 40 items once written out.
TWINS = (
    "{% set ns = namespace(b=[1], c=[1]) %}{% for i in range(40) %}"
    "{% set ns.b = [ns.b, ns.b] %}{% set ns.c = [ns.c, ns.c] %}{% endfor %}"
)
# ns.t: a tuple nested 10,000 deep (hashing one nested 100,000 deep overflows the C stack).
DEEP = (
    "{% set ns = namespace(t=()) %}{% for i in range(10000) %}{% set ns.t = (ns.t,) %}{% endfor %}"
)

TEXT = r"a value as text of \d+ characters, over 50000000: \[render\] layout_max_output"
STEPS_RE, NESTED = re.escape(STEPS), "a value nested over 200 deep"


@pytest.mark.parametrize(
    ("layout", "what"),
    [
        (BOMB + "{{ ns.a|tojson|length }}", TEXT),
        (BOMB + "{{ (ns.a ~ '')|length }}", TEXT),
        (BOMB + "{{ 'zz' in ns.a|string }}", TEXT),
        (PLAIN_BOMB + "{{ a }}", TEXT),
        (BOMB + "{{ ns.a|pprint|length }}", TEXT),
        (BOMB + "{{ ns.a|join|length }}", TEXT),
        (BOMB + "{{ ns.a|map('first')|join|length }}", TEXT),
        (BOMB + "{{ '%s'|format(ns.a)|length }}", TEXT),
        (BOMB + "{{ ('%s' % ns.a)|length }}", TEXT),
        ("{{ '{}'.format(['x' * 10000000] * 6)|length }}", TEXT),
        (BOMB + "{{ ns.a|safe|length }}", TEXT),
        (BOMB + "{{ ns.a|upper|length }}", TEXT),
        (BOMB + "{{ ns.a is lower }}", TEXT),
        (BOMB + "{{ {'k': ns.a}|urlencode|length }}", TEXT),
        (BOMB + "{{ {'k': ns.a}|xmlattr|length }}", TEXT),
        (BOMB + "{{ ns.a|tojson(indent=2)|length }}", TEXT),
        ("{% include ['x' * 40000000] * 1000 %}", TEXT),
        ("{{ content.join([['x' * 10000000] * 6])|length }}", TEXT),
        (TWINS + "{{ ns.b == ns.c }}", STEPS_RE),
        (TWINS + "{{ ns.b in [ns.c] }}", STEPS_RE),
        (TWINS + "{{ [ns.b, ns.c]|unique|list|length }}", STEPS_RE),
        (TWINS + "{{ [ns.c, ns.b]|sort|length }}", STEPS_RE),
        (TWINS + "{{ [ns.b].count(ns.c) }}", STEPS_RE),
        (TWINS + "{{ ns.b is eq(ns.c) }}", STEPS_RE),
        (DEEP + "{{ ns.t in {} }}", NESTED),
        (DEEP + "{{ {ns.t: 1}|length }}", NESTED),
        (DEEP + "{{ {}[ns.t] }}", NESTED),
    ],
)
def test_text_of_shared_references_is_bounded(tmp_path: Path, layout: str, what: str) -> None:
    # what: a pattern (a value's text is refused at its estimated size, which varies)
    code, output = build_in_subprocess(tmp_path, layout)
    assert code == 1
    assert re.fullmatch(re.escape(LIMIT.format(line=1, what="\0")).replace("\0", what), output)
    assert not (tmp_path / "out").exists()


def test_ordinary_text_conversions_still_work() -> None:
    layout = (
        "{% set a = ['x', ('y', 2)] %}{{ a }}|{{ a|tojson }}|{{ a ~ '!' }}|{{ a|string|length }}"
        "|{{ {'k': [1, 2]}|pprint }}|{{ a|join('-') }}|{{ '%s'|format(a) }}|{{ '{}'.format(a) }}"
        "|{{ [[2], [1]]|sort }}|{{ [(1,), (1,)]|unique|list }}|{{ [1] in [[1]] }}"
        "|{{ page.title in site.pages|map(attribute='title') }}|{{ {(1, 2): 3}[(1, 2)] }}"
    )
    files = {"theme/page.html": layout.encode(), "index.md": PAGE}
    built = build_site(MemoryTree(files), RenderOptions(theme="theme"))
    assert built.files["index.html"].decode() == (
        "[&#39;x&#39;, (&#39;y&#39;, 2)]|"
        '["x", ["y", 2]]|'
        "[&#39;x&#39;, (&#39;y&#39;, 2)]!|15|"
        "{&#39;k&#39;: [1, 2]}|x-(&#39;y&#39;, 2)|"
        "[&#39;x&#39;, (&#39;y&#39;, 2)]|[&#39;x&#39;, (&#39;y&#39;, 2)]"
        "|[[1], [2]]|[(1,)]|True|True|3"
    )
