"""How big a layout's value is once written out: text, JSON, or compared item by item.

A layout can build, in a few steps and a few kilobytes, a list of ten references to a list
of ten references to ... a string: ``str()``, ``tojson``, ``pprint`` or ``==`` then meet
10⁹ strings. :func:`measure` walks the value's graph once per distinct object (memoised by
identity, like :func:`deploybot.render.read.yamlload.expanded_size` for YAML aliases) and
returns its :class:`Extent` *as if every shared reference were written out*, so the sandbox
(:mod:`deploybot.render.theme.sandbox`) refuses the conversion before it allocates anything.

What is walked: ``list``, ``tuple``, ``set``, ``frozenset``, ``dict`` (and subclasses),
``dict`` views, Jinja2's ``namespace`` and a bound Python method (whose ``repr`` shows its
object); everything else is a leaf. Iterators are never consumed.
"""

from __future__ import annotations

import re
from collections.abc import ItemsView, KeysView, ValuesView
from dataclasses import dataclass
from types import MethodType
from typing import Any

from jinja2.runtime import Undefined
from jinja2.utils import Namespace
from markupsafe import Markup

from deploybot.render.liquid.excerpt import Excerpt
from deploybot.render.theme.budget import CHARS_PER_STEP, LayoutLimitError

MAX_NESTING = 200
"""The deepest a value may nest to be printed, compared or hashed (Python's own ``repr``
gives up near 1,000; hashing a deeper tuple overflows the C stack)."""
OTHER_SIZE = 256
"""Characters counted for the text of any other object (a date, a macro, a generator: their
``repr`` is short and does not show other values)."""
_SPECIALS = "\"'\\<>&"
_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Extent:
    """A value's size once written out.

    ``items``: objects in it (one per container and leaf, plus one per
    :data:`~.budget.CHARS_PER_STEP` characters of a string): the steps comparing,
    hashing or converting it costs. ``chars``: an upper bound of the length of its ``str``,
    ``repr`` or JSON text, HTML-escaped (0 unless measured ``as_text``). ``depth``: how deep
    containers nest (0 for a leaf). ``indent``: the widest left margin ``pprint`` can give a
    line of it (keys' text plus one per level).
    """

    items: int
    chars: int
    depth: int
    indent: int


def text_bound(text: str) -> int:
    """Return an upper bound of the length of ``text`` as a ``repr`` or a JSON string
    (ASCII-only, as Jinja2's ``tojson`` writes it), HTML-escaped: quotes, plus 5 for each
    character that can become an escape (``\\x00``, ``\\u003c``, ``&#39;``…) and 11 for each
    non-ASCII one (a JSON surrogate pair is 12 characters)."""
    size = len(text) + 12 + 5 * sum(text.count(c) for c in _SPECIALS)
    if not text.isprintable():
        size += 5 * _CONTROLS.subn("", text)[1]
    if not text.isascii():
        size += 11 * (len(text) - len(text.encode("ascii", "ignore")))
    return size


_WALKED = (
    dict,
    list,
    tuple,
    set,
    frozenset,
    ItemsView,
    KeysView,
    ValuesView,
    Namespace,
    MethodType,
)
"""What :func:`_parts` walks into."""


def _leaf(value: object, as_text: bool) -> tuple[int, int]:
    """``(items, chars)`` of a value :func:`measure` does not walk into."""
    if isinstance(value, str):
        chars = (text_bound(value) + (8 if isinstance(value, Markup) else 0)) if as_text else 0
        return 1 + len(value) // CHARS_PER_STEP, chars
    if isinstance(value, bytes | bytearray):
        return 1 + len(value) // CHARS_PER_STEP, 5 * len(value) + 12
    if isinstance(value, bool) or value is None:
        return 1, 5
    if isinstance(value, int):
        return 1, value.bit_length() * 3 // 10 + 3
    if isinstance(value, Excerpt):  # its repr; its str() is a rendered page, bounded there
        return 1 + len(value.source) // CHARS_PER_STEP, text_bound(value.source) + 9
    if isinstance(value, Undefined):
        return 1, 16
    return 1, OTHER_SIZE


