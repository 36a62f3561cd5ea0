"""Jekyll's filters registered on the python-liquid environment, and the size guard on all.

Sources: Jekyll 4.3 ``lib/jekyll/filters.rb`` (``where``, ``where_exp``, ``find``,
``find_exp``, ``sort``, ``push``/``pop``/``shift``/``unshift``, ``sample``, ``to_integer``,
``markdownify``, ``smartify``, ``jsonify``, ``slugify``…) and ``filters/grouping_filters.rb``
(``group_by``, ``group_by_exp``); the plain-value ones live in :mod:`.jekyll_filters`.
Liquid's standard filters come with python-liquid.

Every filter, Liquid's and Jekyll's, is wrapped by :func:`guarded`: a filter that would
build a string or list longer than the page's output limit stops the render with
:class:`PageTooLarge` (before ``replace`` or ``join`` build it), so no filter chain can make
gigabytes out of a small template.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from liquid import Environment
from liquid.builtin.expressions import BooleanExpression, FilteredExpression
from liquid.builtin.expressions._tokenize import tokenize
from liquid.exceptions import FilterArgumentError, OutputStreamLimitError
from liquid.filter import with_context
from liquid.stream import TokenStream
from liquid.token import TOKEN_EXPRESSION, Token
from liquid.undefined import Undefined

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.documents import is_document
from deploybot.render.markdown.kramdown.typography import smarten

if TYPE_CHECKING:
    from liquid.context import RenderContext

STATE = "\x00deploybot"
"""Context global holding the render's :class:`~deploybot.render.liquid.templates.RenderState`; a
name no template can spell."""


class PageTooLarge(OutputStreamLimitError):
    """A filter's result would pass the page's output limit."""


def nil(value: Any) -> Any:
    """Return ``None`` for python-liquid's undefined values, else ``value``."""
    return None if isinstance(value, Undefined) else value


def state_of(context: RenderContext) -> Any:
    """Return the :class:`~deploybot.render.liquid.templates.RenderState` of ``context``'s
    render."""
    return context.globals[STATE]


def _items(value: Any) -> list[Any] | None:
    value = nil(value)
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, list | tuple):
        return list(value)
    return None


def _sort_value(value: Any) -> Any:
    """Jekyll's ``parse_sort_input``: integer- and float-like strings become numbers."""
    text = jf.to_text(value).strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return float(text) if text and not text.lower().lstrip("-").isalpha() else value
    except ValueError:
        return value


def item_property(item: Any, prop: Any) -> Any:
    """Jekyll's ``item_property``: ``item[prop]`` (a dotted ``prop`` walks mappings)."""
    value = item
    for key in str(prop).split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return None if value is None else _sort_value(value)


def _matches(found: Any, target: Any) -> bool:
    """Jekyll's ``compare_property_vs_target``."""
    if target is None:
        return found is None
    wanted = jf.to_text(target)
    if isinstance(found, str):
        return found == wanted
    values = found if isinstance(found, list | tuple) else ([] if found is None else [found])
    return any(jf.to_text(v) == wanted for v in values)


def where(value: Any, prop: Any = None, target: Any = None) -> Any:
    """Jekyll's ``where``: the items whose ``prop`` equals (or contains) ``target``."""
    items, target = _items(value), nil(target)
    if items is None or prop is None or isinstance(target, list | Mapping):
        return nil(value)
    return [item for item in items if _matches(item_property(item, prop), target)]


def find(value: Any, prop: Any = None, target: Any = None) -> Any:
    """Jekyll's ``find``: the first item ``where`` would keep, else ``nil``."""
    found = where(value, prop, target)
    if found is nil(value) and _items(value) is None:
        return found
    return found[0] if isinstance(found, list) and found else None


@functools.lru_cache(maxsize=256)
def _parse(env: Environment, source: str, boolean: bool) -> Any:
    token = Token(TOKEN_EXPRESSION, source, 0, source)
    stream = TokenStream(tokenize(source, token))
    return (BooleanExpression if boolean else FilteredExpression).parse(env, stream)


def parse_expression(env: Environment, source: str) -> Any:
    """Return the Liquid expression ``source`` (with filters) parsed (cached)."""
    return _parse(env, source, False)


