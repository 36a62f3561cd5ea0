"""Liquid for posts, pages, includes and the site's own layouts: python-liquid with Jekyll's
tags and filters, within the ``[render]`` limits.

Jekyll runs Liquid (Shopify's, lax about undefined values: an undefined variable or filter
prints nothing) over a document before converting it, and over each of its layouts after.
This module is that step on `python-liquid <https://jg-rp.github.io/liquid/>`_ 2.x, which
follows Ruby Liquid's golden tests; :mod:`.liquid_tags` and :mod:`.liquid_filters` add
Jekyll's tags and filters. Templates see only plain data (mappings, lists, strings,
numbers, times): python-liquid looks values up with ``obj[key]`` only, never attributes.

Limits (python-liquid's own resource limits, from :class:`~.model.LiquidLimits`):
nested loops whose lengths multiply past ``max_loop_iterations`` stop before they start,
and loops of one page render together may not run more iterations than that either; the
output (and every filter's result) may not pass the page limit; ``assign``/``capture``
values may not pass ``max_local_bytes``; includes and blocks may not nest deeper than
``max_depth``. Passing one, or a Liquid syntax error, is a ``SourceError`` naming the file
(the document, include or layout) and line.

Generated HTML (``{% highlight %}``) is not put into the text directly (Markdown would
mangle it): it becomes a placeholder word, and :func:`restore_fragments` swaps it in after.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from liquid import BoundTemplate, Environment, Mode, RenderContext
from liquid.exceptions import (
    BlockNestingError,
    ContextDepthError,
    LiquidError,
    LiquidSyntaxError,
    LocalNamespaceLimitError,
    LoopIterationLimitError,
    OutputStreamLimitError,
)
from liquid.token import TOKEN_TAG, Token

from deploybot.errors import SourceError, one_line
from deploybot.render import liquid_filters, liquid_tags
from deploybot.render.limits import LimitError, page_too_large
from deploybot.render.liquid_links import LinkIndex
from deploybot.render.model import LiquidLimits, RenderWarning
from deploybot.render.source import SourceTree

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


class _BudgetContext(RenderContext):
    """python-liquid's render context, also counting every loop iteration of the page."""

    def raise_for_loop_limit(self, length: int = 1) -> None:
        super().raise_for_loop_limit(length)
        state: RenderState = self.globals[liquid_filters.STATE]  # type: ignore[assignment]
        state.iterations += length
        if state.iterations > state.liquid.limits.max_loop_iterations:
            raise LoopIterationLimitError("loop iteration limit reached", token=None)


class _Template(BoundTemplate):
    context_class = _BudgetContext


class JekyllEnvironment(Environment):
    """A python-liquid environment with Jekyll's tags and filters and the given limits."""

    template_class = _Template

    def __init__(self, limits: LiquidLimits, max_output: int) -> None:
        super().__init__(tolerance=Mode.STRICT, strict_filters=False)
        # python-liquid reads these class-level limits through the instance.
        self.loop_iteration_limit = limits.max_loop_iterations  # type: ignore[misc]
        self.local_namespace_limit = limits.max_local_bytes  # type: ignore[misc]
        self.context_depth_limit = limits.max_depth  # type: ignore[misc]
        self.block_nesting_limit = limits.max_depth  # type: ignore[misc]
        self.output_stream_limit = max_output  # type: ignore[misc]
        liquid_tags.add_tags(self)
        liquid_filters.register(self, max_output)

    def error(
        self,
        exc: type[LiquidError] | LiquidError,
        msg: str | None = None,
        token: Token | None = None,
    ) -> None:
        """Raise ``exc``; an error python-liquid placed at the end of an expression (no
        position) takes the position of ``token``, the tag or output it is in."""
        if (
            isinstance(exc, LiquidError)
            and token is not None
            and token.start_index >= 0
            and (exc.token is None or exc.token.start_index < 0)
        ):
            exc.token = token
        super().error(exc, msg, token)


