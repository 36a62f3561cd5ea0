"""Liquid for posts, pages, includes and the site's own layouts: python-liquid with Jekyll's
tags and filters, within the ``[render]`` limits.

Jekyll runs Liquid (Shopify's, lax about undefined values: an undefined variable or filter
prints nothing) over a document before converting it, and over each of its layouts after.
This module is that step on `python-liquid <https://jg-rp.github.io/liquid/>`_ 2.x, which
follows Ruby Liquid's golden tests; :mod:`.tags` and :mod:`.filters` add
Jekyll's tags and filters. Templates see only plain data (mappings, lists, strings,
numbers, times): python-liquid looks values up with ``obj[key]`` only, never attributes.

Limits (python-liquid's own resource limits, from :class:`~deploybot.render.model.LiquidLimits`):
nested loops whose lengths multiply past ``max_loop_iterations`` stop before they start,
and loops of one page render together may not run more iterations than that either; the
output (and every filter's result) may not pass the page limit; ``assign``/``capture``
values may not pass ``max_local_bytes``; includes and blocks may not nest deeper than
``max_depth``. Passing one, or a Liquid syntax error, is a ``SourceError`` naming the file
(the document, include or layout) and line; but a ``{{ … }}``, ``assign`` value or condition
Ruby Liquid's strict parser refuses is read as Jekyll's ``liquid.error_mode`` says
(:mod:`.lax`, :mod:`.settings`: by default its lax parser's reading and one warning).

Generated HTML (``{% highlight %}``) is not put into the text directly (Markdown would
mangle it): it becomes a placeholder word, and :func:`restore_fragments` swaps it in after.
"""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING, Any

from deploybot.render.limits import LimitError, page_too_large
from deploybot.render.liquid.links import LinkIndex
from deploybot.render.liquid.settings import LiquidSettings
from deploybot.render.model import LiquidLimits, RenderWarning
from deploybot.render.read.source import SourceTree
from deploybot.support.errors import SourceError, one_line

if TYPE_CHECKING:
    from liquid import BoundTemplate
    from liquid.token import Token

    from deploybot.render.liquid.environment import JekyllEnvironment

MAX_WARNINGS = 100
"""Warnings kept per page; one more line says how many were left out."""
MarkdownFn = Callable[[str], str]


@dataclass(frozen=True)
class LiquidResult:
    """Content after Liquid: ``text`` with placeholder words, ``fragments`` mapping each
    placeholder to its HTML, and the ``warnings`` (file lines) for what was dropped."""

    text: str
    fragments: Mapping[str, str]
    warnings: tuple[RenderWarning, ...]


@functools.lru_cache(maxsize=8)
def shared_environment(
    limits: LiquidLimits,
    max_output: int,
    tags: tuple[str, ...],
    plugins: tuple[str, ...] = (),
    settings: LiquidSettings | None = None,
) -> JekyllEnvironment:
    """Return the python-liquid environment for these limits, registered ``tags`` (the
    names in :data:`~deploybot.render.liquid.tags.TAGS`, so a tag registered later gets a new
    environment), ``plugins`` (the Jekyll plugins whose tags it has) and ``liquid:``
    settings, made once per process.

    An environment holds only what its limits and settings decide (the tags, the guarded
    filters, the limits themselves, ``error_mode``) and the warnings of the template being
    parsed (per thread, taken at the end of each parse): no build's state, which lives in
    each render's context. Making one
    registers every tag and wraps every filter, a few milliseconds that every document of
    every build would otherwise pay again."""
    from deploybot.render.liquid.environment import JekyllEnvironment

    return JekyllEnvironment(limits, max_output, plugins, settings)


