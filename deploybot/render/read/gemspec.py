"""A gem theme's runtime dependencies, read from its ``.gemspec`` as text (never run).

Jekyll 4.3 requires each runtime dependency of the site's gem theme as a plugin
(``PluginManager#require_theme_deps``: every ``add_runtime_dependency``/``add_dependency``
but ``jekyll`` itself), so ``theme: minima`` switches on jekyll-feed and jekyll-seo-tag
with no ``plugins:`` entry. A gemspec is Ruby code: only the two calls' first arguments
written as literals (``"name"``, ``'name'``, ``%q<name>``) are read here.
"""

from __future__ import annotations

import re

_DEPENDENCY = re.compile(
    r"\badd_(runtime_|development_)?dependency\s*\(?\s*"
    r"(?:%q<([^>\n]{1,100})>|\"([^\"\n]{1,100})\"|'([^'\n]{1,100})')"
)
MAX_GEMSPEC = 256 * 1024
"""Bytes of a gemspec read at most (real ones are a few KB)."""


def runtime_dependencies(text: str) -> tuple[str, ...]:
    """Return the gem names ``text`` (a gemspec's source) adds as runtime dependencies, in
    order, each once, without ``jekyll``. A name also added as a development dependency is
    left out: an installed gem's generated spec repeats every dependency, development ones
    too, as ``add_dependency`` for old RubyGems."""
    names: list[str] = []
    development: set[str] = set()
    for match in _DEPENDENCY.finditer(text[:MAX_GEMSPEC]):
        name = next(group for group in match.groups()[1:] if group is not None).strip()
        if match.group(1) == "development_":
            development.add(name)
        elif name and name != "jekyll":
            names.append(name)
    return tuple(n for n in dict.fromkeys(names) if n not in development)