class Liquid:
    """One build's Liquid: the environment, the source tree includes are read from, the
    site's ``url``/``baseurl`` and its Markdown (``markdownify``). Parsed templates are
    cached by file and text; every read goes through ``tree`` (so a tracking tree records
    it). ``collections``: the labels of the written collections other than ``posts``,
    whose documents ``{% link %}`` finds too; ``links`` is the build's
    :class:`~.liquid_links.LinkIndex`."""

    def __init__(
        self,
        tree: SourceTree | None,
        *,
        url: str = "",
        baseurl: str = "",
        markdown: MarkdownFn | None = None,
        limits: LiquidLimits | None = None,
        max_output: int = 50_000_000,
        collections: tuple[str, ...] = (),
    ) -> None:
        self.tree = tree
        self.url, self.baseurl = url, baseurl
        self.markdown: MarkdownFn = markdown or (lambda text: text)
        self.limits = limits or LiquidLimits()
        self.max_output = max_output
        self.env = JekyllEnvironment(self.limits, max_output)
        self._parsed: dict[tuple[str, str], BoundTemplate] = {}
        self._origin: dict[int, tuple[str, int]] = {}  # id(source) -> (path, line offset)
        self.links = LinkIndex(collections)  # post_url/link look-ups, made once per build

    def parse(self, text: str, path: str, first_line: int = 1, keep: bool = True) -> BoundTemplate:
        """Return ``text`` (the file ``path`` from line ``first_line``) parsed; ``keep``
        caches it (layouts and includes; a page body is parsed once and dropped).

        Raises ``SourceError`` (path, line) for a Liquid syntax error."""
        key = (path, text)
        template = self._parsed.get(key)
        if template is None:
            self._origin[id(text)] = (path, first_line - 1)
            try:
                _check_closed(text)
                template = self.env.from_string(text, name=path)
            except LiquidError as exc:
                _place_unclosed(exc, text)
                raise self.error(exc, path) from exc
            finally:
                if not keep:
                    self._origin.pop(id(text), None)
            if keep:
                self._parsed[key] = template
        return template

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
        path, offset = self._origin.get(id(token.source), (default, 0))
        return path, liquid_tags.line_of(token) + offset

    def error(self, exc: BaseException, default: str) -> SourceError:
        """Return the ``SourceError`` for what python-liquid raised while rendering a file
        of ``default``'s page, naming the file and line and the ``[render]`` key passed."""
        token = exc.token if isinstance(exc, LiquidError) else None
        path, line = self.where(token, default)
        message = str(exc.args[0]) if exc.args else type(exc).__name__
        if isinstance(exc, OutputStreamLimitError):
            text = page_too_large(self.max_output)
            if isinstance(exc, liquid_filters.PageTooLarge):
                text = f"{message} (render.max_page_bytes)"
        elif isinstance(exc, LoopIterationLimitError):
            text = f"Liquid loops run more than {self.limits.max_loop_iterations:,} times "
            text += "(render.liquid_max_loop_iterations)"
        elif isinstance(exc, LocalNamespaceLimitError):
            text = f"Liquid variables hold more than {self.limits.max_local_bytes:,} bytes "
            text += "(render.liquid_max_local_bytes)"
        elif isinstance(exc, ContextDepthError | BlockNestingError | RecursionError):
            text = f"Liquid includes or blocks nest deeper than {self.limits.max_depth} "
            text += "(render.liquid_max_depth)"
        elif isinstance(exc, LiquidSyntaxError):
            text = f"Liquid syntax error: {message}"
        else:
            text = f"Liquid error: {one_line(message)}"
        return SourceError(text, path, line)

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
        template = self.parse(text, path, first_line, keep)
        self._origin[id(text)] = (path, first_line - 1)
        try:
            return str(template.render({**variables, liquid_filters.STATE: state}))
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
    fragments, the warnings, and the page (``page_path``: ``include_relative``'s folder;
    ``site``: ``post_url``/``link``)."""

    liquid: Liquid
    page_path: str
    site: Mapping[str, Any]
    iterations: int = 0
    fragments: dict[str, str] = field(default_factory=dict)
    warnings: list[RenderWarning] = field(default_factory=list)
    suppressed: int = 0

    @property
    def url(self) -> str:
        """The site's ``url``."""
        return self.liquid.url

    @property
    def baseurl(self) -> str:
        """The site's ``baseurl``."""
        return self.liquid.baseurl

    def markdown(self, text: str) -> str:
        """Return ``text`` converted by the site's Markdown (``markdownify``)."""
        return self.liquid.markdown(text)

    def load(self, path: str) -> BoundTemplate | None:
        """Return the parsed include at ``path`` (``None`` when the tree has none)."""
        return self.liquid.read(path)

    def warn(self, token: Token | None, message: str) -> None:
        """Record a warning at ``token``'s file and line."""
        if len(self.warnings) >= MAX_WARNINGS:
            self.suppressed += 1
            return
        path, line = self.liquid.where(token, self.page_path)
        self.warnings.append(RenderWarning(path, line, message))

    def fragment(self, html: str) -> str:
        """Keep ``html`` aside and return its placeholder word."""
        nonce = hashlib.sha1(self.page_path.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        key = f"DEPLOYBOTLIQUID{nonce}N{len(self.fragments)}X"
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


def _check_closed(text: str) -> None:
    """Raise ``LiquidSyntaxError`` at an opening ``{{`` or ``{%`` with no closing delimiter
    anywhere after it (Ruby Liquid: "Variable '{{' was not properly terminated"). Checked
    first, in one pass, because python-liquid's lexer would search to the end of the text
    again from each such opener (quadratic: 40 s for 10,000 of them)."""
    for opener, closer in (("{{", "}}"), ("{%", "%}")):
        last = text.rfind(closer)
        at = text.find(opener, last + 2 if last >= 0 else 0)
        if at >= 0:
            raise LiquidSyntaxError(
                f"{opener!r} is never closed with {closer!r}",
                token=Token(TOKEN_TAG, opener, at, text),
            )
    # The same for {% raw %} without {% endraw %} after it.
    ends = [m.end() for m in _ENDRAW.finditer(text)]
    raw = _RAW.search(text, ends[-1] if ends else 0)
    if raw is not None:
        raise LiquidSyntaxError(
            "raw tag was never closed", token=Token(TOKEN_TAG, "raw", raw.start(), text)
        )


_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}")
_ENDRAW = re.compile(r"\{%-?\s*endraw\s*-?%\}")


