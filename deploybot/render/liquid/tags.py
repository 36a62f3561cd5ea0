"""Jekyll's Liquid tags on python-liquid: ``include``, ``include_relative``, ``highlight``,
``post_url``, ``link``; Ruby Liquid's ``capture``, ``increment``, ``decrement`` and
``cycle`` with their markups read as Ruby Liquid 5.4.0 reads them (:mod:`.lax`); Ruby's
way of printing values; and the registry of Jekyll tags.

Sources: Jekyll 4.3 ``lib/jekyll/tags/include.rb`` (``VALID_SYNTAX``, ``VARIABLE_SYNTAX``,
``VALID_FILENAME_CHARS``, ``INVALID_SEQUENCES``; the parameters land in ``include``, in a
new scope, so ``assign`` still leaks out as in Liquid; parameters ``FULL_VALID_SYNTAX``
refuses, or a file name ``VALID_FILENAME_CHARS`` refuses, raise ``ArgumentError``, which
stops Jekyll in every mode with ``Invalid syntax for include tag``: here too; Ruby's
``\\w`` and ``\\s`` are ASCII, so a no-break space is neither), ``tags/highlight.rb``,
``tags/post_url.rb`` and ``tags/link.rb`` (both return ``relative_url`` of the URL).

Includes are read through the render's source tree only (``_includes/NAME``; for
``include_relative`` the page's folder), after :mod:`deploybot.git.path_rules` and Jekyll's
file-name rules, so a template can never read outside the tree. A missing include,
``post_url`` or ``link`` renders nothing with a warning (Jekyll stops the build; sites built
on Jekyll-Bootstrap keep a dead ``{% include JB/setup %}``).

:data:`TAGS` is the registry: a plugin's tag is added with :func:`register_tag` before an
environment is made.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from liquid.ast import BlockNode, IllegalNode, Node
from liquid.builtin.expressions import Identifier, Nil
from liquid.builtin.illegal import Illegal
from liquid.builtin.output import Output, OutputNode
from liquid.builtin.tags.assign_tag import AssignNode, AssignTag
from liquid.builtin.tags.capture_tag import (
    ENDCAPTUREBLOCK,
    TAG_ENDCAPTURE,
    CaptureNode,
    CaptureTag,
)
from liquid.builtin.tags.comment_tag import CommentNode, CommentTag
from liquid.builtin.tags.decrement_tag import DecrementNode, DecrementTag
from liquid.builtin.tags.echo_tag import EchoTag
from liquid.builtin.tags.increment_tag import IncrementNode, IncrementTag
from liquid.exceptions import LiquidSyntaxError
from liquid.parser import get_parser
from liquid.tag import Tag
from liquid.token import (
    TOKEN_COMMENT,
    TOKEN_EOF,
    TOKEN_EXPRESSION,
    TOKEN_ILLEGAL,
    TOKEN_OUTPUT,
    TOKEN_TAG,
    Token,
)

from deploybot.git import path_rules
from deploybot.render.highlight.highlighter import figure_block
from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid import lax
from deploybot.render.liquid.filters import nil, state_of
from deploybot.render.liquid.links import find_url, post_url
from deploybot.render.liquid.plugins.jekyll_toc import toc_tag
from deploybot.support.errors import SourceError

if TYPE_CHECKING:
    from liquid import Environment
    from liquid.context import RenderContext
    from liquid.expression import Expression
    from liquid.stream import TokenStream

# Ruby's \w and \s are ASCII: a no-break space or an "é" is neither (re.ASCII).
_PARAM = re.compile(
    r"([\w-]+)\s*=\s*(?:\"([^\"\\]*(?:\\.[^\"\\]*)*)\"|'([^'\\]*(?:\\.[^'\\]*)*)'|([\w.-]+))",
    re.ASCII,
)
_VARIABLE = re.compile(
    r"(?P<variable>[^{]*(\{\{\s*[\w\-.]+\s*(\|.*)?\}\}[^\s{}]*)+)(?P<params>.*)",
    re.S | re.ASCII,
)
_FULL_PARAMS = re.compile(rf"\A\s*(?:{_PARAM.pattern}(?=\s|\Z)\s*)*\Z", re.ASCII)
_FILE_CHARS = re.compile(r"^[\w/.\-()+~#@]+$", re.ASCII)
_BAD_SEQUENCE = re.compile(r"[./]{2,}")
_HIGHLIGHT = re.compile(r"^([a-zA-Z0-9.+#_-]+)((\s+\w+(=(\w+|\"([0-9]+\s)*[0-9]+\"))?)*)$")


def ruby_text(value: Any) -> str:
    """Return ``value`` as Liquid-on-Ruby prints it (see :func:`.jekyll_filters.to_text`)."""
    return jf.to_text(nil(value))


class JekyllOutputNode(OutputNode):
    """``{{ … }}`` printing times, ``nil``, booleans, lists and mappings as Ruby does."""

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the value of the expression to ``buffer``."""
        return buffer.write(ruby_text(self.expression.evaluate(context)))


