"""A gem theme's runtime dependencies, read from its ``.gemspec`` as text (never run).

Jekyll 4.3 requires each runtime dependency of the site's gem theme as a plugin
(``PluginManager#require_theme_deps``: every ``add_runtime_dependency``/``add_dependency``
but ``jekyll`` itself), so ``theme: minima`` switches on jekyll-feed and jekyll-seo-tag
with no ``plugins:`` entry. A gemspec is Ruby code: only the two calls' first arguments
written as literals (``"name"``, ``'name'``, ``%q<name>``) are read here.

A gem ships only the files its gemspec's ``files`` lists (``gem build``), so a theme read
from its repository has files its gem has not: minima's and every ``pages-themes`` theme's
repository has a ``_config.yml`` for its demo site that the gem leaves out.
:func:`ships_file` reads the ``files =`` assignment as text, in the forms theme gemspecs
use (``git ls-files -z`` filtered by ``select``/``reject``/``grep`` with a regexp literal,
or ``Dir[...]``/``Dir.glob(...)`` with glob literals), and says whether a path is in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from deploybot.support.lazy_regex import LazyPattern

# Compiled at their first use: only a gem theme has a gemspec (deploybot.support.lazy_regex).
_DEPENDENCY = LazyPattern(
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


_FILES = LazyPattern(r"^[ \t]*\w+\.files[ \t]*=[ \t]*", re.MULTILINE)
_GIT_LS_FILES = LazyPattern(
    r"`git ls-files(?P<args>[^`\n]*)`\s*\.split\(\s*(?:\"\\x0\"|\"\\0\"|\"\\x00\"|\$/)?\s*\)"
)
_LS_FILES_ARG = LazyPattern(r"-z|--|'?:(?:!|\(exclude\)):?[^'\s]*'?")
_GLOBS = LazyPattern(r"Dir(?:\.glob\(|\[)(?P<globs>[^\]\)]*)[\]\)]")
_STRING = LazyPattern(r"\"([^\"\n]*)\"|'([^'\n]*)'")
_REGEXP = (
    r"(?:%r!(?P<bang>[^!]*)!|%r\{(?P<brace>(?:[^{}]|\{[^{}]*\})*)\}|/(?P<slash>(?:\\.|[^/\n])*)/)"
    r"(?P<flags>[imx]*)"
)
_BLOCK_FILTER = LazyPattern(
    r"\s*\.(?P<how>select|reject|filter)\s*(?:\{|do)\s*\|\s*(?P<var>\w+)\s*\|\s*"
    r"(?P=var)\s*(?:\.match\??\s*\(?|=~)\s*" + _REGEXP + r"\s*\)?\s*(?:\}|end)"
)
_GREP_FILTER = LazyPattern(r"\s*\.(?P<how>grep_v|grep)\s*\(?\s*" + _REGEXP + r"\s*\)?")


def ships_file(text: str, path: str) -> bool | None:
    """Return whether the gem whose gemspec's source is ``text`` ships ``path`` (relative to
    the gem's root): True or False when its ``files =`` is in a form this reads (the module
    docstring), None when it is not (or there is no ``files =``), so the caller cannot tell.
    A Ruby regexp is read as Python's (``^``/``$`` at lines, ``m`` as DOTALL); one that
    Python cannot compile is None too."""
    matcher = _files_matcher(text[:MAX_GEMSPEC])
    return None if matcher is None else matcher(path)


def _files_matcher(text: str) -> Callable[[str], bool] | None:
    """The test of a path against the ``files =`` of the gemspec ``text`` (None: not read)."""
    found = _FILES.search(text)
    if found is None:
        return None
    rest = text[found.end() :]
    source = _GIT_LS_FILES.match(rest) or _GLOBS.match(rest)
    if source is None:
        return None
    tests: list[Callable[[str], bool]] = []
    if "args" in source.groupdict():
        args = source.group("args").split()
        if any(not _LS_FILES_ARG.fullmatch(arg) for arg in args):
            return None  # a pathspec narrows the list: not read
    else:
        globs = [a or b for a, b in _STRING.findall(source.group("globs"))]
        if not globs:
            return None
        patterns = [re.compile(_glob_regexp(glob)) for glob in globs]
        tests.append(lambda p: any(pattern.fullmatch(p) for pattern in patterns))
    rest = rest[source.end() :]
    while (step := _BLOCK_FILTER.match(rest) or _GREP_FILTER.match(rest)) is not None:
        test = _filter_test(step)
        if test is None:
            return None
        tests.append(test)
        rest = rest[step.end() :]
    if rest.lstrip().startswith("."):
        return None  # a further call this does not read
    return lambda p: all(test(p) for test in tests)


def _filter_test(step: re.Match[str]) -> Callable[[str], bool] | None:
    """The test of one ``select``/``reject``/``grep``/``grep_v`` step (None: a regexp that
    Python cannot compile)."""
    body = next(g for g in step.group("bang", "brace", "slash") if g is not None)
    flags = re.MULTILINE
    for letter in step.group("flags"):
        flags |= {"i": re.IGNORECASE, "m": re.DOTALL, "x": re.VERBOSE}[letter]
    try:
        pattern = re.compile(body.replace("\\z", "\\Z"), flags)
    except re.error:
        return None
    keep = step.group("how") in ("select", "filter", "grep")  # reject, grep_v: drop
    return lambda p: (pattern.search(p) is not None) == keep


def _glob_regexp(glob: str) -> str:
    """A Ruby ``Dir.glob`` pattern as a regexp on a path (``**/`` any folders, ``*`` and ``?``
    within a name, ``{a,b}`` either; a name starting with ``.`` matched only by a ``.``)."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/.][^/]*/)*")
            i += 3
            continue
        char = glob[i]
        if char == "*":
            out.append("(?:[^/.][^/]*)?" if i == 0 or glob[i - 1] == "/" else "[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            end = glob.find("}", i)
            if end < 0:
                out.append(re.escape(char))
            else:
                choices = glob[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_glob_regexp(c) for c in choices) + ")")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
