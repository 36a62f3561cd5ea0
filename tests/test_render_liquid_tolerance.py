"""Liquid as Jekyll 4.3.1 runs it: ``liquid.error_mode`` (warn by default: Ruby Liquid's lax
parser, one warning each), unknown tags, unknown filters and undefined values.

The pages of ``tests/fixtures/jekyll/liquid_tolerance`` are compared with real Jekyll's
output (``python -m tests.make_jekyll_fixtures liquid_tolerance``); the warnings expected
are those Jekyll printed for them (``jekyll build`` without ``--quiet``), at file lines
(Jekyll counts from the end of the front matter, 8 lines here).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.liquid.settings import ErrorMode, LiquidSettings, liquid_settings
from deploybot.render.liquid.templates import Liquid, render_liquid
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import DirTree, MemoryTree
from deploybot.support.errors import SourceError
from tests.test_render_jekyll_fixtures import FIXTURES, expected, normalise

CASE = FIXTURES / "liquid_tolerance"
_JEKYLL_WARNING = re.compile(r"Liquid Warning: Liquid syntax error \(line (\d+)\): (.*) in (\S+)")


def jekyll_warnings() -> list[tuple[str, int, str]]:
    """Jekyll's warnings for the case (``jekyll-warnings.txt``, written by
    ``make_jekyll_fixtures``) as ``(path, file line, message)``: Jekyll counts lines from
    the end of the front matter."""
    found = []
    for text in (CASE / "jekyll-warnings.txt").read_text().splitlines():
        m = _JEKYLL_WARNING.fullmatch(text)
        assert m is not None, text
        found.append((m[3], int(m[1]) + _front_matter_lines(CASE / "site" / m[3]), m[2]))
    return found


def _front_matter_lines(path: Path) -> int:
    lines = path.read_text().splitlines()
    return lines.index("---", 1) + 1 if lines[0] == "---" else 0


def test_each_page_renders_as_jekyll_renders_it() -> None:
    theirs = expected("liquid_tolerance")
    ours = build_site(DirTree(CASE / "site"), RenderOptions())
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        assert normalise(ours.files[path].decode()) == normalise(data.decode()), path


def test_each_markup_the_strict_parser_refuses_warns_as_jekyll_does() -> None:
    """The same warnings as Jekyll (a layout's once for each page it renders), at the
    same file and line, with the same message."""
    ours = build_site(DirTree(CASE / "site"), RenderOptions())
    prefix, suffix = "Liquid syntax error: ", " (read by Jekyll's lax parser, as with "
    found = []
    for w in ours.warnings:
        assert w.message.startswith(prefix) and w.message.endswith("liquid.error_mode: warn)")
        assert w.line is not None
        found.append((w.path, w.line, w.message[len(prefix) : w.message.index(suffix)]))
    theirs = jekyll_warnings()
    assert len(theirs) == 44
    assert sorted(found) == sorted(theirs)


def _strict_site() -> dict[str, bytes]:
    return {
        "_config.yml": b"liquid:\n  error_mode: strict\n",
        "ok.md": b"---\n---\nfine {{ page.reversed }}\n",
        "bad.md": b"---\ntitle: B\n---\nline 4\n{{ page.title | | upcase }}\n",
    }


def test_error_mode_strict_stops_at_the_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(_strict_site()), RenderOptions())
    assert (info.value.path, info.value.line) == ("bad.md", 5)
    assert info.value.message == (
        'Liquid syntax error: Expected id but found pipe in "{{ page.title | | upcase }}"'
    )


def test_error_mode_strict_exits_1_naming_the_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name, data in _strict_site().items():
        (source / name).write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "build", str(source), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "bad.md:5: Liquid syntax error: Expected id but found pipe" in done.stderr


def test_error_mode_lax_reads_the_same_without_a_warning() -> None:
    files = _strict_site()
    files["_config.yml"] = b"liquid:\n  error_mode: lax\n"
    build = build_site(MemoryTree(files), RenderOptions())
    assert b"<p>line 4\nB</p>" in build.files["bad.html"]
    assert build.warnings == ()


@pytest.mark.parametrize(
    ("source", "mode", "output"),
    [
        ("{{ page.reversed }}", ErrorMode.STRICT, "R"),  # Ruby's strict parser accepts it
        ("{% if page.limit == 'L' %}y{% endif %}", ErrorMode.STRICT, "y"),
        ("{% unless page.title\u00a0== 'X' %}y{% endunless %}", ErrorMode.LAX, ""),
        ("{% if a or b and c %}y{% endif %}", ErrorMode.WARN, "y"),
        ("{{ page.title | append: 'x', | upcase }}", ErrorMode.LAX, "TX"),
        ("{{ page['title'] }}{{ page[\"reversed\"] }}", ErrorMode.STRICT, "TR"),
    ],
)
def test_markups_read_as_ruby_reads_them(source: str, mode: ErrorMode, output: str) -> None:
    page = {"title": "T", "reversed": "R", "limit": "L"}
    liquid = Liquid(None, settings=LiquidSettings(error_mode=mode))
    variables = {"page": page, "a": True, "b": False, "c": False}
    assert render_liquid(source, path="p.md", variables=variables, liquid=liquid).text == output


@pytest.mark.parametrize(
    "source", ["{% youtube abc %}", "{% mytag x %}in{% endmytag %}", "{% endmytag %}"]
)
def test_an_unknown_tag_stops_with_jekylls_message(source: str) -> None:
    """Jekyll 4.3.1 stops on these in every mode (measured): ``Liquid syntax error (line 2):
    Unknown tag 'youtube'``."""
    for mode in ErrorMode:
        with pytest.raises(SourceError) as info:
            render_liquid(
                f"a\n{source}\n", path="p.md", liquid=Liquid(None, settings=LiquidSettings(mode))
            )
        name = source.split()[1]
        assert (info.value.line, info.value.message) == (
            2,
            f"Liquid syntax error: Unknown tag '{name}'",
        )


def test_a_plugin_s_tag_without_the_plugin_listed_says_which_plugin_it_needs() -> None:
    with pytest.raises(SourceError) as info:
        render_liquid("<head>\n{% seo %}\n", path="_includes/head.html")
    assert (info.value.line, info.value.message) == (
        2,
        "Liquid syntax error: Unknown tag 'seo' "
        "(the tag of jekyll-seo-tag, which _config.yml's plugins does not list)",
    )


def test_strict_filters_and_strict_variables_stop_the_build() -> None:
    lenient = render_liquid("[{{ 'x' | nofilter }}][{{ nope.deep }}]", path="p.md")
    assert (lenient.text, lenient.warnings) == ("[x][]", ())
    # Jekyll 4.3.1 (measured): "Liquid error (line 2): undefined filter nofilter" and exit 1.
    for settings, source, message in (
        (LiquidSettings(strict_filters=True), "{{ 'x' | nofilter }}", "undefined filter nofilter"),
        (LiquidSettings(strict_variables=True), "{{ nope }}", "undefined variable nope"),
        (
            LiquidSettings(strict_variables=True),
            "{% if nope %}{% endif %}",
            "undefined variable nope",
        ),
        (LiquidSettings(strict_variables=True), "{{ page.a.b }}", "undefined variable b"),
    ):
        with pytest.raises(SourceError) as info:
            liquid = Liquid(None, settings=settings)
            render_liquid(f"x\n{source}", path="p.md", variables={"page": {"a": {}}}, liquid=liquid)
        assert (info.value.line, info.value.message) == (2, f"Liquid error: {message}")


def test_liquid_settings_merge_over_jekylls_defaults() -> None:
    assert liquid_settings({}) == LiquidSettings(ErrorMode.WARN, False, False)
    assert liquid_settings({"liquid": {"error_mode": "strict"}}) == LiquidSettings(
        ErrorMode.STRICT, False, False
    )
    assert liquid_settings({"liquid": {"strict_filters": True}}).strict_filters
    assert liquid_settings({"liquid": {"error_mode": "Strict"}}).error_mode is ErrorMode.WARN
    assert liquid_settings({"liquid": "strict"}) == LiquidSettings()


def test_a_comment_body_is_checked_as_ruby_parses_it() -> None:
    """Ruby's ``Comment`` is a block whose body is parsed: ``error_mode: strict`` stops on
    a markup there (Jekyll 4.3.1, measured); an unknown tag in it is ignored."""
    source = "a\n{% comment %}{% youtube x %}\n{{ x | | y }}{% endcomment %}b"
    for mode, output in ((ErrorMode.WARN, "a\nb"), (ErrorMode.LAX, "a\nb")):
        result = render_liquid(
            source, path="p.md", liquid=Liquid(None, settings=LiquidSettings(mode))
        )
        assert result.text == output
        assert [w.line for w in result.warnings] == ([3] if mode is ErrorMode.WARN else [])
    with pytest.raises(SourceError) as info:
        strict = Liquid(None, settings=LiquidSettings(ErrorMode.STRICT))
        render_liquid(source, path="p.md", liquid=strict)
    assert info.value.line == 3
    assert (
        info.value.message == 'Liquid syntax error: Expected id but found pipe in "{{ x | | y }}"'
    )


def test_the_fast_paths_accept_only_what_rubys_strict_parser_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each markup a fast path (``_PLAIN_*``) takes for sure fine, the strict parser
    itself accepts: 20,000 seeded random markups of Liquid's pieces."""
    import random
    import re as re_

    from deploybot.render.liquid import lax

    pieces = ["x", "a.b", "in", " in ", "contains", " contains ", "(1..3)", "(", ")", ".."]
    pieces += ["1", "-2", "1.5", "'s'", '"d"', "'", "|", ":", ",", " ", "[0]", "[", "]"]
    pieces += ["==", "<", ">=", " and ", " or ", "\u00a0", "q?", "upcase", "k: v", " limit: 2"]
    pieces += ["reversed", " reversed", " offset: continue", "9a", "_"]
    checks = [
        ("_PLAIN_VARIABLE", lax.strict_variable_error),
        ("_PLAIN_CONDITION", lax.strict_condition_error),
        ("_PLAIN_FOR", lax.strict_for_error),
    ]
    rng = random.Random(19)
    accepted = 0
    for _ in range(20_000):
        markup = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        for name, strict_error in checks:
            fast = getattr(lax, name)
            if fast.fullmatch(markup):
                accepted += 1
                with monkeypatch.context() as m:
                    m.setattr(lax, name, re_.compile(r"(?!)"))
                    assert strict_error(markup) is None, (name, markup)
    assert accepted > 2_000


LAX_ONLY = ("case.html", "cycle.html", "tablerow.html", "capture.html", "include_params.html")
"""Fixture pages of tags Ruby Liquid 5.4.0 parses with its lax parser alone (``case``/
``when``, ``cycle``, ``tablerow``, ``capture``, ``increment``/``decrement``; Jekyll's
``include``): Jekyll 4.3.1 renders them the same in every ``error_mode`` without a
warning (measured, ``strict`` too)."""


def _fixture_site(pages: tuple[str, ...], mode: ErrorMode) -> dict[str, bytes]:
    site = CASE / "site"
    files = {f"_includes/{p.name}": p.read_bytes() for p in (site / "_includes").iterdir()}
    files.update({page: (site / page).read_bytes() for page in pages})
    files["_layouts/default.html"] = (site / "_layouts" / "default.html").read_bytes()
    files["_config.yml"] = f"liquid:\n  error_mode: {mode.value}\n".encode()
    return files


@pytest.mark.parametrize("mode", list(ErrorMode))
def test_lax_only_tags_render_as_jekyll_in_every_mode_without_a_word(mode: ErrorMode) -> None:
    theirs = expected("liquid_tolerance")
    build = build_site(MemoryTree(_fixture_site(LAX_ONLY, mode)), RenderOptions())
    assert build.warnings == ()
    for page in LAX_ONLY:
        assert normalise(build.files[page].decode()) == normalise(theirs[page].decode()), page


def test_a_loop_the_strict_parser_refuses_stops_in_strict_mode_and_is_silent_in_lax() -> None:
    """Jekyll 4.3.1, ``error_mode: strict`` (measured): ``Liquid syntax error (line 1):
    Expected end_of_string but found comma in "i in page.l limit:2, offset:1"``, exit 1."""
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(_fixture_site(("loops.html",), ErrorMode.STRICT)), RenderOptions())
    assert (info.value.path, info.value.line) == ("loops.html", 7)
    assert info.value.message == (
        "Liquid syntax error: Expected end_of_string but found comma in "
        '"i in page.l limit:2, offset:1"'
    )
    build = build_site(MemoryTree(_fixture_site(("loops.html",), ErrorMode.LAX)), RenderOptions())
    assert build.warnings == ()
    theirs = expected("liquid_tolerance")["loops.html"]
    assert normalise(build.files["loops.html"].decode()) == normalise(theirs.decode())


