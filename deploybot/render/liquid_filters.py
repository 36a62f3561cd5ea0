"""Liquid output expressions for post and page content: ``{{ value | filter: arg, … }}``.

An expression is a literal (``'text'``, ``"text"``, a number, ``true``/``false``/``nil``) or a
variable path (``site.title``, ``page.author.name``) followed by filters. Nothing is ever
evaluated as Python: a variable path is only looked up with ``Mapping.__getitem__`` on plain
data, a name starting with ``_`` is refused, and only the filters in :data:`FILTERS` exist.

Filters (Liquid's standard and Jekyll's, https://jekyllrb.com/docs/liquid/filters/):
``relative_url``, ``absolute_url``, ``date: FMT``, ``date_to_xmlschema``, ``date_to_rfc822``,
``date_to_string``, ``date_to_long_string``, ``xml_escape``, ``escape``, ``strip_html``,
``upcase``, ``downcase``, ``capitalize``, ``prepend``, ``append``, ``default``, ``size``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from deploybot.render.dates import parse_date, rfc822, strftime, xmlschema
from deploybot.render.feeds import xml_escape


class ExpressionError(ValueError):
    """The expression cannot be read or evaluated; the message says what (for a warning)."""


class TextTooLong(Exception):
    """A value printed, or a filter's result, is longer than the room left for the page."""


@dataclass(frozen=True)
class Literal:
    """A literal value in an expression."""

    value: Any


@dataclass(frozen=True)
class Variable:
    """A dotted variable path, e.g. ``("site", "title")``."""

    parts: tuple[str, ...]


Operand = Literal | Variable


@dataclass(frozen=True)
class Expression:
    """``{{ base | name: arg, … | … }}``: ``filters`` is ``((name, args), …)``."""

    base: Operand
    filters: tuple[tuple[str, tuple[Operand, ...]], ...]


_TOKEN = re.compile(
    r"\s*(?:(?P<str>\"[^\"]*\"|'[^']*')|(?P<num>-?\d+(?:\.\d+)?)(?![\w.])"
    r"|(?P<var>[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*)|(?P<punct>[|:,]))"
)
_KEYWORDS: Mapping[str, Any] = {"true": True, "false": False, "nil": None, "null": None}
MAX_EXPRESSION = 1000
"""Longest expression (characters) that is parsed at all."""


def parse_expression(text: str) -> Expression:
    """Return the parsed ``{{ … }}`` body ``text``. Raises :class:`ExpressionError`."""
    if len(text) > MAX_EXPRESSION:
        raise ExpressionError("expression too long")
    tokens = _tokens(text)
    if not tokens or tokens[0][0] not in ("str", "num", "var"):
        raise ExpressionError("expected a value")
    base = _operand(tokens.pop(0))
    filters: list[tuple[str, tuple[Operand, ...]]] = []
    while tokens:
        bar, name = tokens.pop(0), tokens.pop(0) if tokens else ("", "")
        if bar != ("punct", "|") or name[0] != "var" or "." in name[1]:
            raise ExpressionError("expected '| filter'")
        args: list[Operand] = []
        if tokens and tokens[0] == ("punct", ":"):
            tokens.pop(0)
            while True:
                if not tokens or tokens[0][0] == "punct":
                    raise ExpressionError(f"filter {name[1]!r} is missing an argument")
                args.append(_operand(tokens.pop(0)))
                if not tokens or tokens[0] != ("punct", ","):
                    break
                tokens.pop(0)
        filters.append((name[1], tuple(args)))
    return Expression(base, tuple(filters))


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise ExpressionError(f"cannot read {stripped[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        found.append((kind, m.group(kind)))
        pos = m.end()
    return found


def _operand(token: tuple[str, str]) -> Operand:
    kind, text = token
    if kind == "str":
        return Literal(text[1:-1])
    if kind == "num":
        return Literal(float(text) if "." in text else int(text))
    if text in _KEYWORDS:
        return Literal(_KEYWORDS[text])
    return Variable(tuple(text.split(".")))


class Undefined(ExpressionError):
    """A variable path that names nothing."""


def lookup(variables: Mapping[str, Any], parts: tuple[str, ...]) -> Any:
    """Return the value at ``parts`` in ``variables`` (mappings only; ``size``/``first``/
    ``last`` on lists). Raises :class:`Undefined`."""
    value: Any = variables
    for part in parts:
        if part.startswith("_"):
            raise Undefined(f"{'.'.join(parts)} is not allowed")
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list | tuple) and part in ("size", "first", "last"):
            value = len(value) if part == "size" else (value[0] if part == "first" else value[-1])
        else:
            raise Undefined(f"{'.'.join(parts)} is not defined")
    return value


