"""The budget of one layout render and the checks that refuse, before they allocate, the
operations whose result would not fit (used by :mod:`deploybot.render.theme.sandbox`).

Sizes are in characters of output: a string's length, :data:`ITEM_SIZE` per item of a
container. Steps are the unit of work: one per item a container holds, one per
:data:`CHARS_PER_STEP` characters of a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import reduce
from string import Formatter
from typing import Any, Protocol, cast

import jinja2
from jinja2.filters import make_attrgetter
from jinja2.runtime import Context

from deploybot.render.model import LayoutLimits

CHARS_PER_STEP = 1000
"""Characters of a string that cost one step (string work is C-fast; loops are not)."""
ITEM_SIZE = 8
"""What one item of a list, tuple, set or mapping counts as, in characters of output."""
MAX_INT_BITS = 1 << 16
"""The largest integer a layout may make (65,536 bits, about 19,700 digits)."""
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


class LayoutLimitError(Exception):
    """A layout ran past a limit of :class:`~deploybot.render.model.LayoutLimits`; the
    message says which (e.g. ``10000000 steps: [render] layout_max_steps``)."""


class Budget:
    """What the current render has used of ``limits``; each method raises
    :class:`LayoutLimitError` past a limit."""

    def __init__(self, limits: LayoutLimits) -> None:
        self.limits = limits
        self.steps = 0
        self.output = 0
        self.depth = 0

    def charge(self, steps: int) -> None:
        """Use ``steps`` steps."""
        self.steps += steps
        if self.steps > self.limits.max_steps:
            raise LayoutLimitError(f"{self.limits.max_steps} steps: [render] layout_max_steps")

    def fits(self, size: int, what: str) -> None:
        """Refuse a value of ``size`` characters over the output limit (``what`` it is)."""
        if size > self.limits.max_output:
            raise LayoutLimitError(
                f"{what} of {size} characters, over {self.limits.max_output}: "
                "[render] layout_max_output"
            )

    def write(self, size: int) -> None:
        """Count ``size`` characters written."""
        self.output += size
        if self.output > self.limits.max_output:
            raise LayoutLimitError(
                f"{self.limits.max_output} characters written: [render] layout_max_output"
            )


def size_of(value: object) -> int:
    """Return ``value``'s size in characters of output: a string's length, 8 per item of a
    container (:data:`ITEM_SIZE`), 0 for anything else."""
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if isinstance(value, list | tuple | dict | set | frozenset | range):
        return ITEM_SIZE * len(value)
    return 0


def steps_of(value: object) -> int:
    """Return the steps handling ``value`` costs: one per item of a container, one per
    :data:`CHARS_PER_STEP` characters of a string.

    Only the top level counts, read in constant time (``len``): this prices what touches a
    value's own items (passing it on, iterating it, ``+``, a filter over its items). An
    operation that recurses into nested items (``==``, ``in``, hashing, sorting) is priced
    by :func:`~deploybot.render.theme.measure.compared_steps` instead, which walks the
    whole value and counts every shared reference: ``[a] * 10`` nested nine deep is ten
    items here but 10⁹ compared there."""
    if isinstance(value, str | bytes | bytearray):
        return len(value) // CHARS_PER_STEP
    return size_of(value) // ITEM_SIZE


class LayoutGuard(Protocol):
    """What the prechecks need of the sandbox."""

    budget: Budget

    def guard_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Yield ``iterable``'s items, charging a step each."""
        ...

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply a guarded binary operator."""
        ...


def check_repeat(budget: Budget, left: Any, right: Any) -> None:
    """Refuse ``sequence * n`` and ``int * int`` whose result would not fit."""
    for seq, count in ((left, right), (right, left)):
        if isinstance(count, int) and size_of(seq):
            budget.fits(size_of(seq) * max(count, 0), "a repeated value")
    both_ints = isinstance(left, int) and isinstance(right, int)
    if both_ints and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise LayoutLimitError(f"a number over {MAX_INT_BITS} bits")


def check_power(left: Any, right: Any) -> None:
    """Refuse ``int ** int`` whose result would be over :data:`MAX_INT_BITS` (a bound from
    below; the result is checked again once made)."""
    both_ints = isinstance(left, int) and isinstance(right, int)
    if both_ints and right > 0 and max(left.bit_length() - 1, 0) * right > MAX_INT_BITS:
        raise LayoutLimitError(f"a number over {MAX_INT_BITS} bits")


def check_percent(budget: Budget, fmt: str) -> None:
    """Refuse ``%`` formats with a ``*`` width or a width/precision past the output limit."""
    for m in _PERCENT_RE.finditer(fmt):
        for number in (m.group(1), m.group(2)):
            if number == "*":
                raise LayoutLimitError("a '*' width in a % format")
            if number:
                budget.fits(int(number), "a % format width")


def check_format_spec(budget: Budget, fmt: str) -> None:
    """Refuse ``str.format`` specs with a nested field or a width past the output limit."""
    for _, _, spec, _ in Formatter().parse(fmt):
        if spec and "{" in spec:
            raise LayoutLimitError("a width from an argument in a format string")
        for number in re.findall(r"\d+", spec or ""):
            budget.fits(int(number), "a format width")


def check_arguments(
    budget: Budget, obj: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    """Check a Python callable's arguments (the caller charges them). For a method of a
    string, bytes or number, refuse a count or width past the output limit (``center``,
    ``ljust``, ``zfill``, ``to_bytes``…) and a ``replace``/``join``/``expandtabs`` whose
    result would not fit. Returns ``args`` (``join``'s iterable as a list, so its size is
    known)."""
    every = (*args, *kwargs.values())
    owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", "")
    if not isinstance(owner, str | bytes | bytearray | int):
        return args
    for value in every:
        if isinstance(value, int) and not isinstance(value, bool):
            budget.fits(abs(value), "a count or width")
    if isinstance(owner, str) and args:
        if name == "join":
            items = list(args[0])
            budget.charge(len(items))
            budget.fits(len(owner) * len(items), "a join")
            return (items, *args[1:])
        if name == "replace" and len(args) >= 2:
            check_replace(budget, owner, args[0], args[1])
        if name == "expandtabs" and isinstance(args[0], int):
            budget.fits(len(owner) + owner.count("\t") * args[0], "expandtabs")
    return args


def check_replace(budget: Budget, text: Any, old: Any, new: Any) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        count = text.count(old) if old else len(text) + 1
        budget.fits(len(text) + count * max(len(new) - len(old), 0), "a replace")


Args = tuple[tuple[Any, ...], dict[str, Any]]
Precheck = Callable[[LayoutGuard, Context, tuple[Any, ...], dict[str, Any]], Args]


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _pre_width(index: int, name: str, unit: int) -> Precheck:
    """Refuse an integer argument (a width, or a count of ``unit``-sized items) past the
    output limit; charge it as steps."""

    def check(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
        width = _arg(args, kw, index, name)
        if isinstance(width, int):
            env.budget.fits(abs(width) * unit, f"{name} {width}")
            env.budget.charge(abs(width) if unit == ITEM_SIZE else abs(width) // CHARS_PER_STEP)
        return args, kw

    return check


def _pre_width_of_text(unit: int) -> Precheck:
    """Refuse a filter making ``unit``-sized items of each character of a string (``list``)
    when the result could not fit."""

    def check(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
        if isinstance(args[0], str):
            env.budget.fits(len(args[0]) * unit, "a list of characters")
        return args, kw

    return check


def _pre_indent(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
    width = _arg(args, kw, 1, "width")
    lines = str(args[0]).count("\n") + 1
    each = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    env.budget.fits(len(str(args[0])) + lines * abs(each), "an indent")
    return args, kw


def _pre_replace(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
    check_replace(env.budget, args[0], _arg(args, kw, 1, "old"), _arg(args, kw, 2, "new"))
    return args, kw


def _pre_join(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
    items = list(args[0])
    env.budget.charge(len(items))
    env.budget.fits(len(str(_arg(args, kw, 1, "d") or "")) * len(items), "a join")
    return (items, *args[1:]), kw


def _pre_format(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
    check_percent(env.budget, str(args[0]))
    return args, kw


def _pre_spread(*where: tuple[int, str]) -> Precheck:
    """Refuse text inserted at every line or link (``wordwrap``, ``urlize``) when the
    result could not fit."""

    def check(env: LayoutGuard, _: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
        for index, name in where:
            extra = _arg(args, kw, index, name)
            if isinstance(extra, str):
                env.budget.fits((len(str(args[0])) + 1) * (len(extra) + 1), f"{name} text")
        return args, kw

    return check


def _pre_sum(env: LayoutGuard, ctx: Context, args: tuple[Any, ...], kw: dict[str, Any]) -> Args:
    """``sum`` of strings or lists is quadratic in C: add them with the guarded ``+``."""
    start = _arg(args, kw, 2, "start")
    if start is None or isinstance(start, int | float):
        return args, kw
    items: Iterable[Any] = args[0]
    attribute = _arg(args, kw, 1, "attribute")
    if attribute is not None:
        items = map(make_attrgetter(cast(jinja2.Environment, env), attribute), items)
    total = reduce(lambda a, b: env.call_binop(ctx, "+", a, b), env.guard_iter(items), start)
    return ([total],), {"start": start[:0]}  # sum([total], start=empty) is total


PRECHECKS: Mapping[str, Precheck] = {
    "center": _pre_width(1, "width", 1),
    "batch": _pre_width(1, "linecount", ITEM_SIZE),
    "slice": _pre_width(1, "slices", ITEM_SIZE),
    "indent": _pre_indent,
    "replace": _pre_replace,
    "join": _pre_join,
    "format": _pre_format,
    "wordwrap": _pre_spread((3, "wrapstring")),
    "urlize": _pre_spread((3, "target"), (4, "rel")),
    "list": _pre_width_of_text(ITEM_SIZE),
    "sum": _pre_sum,
}
"""Filters whose result can be far larger than their input, and how each is checked."""