def _parts(value: object, as_text: bool) -> tuple[list[Any], bool, int] | None:
    """``(children, paired, overhead)`` of a value :func:`measure` walks into, else None.

    ``paired``: the children are key, value, key, value… ``as_text``: read a tracked
    mapping through its own methods (so the dependencies a conversion records are recorded,
    and a lazy one is loaded first); a comparison reads the stored items as C does.
    """
    if isinstance(value, dict):
        pairs = value.items() if as_text else dict.items(value)
        return [part for pair in pairs for part in pair], True, 16
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value) if as_text or not isinstance(value, list) else list.copy(value)
        return items, False, 16 + 8 * len(getattr(value, "_fields", ()))
    if isinstance(value, ItemsView):
        return [part for pair in value for part in pair], True, 16
    if isinstance(value, KeysView | ValuesView):
        return list(value), False, 16
    if isinstance(value, Namespace):
        return [value._Namespace__attrs], False, 16
    if isinstance(value, MethodType):
        return [value.__self__], False, 64 + len(value.__qualname__)
    return None


def measure(value: object, *, as_text: bool) -> Extent:
    """Return ``value``'s :class:`Extent`, every shared reference counted where it occurs.

    Each distinct object is visited once, so the cost is linear in the objects in memory,
    not in the written-out size. ``as_text`` also bounds the text (``chars``; otherwise 0).

    Raises:
        LayoutLimitError: the value nests deeper than :data:`MAX_NESTING`, or contains itself.
    """
    if not isinstance(value, _WALKED):  # a leaf (most values): no walk to set up
        items, chars = _leaf(value, as_text)
        return Extent(items, chars, 0, 0)
    done: dict[int, Extent] = {}
    keep: list[object] = []  # every object measured stays alive, so no id is reused
    on_path: set[int] = set()
    stack: list[tuple[object, list[Any] | None, bool, int]] = [(value, None, False, 0)]
    while stack:
        node, children, paired, overhead = stack.pop()
        key = id(node)
        if children is not None:
            on_path.discard(key)
            done[key] = _combine([done[id(c)] for c in children], paired, overhead)
            continue
        if key in done:
            continue
        keep.append(node)
        parts = _parts(node, as_text)
        if parts is None:
            items, chars = _leaf(node, as_text)
            done[key] = Extent(items, chars, 0, 0)
            continue
        if len(on_path) >= MAX_NESTING:
            raise LayoutLimitError(f"a value nested over {MAX_NESTING} deep")
        on_path.add(key)
        stack.append((node, *parts))
        for child in parts[0]:
            if id(child) in on_path:
                raise LayoutLimitError("a value that contains itself")
            if id(child) not in done:
                stack.append((child, None, False, 0))
    return done[id(value)]


def _combine(children: list[Extent], paired: bool, overhead: int) -> Extent:
    """The extent of a container of ``children`` (key, value pairs when ``paired``)."""
    items = 1 + sum(c.items for c in children)
    chars = overhead + sum(c.chars + 4 for c in children)
    depth = 1 + max((c.depth for c in children), default=0)
    if paired:
        pairs = zip(children[::2], children[1::2], strict=True)
        indent = max((k.chars + 2 + v.indent for k, v in pairs), default=0)
    else:
        indent = 1 + max((c.indent for c in children), default=0)
    return Extent(items, chars, depth, indent)


_SCALARS = (str, int, float, type(None))


def compared_steps(value: object) -> int:
    """Return the steps comparing or hashing ``value`` can cost: its items, every shared
    reference counted (a string: one per :data:`~.budget.CHARS_PER_STEP` characters).
    Raises ``LayoutLimitError`` as :func:`measure`."""
    if isinstance(value, _SCALARS):
        return len(value) // CHARS_PER_STEP if isinstance(value, str) else 0
    return measure(value, as_text=False).items


def text_size(value: object, how: str = "str", indent: int = 0) -> tuple[int, int]:
    """Return ``(steps, characters)`` of ``value`` turned into text: ``how`` is ``"str"``
    (``str``, ``repr``, HTML-escaped), ``"json"`` (Jinja2's ``tojson``, ``indent`` spaces a
    level), ``"pprint"`` or ``"url"`` (percent-encoded). A string is its own length as
    ``"str"``. Raises ``LayoutLimitError`` as :func:`measure`."""
    if how == "str" and isinstance(value, str):
        return len(value) // CHARS_PER_STEP, len(value)
    extent = measure(value, as_text=True)
    chars = extent.chars
    if how == "json" and indent:
        chars += 2 * extent.items * ((extent.depth + 1) * indent + 2)
    elif how == "pprint":  # every line can carry the widest margin
        chars = (chars + extent.items) * (extent.indent + 4)
    elif how == "url":
        chars *= 3
    return extent.items, chars
