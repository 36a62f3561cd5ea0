"""What each Jinja2 filter and test does with its input, for the layout budget
(:mod:`deploybot.render.theme.sandbox`): walks its items, compares them, or turns them into text.

Anything not listed (a filter added later, a Jekyll filter) counts as making text: the
strictest kind, measured with :func:`~deploybot.render.theme.measure.text_size`. The
kinds follow Jinja2 3.1's ``filters.py`` and ``tests.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sized
from typing import Any, Protocol, cast

import jinja2
from jinja2.filters import make_attrgetter

from deploybot.render.theme.measure import compared_steps

FILTER_KINDS: Mapping[str, str] = {
    # cheap: constant work, whatever the input
    **dict.fromkeys(("length", "count", "first", "default", "d", "attr"), "cheap"),
    # items: walks the input's items (one step each) without comparing or printing them
    **dict.fromkeys(
        (
            "last", "list", "map", "select", "reject", "selectattr", "rejectattr", "batch",
            "slice", "reverse", "items", "random", "sum", "abs", "round", "int", "float",
            "filesizeformat",
        ),
        "items",
    ),
    # compare: sorts, hashes or compares the items themselves
    **dict.fromkeys(("sort", "unique", "min", "max", "groupby", "dictsort"), "compare"),
}  # fmt: skip
"""Filter name -> ``"cheap"``, ``"items"`` or ``"compare"``; any other makes text."""

TEST_KINDS: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "defined", "undefined", "none", "boolean", "false", "true", "integer", "float",
            "string", "mapping", "number", "sequence", "iterable", "callable", "sameas",
            "escaped", "filter", "test", "odd", "even",
        ),
        "cheap",
    ),
    **dict.fromkeys(
        (
            "in", "==", "eq", "equalto", "!=", "ne", ">", "gt", "greaterthan", ">=", "ge",
            "<", "lt", "lessthan", "<=", "le",
        ),
        "compare",
    ),
}  # fmt: skip
"""Test name -> ``"cheap"`` or ``"compare"``; any other (``lower``, ``upper``,
``divisibleby``: ``str % value``) makes text."""

ITERATING_FILTERS = frozenset({"join", "urlencode"})
"""Text filters that turn each item of an iterator into text: the iterator is made a list
first, so its items are measured."""

TEXT_HOW: Mapping[str, str] = {"tojson": "json", "pprint": "pprint", "urlencode": "url"}
"""Text filters whose text is not ``str``'s (see ``layout_measure.text_size``)."""

MAX_NAME = 4096
"""The longest layout name ``{% include %}`` and the like may ask for (Linux's PATH_MAX)."""

_ESCAPES = {"&": 4, "<": 3, ">": 3, '"': 4, "'": 4}  # markupsafe: &amp; &lt; &gt; &#34; &#39;


def escaped_size(text: str) -> int:
    """Return the length of ``markupsafe.escape(text)``, without making it."""
    return len(text) + sum(extra * text.count(c) for c, extra in _ESCAPES.items())


class _Env(Protocol):
    def getitem(self, obj: Any, argument: Any) -> Any: ...


def compare_steps(env: _Env, name: str, args: tuple[Any, ...], kw: Mapping[str, Any]) -> int:
    """Return the steps a comparing filter (``sort``, ``unique``…) can cost on ``args[0]``:
    the items it compares (every shared reference counted), times log2 of their number
    (a sort compares each about that often). With an ``attribute``, only the values it
    picks are compared. Raises ``LayoutLimitError`` (see ``layout_measure.measure``)."""
    items = args[0]
    count = len(items) if isinstance(items, Sized) else 1
    position = {"groupby": 1, "sort": 3}.get(name, 2)  # after value (and reverse, for sort)
    attribute = kw.get("attribute", args[position] if len(args) > position else None)
    if attribute is not None and name != "dictsort" and not isinstance(items, Mapping):
        get = make_attrgetter(cast(jinja2.Environment, env), attribute)
        steps = sum(compared_steps(get(item)) + 1 for item in items)
    else:
        steps = compared_steps(items)
    return steps * max(1, math.ceil(math.log2(count + 1)))