class Liquid:
    """One build's Liquid: the environment, the source tree includes are read from, the
    site's ``url``/``baseurl``, its ``timezone`` (the date filters read dates in it) and its
    Markdown (``markdownify``). Parsed templates are
    cached by file and text; every read goes through ``tree`` (so a tracking tree records
    it). ``collections``: the labels of the written collections other than ``posts``,
    whose documents ``{% link %}`` finds too; ``plugins``: the plugins ``_config.yml``
    switches on (their tags are added); ``links`` is the build's :class:`~.links.LinkIndex`."""

    def __init__(
        self,
        tree: SourceTree | None,
        *,
        url: str = "",
        baseurl: str = "",
        timezone: tzinfo = UTC,
        markdown: MarkdownFn | None = None,
        limits: LiquidLimits | None = None,
        max_output: int = 50_000_000,
        collections: tuple[str, ...] = (),
        plugins: tuple[str, ...] = (),
        settings: LiquidSettings | None = None,
    ) -> None:
        self.tree = tree
        self.plugins = plugins
        self.settings = settings or LiquidSettings()
        self.url, self.baseurl = url, baseurl
        self.timezone = timezone
        self.markdown: MarkdownFn = markdown or (lambda text: text)
        self.limits = limits or LiquidLimits()
        self.max_output = max_output
        self._env: JekyllEnvironment | None = None
        self._parsed: dict[tuple[str, str], BoundTemplate] = {}
        self._origin: dict[int, tuple[str, int]] = {}  # id(source) -> (path, line offset)
        self.links = LinkIndex(collections)  # post_url/link look-ups, made once per build

    @property
    def env(self) -> JekyllEnvironment:
        """The python-liquid environment, made (and python-liquid imported) on first use:
        a build whose pages hold no Liquid never needs it."""
        if self._env is None:
            from deploybot.render.liquid.tags import tag_names

            self._env = shared_environment(
                self.limits, self.max_output, tuple(tag_names()), self.plugins, self.settings
            )
        return self._env

    def prepare(self) -> None:
        """Make the environment now (python-liquid imported, the tags registered), as a build
        whose layouts are Liquid does before it forks its render workers."""
        self.env.from_string("{{ x }}", name="")

    def parse(self, text: str, path: str, first_line: int = 1, keep: bool = True) -> BoundTemplate:
        """Return ``text`` (the file ``path`` from line ``first_line``) parsed; ``keep``
        caches it (layouts and includes; a page body is parsed once and dropped).

        The warnings of ``liquid.error_mode: warn`` (each a markup Ruby Liquid's strict
        parser refuses) are kept with it, for :meth:`parse_warnings`.

        Raises ``SourceError`` (path, line) for a Liquid syntax error."""
        from deploybot.render.liquid.environment import LiquidError, check_closed, place_unclosed

        key = (path, text)
        template = self._parsed.get(key)
        if template is None:
            self._origin[id(text)] = (path, first_line - 1)
            self.env.take_warnings()
            try:
                check_closed(text)
                template = self.env.from_string(text, name=path)
                template.parse_warnings = tuple(  # type: ignore[attr-defined]
                    self._parse_warning(token, message, path)
                    for token, message in self.env.take_warnings()
                )
            except LiquidError as exc:
                place_unclosed(exc, text)
                raise self.error(exc, path) from exc
            finally:
                if not keep:
                    self._origin.pop(id(text), None)
            if keep:
                self._parsed[key] = template
        return template

    def _parse_warning(self, token: Token, message: str, default: str) -> RenderWarning:
        path, line = self.where(token, default)
        mode = self.settings.error_mode.value
        text = f"Liquid syntax error: {message} (read by Jekyll's lax parser, as with "
        return RenderWarning(path, line, text + f"liquid.error_mode: {mode})")

    @staticmethod
    def parse_warnings(template: BoundTemplate) -> tuple[RenderWarning, ...]:
        """Return the warnings found when ``template`` was parsed (see :meth:`parse`)."""
        found: tuple[RenderWarning, ...] = getattr(template, "parse_warnings", ())
        return found

    def read(self, path: str) -> BoundTemplate | None:
        """Return the template in the file ``path`` of the tree (``None`` when absent).

        Raises ``SourceError`` for a file that is not UTF-8 or does not parse."""
        if self.tree is None:
            return None
        try:
            data = self.tree.read(path)
        except KeyError:
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceError("not valid UTF-8", path) from exc
        return self.parse(text, path)

    def where(self, token: Token | None, default: str) -> tuple[str, int | None]:
        """Return ``(file, line)`` of ``token`` (``default`` and no line without one)."""
        if token is None or token.start_index < 0:
            return default, None
        from deploybot.render.liquid.tags import line_of

        path, offset = self._origin.get(id(token.source), (default, 0))
        return path, line_of(token) + offset

    def error(self, exc: BaseException, default: str) -> SourceError:
        """Return the ``SourceError`` for what python-liquid raised while rendering a file
        of ``default``'s page, naming the file and line and the ``[render]`` key passed."""
        from deploybot.render.liquid.environment import source_error

        return source_error(self, exc, default)

    def start(self, page_path: str, site: Mapping[str, Any]) -> RenderState:
        """Return a fresh state for rendering the page ``page_path`` (its body and its
        layouts share the loop budget, the fragments and the warnings)."""
        return RenderState(self, page_path, site)

    def render(
        self,
        state: RenderState,
        text: str,
        path: str,
        variables: Mapping[str, Any],
        first_line: int = 1,
        keep: bool = False,
    ) -> str:
        """Return ``text`` (the file ``path``, from line ``first_line``) rendered with
        ``variables`` (``site``, ``page``, ``layout``, ``content``, ``paginator``);
        ``keep`` caches the parsed template (a layout).

        Raises ``SourceError`` naming the file and line for a syntax error, a limit passed
        or a failed filter or tag."""
        if "{{" not in text and "{%" not in text and len(text) <= self.max_output:
            # No Liquid in it: Jekyll renders such a document without Liquid
            # (``Utils.has_liquid_construct?``), and the output would be the text.
            return text
        from deploybot.render.liquid.environment import STATE, LiquidError

        template = self.parse(text, path, first_line, keep)
        state.note(self.parse_warnings(template))
        self._origin[id(text)] = (path, first_line - 1)
        try:
            return str(template.render({**variables, STATE: state}))
        except SourceError:
            raise
        except (LiquidError, RecursionError) as exc:
            raise self.error(exc, path) from exc
        except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as exc:
            # A Python error inside a filter on odd input: bad input, not a bot failure.
            raise SourceError(f"Liquid error: {one_line(exc)}", path) from exc
        finally:
            if not keep:
                self._origin.pop(id(text), None)