_SYNTAX = "{% include file.ext param='value' param2='value' %}"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        # Ruby Liquid 5.4.0's lax parsers refuse these (Jekyll 4.3.1, every mode, measured).
        (
            "{% case %}{% when 1 %}a{% endcase %}",
            "Syntax Error in 'case' - Valid syntax: case [condition]",
        ),
        (
            "{% case x %}{% when %}a{% endcase %}",
            "Syntax Error in tag 'case' - Valid when condition: "
            "{% when [condition] [or condition2...] %}",
        ),
        (
            "{% cycle %}",
            "Syntax Error in 'cycle' - Valid syntax: cycle [name :] var [, var2, var3 ...]",
        ),
        (
            "{% cycle , %}",
            "Syntax Error in 'cycle' - Valid syntax: cycle [name :] var [, var2, var3 ...]",
        ),
        (
            "{% tablerow i x %}{% endtablerow %}",
            "Syntax Error in 'table_row loop' - Valid syntax: "
            "table_row [item] in [collection] cols=3",
        ),
        (
            "{% capture %}x{% endcapture %}",
            "Syntax Error in 'capture' - Valid syntax: capture [var]",
        ),
        (
            "{% case x %}{% when 1 %}a{% else junk %}b{% endcase %}",
            "Syntax Error in tag 'case' - Valid else condition: {% else %} (no parameters)",
        ),
        # Jekyll's IncludeTag raises ArgumentError: "Invalid syntax for include tag: PARAMS".
        ("{% include note.html a=some value %}", "Invalid syntax for include tag: a=some value"),
        ('{% include note.html a="x" b %}', 'Invalid syntax for include tag: a="x" b'),
        ("{% include note.html a=x[0] %}", "Invalid syntax for include tag: a=x[0]"),
        ("{% include note.html a:'x' %}", "Invalid syntax for include tag: a:'x'"),
        ('{% include note.html a="x"b="y" %}', 'Invalid syntax for include tag: a="x"b="y"'),
        (
            '{% include note.html a="x"\u00a0b="y" %}',
            'Invalid syntax for include tag: a="x"\u00a0b="y"',
        ),
        (
            "{% include note.html\u00a0%}",
            "Invalid syntax for include tag. File contains invalid characters or sequences: "
            "'note.html\\xa0'",
        ),
        (
            "{% include note.html, a=1 %}",
            "Invalid syntax for include tag. File contains invalid characters or sequences: "
            "'note.html,'",
        ),
    ],
)
def test_markups_the_lax_parsers_refuse_stop_in_every_mode(source: str, message: str) -> None:
    for mode in ErrorMode:
        files = {"_includes/note.html": b"n", "p.md": f"---\n---\nline 3\n{source}\n".encode()}
        files["_config.yml"] = f"liquid:\n  error_mode: {mode.value}\n".encode()
        with pytest.raises(SourceError) as info:
            build_site(MemoryTree(files), RenderOptions())
        assert (info.value.path, info.value.line) == ("p.md", 4), mode
        text = info.value.message.removeprefix("Liquid syntax error: ")
        assert text.startswith(message), (mode, text)
        if "include" in source:
            assert text.endswith(f"valid syntax: {_SYNTAX})")