def _select(context: RenderContext, value: Any, name: Any, expression: Any) -> Any:
    items = _items(value)
    if items is None:
        return None
    condition = _parse(context.env, str(expression), True)
    kept: list[Any] = []
    for item in items:
        context.raise_for_loop_limit(1)
        with context.extend({str(name): item}):
            if condition.evaluate(context):
                kept.append(item)
    return kept


@with_context
def where_exp(value: Any, name: Any = "", expression: Any = "", *, context: Any) -> Any:
    """Jekyll's ``where_exp``: the items for which the Liquid condition holds."""
    kept = _select(context, value, name, expression)
    return nil(value) if kept is None else kept


@with_context
def find_exp(value: Any, name: Any = "", expression: Any = "", *, context: Any) -> Any:
    """Jekyll's ``find_exp``: the first item for which the Liquid condition holds."""
    kept = _select(context, value, name, expression)
    return nil(value) if kept is None else (kept[0] if kept else None)


def _grouped(groups: Mapping[object, tuple[Any, list[Any]]]) -> list[dict[str, Any]]:
    """Jekyll's ``grouped_array``: ``{name, items, size}`` per group, first seen first."""
    return [{"name": name, "items": v, "size": len(v)} for name, v in groups.values()]


def _ruby_key(value: Any) -> object:
    """A key that tells values apart as a Ruby ``Hash`` does (``eql?``): ``1``, ``1.0``,
    ``true`` and ``"1"`` are four keys; arrays by their items; anything else (a hash, a
    document) by identity."""
    if value is None or isinstance(value, str | bool | int | float):
        return (type(value).__name__, value)
    if isinstance(value, list | tuple):
        return ("array", tuple(_ruby_key(item) for item in value))
    return ("object", id(value))


def group_by(value: Any, prop: Any = "") -> Any:
    """Jekyll's ``group_by``: ``[{name, items, size}]`` in first-seen order."""
    items = _items(value)
    if items is None:
        return nil(value)
    groups: dict[object, tuple[Any, list[Any]]] = {}
    for item in items:
        key = jf.to_text(item_property(item, prop))
        groups.setdefault(key, (key, []))[1].append(item)
    return _grouped(groups)


@with_context
def group_by_exp(value: Any, name: Any = "", expression: Any = "", *, context: Any) -> Any:
    """Jekyll's ``group_by_exp``: groups keyed by a Liquid expression's value, as the
    expression gives it (``Liquid::Variable#render``: a number stays a number, where
    ``group_by`` makes every name text)."""
    items = _items(value)
    if items is None:
        return nil(value)
    parsed = _parse(context.env, str(expression), False)
    groups: dict[object, tuple[Any, list[Any]]] = {}
    for item in items:
        context.raise_for_loop_limit(1)
        with context.extend({str(name): item}):
            found = nil(parsed.evaluate(context))
        groups.setdefault(_ruby_key(found), (found, []))[1].append(item)
    return _grouped(groups)