_UNCLOSED = re.compile(r"expected tag end(\w+)")


def _place_unclosed(exc: LiquidError, text: str) -> None:
    """Give a block never closed (python-liquid reports it at the end of the file, with no
    position) the position of its last opening tag, as Ruby Liquid names that line."""
    if exc.token is not None and exc.token.start_index >= 0:
        return
    m = _UNCLOSED.search(str(exc.args[0]) if exc.args else "")
    if m is None:
        return
    openers = list(re.finditer(r"\{%-?\s*" + re.escape(m[1]) + r"\b", text))
    if openers:
        exc.token = Token(TOKEN_TAG, m[1], openers[-1].start(), text)


_PLACEHOLDER = re.compile(r"(<p>)?(DEPLOYBOTLIQUID[0-9a-f]+N[0-9]+X)(</p>)?")


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

    def swap(m: re.Match[str]) -> str:
        nonlocal size
        fragment = fragments.get(m.group(2))
        if fragment is None:
            return m.group(0)
        if not (m.group(1) and m.group(3)):
            fragment = (m.group(1) or "") + fragment + (m.group(3) or "")
        size += len(fragment) - len(m.group(0))
        if max_output is not None and size > max_output:
            raise LimitError(page_too_large(max_output))
        return fragment

    return _PLACEHOLDER.sub(swap, html)