class JekyllOutput(Output):
    """The output statement with :class:`JekyllOutputNode`, its markup parsed as Jekyll
    parses it (:func:`.lax.parse_variable`)."""

    node_class = JekyllOutputNode

    def parse(self, stream: TokenStream) -> OutputNode:
        """Parse the ``{{ … }}`` at the head of ``stream``."""
        token = stream.eat(TOKEN_OUTPUT)
        expr = stream.expect(TOKEN_EXPRESSION)
        markup = lax.output_markup(token)
        at = token.start_index + token.value.find(markup) if markup else expr.start_index
        return self.node_class(token, lax.parse_variable(self.env, markup, token, at))


_ASSIGN = re.compile(r"((?:\(?[\w\-.\[\]]\)?)+)\s*=\s*(.*)", re.ASCII | re.S)  # Assign::Syntax


class JekyllAssignTag(AssignTag):
    """``{% assign NAME = VALUE %}`` as Ruby Liquid's ``Assign`` parses it: the value is an
    output's markup (:func:`.lax.parse_variable`)."""

    def parse(self, stream: TokenStream) -> AssignNode:
        """Parse the tag at the head of ``stream``."""
        token = stream.eat(TOKEN_TAG)
        expr = stream.current
        markup = lax.tag_markup(token, expr) if expr.kind == TOKEN_EXPRESSION else ""
        m = _ASSIGN.search(markup)
        if m is None:
            raise LiquidSyntaxError(
                "Syntax Error in 'assign' - Valid syntax: assign [var] = [source]", token=token
            )
        name = Identifier(m[1], token=token)
        at = expr.start_index + max(expr.value.find(m[2].strip()), 0)
        value = lax.parse_variable(self.env, m[2], token, at)
        return self.node_class(token, name=name, expression=value)


class JekyllEchoTag(EchoTag):
    """``{% echo VALUE %}`` as Ruby Liquid's ``Echo``: the markup of an output statement
    (:func:`.lax.parse_variable`), printed as :class:`JekyllOutputNode` prints."""

    def parse(self, stream: TokenStream) -> Node:
        """Parse the tag at the head of ``stream``."""
        token, markup = _tag_markup(stream)
        if not markup:  # Variable.new(''): nil
            return JekyllOutputNode(token, Nil(token))
        return JekyllOutputNode(
            token, lax.parse_variable(self.env, markup, token, stream.current.start_index)
        )


class JekyllCommentTag(CommentTag):
    """``{% comment %}…{% endcomment %}``, its body checked as Ruby Liquid parses it
    (:func:`.lax.check_comment`)."""

    def parse(self, stream: TokenStream) -> CommentNode:
        """Parse the comment at the head of ``stream``."""
        start = stream.pos
        node = super().parse(stream)
        for token in stream.tokens[start : stream.pos + 1]:
            if token.kind == TOKEN_COMMENT:
                lax.check_comment(self.env, token)
        return node


def _tag_markup(stream: TokenStream) -> tuple[Token, str]:
    """Return the tag at the head of ``stream`` and its markup as Ruby Liquid cuts it
    (:func:`.lax.tag_markup`; '' when none). The stream is left on the tag's last token,
    as python-liquid's parser expects of a tag."""
    token = stream.expect(TOKEN_TAG)
    if stream.peek.kind != TOKEN_EXPRESSION:
        return token, ""
    next(stream)
    return token, lax.tag_markup(token, stream.current)


