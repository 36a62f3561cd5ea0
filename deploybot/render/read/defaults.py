"""Front matter defaults: ``defaults:`` in ``_config.yml`` (Jekyll 4.3's
``lib/jekyll/frontmatter_defaults.rb``).

Each set is ``{scope: {path, type}, values}``. A set applies to a file when its ``type`` (if
any) is the file's (``pages``, ``posts``, a collection's label; the old singular ``page``/
``post`` are read as the plural) and its ``path`` (if any) starts the file's path (plain
prefix, as Jekyll's ``start_with?``; a path with ``*`` is a glob matched against the file's
folders and the file itself). The sets that apply are merged in the order written, a set
with a longer path, or of equal length with a ``type`` where the other has none, taking
precedence (``has_precedence?``); the file's own front matter then wins over the result.
Mappings merge key by key and a ``null`` never replaces a value (``Utils.deep_merge_hashes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deploybot.render.model import ConfigProblem

_TYPES = {"page": "pages", "post": "posts", "draft": "drafts"}


@dataclass(frozen=True)
class DefaultSet:
    """One valid set of ``defaults``: its scope ``path`` (as written; ``None`` when absent),
    ``type`` (``None`` when absent) and ``values``; ``glob`` is the path as a regex when it
    holds a ``*`` (compiled once, with the config)."""

    path: str | None
    type: str | None
    values: Mapping[str, Any]
    glob: re.Pattern[str] | None = field(default=None, compare=False, repr=False)


def default_sets(
    config: Mapping[str, Any],
) -> tuple[tuple[DefaultSet, ...], list[ConfigProblem]]:
    """Return the valid sets of ``config["defaults"]`` in the order written, and the
    settings found unusable (:data:`~deploybot.render.model.ConfigProblem`): a
    ``defaults`` that is not a list (Jekyll ignores it), a set that is not a mapping with a
    ``values`` mapping (skipped, as Jekyll skips it), a ``scope`` that is not a mapping
    (Jekyll stops; here the set applies to every file)."""
    sets = config.get("defaults")
    if sets is None:
        return (), []
    if not isinstance(sets, list):
        return (), [(("defaults",), "'defaults' is not a list of sets: ignored")]
    found: list[DefaultSet] = []
    problems: list[ConfigProblem] = []
    for number, item in enumerate(sets, 1):
        if not isinstance(item, Mapping) or not isinstance(item.get("values"), Mapping):
            message = f"'defaults' set {number} is not a mapping with a 'values' mapping: skipped"
            problems.append((("defaults",), message))
            continue
        scope = item.get("scope")
        if scope is not None and not isinstance(scope, Mapping):
            message = (
                f"'defaults' set {number}: 'scope' is not a mapping: the set applies to every file"
            )
            problems.append((("defaults",), message))
        scope = scope if isinstance(scope, Mapping) else {}
        kind = scope.get("type")
        kind = None if kind is None else _TYPES.get(str(kind), str(kind))
        path = scope.get("path")
        path = path if isinstance(path, str) else None
        glob = _glob_regex(path.lstrip("/")) if path and "*" in path else None
        found.append(DefaultSet(path, kind, dict(item["values"]), glob))
    return tuple(found), problems


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Jekyll's ``Utils.deep_merge_hashes(base, over)``: ``over`` wins, except that a
    ``None`` in ``over`` keeps ``base``'s value; mappings on both sides merge."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if key in merged and value is None:
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(old, value)
        else:
            merged[key] = value
    return merged


def _sanitize(path: str | None) -> str:
    """``sanitize_path``: ``''`` for none, one leading ``/`` dropped."""
    if not path:
        return ""
    return path[1:] if path.startswith("/") else path


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Ruby's ``Dir.glob`` pattern as a regex over one path (``*`` and ``?`` stay in a
    folder, ``**/`` spans folders, ``{a,b}`` alternatives, ``[...]`` classes)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            end = pattern.find("}", i)
            if end < 0:
                out.append(re.escape(char))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
                i = end
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _applies_path(entry: DefaultSet, target: str, source_path: str, folder: str) -> bool:
    """``applies_path?`` of ``entry``'s scope for a file at ``target`` (Jekyll's relative
    path) and ``source_path`` (from the source root); ``folder`` is ``collections_dir``."""
    if not entry.path:
        return True
    target = _sanitize(target)
    regex = entry.glob
    if regex is None:
        return target.startswith(_strip_dir(entry.path, folder))
    # Jekyll globs the scope on disk and asks whether the file's path starts with a match:
    # the matches that can start it are its own folders and itself.
    parts = source_path.split("/")
    prefixes = ("/".join(parts[: i + 1]) for i in range(len(parts)))
    return any(regex.match(p) and target.startswith(_strip_dir(p, folder)) for p in prefixes)


def _strip_dir(path: str, collections_dir: str) -> str:
    """``strip_collections_dir``: a scope path under ``collections_dir`` loses it."""
    prefix = collections_dir + "/"
    if collections_dir and path.startswith(prefix):
        return path[len(prefix) :]
    return path


def _precedes(old: DefaultSet | None, new: DefaultSet) -> bool:
    """``has_precedence?``: whether ``new`` wins over ``old``."""
    if old is None:
        return True
    new_path, old_path = _sanitize(new.path), _sanitize(old.path)
    if len(new_path) != len(old_path):
        return len(new_path) >= len(old_path)
    return new.type is not None or old.type is None


def defaults_for(
    sets: Sequence[DefaultSet], path: str, kind: str | None, collections_dir: str = ""
) -> dict[str, Any]:
    """Return the default values of the file ``path`` (from the source root) of type
    ``kind`` (``"pages"``, ``"posts"``, a collection label, ``None`` for a static file
    outside collections): Jekyll's ``FrontmatterDefaults#all``. A collection's documents
    are matched by their path below ``collections_dir``, as Jekyll's ``relative_path``."""
    target = _strip_dir(path, collections_dir) if kind not in (None, "pages") else path
    merged: dict[str, Any] = {}
    winner: DefaultSet | None = None
    for entry in sets:
        if entry.type is not None and entry.type != kind:
            continue
        if not _applies_path(entry, target, path, collections_dir):
            continue
        if _precedes(winner, entry):
            merged = deep_merge(merged, entry.values)
            winner = entry
        else:
            merged = deep_merge(entry.values, merged)
    return merged