def _compare_documents(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    """Jekyll 4.3.1's ``Document#<=>`` (``lib/jekyll/document.rb``): by ``date``, then by
    ``path`` when the dates are equal or cannot be compared (``nil``)."""
    first, second = a.get("date"), b.get("date")
    by_date = 0
    if first is not None and second is not None:
        try:
            by_date = int(first > second) - int(first < second)
        except TypeError:
            by_date = 0
    return by_date or _compare(str(a.get("path")), str(b.get("path")))


def _compare(a: Any, b: Any) -> int:
    """Ruby's ``a <=> b || a.to_s <=> b.to_s``; two documents compare as Jekyll's
    ``Document#<=>`` (:func:`_compare_documents`)."""
    if is_document(a) and is_document(b):
        return _compare_documents(a, b)
    try:
        return int(a > b) - int(a < b)
    except TypeError:
        x, y = jf.to_text(a), jf.to_text(b)
        return (x > y) - (x < y)


def _compare_pairs(a: list[Any], b: list[Any]) -> int:
    """Ruby's ``Array#<=>`` of two ``[key, value]`` pairs (each part as :func:`_compare`)."""
    return _compare(a[0], b[0]) or _compare(a[1], b[1])


def sort(value: Any, prop: Any = None, nils: Any = "first") -> Any:
    """Jekyll's ``sort``: by value, or by ``prop`` with ``nil`` ones ``first``/``last``.

    A mapping sorts as Ruby's ``Hash#sort``: its ``[key, value]`` pairs, by key then value
    (printed joined: ``a1b2``); by a ``prop`` it stops the build as Jekyll 4.3.1 does (its
    ``item_property`` indexes a pair with a string). Raises ``ValueError``."""
    if isinstance(nil(value), Mapping):
        if nil(prop) is not None:
            raise ValueError("no implicit conversion of String into Integer")
        pairs = [[k, v] for k, v in nil(value).items()]
        return sorted(pairs, key=functools.cmp_to_key(_compare_pairs))
    items = _items(value)
    if items is None:
        raise ValueError("Cannot sort a null object.")
    if nil(prop) is None:
        return sorted(items, key=functools.cmp_to_key(_compare))
    order = -1 if nils == "first" else 1
    if nils not in ("first", "last"):
        raise ValueError(f"Invalid nils order: '{nils}' is not a valid nils order.")
    keyed = [(item_property(item, prop), item) for item in items]

    def cmp(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
        if a[0] is not None and b[0] is None:
            return -order
        if a[0] is None and b[0] is not None:
            return order
        return _compare(a[0], b[0])

    return [item for _, item in sorted(keyed, key=functools.cmp_to_key(cmp))]


def _count(num: Any) -> int:
    try:
        return int(nil(num) if nil(num) is not None else 1)
    except (TypeError, ValueError):
        return 1


def push(value: Any, item: Any = None) -> Any:
    """Jekyll's ``push`` (a new list)."""
    return [*value, nil(item)] if isinstance(value, list | tuple) else nil(value)


def pop(value: Any, num: Any = 1) -> Any:
    """Jekyll's ``pop``: without the last ``num`` items."""
    n = _count(num)
    return list(value)[: max(len(value) - n, 0)] if isinstance(value, list | tuple) else value


def shift(value: Any, num: Any = 1) -> Any:
    """Jekyll's ``shift``: without the first ``num`` items."""
    return list(value)[_count(num) :] if isinstance(value, list | tuple) else nil(value)


def unshift(value: Any, item: Any = None) -> Any:
    """Jekyll's ``unshift`` (a new list)."""
    return [nil(item), *value] if isinstance(value, list | tuple) else nil(value)


def sample(value: Any, num: Any = 1) -> Any:
    """Jekyll's ``sample``, made reproducible: the first ``num`` items (the output must be
    a function of the source commit, so no random choice)."""
    if not isinstance(value, list | tuple):
        return nil(value)
    n = _count(num)
    return (value[0] if value else None) if n == 1 else list(value[:n])


def to_integer(value: Any) -> int:
    """Jekyll's ``to_integer``."""
    value = nil(value)
    if isinstance(value, bool):
        return int(value)
    try:
        return int(float(jf.to_text(value) or 0))
    except ValueError:
        return 0


@with_context
def markdownify(value: Any, *, context: Any) -> str:
    """Jekyll's ``markdownify``: the site's Markdown converter."""
    return str(state_of(context).markdown(jf.to_text(nil(value))))


def _sass_filter(syntax: str) -> Callable[..., str]:
    """Jekyll's ``sassify`` (``syntax`` ``"sass"``) or ``scssify`` (``"scss"``): the text
    through the site's Sass converter, imports read from the render's source tree
    (:func:`~deploybot.render.sass.convert.convert_text`). Raises ``SourceError`` for a Sass
    error, as Jekyll stops on it."""

    @with_context
    def convert(value: Any, *, context: Any) -> str:
        # lazy: libsass loads only for a site that uses the filter
        from deploybot.render.read.source import MemoryTree
        from deploybot.render.sass import convert as sass

        state = state_of(context)
        tree = state.liquid.tree or MemoryTree({})
        limits = sass.SassLimits(max_output=state.liquid.max_output)
        text = jf.to_text(nil(value))
        site_sass = state.site.get("sass") if isinstance(state.site, Mapping) else None
        return sass.convert_text(text, syntax, tree, site_sass, path=state.page_path, limits=limits)

    return convert


@with_context
def relative_url(value: Any, *, context: Any) -> Any:
    """Jekyll's ``relative_url`` with the site's ``baseurl``."""
    value = nil(value)
    return None if value is None else jf.relative_url(value, state_of(context).baseurl)


@with_context
def absolute_url(value: Any, *, context: Any) -> Any:
    """Jekyll's ``absolute_url`` with the site's ``url`` and ``baseurl``."""
    value, state = nil(value), state_of(context)
    return None if value is None else jf.absolute_url(value, state.url, state.baseurl)


def _plain(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(value: Any, *args: Any) -> Any:
        return fn(nil(value), *(nil(a) for a in args))

    return call


NOW_WORDS = frozenset({"now", "today"})
"""The texts Liquid's ``Utils.to_date`` reads as the current time (any case)."""


def _zoned(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a date filter of :mod:`.jekyll_filters`) given the site's zone, ``tz``;
    ``"now"``/``"today"`` are the build's ``site.time`` (Liquid's ``Time.now``, which
    Jekyll reads a moment after ``site.time``; the build's own time keeps a build made
    again byte for byte), so ``{{ "now" | date: "%Y" }}`` is the year."""

    @with_context
    def call(value: Any, *args: Any, context: Any) -> Any:
        state = state_of(context)
        value = nil(value)
        if isinstance(value, str) and value.lower() in NOW_WORDS:
            site = state.site
            value = site.get("time", value) if isinstance(site, Mapping) else value
        return fn(value, *(nil(a) for a in args), tz=state.timezone)

    return call


JEKYLL_FILTERS: Mapping[str, Callable[..., Any]] = {
    "where": where,
    "where_exp": where_exp,
    "find": find,
    "find_exp": find_exp,
    "group_by": group_by,
    "group_by_exp": group_by_exp,
    "sort": sort,
    "push": push,
    "pop": pop,
    "shift": shift,
    "unshift": unshift,
    "sample": sample,
    "to_integer": to_integer,
    "markdownify": markdownify,
    "sassify": _sass_filter("sass"),
    "scssify": _sass_filter("scss"),
    "relative_url": relative_url,
    "absolute_url": absolute_url,
    "smartify": _plain(lambda v: smarten(jf.to_text(v))),
    "date": _zoned(jf.date_format),
    "date_to_xmlschema": _zoned(jf.date_to_xmlschema),
    "date_to_rfc822": _zoned(jf.date_to_rfc822),
    "date_to_string": _zoned(lambda v, t=None, s=None, *, tz: jf.date_string(v, "%b", t, s, tz=tz)),
    "date_to_long_string": _zoned(
        lambda v, t=None, s=None, *, tz: jf.date_string(v, "%B", t, s, tz=tz)
    ),
    "xml_escape": _plain(jf.xml_escape),
    "cgi_escape": _plain(jf.cgi_escape),
    "uri_escape": _plain(jf.uri_escape),
    "normalize_whitespace": _plain(jf.normalize_whitespace),
    "number_of_words": _plain(jf.number_of_words),
    "array_to_sentence_string": _plain(jf.array_to_sentence_string),
    "slugify": _plain(jf.slugify),
    "jsonify": _plain(jf.jsonify),
    "inspect": _plain(jf.inspect),
    "strip_index": _plain(
        lambda v: None if not v else jf.to_text(v).removesuffix("index.html").rstrip("/") + "/"
    ),
}
"""Jekyll's filters by name (python-liquid filter functions)."""


_RUBY_SPACES = " \t\n\v\f\r"
_RUBY_SPACE = re.compile(r"[ \t\n\v\f\r]+")


def truncatewords(value: Any, words: Any = 15, end: Any = "...") -> Any:
    """Ruby Liquid 5.4's ``truncatewords`` (``standardfilters.rb``: ``input.split(" ",
    words + 1)``): the input as it is, whitespace and all, when it has at most ``words``
    words; else its first ``words`` joined by one space, then ``end``. python-liquid's
    rejoined the words of any input (dropping a trailing newline) and cut one of exactly
    ``words``. A ``words`` under 1 is 1; nil is nil."""
    value = nil(value)
    if value is None:
        return None
    text = jf.to_text(value)
    try:
        count = max(int(nil(words) or 0), 1)
    except (TypeError, ValueError) as exc:
        raise FilterArgumentError(f"invalid integer: {words!r}", token=None) from exc
    # Ruby's split(" "): runs of ASCII whitespace, leading ones dropped (a no-break space
    # is no word break there, where Python's split() breaks on it)
    parts = _RUBY_SPACE.split(text.lstrip(_RUBY_SPACES), count)
    if len(parts) <= count:
        return text
    return " ".join(parts[:count]) + jf.to_text(nil(end))


RUBY_LIQUID_FILTERS: Mapping[str, Callable[..., Any]] = {"truncatewords": truncatewords}
"""Liquid's standard filters as Ruby Liquid 5.4 has them, where python-liquid's differ."""


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | tuple):
        return len(value)
    return 0


def _expected(name: str, value: Any, args: tuple[Any, ...]) -> int:
    """Return how long the result of a filter that multiplies its input would be."""
    if name in ("replace", "replace_first", "replace_last") and len(args) >= 1:
        text, old = jf.to_text(nil(value)), jf.to_text(nil(args[0]))
        new = jf.to_text(nil(args[1])) if len(args) > 1 else ""
        count = (len(text) + 1 if not old else text.count(old)) if name == "replace" else 1
        return len(text) + count * max(len(new) - len(old), 0)
    if name == "join" and isinstance(value, list | tuple):
        sep = len(jf.to_text(nil(args[0]))) if args else 1
        return sum(len(jf.to_text(v)) for v in value) + sep * len(value)
    return 0


def guarded(name: str, fn: Callable[..., Any], limit: int) -> Callable[..., Any]:
    """Return ``fn`` checked against ``limit`` (characters or list items): the result of
    ``replace``/``join`` is sized before it is built, any other result after.

    Raises :class:`PageTooLarge`."""

    def check(size: int) -> None:
        if size > limit:
            raise PageTooLarge(f"filter {name!r} makes more than {limit:,} characters", token=None)

    @functools.wraps(fn)
    def call(value: Any, *args: Any, **kwargs: Any) -> Any:
        check(_expected(name, value, args))
        result = fn(value, *args, **kwargs)
        check(_size(result))
        return result

    return call


TEXT_ARGUMENT_FILTERS = (
    "append",
    "prepend",
    "remove",
    "remove_first",
    "replace",
    "replace_first",
)
"""Liquid's standard filters whose arguments Ruby Liquid 4 reads with ``to_s``
(``lib/liquid/standardfilters.rb``: ``input.to_s + string.to_s``...): ``nil`` is ``""``
and ``true`` is ``"true"``, where python-liquid's ``str()`` writes ``None``/``True``."""


TEXT_INPUT_FILTERS = ("escape", "escape_once")
"""Liquid's standard filters that read their input with Ruby's ``to_s`` (Liquid 5.4:
``CGI.escapeHTML(input.to_s)``): a mapping is ``{"name"=>nil}`` (minima's footer escapes
``site.author``), a list ``["a", "b"]``, ``true`` is ``true``, where python-liquid's
``str()`` writes Python's ``{'name': None}``, ``['a', 'b']``, ``True``. ``nil`` stays
``nil`` (it prints nothing)."""


def ruby_to_s(value: Any) -> str:
    """Return ``value`` as Ruby's ``to_s`` writes it: lists (``Array#to_s``) and mappings
    as their ``inspect``, everything else as Liquid prints it (:func:`jf.to_text`)."""
    return jf.ruby_inspect(value) if isinstance(value, list | tuple) else jf.to_text(value)


def _text_input(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` given a value that is not a string (nor ``nil``) as :func:`ruby_to_s` prints it."""

    @functools.wraps(fn)
    def call(value: Any, *args: Any, **kwargs: Any) -> Any:
        value = nil(value)
        if value is not None and not isinstance(value, str):
            value = ruby_to_s(value)
        return fn(value, *args, **kwargs)

    return call


def _text_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` given its arguments as Ruby's ``to_s`` prints them (:func:`jf.to_text`)."""

    @functools.wraps(fn)
    def call(value: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(value, *(jf.to_text(nil(a)) for a in args), **kwargs)

    return call


def register(env: Environment, limit: int) -> None:
    """Add Jekyll's filters to ``env``, give Liquid's :data:`TEXT_ARGUMENT_FILTERS` their
    arguments and :data:`TEXT_INPUT_FILTERS` their input as Ruby's ``to_s`` does, and wrap
    every filter with :func:`guarded`."""
    for name, fn in {**RUBY_LIQUID_FILTERS, **JEKYLL_FILTERS}.items():
        env.add_filter(name, fn)
    for name in TEXT_ARGUMENT_FILTERS:
        env.add_filter(name, _text_arguments(env.filters[name]))
    for name in TEXT_INPUT_FILTERS:
        env.add_filter(name, _text_input(env.filters[name]))
    for name, fn in list(env.filters.items()):
        env.add_filter(name, guarded(name, fn, limit))
