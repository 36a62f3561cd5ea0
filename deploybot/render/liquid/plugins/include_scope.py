"""Whether an include reads nothing of the page it is rendered for (a helper of
:mod:`.jekyll_include_cache`).

jekyll-include-cache keeps an include's output for the whole build, so a cached include
that reads only ``site``, its parameters and what it assigns itself writes the same on every
page, and deploybot may keep it across pages too: a site whose every page renders its
navigation (just-the-docs) then renders it once per build, as Jekyll does. Any doubt
answers no, and the include is kept per page only.

An include, with the includes it includes (their names written out, not made by Liquid),
is page-independent when

- its tags are Liquid's own control flow, ``assign``/``capture``, ``include`` and
  ``include_cached`` (no ``include_relative``, ``highlight``, ``cycle``, counter or plugin
  tag: these read the page or leave per-page state behind);
- every variable it reads that none of them assigns is ``site``, ``include`` or
  ``jekyll``, and no read goes through ``content``, ``output``, ``excerpt`` or
  ``related_posts`` (what a listed document shows depends on who reads it);
- the expressions of ``where_exp``, ``find_exp`` and ``group_by_exp`` are string literals
  reading only their item and the names above, and an include's parameters too.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

SAFE_TAGS = frozenset(
    {"assign", "capture", "comment", "raw", "if", "unless", "case", "for", "break"}
    | {"continue", "echo", "liquid", "include", "include_cached"}
)
"""The tags a page-independent include may use."""
SAFE_ROOTS = frozenset({"site", "include", "jekyll", "forloop"})
"""The variables it may read without assigning them."""
LITERALS = frozenset({"nil", "null", "true", "false", "empty", "blank", "and", "or"})
LITERALS |= {"contains"}
READER_FIELDS = frozenset({"content", "output", "excerpt", "related_posts"})
"""Fields whose value depends on the document being rendered."""

_INCLUDE_TAG = re.compile(r"\{%-?\s*(include_cached|include_relative|include)\b(.*?)-?%\}", re.S)
_EXP_FILTER = re.compile(r"\b(?:where_exp|find_exp|group_by_exp)\b")
_EXP_ARGS = re.compile(
    r"\b(?:where_exp|find_exp|group_by_exp)\s*:\s*(\"|')([\w-]+)\1\s*,\s*(\"|')(.*?)\3", re.S
)
_BLOCKS = re.compile(r"\{%-?\s*(comment|raw)\s*-?%\}.*?\{%-?\s*end\1\s*-?%\}|\{%-?\s*#.*?%\}", re.S)
"""Comment and raw blocks, inline comments: what Liquid does not run."""
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_FILTER_NAME = re.compile(r"\|\s*[\w-]+")
_LOOP = re.compile(r"\{%-?\s*(?:for|tablerow)\s+([\w-]+)\s+in\b")
_ROOT = re.compile(r"(?<![\w.\-])([A-Za-z_][\w-]*)")
_PARAM = re.compile(r"([\w-]+)\s*=\s*(?:\"[^\"]*\"|'[^']*'|([\w.-]+))")
_NUMBER = re.compile(r"-?\d+(\.\d+)?\Z")


@dataclass
class _Reads:
    """What a set of includes reads and assigns."""

    roots: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)


def page_independent(liquid: Any, path: str) -> bool:
    """Return whether the include at ``path`` (a source path under ``_includes/``) is
    page-independent (module docstring), reading it and the includes it names through
    ``liquid`` (a :class:`~deploybot.render.liquid.templates.Liquid`). Raises what parsing
    them raises (``SourceError``)."""
    reads, queue, seen = _Reads(), [path], set()
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        seen.add(current)
        template = liquid.read(current)
        if template is None or not _template_reads(template, reads):
            return False
        text = liquid.tree.read(current).decode("utf-8-sig")
        nested = _source_reads(text, reads)
        if nested is None:
            return False
        queue.extend(nested)
    return not (reads.roots - reads.assigned - SAFE_ROOTS)


def _template_reads(template: Any, reads: _Reads) -> bool:
    """Add what python-liquid's analysis of ``template`` finds; False for an unsafe tag or
    a read through a reader-dependent field."""
    analysis = template.analyze(include_partials=False)
    if set(analysis.tags) - SAFE_TAGS:
        return False
    for references in analysis.variables.values():
        for variable in references:
            names = [s for s in variable.segments if isinstance(s, str)]
            if any(name in READER_FIELDS for name in names):
                return False
    reads.roots.update(analysis.globals)
    reads.assigned.update(analysis.locals)
    return True


def _source_reads(text: str, reads: _Reads) -> list[str] | None:
    """Add the roots the expression filters and include parameters of the source ``text``
    read; return the includes it names (``None`` when one is not a plain name or an
    expression is not a literal). Comments and raw blocks are left out."""
    text = _BLOCKS.sub(" ", text)
    found = list(_EXP_ARGS.finditer(text))
    if len(found) != len(_EXP_FILTER.findall(text)):
        return None
    for m in found:
        roots = _roots(m[4])
        if roots & READER_FIELDS:
            return None
        reads.roots.update(roots - {m[2]})
    reads.assigned.update(_LOOP.findall(text))  # a loop's variable, in its block
    nested: list[str] = []
    for m in _INCLUDE_TAG.finditer(text):
        markup = m[2].strip()
        name, _, params = markup.partition(" ")
        if m[1] == "include_relative" or "{" in name or not name:
            return None
        for param in _PARAM.finditer(params):
            value = param[2]
            if value is None or _NUMBER.match(value) or value in LITERALS:
                continue
            parts = value.split(".")
            if READER_FIELDS & set(parts):
                return None
            reads.roots.add(parts[0])
        nested.append(posixpath.normpath(posixpath.join("_includes", name)))
    return nested


def _roots(expression: str) -> set[str]:
    """The variables an expression string reads (its strings and keywords left out)."""
    bare = _FILTER_NAME.sub(" ", _STRING.sub(" ", expression))
    names = {m[1] for m in _ROOT.finditer(bare)}
    fields = {m[1] for m in re.finditer(r"\.([A-Za-z_][\w-]*)", bare)}
    return (names - LITERALS) | (fields & READER_FIELDS)
