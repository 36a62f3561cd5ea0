"""python-liquid itself, for :mod:`.templates`: the environment with Jekyll's tags and filters,
the page's loop budget, the checks made before parsing and the mapping of python-liquid's
errors to one-line ``SourceError`` s.

Apart from :mod:`.templates` so that importing the render stage does not import python-liquid
(with Babel, a tenth of a second): a build whose pages hold no Liquid never loads it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from liquid import BoundTemplate, Environment, Mode, RenderContext, StrictUndefined, Undefined
from liquid.ast import Node
from liquid.builtin.tags.liquid_tag import LiquidTag
from liquid.exceptions import (
    BlockNestingError,
    ContextDepthError,
    LiquidError,
    LiquidSyntaxError,
    LocalNamespaceLimitError,
    LoopIterationLimitError,
    OutputStreamLimitError,
    UndefinedError,
    UnknownFilterError,
)
from liquid.parser import get_parser
from liquid.stream import TokenStream
from liquid.token import TOKEN_EXPRESSION, TOKEN_TAG, Token

from deploybot.render.limits import page_too_large
from deploybot.render.liquid import filters, lax, lexer, tags
from deploybot.render.liquid.filters import STATE, PageTooLarge
from deploybot.render.liquid.plugins.registry import liquid_tags
from deploybot.render.liquid.settings import ErrorMode, LiquidSettings
from deploybot.render.model import LiquidLimits
from deploybot.support.errors import SourceError, one_line


class LiquidSource(Protocol):
    """What an error message reads of the build's Liquid
    (:class:`deploybot.render.liquid.templates.Liquid`): its limits, and where a token is."""

    @property
    def limits(self) -> LiquidLimits:
        """The ``[render] liquid_max_*`` limits."""

    @property
    def max_output(self) -> int:
        """The most characters a page's Liquid may write (``[render] max_page_bytes``)."""

    def where(self, token: Token | None, default: str) -> tuple[str, int | None]:
        """``(file, line)`` of ``token`` (``default`` and no line without one)."""


class PageBudget(Protocol):
    """What the loop budget counts in a page's render state
    (:class:`deploybot.render.liquid.templates.RenderState`)."""

    iterations: int

    @property
    def liquid(self) -> LiquidSource:
        """The build's Liquid, whose limits the page runs under."""


__all__ = [
    "STATE",
    "JekyllEnvironment",
    "LiquidError",
    "check_closed",
    "place_unclosed",
    "source_error",
]


class _BudgetContext(RenderContext):
    """python-liquid's render context, also counting every loop iteration of the page."""

    def raise_for_loop_limit(self, length: int = 1) -> None:
        super().raise_for_loop_limit(length)
        state: PageBudget = self.globals[filters.STATE]  # type: ignore[assignment]
        state.iterations += length
        if state.iterations > state.liquid.limits.max_loop_iterations:
            raise LoopIterationLimitError("loop iteration limit reached", token=None)


class _Template(BoundTemplate):
    context_class = _BudgetContext


class _JekyllStream(TokenStream):
    """python-liquid's token stream, giving tags the expression tokens of
    :func:`.lax.jekyll_tokenize` (``page.reversed`` is a property, as in Ruby), and
    conditions and loops as Jekyll parses them (:func:`.lax.tag_tokens`)."""

    def __init__(self, env: Environment, tokens: Iterator[Token], block_depth: int = 0) -> None:
        super().__init__(tokens, block_depth_carry=block_depth)
        self.tokens = lax.else_markups(self.tokens)
        self.env = env

    def into_inner(self, *, tag: Token | None = None, eat: bool = True) -> TokenStream:
        """Return the tokens of the current expression (see ``TokenStream.into_inner``)."""
        token = self.current
        grammar = lax.GRAMMARS.get(tag.value) if tag is not None else None
        if token.kind != TOKEN_EXPRESSION:
            if tag is not None and grammar is not None:  # Ruby's message
                lax.no_markup(self.env, tag)
            raise LiquidSyntaxError("missing expression", token=tag or token)
        if eat:
            next(self)
        if tag is not None and grammar is not None:
            markup = lax.tag_markup(tag, token)
            at = token.start_index + max(token.value.find(markup.strip()), 0)
            return lax.tag_tokens(self.env, markup, tag, at)
        return TokenStream(lax.jekyll_tokenize(token.value, token))


class _JekyllLiquidTag(LiquidTag):
    """``{% liquid %}``, its lines parsed through :class:`_JekyllStream` as the tags
    outside it are (Ruby Liquid's ``Liquid`` tag makes each line a tag of that markup)."""

    def parse(self, stream: TokenStream) -> Node:
        """Parse the tag at the head of ``stream`` (python-liquid's ``LiquidTag.parse``
        with the lines' stream replaced)."""
        if stream.peek.kind != TOKEN_EXPRESSION:
            return super().parse(stream)
        token = stream.eat(TOKEN_TAG)
        lines = stream.expect(TOKEN_EXPRESSION)
        inner = _JekyllStream(
            self.env, self._tokenize(lines.value, token=lines), stream.block_depth
        )
        block = get_parser(self.env).parse_block(inner, end=())
        return self.node_class(token, lines, block=block)


