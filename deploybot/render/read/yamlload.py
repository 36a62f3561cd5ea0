"""The YAML the site reads (front matter, ``_config.yml``), with alias expansion bounded.

PyYAML's safe loader (libyaml's when PyYAML was built with it, like Jekyll's Psych) builds an
alias as a shared reference, so a small document of nested aliases (the "billion laughs")
loads quickly, but anything that walks the value (printing ``{{ page.x }}``, a layout, a
dependency fingerprint) meets 10⁹ strings. :func:`load_yaml` composes the node graph first,
measures the document as if every alias were written out (:func:`expanded_size`, linear
in the distinct nodes), refuses it above the limit, and only then constructs the values.
"""

from __future__ import annotations

from datetime import UTC, timedelta, timezone
from typing import Any

import yaml

from deploybot.render.read import rubytime

# libyaml (what Jekyll's Psych uses too) when PyYAML was built with it: it accepts a tab
# after "key:" or at the end of a line, which PyYAML's pure-Python scanner rejects.
_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[valid-type,misc]
    """The safe loader: impossible dates (``2019-02-30``) kept as text, as Psych keeps
    them; malformed scalars (``!!float abc``, year 0) and ``!!set`` as marked YAML
    errors."""


def _timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    # Psych (Jekyll's YAML) keeps a timestamp it cannot build as a string
    # (ScalarScanner#tokenize rescues ArgumentError); Jekyll then reads a front-matter
    # date with Time.parse, which runs 2019-02-30 on to 2 March. A year Python's datetime
    # cannot hold (0000-01-01, which Ruby holds) is a marked error (see _scalar).
    if not isinstance(node, yaml.ScalarNode):  # !!timestamp [1]: _scalar marks the error
        raise TypeError("not a scalar")
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError:
        text = str(node.value)
        m = yaml.constructor.SafeConstructor.timestamp_regexp.match(text)
        if m is not None and not 1 <= int(m.group("year")) <= 9999:
            raise
        return _ruby_timestamp(text)


def _ruby_timestamp(text: str) -> Any:
    """A timestamp with a time as Psych builds it (``Time.utc``: hour 24 and second 60
    carry over, a day past the month's end runs on), else the text itself."""
    m = yaml.constructor.SafeConstructor.timestamp_regexp.match(text)
    if m is None or m.group("hour") is None:
        return text  # a date alone: Psych's Date.strptime is strict
    fraction = (m.group("fraction") or "")[:6].ljust(6, "0")
    try:
        year, month, day, hour, minute, second = (
            int(m.group(k)) for k in ("year", "month", "day", "hour", "minute", "second")
        )
        moment = rubytime.wall_time(year, month, day, hour, minute, second, int(fraction))
    except rubytime.DateParseError:
        return text
    if m.group("tz_sign") is None:
        return moment.replace(tzinfo=UTC) if m.group("tz") else moment
    offset = timedelta(hours=int(m.group("tz_hour")), minutes=int(m.group("tz_minute") or 0))
    return moment.replace(tzinfo=timezone(-offset if m.group("tz_sign") == "-" else offset))


_BAD_SCALAR = (ValueError, KeyError, IndexError, AttributeError, TypeError, OverflowError)
"""What PyYAML's scalar constructors raise on a malformed value."""
_SCALARS = {
    "bool": "true or false",
    "float": "a number",
    "timestamp": "a valid date",
    "null": "null",
    "binary": "base64 data",
    "str": "a string",
}


def _scalar(kind: str, what: str) -> Any:
    """PyYAML's safe constructor of ``tag:yaml.org,2002:KIND`` (for timestamps,
    :func:`_timestamp`), whatever Python error it meets on a malformed value (``!!float
    abc``: ValueError, ``!!bool maybe``: KeyError, ``!!timestamp x``: AttributeError)
    raised as a marked YAML error instead."""
    construct = (
        _timestamp
        if kind == "timestamp"
        else yaml.constructor.SafeConstructor.yaml_constructors[f"tag:yaml.org,2002:{kind}"]
    )

    def checked(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except _BAD_SCALAR as exc:
            problem = f"not {what}: {str(node.value)[:40]!r}"
            if isinstance(exc, ValueError):
                problem += f" ({exc})"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from exc

    return checked


for _kind, _what in _SCALARS.items():
    _Loader.add_constructor(f"tag:yaml.org,2002:{_kind}", _scalar(_kind, _what))


MAX_INT_DIGITS = 4300
"""The most decimal digits of an integer (Python's ``sys.int_info.default_max_str_digits``:
a longer one cannot even be printed)."""
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219280948873626)  # log2(10) bits per digit


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """YAML 1.1 integers (decimal, 0x, 0o, 0b, sexagesimal), at most
    :data:`MAX_INT_DIGITS` digits in any base, as marked YAML errors otherwise."""
    problem = f"an integer of more than {MAX_INT_DIGITS:,} digits"
    try:
        value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except _BAD_SCALAR as exc:  # over Python's digit limit, or not a number at all
        if sum(c.isdigit() for c in str(node.value)) <= MAX_INT_DIGITS:
            problem = f"not a valid integer: {str(node.value)[:40]!r}"
            problem += f" ({exc})" if isinstance(exc, ValueError) else ""
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from exc
    if isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
    return value