class JekyllCaptureTag(CaptureTag):
    """``{% capture NAME %}…{% endcapture %}`` as Ruby Liquid's ``Capture`` reads the
    name (:func:`.lax.lax_capture`)."""

    def parse(self, stream: TokenStream) -> CaptureNode:
        """Parse the block at the head of ``stream``."""
        token, markup = _tag_markup(stream)
        name = Identifier(lax.lax_capture(markup, token), token=token)
        next(stream)
        block = get_parser(self.env).parse_block(stream, ENDCAPTUREBLOCK)
        stream.expect(TOKEN_TAG, value=TAG_ENDCAPTURE)
        return self.node_class(token, name, block)


class JekyllIncrementTag(IncrementTag):
    """``{% increment NAME %}``, the counter named by the markup stripped, as Ruby
    Liquid's ``Increment`` (:func:`.lax.counter_name`)."""

    def parse(self, stream: TokenStream) -> IncrementNode:
        """Parse the tag at the head of ``stream``."""
        token, markup = _tag_markup(stream)
        return self.node_class(token, name=Identifier(lax.counter_name(markup), token=token))


class JekyllDecrementTag(DecrementTag):
    """``{% decrement NAME %}``, as :class:`JekyllIncrementTag` (Ruby's ``Decrement``)."""

    def parse(self, stream: TokenStream) -> DecrementNode:
        """Parse the tag at the head of ``stream``."""
        token, markup = _tag_markup(stream)
        return self.node_class(token, name=Identifier(lax.counter_name(markup), token=token))


