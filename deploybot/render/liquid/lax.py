"""Ruby Liquid's two parsers for ``{{ … }}``, so that a template python-liquid refuses
renders as Jekyll renders it, and ``liquid.error_mode`` decides what is said about it.

Jekyll 4.3.1 here runs Ruby Liquid 5.4.0 (Debian's ``ruby-liquid``; Jekyll's gemspec allows
``>= 4.0, < 6``). Its ``Variable`` (``lib/liquid/variable.rb``) parses the markup of an
output with the strict parser (``lexer.rb``, ``parser.rb``) and, when that fails, in every
mode but ``strict``, with the lax one (regular expressions over the markup:
``MarkupWithQuotedFragment``, ``FilterParser``, ``FilterArgsRegex``; ``Expression.parse``
and ``VariableLookup`` for each value), recording the strict parser's error as a warning
in ``warn`` mode (``parser_switching.rb``). Jekyll prints each as ``Liquid Warning: Liquid
syntax error (line N): MESSAGE in "{{MARKUP}}" in FILE`` and goes on; in ``strict`` mode
the error stops the build. What the lax parser makes of the markups sites hold, measured
with ``jekyll build`` (``tests/fixtures/jekyll/liquid_tolerance``):

- ``{{ x | | upcase }}``: ``x`` upcased (the empty filter is skipped);
- ``{{< youtube abc >}}`` (a Hugo shortcode): nothing (the name is ``<``, no variable);
- ``{{ page.title\u00a0}}`` (a no-break space): the title (Ruby's ``\\w`` and ``\\s`` are
  ASCII: the space is neither part of the name nor whitespace, and the lookup skips it);
- ``{{ page.title" }}``: the title; ``{{ 'abc }}``: ``abc``, a variable (nil);
- ``{{ page.contains }}``: the property (``contains`` is an operator to the lexer);
- ``{{ x upcase }}``: ``x``, ``{{ x | upcase: }}``: ``x`` upcased.

Ruby's lexer has no keywords: its strict parser accepts ``page.reversed``,
``item.continue``, ``page.limit`` (any word after a dot but ``contains``), and ``limit``,
``offset`` or ``reversed`` as variables in a condition, ``case``/``when`` or a loop's
values, which python-liquid's lexer takes for keywords: :func:`jekyll_tokenize` reads them
as names there (:class:`Context`).

``{% assign x = … %}`` and ``{% echo … %}`` take an output's markup (``Assign``, ``Echo``
make a ``Variable`` of it); ``if``/``elsif``/``unless`` conditions and ``for`` loops go the
same way (``If#strict_parse``/``lax_parse``, ``For#strict_parse``/``lax_parse``:
``{% if page.title\u00a0== 'X' %}`` is, to the lax parser, the truth of ``page.title``, and
Jekyll prints the block; ``{% for i in x limit: 2 reversed %}`` is not reversed, as
``reversed`` must follow the collection). A markup python-liquid refuses stays a
``SourceError`` where Jekyll's lax parser refuses it too (``{% if %}``, ``{% for x in %}``:
measured), with Ruby's message.

``case``/``when``, ``cycle``, ``tablerow``, ``capture``, ``increment`` and ``decrement``
have no strict parser in Ruby Liquid 5.4.0: their regular expressions (``Case::Syntax``,
``WhenSyntax``, ``Cycle::NamedSyntax``, ``TableRow::Syntax``, ``Capture::Syntax``; the
counters take the markup stripped) read every markup, in every mode, and Jekyll prints
no warning for them, ``strict`` or not (measured: ``tests/fixtures/jekyll/liquid_tolerance``
``case.html``, ``cycle.html``, ``tablerow.html``, ``capture.html``). So a markup not surely
plain is read as those read it (:func:`lax_case`, :func:`lax_when`, :func:`lax_tablerow`,
:func:`lax_cycle`, :func:`lax_capture`, :func:`counter_name`), silently: ``{% case x |
upcase %}`` is ``x``, ``{% when 'a' 'b' %}`` is ``'a'``, ``{% cycle 'a' 'b' %}`` always
``a``, ``{% tablerow i in x reversed %}`` not reversed, ``{% capture 'q' %}`` captures
``q``, ``{% increment x y %}`` counts ``x y``. What they refuse (``{% case %}``,
``{% when %}``, ``{% cycle , %}``, ``{% tablerow i x %}``, ``{% capture %}``) stops the
build with Ruby's message, as it stops Jekyll.
An ``{% else … %}``'s markup is ignored in a ``for`` (and ``if``/``unless``) and refused
in a ``case`` (:func:`else_markups`). The lines of a ``{% liquid %}`` tag are read the same
way.

A ``{% comment %}``'s body is checked too (Ruby parses it, and warns, or in ``strict``
mode stops, on what its strict parser refuses there; :func:`check_comment`).

A tag no one defines (a site's ``_plugins/`` tag such as ``{% youtube abc %}``, or a block
``{% mytag %}…{% endmytag %}``) stops Jekyll in every mode, ``--safe`` or not: ``Liquid
syntax error (line N): Unknown tag 'youtube'``, exit 1 (measured); the same message stops
deploybot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol, cast

from liquid.builtin.expressions import (
    BooleanExpression,
    Filter,
    FilteredExpression,
    KeywordArgument,
    LoopExpression,
    Nil,
    Path,
    PositionalArgument,
    StringLiteral,
    tokenize,
)
from liquid.builtin.expressions.primitive import (
    FalseLiteral,
    FloatLiteral,
    IntegerLiteral,
    RangeLiteral,
    TrueLiteral,
)
from liquid.exceptions import LiquidSyntaxError
from liquid.stream import TokenStream
from liquid.token import (
    TOKEN_COLON,
    TOKEN_COMMA,
    TOKEN_COMMENT,
    TOKEN_CONTAINS,
    TOKEN_CONTINUE,
    TOKEN_DOT,
    TOKEN_EXPRESSION,
    TOKEN_IN,
    TOKEN_OFFSET,
    TOKEN_OUTPUT,
    TOKEN_RANGE,
    TOKEN_RANGE_LITERAL,
    TOKEN_TAG,
    TOKEN_WORD,
    Token,
)

from deploybot.render.liquid import jekyll_filters
from deploybot.render.liquid.settings import ErrorMode
from deploybot.support.lazy_regex import LazyPattern

if TYPE_CHECKING:
    from liquid import Environment
    from liquid.expression import Expression

_A = re.ASCII  # Ruby's \w, \s and \d are ASCII
_QUOTED_STRING = r"\"[^\"]*\"|'[^']*'"
# A group, as Ruby interpolates a Regexp (``(?-mix:…)``): ``{_QUOTED_FRAGMENT}.*`` must
# not bind the ``.*`` to its last alternative only.
_QUOTED_FRAGMENT = rf"(?:{_QUOTED_STRING}|(?:[^\s,\|'\"]|{_QUOTED_STRING})+)"
_MARKUP_WITH_QUOTED_FRAGMENT = re.compile(rf"({_QUOTED_FRAGMENT})(.*)", _A | re.S)
_FILTER_MARKUP = re.compile(r"\|\s*(.*)", _A | re.S)
_FILTER_PARSER = re.compile(rf"(?:\s+|{_QUOTED_FRAGMENT}|,)+", _A)
_FILTER_ARGS = re.compile(rf"(?::|,)\s*((?:\w+\s*:\s*)?{_QUOTED_FRAGMENT})", _A)
_WORD = re.compile(r"\w+", _A)
_JUST_TAG_ATTRIBUTES = re.compile(rf"\A(\w[\w-]*)\s*:\s*({_QUOTED_FRAGMENT})\Z", _A)
_VARIABLE_PARSER = re.compile(r"\[[^\]]+\]|[\w\-]+\??", _A)
_INTEGER = re.compile(r"\A(-?\d+)\Z", _A)
_FLOAT = re.compile(r"\A(-?\d[\d\.]+)\Z", _A)
_FLOAT_PREFIX = re.compile(r"-?\d+(?:\.\d+)?", _A)
_RANGE = re.compile(r"\A\(\s*(?>(\S+)\s*\.\.)\s*(\S+)\s*\)\Z", _A)
_RUBY_SPACE = " \t\n\v\f\r\0"  # String#strip


# The strict parser (lexer.rb, parser.rb; Variable#strict_parse).

_LEXER = re.compile(
    r"\s*(?:(?P<comparison>==|!=|<>|<=?|>=?|contains(?=\s))"
    r"|(?P<string>'[^']*'|\"[^\"]*\")"
    r"|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<id>[a-zA-Z_][\w-]*\??)"
    r"|(?P<dotdot>\.\.)"
    r"|(?P<special>[|.:,\[\]()?-])"
    r"|(?P<other>\S))",
    _A | re.S,
)
_SPECIALS = {
    "|": "pipe",
    ".": "dot",
    ":": "colon",
    ",": "comma",
    "[": "open_square",
    "]": "close_square",
    "(": "open_round",
    ")": "close_round",
    "?": "question",
    "-": "dash",
}


# Markups the strict parser surely accepts, told without lexing them (most of them): a
# path, string or number, then filters with such arguments; for a condition, comparisons
# of such values joined by and/or. No word in them is `contains` before a space (an
# operator to the lexer). Compiled at their first use: about 5 ms, and ``case``, ``when``
# and ``tablerow`` are rare (:mod:`deploybot.support.lazy_regex`).
_ID = r"(?!contains\s)[a-zA-Z_][\w-]*\??"
_VALUE = (
    rf"(?:{_ID}(?:\.{_ID}|\[(?:-?\d+|'[^']*'|\"[^\"]*\")\])*"
    r"|'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?(?![\w.]))"
)
_ARG = rf"(?:{_ID}\s*:\s*)?{_VALUE}"
_PLAIN_VARIABLE = LazyPattern(
    rf"\s*(?:{_VALUE}(?:\s*\|\s*{_ID}(?:\s*:\s*{_ARG}(?:\s*,\s*{_ARG})*)?)*)?\s*", _A
)
_COMPARE = rf"{_VALUE}(?:\s*(?:==|!=|<>|<=?|>=?)\s*{_VALUE}|\s+contains\s+{_VALUE})?"
_PLAIN_CONDITION = LazyPattern(rf"\s*{_COMPARE}(?:\s+(?:and|or)\s+{_COMPARE})*\s*", _A)
_BOUND = rf"(?:{_VALUE}|-?\d+)"
_COLLECTION = rf"(?:{_VALUE}|\(\s*{_BOUND}\s*\.\.\s*{_BOUND}\s*\))"
_PLAIN_FOR = LazyPattern(
    rf"\s*{_ID}\s+in\s+{_COLLECTION}(?:\s+reversed)?(?:\s+(?:limit|offset)\s*:\s*{_VALUE})*\s*",
    _A,
)
_PLAIN_CASE = LazyPattern(rf"\s*{_VALUE}\s*", _A)
_PLAIN_WHEN = LazyPattern(rf"\s*{_VALUE}(?:(?:\s*,\s*|\s+or\s+){_VALUE})*\s*", _A)
_PLAIN_TABLEROW = LazyPattern(
    rf"\s*\w+\s+in\s+{_COLLECTION}(?:\s+(?:cols|limit|offset)\s*:\s*{_VALUE})*\s*", _A
)


class RubySyntaxError(Exception):
    """Ruby Liquid's strict parser refused a markup; ``args[0]`` is its message."""


