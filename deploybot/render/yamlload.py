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

from deploybot.render import rubytime

# libyaml (what Jekyll's Psych uses too) when PyYAML was built with it: it accepts a tab
# after "key:" or at the end of a line, which PyYAML's pure-Python scanner rejects.
_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[valid-type,misc]
    """The safe loader, with impossible dates (``2019-02-30``) kept as text."""


def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    # Psych (Jekyll's YAML) keeps a timestamp it cannot build as a string
    # (ScalarScanner#tokenize rescues ArgumentError); Jekyll then reads a front-matter
    # date with Time.parse, which runs 2019-02-30 on to 2 March.
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError:
        return _ruby_timestamp(str(node.value))


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


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


class ExpansionError(yaml.MarkedYAMLError):
    """The document is too large once its aliases are expanded, or an alias is inside its
    own anchor. ``problem`` says which; ``problem_mark`` is where (0-based line)."""


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
        _check_size(node, max_size)
        return loader.construct_document(node)
    finally:
        loader.dispose()


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
    be infinite).
    """
    sizes = {} if sizes is None else sizes
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