class JekyllCycleNode(Node):
    """``{% cycle … %}`` as Ruby Liquid 5.4.0's ``Cycle#render_to_output_buffer``: the
    key is the group's value, else the values' ``inspect`` (:class:`.lax.CycleMarkup`,
    this tag's own when a value is a variable); the value at the key's count is printed
    (nothing past this tag's values: a key other tags share may count further), then the
    count moves on, back to 0 after this tag's last value."""

    __slots__ = ("cycle",)

    def __init__(self, token: Token, cycle: lax.CycleMarkup) -> None:
        super().__init__(token)
        self.cycle = cycle
        self.blank = False

    def _key(self, context: RenderContext) -> object:
        if self.cycle.group is not None:
            value = nil(self.cycle.group.evaluate(context))
            try:
                hash(value)
            except TypeError:
                value = jf.ruby_inspect(value)
            return (type(value).__name__, value)  # Ruby's eql?: 1 is not 1.0 nor "1"
        return ("str", self.cycle.key if self.cycle.key is not None else f"#{id(self)}")

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the cycle's next value."""
        cycles: dict[object, int] = context.tag_namespace["cycles"]
        key = self._key(context)
        values = self.cycle.values
        at = cycles.get(key, 0)
        value = values[at].evaluate(context) if at < len(values) else None
        cycles[key] = at + 1 if at + 1 < len(values) else 0
        return buffer.write(ruby_text(value))

    async def render_to_output_async(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the cycle's next value (synchronously)."""
        return self.render_to_output(context, buffer)

    def expressions(self) -> Iterable[Expression]:
        """The group and the values."""
        if self.cycle.group is not None:
            yield self.cycle.group
        yield from self.cycle.values


class JekyllCycleTag(Tag):
    """Ruby Liquid's ``cycle`` tag (:func:`.lax.lax_cycle`, :class:`JekyllCycleNode`)."""

    name = "cycle"
    block = False

    def parse(self, stream: TokenStream) -> Node:
        """Parse the tag at the head of ``stream``."""
        token, markup = _tag_markup(stream)
        return JekyllCycleNode(token, lax.lax_cycle(markup, token))


class UnknownTag(Illegal):
    """A tag no one defines: Ruby Liquid's ``Unknown tag 'NAME'`` (Jekyll stops)."""

    def parse(self, stream: TokenStream) -> IllegalNode:
        """Raise ``LiquidSyntaxError`` for the tag at the head of ``stream``."""
        token = stream.expect(TOKEN_TAG)
        if stream.peek.kind == TOKEN_EXPRESSION:
            next(stream)
        raise LiquidSyntaxError(
            f"Unknown tag '{token.value}'{_plugin_hint(token.value)}", token=token
        )


def _plugin_hint(name: str) -> str:
    """`` (the tag of jekyll-seo-tag, which _config.yml's plugins does not list)`` when a
    plugin deploybot has defines the tag ``name`` (Jekyll says only ``Unknown tag``: a
    theme's plugins are lost with its gemspec, a plugin is left out of ``plugins``); ""
    when none does."""
    from deploybot.render.liquid.plugins import registry  # lazy: only for this error

    for plugin in registry.known().values():
        if plugin.tags is not None and any(getattr(t, "name", "") == name for t in plugin.tags()):
            return f" (the tag of {plugin.name}, which _config.yml's plugins does not list)"
    return ""


def _markup(stream: TokenStream) -> tuple[Token, str]:
    """Return the tag token and its raw markup ('' when none). The stream is left on the
    tag's last token, as python-liquid's parser expects of a tag."""
    token = stream.current
    if stream.peek.kind == TOKEN_EXPRESSION:
        next(stream)
        return token, stream.current.value.strip()
    return token, ""


def _line_of(token: Token) -> int:
    return token.source.count("\n", 0, max(token.start_index, 0)) + 1


class _SimpleNode(Node):
    """A tag node with its raw markup; :meth:`output` returns the text to write."""

    __slots__ = ("markup",)

    def __init__(self, token: Token, markup: str) -> None:
        super().__init__(token)
        self.markup = markup
        self.blank = False

    def output(self, context: RenderContext) -> str:
        raise NotImplementedError

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the tag's output."""
        return buffer.write(self.output(context))

    async def render_to_output_async(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the tag's output (synchronously)."""
        return self.render_to_output(context, buffer)

    def children(
        self, static_context: RenderContext, *, include_partials: bool = True
    ) -> list[Node]:
        """No children."""
        return []

    def warn(self, context: RenderContext, message: str) -> None:
        state_of(context).warn(self.token, message)


class _SimpleTag(Tag):
    block = False
    node_class: type[_SimpleNode] = _SimpleNode

    def parse(self, stream: TokenStream) -> Node:
        return self.node_class(*_markup(stream))


class PostUrlNode(_SimpleNode):
    """``{% post_url NAME %}``: ``relative_url`` of the post's URL."""

    def output(self, context: RenderContext) -> str:
        state = state_of(context)
        url = post_url(state.site, self.markup, state.liquid.links)
        if url is None:
            self.warn(context, f"{{% post_url {self.markup} %}}: no such post")
            return ""
        return jf.relative_url(url, state.baseurl)


class LinkNode(_SimpleNode):
    """``{% link PATH %}``: ``relative_url`` of the URL of the file at ``PATH``."""

    def output(self, context: RenderContext) -> str:
        state = state_of(context)
        target = _render_markup(context, self.markup)
        url = find_url(state.site, target, state.liquid.links)
        if url is None:
            self.warn(context, f"{{% link {target} %}}: no such file in the site")
            return ""
        return jf.relative_url(url, state.baseurl)


class TocNode(_SimpleNode):
    """jekyll-toc's ``{% toc %}``: nothing unless ``page.toc`` is set, else the list of the
    headings of ``page.content``: the rendered HTML in a layout, and in the page's own
    Liquid pass (where Jekyll's ``page.content`` is still the source) the page's text.
    The list is HTML, kept aside as a fragment so Markdown leaves it alone."""

    def output(self, context: RenderContext) -> str:
        page = nil(context.resolve("page", default=None))
        site = nil(context.resolve("site", default=None))
        if not isinstance(page, Mapping) or page.get("toc") in (None, False):
            return ""
        content = page.get("content")
        source = content if isinstance(content, str) else self.token.source
        site_toc = site.get("toc") if isinstance(site, Mapping) else None
        return str(state_of(context).fragment(toc_tag({"toc": True, "content": source}, site_toc)))


class TocTag(_SimpleTag):
    """jekyll-toc's ``toc`` tag (:mod:`deploybot.render.liquid.plugins.jekyll_toc`)."""

    name = "toc"
    node_class = TocNode


class PostUrlTag(_SimpleTag):
    """Jekyll's ``post_url`` tag."""

    name = "post_url"
    node_class = PostUrlNode


class LinkTag(_SimpleTag):
    """Jekyll's ``link`` tag."""

    name = "link"
    node_class = LinkNode


@dataclass(frozen=True)
class TagCall:
    """What a plugin's simple tag (:func:`simple_tag`) gets: its raw ``markup``, the render
    ``context`` and the page's render ``state``."""

    markup: str
    context: RenderContext
    state: Any

    def resolve(self, name: str) -> Any:
        """Return the template variable ``name`` (``None`` when undefined)."""
        return nil(self.context.resolve(name, default=None))


def simple_tag(tag_name: str, render: Callable[[TagCall], str]) -> type[Tag]:
    """Return a python-liquid ``Tag`` class for ``{% TAG_NAME markup %}`` writing what
    ``render`` returns: the hook of a plugin's tag (:mod:`.plugins.registry`)."""

    class PluginNode(_SimpleNode):
        def output(self, context: RenderContext) -> str:
            return render(TagCall(self.markup, context, state_of(context)))

    class PluginTag(_SimpleTag):
        name = tag_name
        node_class = PluginNode

    PluginTag.__name__ = PluginTag.__qualname__ = f"PluginTag_{tag_name}"
    return PluginTag


def _render_markup(context: RenderContext, markup: str) -> str:
    """Render ``{{ … }}`` inside tag markup (Jekyll's ``render_variable``)."""
    if "{{" not in markup:
        return markup
    template = context.env.from_string(markup)
    buffer = context.get_buffer()
    template.render_with_context(context, buffer, partial=True)
    return str(buffer.getvalue()).strip()


def render_markup(context: RenderContext, markup: str) -> str:
    """Return tag ``markup`` with the ``{{ … }}`` in it rendered, stripped (for a plugin's
    tag, as Jekyll's ``render_variable``)."""
    return _render_markup(context, markup)


class IncludeNode(_SimpleNode):
    """``{% include FILE [k=v …] %}`` / ``{% include_relative FILE [k=v …] %}``."""

    __slots__ = ("file", "params", "relative")

    def __init__(self, token: Token, markup: str, relative: bool) -> None:
        super().__init__(token, markup)
        self.relative = relative
        m = _VARIABLE.match(markup)
        if m is not None:
            self.file, self.params = m["variable"].strip(), m["params"].strip()
        else:
            # markup.split(/\s+/, 2): the parameters may start on the next line.
            self.file, *rest = re.split(r"\s+", markup, maxsplit=1, flags=re.ASCII)
            self.params = rest[0].strip() if rest else ""
        if self.params and not _FULL_PARAMS.match(self.params):
            raise LiquidSyntaxError(
                f"Invalid syntax for include tag: {self.params} ({self._example()})", token=token
            )

    def _example(self) -> str:
        """The end of Jekyll's messages (``IncludeTag#syntax_example``)."""
        return f"valid syntax: {{% {self.token.value} file.ext param='value' param2='value' %}}"

    def _params(self, context: RenderContext) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for m in _PARAM.finditer(self.params):
            if m[2] is not None:
                found[m[1]] = m[2].replace('\\"', '"')
            elif m[3] is not None:
                found[m[1]] = m[3].replace("\\'", "'")
            else:  # Liquid's context[m]: Expression.parse, a literal (true, 3) or a variable
                found[m[1]] = nil(lax.ruby_expression(m[4], self.token).evaluate(context))
        return found

    def state(self, context: RenderContext) -> Any:
        """Return the render's :class:`~deploybot.render.liquid.templates.RenderState`."""
        return state_of(context)

    def resolve_path(self, context: RenderContext) -> str:
        """Return the source path of the file the tag includes (its name rendered).

        Raises ``LiquidSyntaxError`` for a name Jekyll refuses or a path outside the
        tree's rules."""
        return self._resolve(context)[1]

    def _resolve(self, context: RenderContext) -> tuple[str, str]:
        state = state_of(context)
        name = _render_markup(context, self.file)
        if _BAD_SEQUENCE.search(name) or not _FILE_CHARS.match(name):
            raise LiquidSyntaxError(
                "Invalid syntax for include tag. File contains invalid characters or "
                f"sequences: {name!r} (no '..' or '//', only letters, digits and "
                f"_ / . - ( ) + ~ # @; {self._example()})",
                token=self.token,
            )
        folder = posixpath.dirname(state.page_path) if self.relative else "_includes"
        path = posixpath.normpath(posixpath.join(folder, name)) if folder else name
        try:
            path_rules.check_path(path, "include")
        except SourceError as exc:
            raise LiquidSyntaxError(f"include: {exc.message}", token=self.token) from exc
        return name, path

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        """Render the included file into ``buffer`` with ``include`` set."""
        state = state_of(context)
        name, path = self._resolve(context)
        template = state.load(path)
        if template is None:
            if not self.relative and name == "JB/setup":
                self.warn(
                    context, "{% include JB/setup %} (Jekyll-Bootstrap setup) renders nothing"
                )
            else:
                self.warn(context, f"{{% {self.token.value} {name} %}}: no file {path}")
            return 0
        namespace = {"include": self._params(context)} if self.params else {}
        with context.extend(namespace, template=template):
            template.render_with_context(context, buffer, partial=True)
        return 1


class IncludeTag(Tag):
    """Jekyll's ``include`` tag (files in ``_includes/``)."""

    name = "include"
    block = False
    relative = False
    node_class: type[IncludeNode] = IncludeNode

    def parse(self, stream: TokenStream) -> Node:
        """Parse the tag at the head of ``stream``: its markup as Jekyll's ``markup.strip``
        leaves it (a no-break space stays, and is not a file name's)."""
        token, markup = _tag_markup(stream)
        return self.node_class(token, lax.ruby_strip(markup), self.relative)


class IncludeRelativeTag(IncludeTag):
    """Jekyll's ``include_relative`` tag (files beside the page)."""

    name = "include_relative"
    relative = True


class HighlightNode(Node):
    """``{% highlight LANG [linenos] %}…{% endhighlight %}``: the body rendered, then
    highlighted in Jekyll's ``<figure class="highlight">``, kept aside as a fragment so
    Markdown does not touch it."""

    __slots__ = ("block", "lang", "linenos")

    def __init__(self, token: Token, lang: str, linenos: bool, block: BlockNode) -> None:
        super().__init__(token)
        self.lang, self.linenos, self.block = lang, linenos, block
        self.blank = False

    def render_to_output(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the placeholder of the highlighted block."""
        inner = context.get_buffer(buffer)
        self.block.render(context, inner)
        html = figure_block(inner.getvalue(), self.lang, linenos=self.linenos)
        return buffer.write(state_of(context).fragment(html))

    async def render_to_output_async(self, context: RenderContext, buffer: TextIO) -> int:
        """Write the placeholder (synchronously)."""
        return self.render_to_output(context, buffer)

    def children(
        self, static_context: RenderContext, *, include_partials: bool = True
    ) -> list[Node]:
        """The body."""
        return [self.block]


class HighlightTag(Tag):
    """Jekyll's ``highlight`` block."""

    name = "highlight"
    end = "endhighlight"

    def parse(self, stream: TokenStream) -> Node:
        token, markup = _markup(stream)
        next(stream)
        m = _HIGHLIGHT.match(markup)
        if m is None:
            raise LiquidSyntaxError(
                f"syntax error in tag 'highlight' while parsing {markup!r}: "
                "valid syntax is highlight <lang> [linenos]",
                token=token,
            )
        options = m[2].split()
        linenos = any(o == "linenos" or o.startswith("linenos=") for o in options)
        block = get_parser(self.env).parse_block(stream, (self.end, TOKEN_EOF))
        stream.expect(TOKEN_TAG, value=self.end)
        return HighlightNode(token, m[1].lower(), linenos, block)


TAGS: dict[str, type[Tag]] = {
    "output": JekyllOutput,
    "assign": JekyllAssignTag,
    "echo": JekyllEchoTag,
    "comment": JekyllCommentTag,
    "capture": JekyllCaptureTag,
    "increment": JekyllIncrementTag,
    "decrement": JekyllDecrementTag,
    "cycle": JekyllCycleTag,
    TOKEN_ILLEGAL: UnknownTag,
    "include": IncludeTag,
    "include_relative": IncludeRelativeTag,
    "highlight": HighlightTag,
    "post_url": PostUrlTag,
    "link": LinkTag,
    "toc": TocTag,
}
"""Jekyll's tags by name, added to every environment (the output statement replaced)."""


def register_tag(tag: type[Tag]) -> None:
    """Add ``tag`` (a python-liquid ``Tag`` class with its ``name``) to every environment
    made after this call: the hook for plugin tags such as jekyll-toc's ``{% toc %}``."""
    TAGS[tag.name] = tag


def add_tags(env: Environment) -> None:
    """Add :data:`TAGS` to ``env`` (replacing its ``include`` and output statement)."""
    for tag in TAGS.values():
        env.add_tag(tag)


def line_of(token: Token) -> int:
    """Return the 1-based line of ``token`` in its source."""
    return _line_of(token)


def tag_names() -> Iterable[str]:
    """Return the names in :data:`TAGS`."""
    return tuple(TAGS)
