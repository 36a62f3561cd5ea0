"""Layouts are untrusted code: a Jinja2 sandbox with a budget for every render.

Anyone who can push to the source repository writes the theme's layouts, so layouts run in
:class:`LayoutSandbox`, Jinja2's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`
(no ``_``/``__`` attributes, no function globals, no mutation of lists and dicts; see
Jinja2's "Sandbox" documentation) without the ``lipsum`` global (random text of any size),
plus deterministic budgets per render, so that no layout can hang or exhaust the build
(:class:`~deploybot.render.model.LayoutLimits`, the ``[render] layout_max_*`` keys):

- *steps*: one per loop iteration, call (macro, ``caller()``, ``loop()``, a block, a Python
  method), filter, test, operator and comparison, plus one per item of a list or mapping
  and per :data:`CHARS_PER_STEP` characters of a string each of them handles or makes. A
  code generator (:class:`_CodeGenerator`) puts the count into every ``for`` loop, so a loop
  that writes nothing is stopped as surely as one that writes;
- *output*: the characters written, in total (into the page, and into ``{% set %}`` blocks,
  macros and filter blocks on the way) and in any one value a layout makes. Operations whose
  result size is known in advance (``'x' * n``, ``** n``, ``center(n)``, ``replace``,
  ``join``, ``batch``, ``%`` and ``format`` widths…) are refused before they allocate;
- *text*: before anything turns a value that is not a string into text (printing it, ``~``,
  ``%``, ``format``, a filter such as ``string``, ``tojson``, ``pprint`` or ``join``, a
  test such as ``lower``, a layout name), its text is measured as if every shared
  reference were written out (:mod:`.measure`), and refused past the output limit;
  comparing, sorting or hashing a value (``==``, ``in``, ``sort``, ``unique``, a dict key,
  a method's arguments) costs a step per item it holds, counted the same way. Which
  filters and tests make text or compare is :mod:`.kinds`;
- *depth*: calls nested in calls (macro and ``loop()`` recursion). Deeper nesting Python
  itself cannot take (an ``{% include %}`` of itself) ends as a ``RecursionError``, which
  :func:`deploybot.render.theme.layouts.render_template` reports like a limit.

Past a budget, :class:`LayoutLimitError` is raised; the caller names the layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache, wraps
from typing import Any, cast

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, operators
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, Context, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup, escape

from deploybot.render.model import LayoutLimits
from deploybot.render.theme.budget import (
    CHARS_PER_STEP,
    MAX_INT_BITS,
    PRECHECKS,
    Budget,
    LayoutLimitError,
    check_arguments,
    check_format_spec,
    check_percent,
    check_power,
    check_repeat,
    size_of,
    steps_of,
)
from deploybot.render.theme.kinds import (
    FILTER_KINDS,
    ITERATING_FILTERS,
    MAX_NAME,
    TEST_KINDS,
    TEXT_HOW,
    compare_steps,
    escaped_size,
)
from deploybot.render.theme.measure import compared_steps, text_size

__all__ = ["CHARS_PER_STEP", "LayoutLimitError", "LayoutSandbox"]

_JINJA_CALLABLES = (Macro, LoopContext, BlockReference)


class _CodeGenerator(CodeGenerator):
    """Jinja2's code generator with the budget's checks compiled in (see the module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id -> (node, the LayoutSandbox method its value goes through)
        self._guarded: dict[int, tuple[nodes.Node, str]] = {}

    def _guard(self, node: nodes.Node, method: str) -> None:
        self._guarded[id(node)] = (node, method)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        """Visit ``node``, wrapped in ``environment.METHOD(...)`` when it is guarded: a
        loop's iterable (``guard_iter``), an operand of ``~`` (``textual``), a key of a dict
        display (``charged``: it is hashed)."""
        if id(node) not in self._guarded:
            return super().visit(node, *args, **kwargs)
        self.write(f"environment.{self._guarded[id(node)][1]}(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        # A recursive loop's later levels (loop(children)) are guarded in LayoutSandbox.call.
        self._guard(node.iter, "guard_iter")
        super().visit_For(node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        for pair in node.items:
            self._guard(pair.key, "charged")
        super().visit_Dict(node, frame)

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        # Literal text is output as constants; what expressions write is counted by finalize.
        literal = sum(len(n.data) for n in node.nodes if isinstance(n, nodes.TemplateData))
        if literal:
            self.writeline(f"environment.wrote({literal})")
        super().visit_Output(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        for operand in node.nodes:
            self._guard(operand, "textual")
        self.write("environment.guard_value(")
        super().visit_Concat(node, frame)
        self.write(")")

    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if not isinstance(node.arg, nodes.Slice):  # a slice copies; an index does not
            super().visit_Getitem(node, frame)
            return
        self.write("environment.guard_value(")
        super().visit_Getitem(node, frame)
        self.write(")")

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        self.write("(environment.charged(")
        self.visit(node.expr, frame)
        self.write(")")
        for op in node.ops:
            self.visit(op, frame)
        self.write(")")

    def visit_Operand(self, node: nodes.Operand, frame: Frame) -> None:
        self.write(f" {operators[node.op]} environment.charged(")
        self.visit(node.expr, frame)
        self.write(")")


class LayoutSandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox with the budgets of the module doc.

    Call :meth:`start_render` before each top-level render (a fresh budget); rendering
    raises :class:`LayoutLimitError` past a limit and ``jinja2.SecurityError`` for what the
    sandbox forbids. Filters and tests added after construction are not guarded: add them
    with :meth:`add_filter`.
    """

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def __init__(self, limits: LayoutLimits, **options: Any) -> None:
        # optimized=False: the optimizer folds constants at compile time, outside the budget.
        super().__init__(optimized=False, finalize=_finalize, **options)
        self.limits = limits
        self.budget = Budget(limits)
        self.globals.pop("lipsum", None)
        self.filters = dict(_guarded(tuple(self.filters.items()), True))
        tests = cast(dict[str, Callable[..., Any]], self.tests)  # typed as "function"
        self.tests = dict(_guarded(tuple(tests.items()), False))

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        """Jinja2's refusal of an unsafe attribute, naming a dict as ``dict``: the
        incremental engine's tracked ``page`` and ``site`` are dict subclasses, and the
        message must not depend on which build path rendered the layout."""
        shown = "dict" if isinstance(obj, dict) else type(obj).__name__
        return self.undefined(
            f"access to attribute {attribute!r} of {shown!r} object is unsafe.",
            name=attribute,
            obj=obj,
            exc=SecurityError,
        )

    def start_render(self) -> None:
        """Start a fresh budget for the next top-level render."""
        self.budget = Budget(self.limits)

    def add_filter(self, name: str, fn: Callable[..., Any]) -> None:
        """Install filter ``name``, guarded like Jinja2's own."""
        self.filters[name] = _guard(name, fn, True)

    # -- what the compiled templates call (see _CodeGenerator)

    def guard_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Yield ``iterable``'s items, one step each."""
        for item in iterable:
            self.budget.charge(1)
            yield item

    def guard_value(self, value: Any) -> Any:
        """Return ``value`` once its size fits and its steps are charged."""
        self.budget.charge(1 + steps_of(value))
        self.budget.fits(size_of(value), "a value")
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise LayoutLimitError(f"a number over {MAX_INT_BITS} bits")
        return value

    def charged(self, value: Any) -> Any:
        """Return ``value`` (compared, or hashed as a dict key) once the steps comparing it
        can cost are charged, every shared reference counted (:func:`compared_steps`)."""
        self.budget.charge(1 + compared_steps(value))
        return value

    def textual(self, value: Any) -> Any:
        """Return ``value`` (an operand of ``~``) once its text fits."""
        if not isinstance(value, str):
            self.check_text(value)
        return value

    def check_text(self, *values: Any, how: str = "str", indent: int = 0) -> None:
        """Refuse turning ``values`` into text (``how``: see :func:`text_size`) past the
        output limit; charge their steps."""
        steps = chars = 0
        for value in values:
            more_steps, more_chars = text_size(value, how, indent)
            steps, chars = steps + more_steps, chars + more_chars
        self.budget.fits(chars, "a value as text")  # an upper bound (text_size)
        self.budget.charge(steps)

    def wrote(self, size: int) -> None:
        """Count ``size`` characters of literal template text written."""
        self.budget.write(size)

    # -- sandbox hooks

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply ``operator`` after refusing results that cannot fit (see the module doc)."""
        self.budget.charge(1 + steps_of(left) + steps_of(right))
        if operator == "*":
            check_repeat(self.budget, left, right)
        elif operator == "**":
            check_power(left, right)
        elif operator == "%" and isinstance(left, str):
            check_percent(self.budget, left)
            self.check_text(right)
        return self.guard_value(super().call_binop(context, operator, left, right))

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call ``obj`` from a layout: count it and its depth, charge a Python callable's
        arguments as compared (a method may compare or hash them), check them
        (:func:`check_arguments`), and guard the result."""
        budget = self.budget
        budget.charge(1)
        if isinstance(obj, LoopContext) and args:
            args = (self.guard_iter(args[0]), *args[1:])
        elif not isinstance(obj, _JINJA_CALLABLES):
            budget.charge(sum(compared_steps(a) for a in (*args, *kwargs.values())))
            args = check_arguments(budget, obj, args, kwargs)
            if isinstance(getattr(obj, "__self__", None), Markup):  # it escapes its arguments
                self.check_text(*args, *kwargs.values())
        budget.depth += 1
        try:
            if budget.depth > self.limits.max_depth:
                raise LayoutLimitError(
                    f"calls nested {self.limits.max_depth} deep: [render] layout_max_depth"
                )
            result = super().call(context, obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        return self.guard_value(result)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """``obj[argument]``, a key other than a string, number or slice charged as hashed
        and bounded as text (a missing key's error message shows it)."""
        if not isinstance(argument, str | int | slice):
            self.check_text(argument)
            self.budget.charge(compared_steps(argument))
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Jinja2's sandboxed ``str.format``, refusing widths past the output limit and
        arguments whose text would not fit."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        check_format_spec(self.budget, value.__self__)

        @wraps(wrapped)
        def checked(*args: Any, **kwargs: Any) -> str:
            self.check_text(*args, *kwargs.values())
            return wrapped(*args, **kwargs)

        return checked

    # -- layout names ({% include %}, {% extends %}, {% import %})

    def get_template(self, name: Any, parent: Any = None, globals: Any = None) -> Any:
        """Jinja2's, for a name checked by :meth:`check_names`."""
        return super().get_template(self.check_names(name), parent, globals)

    def select_template(self, names: Any, parent: Any = None, globals: Any = None) -> Any:
        """Jinja2's, for names checked by :meth:`check_names`."""
        return super().select_template(self.check_names(names), parent, globals)

    def get_or_select_template(self, name: Any, parent: Any = None, globals: Any = None) -> Any:
        """Jinja2's, for a name or names checked by :meth:`check_names`."""
        return super().get_or_select_template(self.check_names(name), parent, globals)

    def check_names(self, names: Any) -> Any:
        """Return ``names`` (a layout name, a template, or a list or tuple of them) when
        each is a string of at most :data:`MAX_NAME` characters and their text fits (a
        missing one's error lists them all); one step each."""
        many = names if isinstance(names, list | tuple) else [names]
        self.check_text(many)
        if many is names:  # one name (a layout the build picks, too) costs no step
            self.budget.charge(len(many))
        for name in many:
            if isinstance(name, str) and len(name) > MAX_NAME:
                raise LayoutLimitError(f"a layout name over {MAX_NAME} characters")
            if not isinstance(name, str | jinja2.Template | jinja2.Undefined):
                raise LayoutLimitError(f"a layout name that is a {type(name).__name__}")
        return names

    # -- filters and tests

    def _filter_input(
        self, name: str, args: tuple[Any, ...], kw: dict[str, Any]
    ) -> tuple[Any, ...]:
        """Charge (and bound, for a filter making text) the input of filter ``name``; return
        ``args``, an iterator the filter would walk made a list (so it is measured)."""
        kind = FILTER_KINDS.get(name, "text")
        if kind == "cheap":
            return args
        if kind == "items":
            self.budget.charge(steps_of(args[0]))
            return args
        if isinstance(args[0], Iterator) and (kind == "compare" or name in ITERATING_FILTERS):
            args = (list(self.guard_iter(args[0])), *args[1:])
        if kind == "compare":
            self.budget.charge(compare_steps(self, name, args, kw))
            return args
        indent = kw.get("indent", args[1] if name == "tojson" and len(args) > 1 else 0)
        indent = len(indent) if isinstance(indent, str) else indent if type(indent) is int else 0
        self.check_text(*args, *kw.values(), how=TEXT_HOW.get(name, "str"), indent=indent)
        return args

    def _test_input(self, name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
        """Charge (and bound, for a test making text) the input of test ``name``."""
        kind = TEST_KINDS.get(name, "text")
        if kind == "cheap":
            self.budget.charge(sum(steps_of(a) for a in args[1:]))
        elif kind == "compare":
            self.budget.charge(sum(compared_steps(a) for a in (*args, *kw.values())))
        else:
            self.check_text(*args, *kw.values())


@cache
def _guarded(
    functions: tuple[tuple[str, Callable[..., Any]], ...], is_filter: bool
) -> tuple[tuple[str, Callable[..., Any]], ...]:
    """Return Jinja2's ``functions`` (filters or tests, by name) each :func:`_guard`-ed: made
    once per process, since a guard finds its environment through the context."""
    return tuple((name, _guard(name, fn, is_filter)) for name, fn in functions)


def _guard(name: str, fn: Callable[..., Any], is_filter: bool) -> Callable[..., Any]:
    """Return ``fn`` charging its input (:meth:`LayoutSandbox._filter_input`,
    :meth:`~LayoutSandbox._test_input`) to the rendering environment's budget, checked by
    :data:`PRECHECKS`, result guarded.

    The wrapper takes the context, so Jinja2 never runs it at compile time, and finds the
    :class:`LayoutSandbox` through it, so one wrapper serves every environment."""
    pass_arg = getattr(getattr(fn, "jinja_pass_arg", None), "name", None)
    precheck = PRECHECKS.get(name) if is_filter else None

    @jinja2.pass_context
    @wraps(fn)
    def guarded(context: Context, *args: Any, **kwargs: Any) -> Any:
        env = context.environment
        assert isinstance(env, LayoutSandbox)
        env.budget.charge(1)
        if is_filter:
            args = env._filter_input(name, args, kwargs)
        else:
            env._test_input(name, args, kwargs)
        if precheck is not None:
            args, kwargs = precheck(env, context, args, kwargs)
        if pass_arg == "context":
            result = fn(context, *args, **kwargs)
        elif pass_arg == "eval_context":
            result = fn(context.eval_ctx, *args, **kwargs)
        elif pass_arg == "environment":
            result = fn(env, *args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        return env.guard_value(result)

    return guarded


@jinja2.pass_context
def _finalize(context: Context, value: Any) -> Any:
    """Count what an expression writes. Jinja2 would turn ``value`` into text anyway (by
    ``__html__`` or ``str``, then escaping it), so it is done here once, with the same
    result, after :meth:`LayoutSandbox.check_text` for a value that is not a string."""
    env = context.environment
    assert isinstance(env, LayoutSandbox)
    if hasattr(value, "__html__"):
        value = Markup(value.__html__())
    elif not isinstance(value, str):
        env.check_text(value)
        value = str(value)
    if context.eval_ctx.autoescape and not isinstance(value, Markup):
        env.budget.write(escaped_size(value))
        return escape(value)
    env.budget.write(len(value))
    return value