class JekyllEnvironment(Environment):
    """A python-liquid environment with Jekyll's tags and filters, the tags of the
    ``plugins`` named (:mod:`.plugins.registry`), the given limits and the site's
    ``liquid:`` settings (``settings``; Jekyll's defaults when ``None``).

    python-liquid itself stays strict (its errors raise); ``error_mode`` is applied by
    :mod:`.lax`, whose warnings for the template being parsed collect in
    :attr:`parse_warnings` (:meth:`take_warnings` empties it)."""

    template_class = _Template

    def __init__(
        self,
        limits: LiquidLimits,
        max_output: int,
        plugins: tuple[str, ...] = (),
        settings: LiquidSettings | None = None,
    ) -> None:
        self.settings = settings or LiquidSettings()
        super().__init__(
            tolerance=Mode.STRICT,
            strict_filters=self.settings.strict_filters,
            undefined=StrictUndefined if self.settings.strict_variables else Undefined,
        )
        self._parsing = threading.local()  # the environment is shared (shared_environment)
        # python-liquid reads these class-level limits through the instance.
        self.loop_iteration_limit = limits.max_loop_iterations  # type: ignore[misc]
        self.local_namespace_limit = limits.max_local_bytes  # type: ignore[misc]
        self.context_depth_limit = limits.max_depth  # type: ignore[misc]
        self.block_nesting_limit = limits.max_depth  # type: ignore[misc]
        self.output_stream_limit = max_output  # type: ignore[misc]
        tags.add_tags(self)
        self.add_tag(_JekyllLiquidTag)
        for tag in liquid_tags(plugins):  # the tags of the plugins _config.yml switches on
            self.add_tag(tag)
        filters.register(self, max_output)

    def tokenizer(self) -> Callable[[str], Iterator[Token]]:
        """python-liquid's lexer, reading the end of the text as Ruby Liquid (:mod:`.lexer`)."""
        return lexer.lexer(
            self.tag_start_string,
            self.tag_end_string,
            self.statement_start_string,
            self.statement_end_string,
        )

    @property
    def error_mode(self) -> ErrorMode:
        """The site's ``liquid.error_mode``."""
        return self.settings.error_mode

    @property
    def parse_warnings(self) -> list[tuple[Token, str]]:
        """The warnings of the template this thread is parsing: ``(token, message)``."""
        found: list[tuple[Token, str]] | None = getattr(self._parsing, "warnings", None)
        if found is None:
            found = self._parsing.warnings = []
        return found

    def parse_warning(self, token: Token, message: str) -> None:
        """Record ``message`` at ``token`` for the template being parsed."""
        self.parse_warnings.append((token, message))

    def take_warnings(self) -> list[tuple[Token, str]]:
        """Return the warnings recorded since the last call (in this thread), and forget
        them."""
        found = self.parse_warnings
        self._parsing.warnings = []
        return found

    def _parse(self, source: str) -> list[Node]:
        return get_parser(self).parse(_JekyllStream(self, self.tokenizer()(source)))

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


def source_error(liquid: LiquidSource, exc: BaseException, default: str) -> SourceError:
    """The ``SourceError`` for what python-liquid raised while rendering a file of
    ``default``'s page through ``liquid``, naming the file and line and the ``[render]``
    key passed."""
    token = exc.token if isinstance(exc, LiquidError) else None
    path, line = liquid.where(token, default)
    message = str(exc.args[0]) if exc.args else type(exc).__name__
    if isinstance(exc, OutputStreamLimitError):
        text = page_too_large(liquid.max_output)
        if isinstance(exc, PageTooLarge):
            text = f"{message} (render.max_page_bytes)"
    elif isinstance(exc, LoopIterationLimitError):
        text = f"Liquid loops run more than {liquid.limits.max_loop_iterations:,} times "
        text += "(render.liquid_max_loop_iterations)"
    elif isinstance(exc, LocalNamespaceLimitError):
        text = f"Liquid variables hold more than {liquid.limits.max_local_bytes:,} bytes "
        text += "(render.liquid_max_local_bytes)"
    elif isinstance(exc, ContextDepthError | BlockNestingError | RecursionError):
        text = f"Liquid includes or blocks nest deeper than {liquid.limits.max_depth} "
        text += "(render.liquid_max_depth)"
    elif isinstance(exc, LiquidSyntaxError):
        text = f"Liquid syntax error: {message}"
    elif isinstance(exc, UndefinedError):  # liquid.strict_variables
        text = f"Liquid error: undefined variable {_undefined_name(message)}"
    elif isinstance(exc, UnknownFilterError):  # liquid.strict_filters
        text = f"Liquid error: undefined filter {message.split()[-1].strip(_QUOTES)}"
    else:
        text = f"Liquid error: {one_line(message)}"
    return SourceError(text, path, line)


_QUOTES = "'\""


def _undefined_name(message: str) -> str:
    """The key Ruby names in ``undefined variable KEY``: the last of python-liquid's path
    (``'nope' is undefined``, ``page.a.b is undefined``)."""
    path = message.removesuffix(" is undefined").strip(_QUOTES)
    return re.split(r"[.\[]", path)[-1].strip(_QUOTES + "]")


def check_closed(text: str) -> None:
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


def place_unclosed(exc: LiquidError, text: str) -> None:
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