_Loader.add_constructor("tag:yaml.org,2002:int", _int)


def _set(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """Refuse ``!!set``: Psych's ``safe_load`` (Jekyll's YAML) allows no ``Psych::Set``
    (Jekyll skips the file), and a Python set of strings has no fixed order to print."""
    problem = "!!set is not allowed (Jekyll's YAML loader refuses it)"
    raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


_Loader.add_constructor("tag:yaml.org,2002:set", _set)


class ExpansionError(yaml.MarkedYAMLError):
    """The document is too large once its aliases are expanded, nests deeper than
    :data:`MAX_DEPTH`, or an alias is inside its own anchor. ``problem`` says which;
    ``problem_mark`` is where (0-based line)."""


MAX_DEPTH = 100
"""The deepest a document may nest (aliases followed). Every reader of a value (``repr``
for a dependency fingerprint, ``pickle`` for the build cache, ``==``) recurses once or
twice per level in C, so a document nested 500 deep (libyaml allows 1,000) broke them."""


def load_yaml(text: str, max_size: int) -> Any:
    """Return the value of the YAML document ``text`` (``None`` when it is empty).

    ``max_size`` bounds :func:`expanded_size`. Raises ``yaml.YAMLError`` (a
    ``MarkedYAMLError`` with the place, usually) for malformed YAML, and
    :class:`ExpansionError` (marked at the top-level key where the limit is crossed) for
    a document over ``max_size`` or with a recursive alias.
    """
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError as exc:  # PyYAML's own composer (no libyaml) recurses
            raise yaml.YAMLError("nested too deeply") from exc
        if node is None:
            return None
        if not within_limits(text, max_size):
            _check_size(node, max_size)
        return loader.construct_document(node)
    finally:
        loader.dispose()


_NESTING = ("[", "{", "-", "?", ":")
"""The indicators one of which every collection brings: a sequence its first ``-`` or ``[``, a
mapping its first ``:`` or ``?`` (``{`` in flow)."""


def within_limits(text: str, max_size: int) -> bool:
    """Return whether the YAML ``text`` is sure to pass :func:`expanded_size` with ``max_size``
    without composing it (most front matter: no walk of the node graph then).

    True when ``text`` has no ``*`` (so no alias: the graph is a tree and each scalar is no
    longer than its text), a size bound from its length fits ``max_size`` (at most four
    nodes per character, empty keys and values included, plus the characters), and its
    indicators are too few to nest past :data:`MAX_DEPTH` (each collection brings one of
    :data:`_NESTING`, so the depth is at most one more than their count)."""
    if "*" in text or 8 * len(text) + 8 > max_size:
        return False
    return sum(text.count(c) for c in _NESTING) < MAX_DEPTH


def _check_size(root: yaml.Node, max_size: int) -> None:
    sizes: dict[int, int] = {}
    total = expanded_size(root, max_size, sizes)
    if total <= max_size:
        return
    where = root.start_mark
    if isinstance(root, yaml.MappingNode):
        running = 1
        for key, value in root.value:
            running += sizes[id(key)] + sizes[id(value)]
            if running > max_size:
                where = key.start_mark
                break
    raise ExpansionError(
        problem=f"YAML aliases expand to more than {max_size:,} characters (render.max_yaml_size)",
        problem_mark=where,
    )


def expanded_size(root: yaml.Node, cap: int, sizes: dict[int, int] | None = None) -> int:
    """Return the size of the document under ``root`` with every alias written out: one per
    node plus the characters of each scalar, counted up to ``cap + 1`` (it stops growing
    there). ``sizes`` receives each node's size by ``id``. Each distinct node is measured
    once (an alias is the same node object), so the cost is linear in the composed graph.

    Raises :class:`ExpansionError` when an alias is inside its own anchor (the value would
    be infinite), or when the document nests deeper than :data:`MAX_DEPTH` (marked at the
    innermost node past it).
    """
    sizes = {} if sizes is None else sizes
    heights: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes and not children_done:
            continue
        children = _children(node)
        if children_done:
            on_path.discard(key)
            size = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)
            sizes[key] = min(cap + 1, size + sum(sizes[id(child)] for child in children))
            heights[key] = 1 + max((heights[id(child)] for child in children), default=0)
            if heights[key] > MAX_DEPTH:
                raise ExpansionError(
                    problem=f"YAML nested more than {MAX_DEPTH} deep", problem_mark=node.start_mark
                )
            continue
        if key in on_path:
            raise ExpansionError(
                problem="a YAML alias is inside its own anchor", problem_mark=node.start_mark
            )
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise ExpansionError(
                    problem="a YAML alias is inside its own anchor", problem_mark=child.start_mark
                )
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