@dataclass
class RenderState:
    """What one page's Liquid renders share: the loop iterations run so far, the HTML
    fragments, the warnings, the outputs ``include_cached`` keeps (by
    :func:`~deploybot.render.liquid.plugins.jekyll_include_cache.cache_key`), and the
    page (``page_path``: ``include_relative``'s folder; ``site``: ``post_url``/``link``)."""

    liquid: Liquid
    page_path: str
    site: Mapping[str, Any]
    iterations: int = 0
    fragments: dict[str, str] = field(default_factory=dict)
    warnings: list[RenderWarning] = field(default_factory=list)
    suppressed: int = 0
    noted: set[RenderWarning] = field(default_factory=set)
    include_cache: dict[tuple[object, ...], str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The site's ``url``."""
        return self.liquid.url

    @property
    def baseurl(self) -> str:
        """The site's ``baseurl``."""
        return self.liquid.baseurl

    @property
    def timezone(self) -> tzinfo:
        """The site's zone (Jekyll's ``timezone``, ``UTC`` by default)."""
        return self.liquid.timezone

    def markdown(self, text: str) -> str:
        """Return ``text`` converted by the site's Markdown (``markdownify``)."""
        return self.liquid.markdown(text)

    def load(self, path: str) -> BoundTemplate | None:
        """Return the parsed include at ``path`` (``None`` when the tree has none); its
        parse warnings join the page's."""
        template = self.liquid.read(path)
        if template is not None:
            self.note(self.liquid.parse_warnings(template))
        return template

    def note(self, warnings: tuple[RenderWarning, ...]) -> None:
        """Add each of ``warnings`` (a template's parse warnings) the first time the page
        meets it (an include in a loop is parsed once and warned of once)."""
        for warning in warnings:
            if warning not in self.noted:
                self.noted.add(warning)
                self._add(warning)

    def warn(self, token: Token | None, message: str) -> None:
        """Record a warning at ``token``'s file and line."""
        path, line = self.liquid.where(token, self.page_path)
        self._add(RenderWarning(path, line, message))

    def _add(self, warning: RenderWarning) -> None:
        if len(self.warnings) >= MAX_WARNINGS:
            self.suppressed += 1
            return
        self.warnings.append(warning)

    def fragment(self, html: str) -> str:
        """Keep ``html`` aside and return its placeholder word."""
        key = f"DEPLOYBOTLIQUID{_NONCE}N{len(self.fragments)}X"
        self.fragments[key] = html
        return key

    def all_warnings(self) -> tuple[RenderWarning, ...]:
        """Return the warnings, plus one line for those not kept."""
        extra: tuple[RenderWarning, ...] = ()
        if self.suppressed:
            message = f"{self.suppressed} more Liquid warnings not shown"
            extra = (RenderWarning(self.page_path, None, message),)
        return (*self.warnings, *extra)


def render_liquid(
    text: str,
    *,
    path: str,
    first_line: int = 1,
    variables: Mapping[str, Any] | None = None,
    liquid: Liquid | None = None,
    max_output: int | None = None,
) -> LiquidResult:
    """Render the body ``text`` of ``path`` (starting at file line ``first_line``) with
    ``variables`` (``site``, ``page``…) through ``liquid`` (default: no includes, default
    limits and ``max_output``).

    Raises ``SourceError`` (path, line) for a syntax error or a limit passed."""
    engine = liquid or Liquid(None, max_output=max_output or 50_000_000)
    site = (variables or {}).get("site", {})
    state = engine.start(path, site if isinstance(site, Mapping) else {})
    out = engine.render(state, text, path, variables or {}, first_line)
    return LiquidResult(out, dict(state.fragments), state.all_warnings())


def page_folder(path: str) -> str:
    """Return the folder of the source ``path`` ('' at the root)."""
    return posixpath.dirname(path)


# A literal start, so the scan jumps between placeholders (with an optional ``(<p>)?``
# first, the regex engine tried every position of the page: 0.9 ms a themed page).
_PLACEHOLDER = re.compile(r"DEPLOYBOTLIQUID[0-9a-f]+N[0-9]+X")
# The same for every page (it was a digest of the page's path): two pages with the same body
# then give Markdown the same text, which it converts once (markdown_to_html's memo), as
# Jekyll 4 converts the same content once. A page restores its own fragments only.
_NONCE = hashlib.sha1(b"deploybot liquid fragment").hexdigest()[:10]
_OPEN, _CLOSE = "<p>", "</p>"


def restore_fragments(
    html: str, fragments: Mapping[str, str], max_output: int | None = None
) -> str:
    """Replace each placeholder in converted ``html`` by its fragment; a placeholder that
    Markdown wrapped alone in ``<p>…</p>`` loses the paragraph, as block HTML does.

    One pass over ``html``. Raises :class:`~deploybot.render.limits.LimitError` when the
    result would pass ``max_output`` characters.
    """
    if not fragments:
        return html
    size = len(html)
    parts: list[str] = []
    done = 0  # html[:done] is in parts
    for m in _PLACEHOLDER.finditer(html):
        fragment = fragments.get(m.group(0))
        if fragment is None:
            continue
        start, end = m.span()
        opened = start - len(_OPEN) >= done and html.startswith(_OPEN, start - len(_OPEN))
        if opened and html.startswith(_CLOSE, end):  # alone in its paragraph: it goes
            start, end = start - len(_OPEN), end + len(_CLOSE)
        size += len(fragment) - (end - start)
        if max_output is not None and size > max_output:
            raise LimitError(page_too_large(max_output))
        parts += (html[done:start], fragment)
        done = end
    if not parts:
        return html
    parts.append(html[done:])
    return "".join(parts)
