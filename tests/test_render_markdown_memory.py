"""Markdown costs memory linear in its input with a small constant, whatever its shape.

Each degenerate body below once cost 200 to 1,500 bytes per character while it was parsed
(a regex repeat keeping a backtracking frame per pass, typography's per-character lists):
1 MB of blank lines took 1.35 GB. Each is rendered here in a child process whose address
space is capped (2 MB of input, a cap of 270 MB), so a regression ends in a
``MemoryError`` instead of passing. What is inherently a few hundred bytes each, mistune's
tokens, is bounded by ``render.markdown_max_elements``.

The possessive rewrites of regexes are checked against the regexes they replace on every
string of their alphabet up to a length: same match, same groups.
"""

from __future__ import annotations

import itertools
import re
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mistune.block_parser import BlockParser
from mistune.core import BlockState
from mistune.inline_parser import InlineParser
from mistune.plugins.footnotes import REF_FOOTNOTE

from deploybot.render.limits import LimitError
from deploybot.render.markdown.kramdown import attrs
from deploybot.render.markdown.kramdown import footnotes as kramdown_footnotes
from deploybot.render.markdown.kramdown.ext_tags import extension_tag
from deploybot.render.markdown.mistune_specs import BLOCK_RULES, INLINE_RULES
from deploybot.render.markdown.renderer import make_markdown
from tests.test_render_limits import one_error_line, run_build, site

CAP = 270_000_000  # bytes of address space for the child (its baseline is ~40 MB)
SIZE = 2_000_000  # characters of each body
# The cap leaves each character 115 bytes (the healthy cases take at most 31, RSS at peak:
# blank quote lines); each regression took 200 or more, 400 MB at this size.
TIMEOUT_S = 120.0