@pytest.mark.parametrize(
    ("source", "strict", "other"),
    [
        (
            "{% for %}{% endfor %}",
            'Expected id but found end_of_string in ""',
            "Syntax Error in 'for loop' - Valid syntax: for [item] in [collection]",
        ),
        (
            "{% unless %}{% endunless %}",
            '[:end_of_string] is not a valid expression in ""',
            "Syntax Error in tag 'if' - Valid syntax: if [expression]",
        ),
    ],
)
def test_a_tag_without_markup_stops_with_rubys_message(
    source: str, strict: str, other: str
) -> None:
    """Jekyll 4.3.1 (measured): the strict parser's message in ``strict`` mode, the lax
    parser's in ``warn`` and ``lax``."""
    for mode in ErrorMode:
        with pytest.raises(SourceError) as info:
            render_liquid(
                f"a\n{source}", path="p.md", liquid=Liquid(None, settings=LiquidSettings(mode))
            )
        message = strict if mode is ErrorMode.STRICT else other
        assert (info.value.line, info.value.message) == (2, f"Liquid syntax error: {message}")


def test_the_lax_parser_reads_a_quoted_keyword_argument_as_ruby() -> None:
    """``FilterArgsRegex`` interpolates ``QuotedFragment`` as a group: ``k: 'v'`` is a
    keyword argument (Ruby Liquid 5.4.0: ``[["f", ["w"], {"k"=>"v"}]]``), and ``when``
    values go on after a quoted one (``WhenSyntax``; fixture ``case.html`` line 16)."""
    from liquid.token import TOKEN_OUTPUT, Token

    from deploybot.render.liquid import lax

    token = Token(TOKEN_OUTPUT, "", 0, "")
    expr = lax.lax_variable("'a' | | f: k: 'v', \"w\"", token)
    assert str(expr) == "'a' | f: k:'v', 'w'"
    assert lax.lax_when('a-b or "d" , q?') == "a-b, 'd', q?"
