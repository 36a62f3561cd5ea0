"""mistune's own scanner rules, rewritten so that matching one costs no memory per repeat.

mistune joins every block rule into one regex of named alternatives (``Parser.compile_sc``)
and matches it at each block start. Python's ``re`` keeps a backtracking frame for every
pass of a repeat whose body is more than one character, with a copy of the marks of all
the groups before it (``_sre``'s ``MAX_UNTIL``, ``MARK_PUSH``): with the ~60 groups of our
block rules, about 1.5 KB per pass. So 1 MB of blank lines (one pass of ``blank_line``'s
``(^[ \\t\\v\\f]*\\n)+`` per line) took 1.5 GB while it was matched, and 50 MB would take 75 GB.
A possessive repeat (``*+``, ``++``, ``{3,}+``: Python 3.11) keeps no frame.

Each rule below is mistune's, with its unbounded repeats possessive (or, for
``setex_heading``, written so they can be): in each, what follows a repeat can never match
what the repeat could give back, so the possessive form matches the same text with the
same groups (``tests/test_render_markdown_memory.py`` compares each with mistune's own on
every string of its alphabet up to a length). A rule mistune has since changed is left
alone (that test then fails, so the change is looked at).
"""

from __future__ import annotations

import re

import mistune
from mistune.helpers import PUNCTUATION

_FOOTNOTE_LEAD = r"^(?P<footnote_lead> {0,4})\[\^(?P<footnote_key>(?:[^\\\[\]\s]|\\.){1,500})]:"

BLOCK_RULES: dict[str, tuple[str, str]] = {
    # name: (mistune's rule, the same rule with possessive repeats)
    "blank_line": (r"(^[ \t\v\f]*\n)+", r"(?:^[ \t\v\f]*+\n)++"),
    # (=|-){1,} keeps the last character in setext_1 (mistune's level): all but the last
    # are taken possessively, then the last one.
    "setex_heading": (
        r"^ {0,3}(?P<setext_1>=|-){1,}[ \t]*$",
        r"^ {0,3}(?:[=-](?=[=-]))*+(?P<setext_1>[=-])[ \t]*$",
    ),
    "thematic_break": (
        r"^ {0,3}((?:-[ \t]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})$",
        r"^ {0,3}((?:-[ \t]*+){3,}+|(?:_[ \t]*+){3,}+|(?:\*[ \t]*+){3,}+)$",
    ),
    "ref_footnote": (
        _FOOTNOTE_LEAD + r"[ \t\n](?P<footnote_text>[^\n]*(?:\n+|$)"
        r"(?:(?P=footnote_lead) {1,4}(?! )[^\n]*\n+)*)",
        _FOOTNOTE_LEAD + r"[ \t\n](?P<footnote_text>[^\n]*+(?:\n++|$)"
        r"(?:(?P=footnote_lead) {1,4}(?! )[^\n]*+\n++)*+)",
    ),
}
INLINE_RULES: dict[str, tuple[str, str]] = {
    "escape": (r"(?:\\" + PUNCTUATION + ")+", r"(?:\\" + PUNCTUATION + ")++"),
}
BLANK_LINE = re.compile(BLOCK_RULES["blank_line"][1], re.M)
"""mistune's ``BlockParser.BLANK_LINE`` (runs of blank lines), possessive."""


def possessive_rules(md: mistune.Markdown) -> None:
    """mistune plugin: replace mistune's rules of :data:`BLOCK_RULES` and
    :data:`INLINE_RULES` (and ``BLANK_LINE``, which block HTML and link definitions search
    with) on this instance by their possessive forms. Register it before any plugin that
    reads or wraps those rules."""
    for parser, rules in ((md.block, BLOCK_RULES), (md.inline, INLINE_RULES)):
        for name, (original, linear) in rules.items():
            if parser.specification.get(name) == original:
                parser.specification[name] = linear
    # An instance attribute shadows BlockParser.BLANK_LINE for this parser only.
    setattr(md.block, "BLANK_LINE", BLANK_LINE)  # noqa: B010