_CHILD = """
import sys
from deploybot.render.markdown.renderer import markdown_for, markdown_to_html
from deploybot.render.model import RenderOptions
text = sys.stdin.read()
sys.stdout.write(markdown_to_html(text, markdown_for(RenderOptions())))
"""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def render_capped(text: str) -> str:
    """Return ``text`` rendered as a post's Markdown (the build's options) in a child
    process capped at :data:`CAP` bytes; fail the test when the child fails."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=text,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=_cap_memory,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


# name: (body of about n characters, its HTML)
CASES: dict[str, tuple[Callable[[int], str], str]] = {
    "blank lines": (lambda n: "\n" * n, "\n"),  # kramdown: one newline for a blank text
    "blank lines of blanks": (lambda n: " \t\n" * (n // 3), "\n"),
    "blank quote lines": (lambda n: ">\n" * (n // 2), "<blockquote>\n</blockquote>\n"),
    "blank lines in a list item": (
        lambda n: "- a\n" + "\n" * n + "  b\n",
        "<ul>\n<li>\n<p>a</p>\n<p>b</p>\n</li>\n</ul>\n",
    ),
    "blank lines after a link definition": (
        lambda n: "[x]: /y\n" + "\n" * n + "[x]\n",
        '<p><a href="/y">x</a></p>\n',
    ),
    "blank footnote lines": (
        lambda n: "a[^x]\n\n[^x]: y\n" + "  \n" * (n // 3),
        '<p>a<sup id="fnref:x" role="doc-noteref"><a href="#fn:x" class="footnote" rel="footnote">'
        '1</a></sup></p>\n<div class="footnotes" role="doc-endnotes">\n  <ol>\n'
        '    <li id="fn:x" role="doc-endnote">\n      <p>y\u00a0<a href="#fnref:x" '
        'class="reversefootnote" role="doc-backlink">&#8617;</a></p>\n    </li>\n  </ol>\n'
        "</div>\n",
    ),
    "setext underline": (lambda n: "a\n" + "=" * n + "\n", '<h1 id="a">a</h1>\n'),
    "thematic break of stars": (lambda n: "*" * n + "\n", "<hr />\n"),
    "thematic break of - -": (lambda n: "- " * (n // 2) + "\n", "<hr />\n"),
    "block IAL": (lambda n: "a\n{: " + "b" * n + "}\n", "<p>a</p>\n"),
    "ALD": (lambda n: "{:n: " + "b" * n + "}\na\n", "<p>a</p>\n"),
    "options extension": (lambda n: "{::options " + " " * n + "/}\na\n", "<p>a</p>\n"),
    "quotes": (lambda n: "'" * (n * 5 // 8), "<p>" + "’" * (SIZE * 5 // 8) + "</p>\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_degenerate_body_renders_within_a_memory_cap(name: str) -> None:
    body, html = CASES[name]
    assert render_capped(body(SIZE)) == html


def test_fifty_megabytes_of_blank_lines_build_within_a_memory_cap(tmp_path: Path) -> None:
    # The largest post render.max_file_bytes allows; it once needed ~65 GB.
    post = "---\ntitle: Blank\n---\n" + "\n" * 49_999_000 + "Bye.\n"
    src = site(tmp_path / "site", {"_posts/2024-01-01-blank.md": post, "_config.yml": "url: /"})
    result = run_build(src, tmp_path / "out")  # capped at 1.5 GB
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "out" / "2024" / "01" / "01" / "blank.html").read_text()
    assert "<p>Bye.</p>" in html


# --- the element budget ----------------------------------------------------------------------


def test_list_items_past_the_element_limit_are_exit_1_naming_the_file(tmp_path: Path) -> None:
    # 2.5 million list items: ~800 MB as tokens before the limit stopped them.
    post = "---\ntitle: Items\n---\n" + "-\n" * 2_500_000
    src = site(tmp_path / "site", {"_posts/2024-01-01-items.md": post})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-items.md: the Markdown makes more than "
        "1,000,000 elements (render.markdown_max_elements)"
    )
    assert not (tmp_path / "out").exists()


def test_table_rows_padded_past_the_element_limit_are_exit_1(tmp_path: Path) -> None:
    # 20 KB: 2,000 rows under a row of 2,000 cells, each row padded to 2,000 cells (as
    # kramdown does): 4 million cells, once 69 s and 2.8 GB before the first was rendered.
    table = "| a " * 2000 + "|\n|---|\n" + "| x |\n" * 2000
    post = "---\ntitle: Table\n---\n" + table
    src = site(tmp_path / "site", {"_posts/2024-01-01-table.md": post})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-table.md: the Markdown makes more than "
        "1,000,000 elements (render.markdown_max_elements)"
    )


@pytest.mark.parametrize(
    ("body", "elements"),
    [
        ("- a\n" * 5, 11),  # the list, 5 list items, 5 texts
        ("<div>\n" + "<p>\n" * 5, 6),  # one raw HTML block and the 5 elements in it
        ("a <b> " * 5, 10),  # 5 texts, 5 inline HTML tags
        ("[a]: /b\n[c]: /d\n", 2),  # 2 link definitions (kept in state.env, no token)
        ("| a | b |\n|---|\n| c |\n", 11),  # the table, 2 x (row, 2 cells), 4 cell texts
    ],
)
def test_element_limit_counts_blocks_spans_and_html_elements(body: str, elements: int) -> None:
    make_markdown(max_elements=elements)(body)
    with pytest.raises(LimitError, match=r"more than \d+ elements"):
        make_markdown(max_elements=elements - 1)(body)


# --- the possessive rewrites match what they replace -------------------------------------------


def strings(alphabet: list[str], longest: int) -> Iterator[str]:
    """Every string of up to ``longest`` pieces of ``alphabet``."""
    for length in range(longest + 1):
        for pieces in itertools.product(alphabet, repeat=length):
            yield "".join(pieces)


def same_matches(old: re.Pattern[str], new: re.Pattern[str], texts: Iterator[str]) -> None:
    for text in texts:
        for pos in range(len(text) + 1):
            a, b = old.match(text, pos), new.match(text, pos)
            got = None if b is None else (b.span(), b.groupdict())
            assert got == (None if a is None else (a.span(), a.groupdict())), repr(text)


_RULE_ALPHABETS = {
    "blank_line": [" ", "\t", "\n", "a"],
    "setex_heading": ["=", "-", " ", "\n", "a"],
    "thematic_break": ["-", "_", "*", " ", "\t", "\n"],
    "ref_footnote": ["[^a]:", " ", "  ", "a", "\n"],
    "escape": ["\\*", "\\", "*", "a"],
}


@pytest.mark.parametrize("name", [*BLOCK_RULES, *INLINE_RULES], ids=lambda name: f"mistune {name}")
def test_possessive_mistune_rule_matches_as_mistune_does(name: str) -> None:
    original, linear = BLOCK_RULES.get(name) or INLINE_RULES[name]
    parser: type[BlockParser] | type[InlineParser] = (
        BlockParser if name in BLOCK_RULES else InlineParser
    )
    # mistune's own rule still reads as recorded (or it changed: look at the rewrite again)
    spec = parser.SPECIFICATION if name != "ref_footnote" else {name: REF_FOOTNOTE}
    assert spec[name] == original
    # both inside a group, as mistune's joined regex has them
    old, new = (re.compile(f"(?P<{name}>{p})", re.M) for p in (original, linear))
    same_matches(old, new, strings(_RULE_ALPHABETS[name], 6))


def test_possessive_rules_are_the_ones_markdown_uses() -> None:
    md = make_markdown()
    for name, (_, linear) in BLOCK_RULES.items():
        if name != "ref_footnote":
            assert md.block.specification[name] == linear
    # kramdown's footnote definitions (possessive too) replace mistune's there
    assert md.block.specification["ref_footnote"] == kramdown_footnotes.REF_FOOTNOTE
    mistune_notes = make_markdown(footnotes="mistune")
    assert mistune_notes.block.specification["ref_footnote"] == BLOCK_RULES["ref_footnote"][1]
    assert md.inline.specification["escape"] == INLINE_RULES["escape"][1]
    assert (
        mistune.create_markdown().block.specification["blank_line"] == BLOCK_RULES["blank_line"][0]
    ), "only our instance changes"


_OLD_BODY = r"(?:\\\}|[^}\n])+"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (r"^ {0,3}\{:(?![:/])(?P<body>" + _OLD_BODY + r")\}[ \t]*$", attrs.IAL_LINE),
        (
            r"^ {0,3}\{:(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]*):(?P<body>" + _OLD_BODY + r")\}[ \t]*$",
            attrs.ALD_LINE,
        ),
    ],
    ids=["IAL", "ALD"],
)
def test_attribute_list_lines_match_as_kramdowns_regex(old: str, new: re.Pattern[str]) -> None:
    alphabet = ["{:", "{:n:", "\\", "}", "a", " ", "\n", ":", "/"]
    for flags in (0, re.M):
        same_matches(re.compile(old, flags), re.compile(new.pattern, flags), strings(alphabet, 5))


def test_attribute_list_parts_match_as_kramdowns_regex() -> None:
    old = re.compile(r"((?:#[A-Za-z][A-Za-z0-9_:-]*|\.[^\s.#]+)+)(?=\s|\Z)")
    same_matches(old, attrs._ID_OR_CLASS_MULTI, strings(["#", ".", "a", "1", " "], 6))


def test_first_tag_matches_as_before() -> None:
    value = r"""(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+)"""
    old = re.compile(
        r"(?P<lead>\s*)<(?P<name>[A-Za-z][A-Za-z0-9-]*)"
        r"(?P<attrs>(?:\s+[^\s\"'<>/=]+(?:\s*=\s*" + value + r")?)*)(?P<end>\s*/?>)"
    )
    alphabet = [" ", "a", "=", '"', "/", ">", "'"]
    texts = ("<p" + text for text in strings(alphabet, 6))
    same_matches(old, attrs._FIRST_TAG, texts)


_EXT_START = (
    r"\{::(?P<ext_name>comment|nomarkdown|options)(?:\s(?P<ext_opts>(?:\\\}|[^}])*?)|)"
    r"(?P<ext_close>/)?\}"
)


@pytest.mark.parametrize("block", [True, False], ids=["block", "span"])
def test_extension_tag_ends_where_kramdowns_regex_does(block: bool) -> None:
    lead = r"^ {0,3}" if block else ""
    old = re.compile(lead + _EXT_START + (r"[ \t]*(?:\n|$)" if block else ""), re.M)
    alphabet = ["\\", "}", "a", " ", "\n", "/", "\\}", "{::comment"]
    for rest in strings(alphabet, 5):
        text = "{::comment" + rest
        env: dict[str, object] = {}
        # every start tag of the text, in turn, sharing the searches (as a parse does)
        for tag in list(re.finditer(lead + r"\{::comment", text, re.M)):
            want, start = old.match(text, tag.start()), tag.end()
            got = extension_tag(text, start, block, env)
            expected = None
            if want is not None:
                expected = (want.group("ext_opts"), bool(want.group("ext_close")), want.end())
            assert (None if got is None else (got.opts, got.close, got.end)) == expected, text


def test_a_start_tag_that_is_no_tag_leaves_the_line_to_the_next_rule() -> None:
    # Not a tag (no "}" ends it): a table row, as when the tag was one alternative of
    # mistune's joined block regex, before the rows of the table.
    html = make_markdown()("{::comment | b\n--|--\nc | d\n")
    assert "<table>" in html and "{::comment" in html


# --- mistune's linear paragraphs and block quotes give mistune's results ---------------------

_LINES = [">", "> a", ">> b", "a", "b c", "    d", "\td", "<span>x", "<x", "{::comment x", "",
          "- a", "  b", "1. c", "===", "---", ": d", "<div>", "</div>", "|a|", "[x]: /y",
          "{: .c}", "^", "```", "# h", "*[x]: y", "[^n]: note", "a[^n] [x]"]  # fmt: skip


def _mistunes_own() -> mistune.Markdown:
    """:func:`make_markdown` as it was: mistune's block state and block quotes, and its
    scanner rules (but kramdown's footnote definitions, which replace mistune's)."""
    md = make_markdown()
    setattr(md.block, "state_cls", BlockState)  # noqa: B010
    del md.block.extract_block_quote  # back to BlockParser's
    md.block.BLANK_LINE = BlockParser.BLANK_LINE
    for name, (original, _) in BLOCK_RULES.items():
        if name != "ref_footnote":
            md.block.specification[name] = original
    md.inline.specification["escape"] = INLINE_RULES["escape"][0]
    return md


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=14))
def test_linear_parsing_renders_as_mistune_does(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    assert make_markdown()(text) == _mistunes_own()(text)
