"""python-liquid's template lexer with the end of the text read as Ruby Liquid reads it.

python-liquid 2.3's text rule is ``.+?(?=({%|{{)(-?)|$)``: Python's ``$`` also matches just
before a final newline, so the text after the last tag ends one character early and the
final ``"\\n"`` becomes a text of its own. When the tag before it strips the whitespace
after it (``-%}``), that strip is still in force for the lone newline, which vanishes:
``a{%- if true -%}\\nb\\n`` renders ``ab`` where Ruby Liquid 4 (Jekyll 4.3) renders
``ab\\n``. Every include ending that way lost its last newline (minima's ``head.html``).
Here the rule ends at ``\\Z``, the end of the text only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache, partial

from liquid.lex import _tokenize_template, compile_liquid_rules
from liquid.token import Token

_END_OF_TEXT = "|$))"
"""The end of python-liquid's text rule (``(?=(...)|$)``), followed by the next rule."""


@lru_cache(maxsize=16)
def lexer(
    tag_start: str, tag_end: str, statement_start: str, statement_end: str
) -> Callable[[str], Iterator[Token]]:
    """Return python-liquid's lexer for these delimiters, its text rule ending at ``\\Z``.

    Raises ``RuntimeError`` when python-liquid's rules no longer hold the text rule this
    module mends (a new python-liquid: check whether the mend is still needed)."""
    rules = compile_liquid_rules(tag_start, tag_end, statement_start, statement_end)
    if rules.pattern.count(_END_OF_TEXT) != 1:
        raise RuntimeError("python-liquid's text rule changed: see deploybot.render.liquid.lexer")
    mended = re.compile(rules.pattern.replace(_END_OF_TEXT, r"|\Z))"), rules.flags)
    return partial(_tokenize_template, rules=mended)