def evaluate(
    expression: Expression,
    variables: Mapping[str, Any],
    warn: Callable[[str], None],
    max_text: int | None = None,
) -> Any:
    """Return the value of ``expression``; unknown filters are skipped with ``warn(message)``.

    Raises :class:`Undefined` for an undefined variable in the base or an argument, and
    :class:`TextTooLong` when a filter returns a string longer than ``max_text``.
    """
    value = _value(expression.base, variables)
    site = variables.get("site", {})
    for name, arg_nodes in expression.filters:
        fn = FILTERS.get(name)
        if fn is None:
            warn(f"unknown Liquid filter {name!r} ignored")
            continue
        args = [_value(a, variables) for a in arg_nodes]
        try:
            value = fn(value, args, site if isinstance(site, Mapping) else {})
        except (TypeError, ValueError, IndexError) as exc:
            warn(f"Liquid filter {name!r} failed: {exc}")
        if max_text is not None and isinstance(value, str) and len(value) > max_text:
            raise TextTooLong(name)
    return value


def _value(node: Operand, variables: Mapping[str, Any]) -> Any:
    return node.value if isinstance(node, Literal) else lookup(variables, node.parts)


def to_text(value: Any, limit: int | None = None) -> str:
    """Return ``value`` as Liquid prints it (``nil`` -> '', lists joined, times as Ruby's
    ``Time#to_s``: ``2020-07-14 00:00:00 -0700``).

    Raises :class:`ExpressionError` for a mapping, and :class:`TextTooLong` as soon as the
    text passes ``limit`` characters (so a list of many long strings is never joined).
    """
    parts: list[str] = []
    size = 0
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, list | tuple):
            pending.extend(reversed(item))
            continue
        text = _scalar_text(item)
        size += len(text)
        if limit is not None and size > limit:
            raise TextTooLong("output")
        parts.append(text)
    return "".join(parts)


def _scalar_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return strftime(value, "%Y-%m-%d %H:%M:%S %z")
    if isinstance(value, Mapping):
        raise ExpressionError("a mapping cannot be printed")
    return str(value)


Filter = Callable[[Any, list[Any], Mapping[str, Any]], Any]


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            return parse_date(value, UTC)
        except ValueError:
            return None
    return None


def _date_filter(fmt: Callable[[datetime, list[Any]], str]) -> Filter:
    def apply(value: Any, args: list[Any], site: Mapping[str, Any]) -> Any:
        moment = _as_datetime(value)
        return value if moment is None else fmt(moment, args)

    return apply


def relative_url(value: Any, args: list[Any], site: Mapping[str, Any]) -> str:
    """Jekyll's ``relative_url``: ``baseurl`` + the path, with exactly one ``/`` between."""
    base = str(site.get("baseurl") or "").rstrip("/")
    path = to_text(value)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
        return path
    return base + "/" + path.lstrip("/") if path else base or "/"


def absolute_url(value: Any, args: list[Any], site: Mapping[str, Any]) -> str:
    """Jekyll's ``absolute_url``: ``url`` + :func:`relative_url`."""
    relative = relative_url(value, args, site)
    if "://" in relative:
        return relative
    return str(site.get("url") or "").rstrip("/") + relative


def _text_filter(fn: Callable[[str], str]) -> Filter:
    return lambda value, args, site: fn(to_text(value))


FILTERS: Mapping[str, Filter] = {
    "relative_url": relative_url,
    "absolute_url": absolute_url,
    "date": _date_filter(lambda d, a: strftime(d, str(a[0])) if a else to_text(d)),
    "date_to_xmlschema": _date_filter(lambda d, a: xmlschema(d)),
    "date_to_rfc822": _date_filter(lambda d, a: rfc822(d)),
    "date_to_string": _date_filter(lambda d, a: strftime(d, "%d %b %Y")),
    "date_to_long_string": _date_filter(lambda d, a: strftime(d, "%d %B %Y")),
    "xml_escape": _text_filter(xml_escape),
    "escape": _text_filter(lambda s: html.escape(s, quote=True)),
    "strip_html": _text_filter(lambda s: re.sub(r"<[^>]*>", "", s)),
    "upcase": _text_filter(str.upper),
    "downcase": _text_filter(str.lower),
    "capitalize": _text_filter(lambda s: s[:1].upper() + s[1:].lower()),
    "prepend": lambda v, a, s: to_text(a[0]) + to_text(v),
    "append": lambda v, a, s: to_text(v) + to_text(a[0]),
    "default": lambda v, a, s: a[0] if v in (None, "", False, [], {}) else v,
    "size": lambda v, a, s: len(v) if isinstance(v, str | list | tuple | Mapping) else 0,
}
"""Filter name -> ``fn(value, args, site)``. Functions raise ``TypeError``/``ValueError``/
``IndexError`` for bad arguments (reported as warnings)."""