def _lex(markup: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    for m in _LEXER.finditer(markup):  # contiguous: ``other`` takes any character
        kind = m.lastgroup
        value = m[kind] if kind is not None else ""
        if kind == "special":
            kind = _SPECIALS[value]
        elif kind == "other":
            raise RubySyntaxError(f"Unexpected character {value}")
        tokens.append((kind or "", value))
    tokens.append(("end_of_string", ""))
    return tokens


class _StrictParser:
    """Ruby's ``Liquid::Parser``, checking only (it builds nothing)."""

    def __init__(self, markup: str) -> None:
        self.tokens = _lex(markup)
        self.p = 0

    def look(self, kind: str, ahead: int = 0) -> bool:
        at = self.p + ahead
        return at < len(self.tokens) and self.tokens[at][0] == kind

    def consume(self, kind: str | None = None) -> None:
        token = self.tokens[self.p]
        if kind is not None and token[0] != kind:
            raise RubySyntaxError(f"Expected {kind} but found {token[0]}")
        self.p += 1

    def word(self, value: str) -> bool:
        """Consume the current token if it is the ``id`` ``value`` (Ruby's ``id?``)."""
        if self.tokens[self.p] == ("id", value):
            self.p += 1
            return True
        return False

    def consume_if(self, kind: str) -> bool:
        if self.look(kind):
            self.p += 1
            return True
        return False

    def expression(self) -> None:
        kind, value = self.tokens[self.p]
        if kind == "id":
            self.consume()
            self.lookups()
        elif kind == "open_square":
            self.consume()
            self.expression()
            self.consume("close_square")
            self.lookups()
        elif kind in ("string", "number"):
            self.consume()
        elif kind == "open_round":
            self.consume()
            self.expression()
            self.consume("dotdot")
            self.expression()
            self.consume("close_round")
        else:
            shown = f"[:{kind}]" if kind == "end_of_string" else f"[:{kind}, {_inspect(value)}]"
            raise RubySyntaxError(f"{shown} is not a valid expression")

    def argument(self) -> None:
        if self.look("id") and self.look("colon", 1):
            self.consume()
            self.consume()
        self.expression()

    def lookups(self) -> None:
        while True:
            if self.consume_if("open_square"):
                self.expression()
                self.consume("close_square")
            elif self.consume_if("dot"):
                self.consume("id")
            else:
                return


def _inspect(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def strict_variable_error(markup: str) -> str | None:
    """Return the message of Ruby Liquid's strict parser for the ``{{ … }}`` markup
    ``markup`` (``None`` when it accepts it), as ``Variable#strict_parse`` raises it
    (``Expected id but found pipe``, ``Unexpected character "``)."""
    if _PLAIN_VARIABLE.fullmatch(markup):
        return None
    try:
        parser = _StrictParser(markup)
        if parser.look("end_of_string"):
            return None
        parser.expression()
        while parser.consume_if("pipe"):
            parser.consume("id")
            if parser.consume_if("colon"):
                parser.argument()
                while parser.consume_if("comma"):
                    parser.argument()
        parser.consume("end_of_string")
    except RubySyntaxError as exc:
        return str(exc.args[0])
    return None


# The lax parser (Variable#lax_parse, Expression.parse, VariableLookup).


def lax_variable(markup: str, token: Token) -> FilteredExpression:
    """Return the expression Ruby Liquid's lax parser makes of the ``{{ … }}`` markup
    ``markup`` (``token``: the output statement, for positions); never raises."""
    m = _MARKUP_WITH_QUOTED_FRAGMENT.search(markup)
    if m is None:
        return FilteredExpression(token, Nil(token), [])
    filters: list[Filter] = []
    rest = _FILTER_MARKUP.search(m[2])
    if rest is not None:
        for part in _FILTER_PARSER.findall(rest[1]):
            name = _WORD.search(part)
            if name is None:
                continue
            filters.append(Filter(token, name[0], _filter_args(part, token)))
    return FilteredExpression(token, ruby_expression(m[1], token), filters)


def _filter_args(part: str, token: Token) -> list[KeywordArgument | PositionalArgument]:
    args: list[KeywordArgument | PositionalArgument] = []
    for raw in _FILTER_ARGS.findall(part):
        keyword = _JUST_TAG_ATTRIBUTES.match(raw)
        if keyword is not None:
            args.append(KeywordArgument(token, keyword[1], ruby_expression(keyword[2], token)))
        else:
            args.append(PositionalArgument(ruby_expression(raw, token)))
    return args


def ruby_expression(markup: str, token: Token) -> Expression:
    """Return the value ``Liquid::Expression.parse`` makes of ``markup``: a quoted string,
    an integer, a range, a float, ``nil``/``true``/``false``/``blank``/``empty``, or a
    variable looked up segment by segment (``VariableLookup``)."""
    text = markup.strip(_RUBY_SPACE)
    if len(text) >= 1 and text[0] == text[-1] and text[0] in "\"'":
        return StringLiteral(token, text[1:-1])
    if _INTEGER.match(text):
        return IntegerLiteral(token, int(text))
    rng = _RANGE.match(text)
    if rng is not None:
        return RangeLiteral(token, ruby_expression(rng[1], token), ruby_expression(rng[2], token))
    if _FLOAT.match(text):
        prefix = _FLOAT_PREFIX.match(text)
        return FloatLiteral(token, float(prefix[0] if prefix else 0))  # "1.2.3".to_f: 1.2
    literal = _LITERALS.get(text)
    if literal is not None:
        return literal(token)
    return _lookup(text, token)


def _empty(token: Token) -> Expression:
    return StringLiteral(token, "")


_LITERALS: dict[str, Callable[[Token], Expression]] = {
    "": Nil,
    "nil": Nil,
    "null": Nil,
    "true": TrueLiteral,
    "false": FalseLiteral,
    "blank": _empty,  # Expression::LITERALS: '' outside a condition
    "empty": _empty,
}


def _lookup(text: str, token: Token) -> Expression:
    segments: list[str | int | Path] = []
    for part in _VARIABLE_PARSER.findall(text):
        if part.startswith("[") and part.endswith("]"):
            inner = ruby_expression(part[1:-1], token)
            if isinstance(inner, Path):
                segments.append(inner)
            elif isinstance(inner, StringLiteral | IntegerLiteral):
                segments.append(inner.value)
            else:  # a nil, float or range key: no Hash or Array has it
                return Nil(token)
        else:
            segments.append(part)
    if not segments or not isinstance(segments[0], str | Path):
        return Nil(token)  # find_variable(nil): nothing
    return Path(token, segments)


_LITERAL_WORDS = frozenset({"true", "false", "nil", "null", "empty", "blank"})
_CONDITION_WORDS = _LITERAL_WORDS | {"and", "or", "contains", "not"}
_VALUE_BEFORE = frozenset({TOKEN_COLON, TOKEN_IN, TOKEN_RANGE, TOKEN_RANGE_LITERAL, TOKEN_COMMA})


class Context(Enum):
    """Where an expression is, for :func:`jekyll_tokenize`: which of python-liquid's
    keywords are names there, as in Ruby (whose lexer has no keywords)."""

    ANY = "any"
    """A keyword after a dot is a name (``page.reversed``, ``item.continue``)."""
    VALUES = "values"
    """A condition (``if``, ``elsif``, ``unless``) or ``case``/``when``: every keyword but
    the literals and ``and``/``or``/``contains``/``not`` is a name too
    (``{% if limit > 2 %}``, ``{% case offset %}``)."""
    LOOP = "loop"
    """``for``/``tablerow``: a keyword after ``in``, a colon, a comma or in a range is a
    name too (``{% for p in site.posts limit: limit %}``)."""


def jekyll_tokenize(source: str, parent: Token, context: Context = Context.ANY) -> Iterator[Token]:
    """python-liquid's expression tokens of ``source``, with its keywords read as names
    where Ruby reads them so (its lexer makes every word an ``id`` but ``contains``
    before a space): see :class:`Context`."""
    previous = attribute = ""
    for token in tokenize(source, parent):
        if (
            token.kind == token.value != TOKEN_CONTAINS
            and _is_name(token.kind, previous, context)
            and not (token.kind == TOKEN_CONTINUE and attribute == TOKEN_OFFSET)
        ):
            # A keyword (its kind is its word) read as a name; ``offset: continue`` stays
            # (For#set_attribute: the word itself, not a variable).
            token = Token(TOKEN_WORD, token.value, token.start_index, token.source)
        attribute = previous if token.kind == TOKEN_COLON else ""
        previous = token.kind
        yield token


def _is_name(word: str, previous: str, context: Context) -> bool:
    if previous == TOKEN_DOT:
        return True
    if context is Context.VALUES:
        return word not in _CONDITION_WORDS
    return context is Context.LOOP and previous in _VALUE_BEFORE and word not in _LITERAL_WORDS


# Where python-liquid meets the two parsers.


class Tolerant(Protocol):
    """What :func:`parse_variable` reads of the environment
    (:class:`deploybot.render.liquid.environment.JekyllEnvironment`)."""

    @property
    def error_mode(self) -> ErrorMode:
        """The site's ``liquid.error_mode``."""

    def parse_warning(self, token: Token, message: str) -> None:
        """Record a warning of the template being parsed, at ``token``."""


_CONTENT_OF_VARIABLE = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)


def output_markup(token: Token) -> str:
    """Return the markup of the output statement ``token`` (its value is the whole
    ``{{ … }}``), as Ruby Liquid's ``ContentOfVariable`` cuts it: spaces kept."""
    m = _CONTENT_OF_VARIABLE.fullmatch(token.value)
    return m[1] if m is not None else token.value


def tag_markup(tag: Token, expression: Token) -> str:
    """Return the markup of the tag ``tag`` whose expression token is ``expression``, as
    Ruby Liquid's ``FullToken`` cuts it: from the first character after the name and the
    ASCII spaces after it to ``%}`` (python-liquid strips more: the no-break space); for a
    line of a ``{% liquid %}`` tag, the expression's value."""
    source = tag.source
    start = source.find(tag.value, tag.start_index)
    after = expression.start_index + len(expression.value)
    end = source.find("%}", after)
    if start < 0 or end < 0 or source[after:end].strip(_RUBY_SPACE + "\u00a0-"):
        return expression.value  # a line of {% liquid %}: it ends at the line's end
    markup = source[start + len(tag.value) : end].lstrip(_RUBY_SPACE[:-1])
    return markup[:-1] if markup.endswith("-") else markup


def parse_variable(env: Environment, markup: str, token: Token, at: int) -> Expression:
    """Return the expression of the ``{{ … }}`` markup ``markup`` (also the right side of
    ``assign``) as Jekyll parses it: ``token`` is the statement or tag, ``at`` the index of
    ``markup`` in its source.

    With ``error_mode`` ``warn`` or ``strict`` Ruby's strict parser checks the markup first:
    a markup it refuses is a ``LiquidSyntaxError`` in ``strict`` mode and, in ``warn`` mode,
    a warning and the lax parser's expression. A markup it accepts (or any in ``lax`` mode)
    is python-liquid's expression, or the lax parser's where python-liquid refuses it.
    """
    tolerant = cast(Tolerant, env)
    mode = tolerant.error_mode
    if mode is not ErrorMode.LAX:
        error = strict_variable_error(markup)
        if error is not None:
            message = f'{error} in "{{{{{markup}}}}}"'
            if mode is ErrorMode.STRICT:
                raise LiquidSyntaxError(message, token=token)
            tolerant.parse_warning(token, message)
            return lax_variable(markup, token)
    inner = Token(TOKEN_EXPRESSION, markup, at, token.source)
    try:
        return FilteredExpression.parse(env, TokenStream(jekyll_tokenize(markup, inner)))
    except LiquidSyntaxError:
        return lax_variable(markup, token)


# Conditions: If#strict_parse and If#lax_parse (if, elsif, unless).


_CONDITION = re.compile(rf"({_QUOTED_FRAGMENT})\s*([=!<>a-z_]+)?\s*({_QUOTED_FRAGMENT})?", _A)
_EXPRESSIONS_AND_OPERATORS = re.compile(
    r"(?:\b(?:\s?and\s?|\s?or\s?)\b|(?:\s*(?!\b(?:\s?and\s?|\s?or\s?)\b)"
    rf"(?:{_QUOTED_FRAGMENT}|\S+)\s*)+)",
    _A,
)
_OPERATORS = frozenset({"==", "!=", "<>", "<", ">", ">=", "<=", "contains"})
_IF_SYNTAX = "Syntax Error in tag 'if' - Valid syntax: if [expression]"


def strict_condition_error(markup: str) -> str | None:
    """Return the message of Ruby Liquid's strict parser for the condition ``markup``
    (``None`` when it accepts it)."""
    if _PLAIN_CONDITION.fullmatch(markup):
        return None
    try:
        parser = _StrictParser(markup)
        while True:
            parser.expression()
            if parser.consume_if("comparison"):
                parser.expression()
            token = parser.tokens[parser.p]
            if token[0] == "id" and token[1] in ("and", "or"):
                parser.consume()
                continue
            break
        parser.consume("end_of_string")
    except RubySyntaxError as exc:
        return str(exc.args[0])
    return None


def lax_condition(markup: str) -> str:
    """Return, as python-liquid reads it, the condition Ruby Liquid's lax parser makes
    of ``markup`` (``and``/``or`` grouped from the right, as both do).

    Raises ``LiquidSyntaxError`` where the lax parser raises (nothing to compare, a word
    between comparisons that is not ``and``/``or``) and for an operator Ruby does not know
    (``=``: Jekyll stops when the tag renders, ``Unknown operator =``)."""
    parts = _EXPRESSIONS_AND_OPERATORS.findall(markup)
    if not parts:
        raise LiquidSyntaxError(_IF_SYNTAX, token=None)
    out = [_comparison(parts.pop())]
    while parts:
        operator = parts.pop().strip(_RUBY_SPACE)
        comparison = _comparison(parts.pop() if parts else "")
        if operator not in ("and", "or"):
            raise LiquidSyntaxError(_IF_SYNTAX, token=None)
        out[:0] = [comparison, operator]
    return " ".join(out)


def _comparison(part: str) -> str:
    m = _CONDITION.search(part)
    if m is None:
        raise LiquidSyntaxError(_IF_SYNTAX, token=None)
    left = _operand(m[1])
    if m[2] is None:
        return left
    if m[2] not in _OPERATORS:
        raise LiquidSyntaxError(f"Unknown operator {m[2]}", token=None)
    return f"{left} {m[2]} {_operand(m[3])}"


def _operand(markup: str | None) -> str:
    """``Condition.parse_expression`` of ``markup`` written as python-liquid reads it."""
    text = (markup or "").strip(_RUBY_SPACE)
    if text in ("blank", "empty"):
        return text  # Condition's method literals
    dummy = Token(TOKEN_EXPRESSION, text, 0, text)
    return _liquid_text(ruby_expression(text, dummy))


_NAME = re.compile(r"[a-zA-Z_][\w-]*\??", _A)


def _liquid_text(expr: Expression) -> str:
    if isinstance(expr, StringLiteral):
        return f"'{expr.value}'" if "'" not in expr.value else f'"{expr.value}"'
    if isinstance(expr, TrueLiteral | FalseLiteral):
        return "true" if expr.value else "false"
    if isinstance(expr, IntegerLiteral | FloatLiteral):
        return repr(expr.value)
    if isinstance(expr, RangeLiteral):
        return f"({_liquid_text(expr.start)}..{_liquid_text(expr.stop)})"
    if isinstance(expr, Path):
        return _path_text(expr)
    return "nil"


def _path_text(path: Path) -> str:
    out = []
    for i, segment in enumerate(path.path):
        if isinstance(segment, Path):
            out.append(f"[{_path_text(segment)}]")
        elif isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _NAME.fullmatch(segment) and "'" not in segment:
            out.append(segment if i == 0 else f".{segment}")
        else:
            out.append(f"[{_liquid_text(StringLiteral(path.token, segment))}]")
    return "".join(out)


# Loops: For#strict_parse and For#lax_parse.

_FOR = re.compile(rf"([\w-]+)\s+in\s+((?:{_QUOTED_FRAGMENT})+)\s*(reversed)?", _A)
_TAG_ATTRIBUTES = re.compile(rf"(\w[\w-]*)\s*:\s*({_QUOTED_FRAGMENT})", _A)


def strict_for_error(markup: str) -> str | None:
    """Return the message of Ruby Liquid's strict parser for the ``for`` markup ``markup``
    (``None`` when it accepts it; attributes ``limit:``/``offset:`` after ``reversed``,
    without commas)."""
    if _PLAIN_FOR.fullmatch(markup):
        return None
    try:
        parser = _StrictParser(markup)
        parser.consume("id")
        if not parser.word("in"):
            raise RubySyntaxError("For loops require an 'in' clause")
        parser.expression()
        parser.word("reversed")
        while parser.look("id") and parser.look("colon", 1):
            if not (parser.word("limit") or parser.word("offset")):
                raise RubySyntaxError(
                    "Invalid attribute in for loop. Valid attributes are limit and offset"
                )
            parser.consume()
            parser.expression()
        parser.consume("end_of_string")
    except RubySyntaxError as exc:
        return str(exc.args[0])
    return None


def lax_for(markup: str) -> str:
    """Return, as python-liquid reads it, the loop Ruby Liquid's lax parser makes of the
    ``for`` markup ``markup``: ``reversed`` only right after the collection, the last
    ``limit:`` and ``offset:`` anywhere, other attributes ignored.

    Raises ``LiquidSyntaxError`` where the lax parser raises."""
    m = _FOR.match(markup)
    if m is None:
        raise LiquidSyntaxError(
            "Syntax Error in 'for loop' - Valid syntax: for [item] in [collection]", token=None
        )
    dummy = Token(TOKEN_EXPRESSION, markup, 0, markup)
    out = [m[1], "in", _liquid_text(ruby_expression(m[2], dummy))]
    if m[3]:
        out.append("reversed")
    attributes = {}
    for key, value in _TAG_ATTRIBUTES.findall(markup):
        if key in ("limit", "offset"):
            keep = key == "offset" and value == "continue"
            attributes[key] = value if keep else _liquid_text(ruby_expression(value, dummy))
    out += [f"{key}: {value}" for key, value in sorted(attributes.items())]
    return " ".join(out)


# Case, when and tablerow: Ruby Liquid 5.4.0 has only the lax parser for them
# (``Case::Syntax``/``WhenSyntax``, ``TableRow::Syntax``: regular expressions, whatever
# ``error_mode``), so a markup python-liquid reads otherwise is read as those read it,
# silently in every mode (Jekyll 4.3.1 prints no warning for them, measured).

_CASE = re.compile(rf"({_QUOTED_FRAGMENT})", _A)
_WHEN = re.compile(
    rf"({_QUOTED_FRAGMENT})(?:(?:\s+or\s+|\s*,\s*)({_QUOTED_FRAGMENT}.*))?", _A | re.S
)
_TABLEROW = re.compile(rf"(\w+)\s+in\s+((?:{_QUOTED_FRAGMENT})+)", _A)


def lax_case(markup: str) -> str:
    """Return, as python-liquid reads it, the value ``Case#initialize`` makes of the
    ``case`` markup ``markup``: its first quoted fragment, anywhere (``page.t | upcase`` is
    ``page.t``; ``'a' 'b'`` is ``'a'``).

    Raises ``LiquidSyntaxError`` (Ruby's message) when it holds none."""
    m = _CASE.search(markup)
    if m is None:
        raise LiquidSyntaxError(
            "Syntax Error in 'case' - Valid syntax: case [condition]", token=None
        )
    dummy = Token(TOKEN_EXPRESSION, markup, 0, markup)
    return _liquid_text(ruby_expression(m[1], dummy))


def lax_when(markup: str) -> str:
    """Return, as python-liquid reads it, the values ``Case#record_when_condition`` makes
    of the ``when`` markup ``markup``: a first quoted fragment, then more after ``or`` or a
    comma while one follows at once (``'a' 'b'`` is ``'a'``; ``'a',,'b'`` is ``'a'``).

    Raises ``LiquidSyntaxError`` (Ruby's message) when it holds no value."""
    values: list[str] = []
    rest: str | None = markup
    while rest is not None:
        m = _WHEN.search(rest)
        if m is None:
            raise LiquidSyntaxError(
                "Syntax Error in tag 'case' - Valid when condition: "
                "{% when [condition] [or condition2...] %}",
                token=None,
            )
        values.append(_operand(m[1]))
        rest = m[2]
    return ", ".join(values)


def lax_tablerow(markup: str) -> str:
    """Return, as python-liquid reads it, the loop ``TableRow#initialize`` makes of the
    ``tablerow`` markup ``markup``: ``WORD in FRAGMENT`` anywhere (``i-j in x`` loops
    ``j``), the last ``cols:``, ``limit:`` and ``offset:`` anywhere, no ``reversed``.

    Raises ``LiquidSyntaxError`` (Ruby's message) when there is no ``WORD in``."""
    m = _TABLEROW.search(markup)
    if m is None:
        raise LiquidSyntaxError(
            "Syntax Error in 'table_row loop' - Valid syntax: "
            "table_row [item] in [collection] cols=3",
            token=None,
        )
    dummy = Token(TOKEN_EXPRESSION, markup, 0, markup)
    out = [m[1], "in", _liquid_text(ruby_expression(m[2], dummy))]
    attributes = {
        key: _liquid_text(ruby_expression(value, dummy))
        for key, value in _TAG_ATTRIBUTES.findall(markup)
        if key in ("cols", "limit", "offset")
    }
    out += [f"{key}: {value}" for key, value in sorted(attributes.items())]
    return " ".join(out)


# Cycle, capture, increment and decrement: also lax only in Ruby Liquid 5.4.0, read here
# into the records their tags (:mod:`.tags`) are made of.

_CYCLE_NAMED = re.compile(rf"\A({_QUOTED_FRAGMENT})\s*:\s*(.*)", _A | re.S)
_CYCLE_SIMPLE = re.compile(rf"\A(?:{_QUOTED_FRAGMENT})+", _A)
_CYCLE_VALUE = re.compile(rf"\s*({_QUOTED_FRAGMENT})\s*", _A)
_CAPTURE = re.compile(r"((?:\(?[\w\-.\[\]]\)?)+)", _A)  # VariableSignature+


@dataclass(frozen=True)
class CycleMarkup:
    """What ``Cycle#initialize`` makes of a ``cycle`` markup.

    Attributes:
        group: the name before ``:`` (its value is the cycle's key), or ``None``.
        values: the values cycled through, in order (one at least).
        key: without a group, the key Ruby uses, ``@variables.to_s``: the ``inspect`` of
            the list of values when all are literals (``["a", "b"]``, ``[1, 2.5]``: two
            tags with the same literals share a cycle), ``None`` when one is a variable
            (its ``inspect`` holds an object id: the tag has a cycle of its own).
    """

    group: Expression | None
    values: tuple[Expression, ...]
    key: str | None


def lax_cycle(markup: str, token: Token) -> CycleMarkup:
    """Return what Ruby Liquid's ``Cycle`` makes of the ``cycle`` markup ``markup``:
    ``NamedSyntax`` (``group: a, b``) or ``SimpleSyntax``, the values split at commas,
    each the first quoted fragment of its part (``'a' 'b'`` is ``'a'``; empty parts and
    ``nil`` dropped, as ``compact`` drops them).

    Raises ``LiquidSyntaxError`` (Ruby's message) when the markup starts with neither."""
    group: Expression | None = None
    named = _CYCLE_NAMED.match(markup)
    if named is not None:
        group, markup = ruby_expression(named[1], token), named[2]
    elif _CYCLE_SIMPLE.match(markup) is None:
        raise LiquidSyntaxError(
            "Syntax Error in 'cycle' - Valid syntax: cycle [name :] var [, var2, var3 ...]",
            token=token,
        )
    texts = []
    for part in _ruby_split(markup, ","):
        m = _CYCLE_VALUE.search(part)
        if m is not None and m[1].strip(_RUBY_SPACE) not in ("nil", "null"):
            texts.append(m[1])
    values = tuple(ruby_expression(text, token) for text in texts)
    shown = [_literal_inspect(text, value) for text, value in zip(texts, values, strict=True)]
    key = None if None in shown else f"[{', '.join(cast(list[str], shown))}]"
    return CycleMarkup(group, values, key)


def _ruby_split(text: str, separator: str) -> list[str]:
    """Ruby's ``String#split(separator)``: trailing empty parts dropped."""
    parts = text.split(separator)
    while parts and not parts[-1]:
        parts.pop()
    return parts


def _literal_inspect(text: str, value: Expression) -> str | None:
    """Ruby's ``inspect`` of the value ``Expression.parse`` makes of ``text`` when it is a
    literal, ``None`` for a variable (a ``VariableLookup``, a ``RangeLookup``)."""
    if isinstance(
        value, StringLiteral | IntegerLiteral | FloatLiteral | TrueLiteral | FalseLiteral
    ):
        return jekyll_filters.ruby_inspect(value.value)
    if isinstance(value, RangeLiteral):
        bounds = (value.start, value.stop)
        if all(isinstance(b, IntegerLiteral | FloatLiteral) for b in bounds):
            start, stop = (int(cast(IntegerLiteral, b).value) for b in bounds)
            return f"{start}..{stop}"
    return None


def lax_capture(markup: str, token: Token) -> str:
    """Return the variable ``Capture#initialize`` captures into from the ``capture`` markup
    ``markup``: its first run of ``VariableSignature`` characters, anywhere (``'q'`` is
    ``q``; ``page.x`` a variable of that very name, which ``{{ page.x }}`` does not read).

    Raises ``LiquidSyntaxError`` (Ruby's message) when there is none."""
    m = _CAPTURE.search(markup)
    if m is None:
        raise LiquidSyntaxError(
            "Syntax Error in 'capture' - Valid syntax: capture [var]", token=token
        )
    return m[1]


def ruby_strip(text: str) -> str:
    """Ruby's ``String#strip``: ASCII whitespace and NUL (not a no-break space)."""
    return text.strip(_RUBY_SPACE)


def counter_name(markup: str) -> str:
    """Return the counter ``Increment``/``Decrement`` count in for the markup ``markup``:
    the markup stripped, whatever it holds (``x y``, ``'q'``, nothing)."""
    return ruby_strip(markup)


def _never(markup: str) -> str | None:
    """Ruby's strict parser for a tag that has none: every markup passes."""
    return None


@dataclass(frozen=True)
class _Grammar:
    """How one kind of tag markup is read: Ruby's strict check, the lax parser's reading
    as python-liquid text, python-liquid's own parse (a trial), the keywords' context and
    the markups surely fine (python-liquid reads them as Ruby does). ``lax_only``: Ruby
    has only the lax parser for the tag, so any markup not surely fine is read by it,
    whatever the mode, without a warning."""

    strict_error: Callable[[str], str | None]
    lax_text: Callable[[str], str]
    trial: Callable[[Environment, TokenStream], object]
    context: Context
    plain: LazyPattern | None
    lax_only: bool = False


_CONDITION_GRAMMAR = _Grammar(
    strict_condition_error, lax_condition, BooleanExpression.parse, Context.VALUES, _PLAIN_CONDITION
)
_FOR_GRAMMAR = _Grammar(strict_for_error, lax_for, LoopExpression.parse, Context.LOOP, _PLAIN_FOR)
GRAMMARS = {"if": _CONDITION_GRAMMAR, "elsif": _CONDITION_GRAMMAR, "unless": _CONDITION_GRAMMAR}
GRAMMARS["for"] = _FOR_GRAMMAR
GRAMMARS["case"] = _Grammar(
    _never, lax_case, BooleanExpression.parse, Context.VALUES, _PLAIN_CASE, lax_only=True
)
GRAMMARS["when"] = _Grammar(
    _never, lax_when, BooleanExpression.parse, Context.VALUES, _PLAIN_WHEN, lax_only=True
)
GRAMMARS["tablerow"] = _Grammar(
    _never, lax_tablerow, LoopExpression.parse, Context.LOOP, _PLAIN_TABLEROW, lax_only=True
)
"""The tags whose markups :func:`tag_tokens` reads as Jekyll does, by name."""


def tag_tokens(env: Environment, markup: str, tag: Token, at: int) -> TokenStream:
    """Return the tokens of the markup ``markup`` of the tag ``tag`` (one of
    :data:`GRAMMARS`; ``at``: the markup's index in the source) as Jekyll parses it:
    checked by Ruby's strict parser in ``warn``/``strict`` mode as :func:`parse_variable`
    does, and read by its lax parser where that (or python-liquid) refuses it."""
    grammar = GRAMMARS[tag.value]
    tolerant = cast(Tolerant, env)
    mode = tolerant.error_mode
    lax = mode is ErrorMode.LAX
    if not lax and not grammar.lax_only:
        error = grammar.strict_error(markup)
        if error is not None:
            message = f'{error} in "{markup.strip(_RUBY_SPACE)}"'
            if mode is ErrorMode.STRICT:
                raise LiquidSyntaxError(message, token=tag)
            tolerant.parse_warning(tag, message)
            lax = True
    inner = Token(TOKEN_EXPRESSION, markup, at, tag.source)
    if (
        (grammar.lax_only or not lax)
        and grammar.plain is not None
        and grammar.plain.fullmatch(markup)
    ):
        return TokenStream(
            jekyll_tokenize(markup, inner, grammar.context)
        )  # python-liquid reads these
    if not lax and not grammar.lax_only:
        try:
            tokens = list(jekyll_tokenize(markup, inner, grammar.context))
            grammar.trial(env, TokenStream(iter(tokens)))
        except LiquidSyntaxError:
            lax = True
        else:
            return TokenStream(iter(tokens))
    try:
        text = grammar.lax_text(markup)
    except LiquidSyntaxError as exc:
        exc.token = tag
        raise
    rewritten = jekyll_tokenize(text, inner, grammar.context)
    return TokenStream(Token(t.kind, t.value, at, tag.source) for t in rewritten)


def no_markup(env: Environment, tag: Token) -> None:
    """Raise, at ``tag`` (one of :data:`GRAMMARS`), the ``LiquidSyntaxError`` Ruby Liquid
    raises for it with no markup: in ``strict`` mode its strict parser's (``{% if %}``:
    ``[:end_of_string] is not a valid expression in ""``), else its lax parser's
    (``{% case %}``: ``Syntax Error in 'case' - Valid syntax: case [condition]``); return
    when they raise none."""
    grammar = GRAMMARS[tag.value]
    if cast(Tolerant, env).error_mode is ErrorMode.STRICT and not grammar.lax_only:
        error = grammar.strict_error("")
        if error is not None:
            raise LiquidSyntaxError(f'{error} in ""', token=tag)
    try:
        grammar.lax_text("")
    except LiquidSyntaxError as exc:
        exc.token = tag
        raise


_BLOCKS = frozenset({"case", "for", "if", "unless", "tablerow"})
_ELSE_WITH_MARKUP = re.compile(r"(?:\{%-?|^)\s*else\s+[^\s%-]", re.M)
"""Where an ``else`` tag may have a markup (a line of ``{% liquid %}`` too)."""


def else_markups(tokens: list[Token]) -> list[Token]:
    """Return the template tokens ``tokens`` with the markup of an ``{% else … %}`` read
    as Ruby Liquid reads it: ignored in a ``for`` loop (``For#unknown_tag``; python-liquid
    would stop), refused in a ``case`` (``Case#record_else_condition``; Jekyll 4.3.1
    stops, measured), left to python-liquid elsewhere (``if``/``unless`` ignore it too).

    Raises ``LiquidSyntaxError`` (Ruby's message) at such an ``else`` in a ``case``."""
    if not tokens or _ELSE_WITH_MARKUP.search(tokens[0].source) is None:
        return tokens  # the common case, told at C speed
    kept: list[Token] = []
    open_blocks: list[str] = []
    for i, token in enumerate(tokens):
        if token.kind == TOKEN_EXPRESSION and i and _is_else_in_for(tokens[i - 1], open_blocks):
            continue  # For#unknown_tag: the else's markup is ignored
        kept.append(token)
        if token.kind != TOKEN_TAG:
            continue
        if token.value in _BLOCKS:
            open_blocks.append(token.value)
        elif token.value.startswith("end") and open_blocks[-1:] == [token.value[3:]]:
            open_blocks.pop()
        elif token.value == "else" and open_blocks[-1:] == ["case"] and _markup_at(tokens, i + 1):
            raise LiquidSyntaxError(
                "Syntax Error in tag 'case' - Valid else condition: {% else %} (no parameters)",
                token=token,
            )
    return kept


def _markup_at(tokens: list[Token], at: int) -> bool:
    """Whether the token at index ``at`` of ``tokens`` is a tag's markup."""
    return at < len(tokens) and tokens[at].kind == TOKEN_EXPRESSION


def _is_else_in_for(token: Token, open_blocks: list[str]) -> bool:
    """Whether ``token`` is an ``else`` of the innermost open block, a ``for``."""
    return token.kind == TOKEN_TAG and token.value == "else" and open_blocks[-1:] == ["for"]


def check_comment(env: Environment, comment: Token) -> None:
    """Check the body of a ``{% comment %}`` (python-liquid's one ``comment`` token) as
    Ruby Liquid does: ``Comment`` is a block, its body is parsed (and rendered not), so a
    ``{{ … }}`` or a condition or loop its strict parser refuses is a warning there too, or
    in ``strict`` mode an error (Jekyll 4.3.1, measured). Unknown tags in it are ignored,
    as ``Comment#unknown_tag`` ignores them.

    Raises ``LiquidSyntaxError`` in ``strict`` mode."""
    tolerant = cast(Tolerant, env)
    if tolerant.error_mode is ErrorMode.LAX:
        return
    tokens = list(env.tokenizer()(comment.value))
    for i, token in enumerate(tokens):
        at = Token(token.kind, token.value, comment.start_index + token.start_index, comment.source)
        if token.kind == TOKEN_COMMENT:
            check_comment(env, at)
            continue
        error, markup = None, ""
        if token.kind == TOKEN_OUTPUT:
            markup = output_markup(token)
            error = strict_variable_error(markup)
            markup = f"{{{{{markup}}}}}"
        elif token.kind == TOKEN_TAG and token.value in GRAMMARS and i + 1 < len(tokens):
            markup = tokens[i + 1].value
            error = GRAMMARS[token.value].strict_error(markup)
        if error is None:
            continue
        message = f'{error} in "{markup.strip(_RUBY_SPACE)}"'
        if tolerant.error_mode is ErrorMode.STRICT:
            raise LiquidSyntaxError(message, token=at)
        tolerant.parse_warning(at, message)
