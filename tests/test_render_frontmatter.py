"""Front matter splitting/parsing and Jekyll date reading (deploybot.render.read.frontmatter,
.dates)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.dates import rfc822, strftime
from deploybot.render.read.frontmatter import key_line, parse_front_matter
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError

SHARED = Path(__file__).resolve().parents[2] / "shared"
POSTS = SHARED / "corpus" / "tvm-site" / "source" / "_posts"


def test_splits_front_matter_and_body_line() -> None:
    fm = parse_front_matter(b"---\ntitle: Hi\nlayout: post\n---\nbody\n", "a.md")
    assert fm is not None
    assert fm.data == {"title": "Hi", "layout": "post"}
    assert fm.body == "body\n"
    assert fm.body_line == 5


def test_no_front_matter_is_none() -> None:
    assert parse_front_matter(b"# just text\n---\n", "a.md") is None
    assert parse_front_matter(b"\n---\ntitle: x\n---\n", "a.md") is None  # must be line 1


def test_bom_crlf_dots_and_empty() -> None:
    fm = parse_front_matter(b"\xef\xbb\xbf---\r\ntitle: x\r\n...\r\nbody\r\n", "a.md")
    assert fm is not None and fm.data == {"title": "x"} and fm.body == "body\n"
    empty = parse_front_matter(b"---\n---\n", "a.md")
    assert empty is not None and empty.data == {} and empty.body == ""


def test_body_thematic_break_is_kept() -> None:
    fm = parse_front_matter(b"---\na: 1\n---\ntext\n\n---\n\nmore\n", "a.md")
    assert fm is not None and fm.body == "text\n\n---\n\nmore\n"


def test_unquoted_colon_names_the_line() -> None:
    data = b"---\nlayout: post\ntitle: TVM: fast\ndate: 2020-01-01\n---\nx\n"
    with pytest.raises(SourceError) as info:
        parse_front_matter(data, "_posts/2020-01-01-x.md")
    assert info.value.path == "_posts/2020-01-01-x.md"
    assert info.value.line == 3
    assert "mapping values" in info.value.message


def test_tab_indentation_names_the_line() -> None:
    with pytest.raises(SourceError) as info:
        parse_front_matter(b"---\ntitle: x\nauthor:\n\tname: y\n---\n", "p.md")
    assert info.value.line == 4


def test_unclosed_and_non_mapping() -> None:
    fm = parse_front_matter(b"---\ntitle: x\nno end\n", "p.md")
    assert fm is not None and not fm.closed
    assert (fm.data, fm.body, fm.body_line) == ({}, "---\ntitle: x\nno end\n", 1)
    with pytest.raises(SourceError, match="mapping"):
        parse_front_matter(b"---\n- a\n- b\n---\n", "p.md")


def test_invalid_utf8_names_the_line() -> None:
    with pytest.raises(SourceError, match="UTF-8") as info:
        parse_front_matter(b"---\ntitle: x\n---\nok\n\xff\n", "p.md")
    assert info.value.line == 5


def test_key_line() -> None:
    fm = parse_front_matter(b"---\n title: x\n\n date: 2020-01-01\n---\n", "p.md")
    assert fm is not None
    assert key_line(fm, "date") == 4
    assert key_line(fm, "missing") is None


def test_formatting_is_locale_free() -> None:
    moment = datetime(2020, 7, 14, 9, 12, 2, tzinfo=timezone(timedelta(hours=-7)))
    assert rfc822(moment) == "Tue, 14 Jul 2020 09:12:02 -0700"
    assert (
        strftime(moment, "%b %-d, %Y %A %B %j %:z %%") == "Jul 14, 2020 Tuesday July 196 -07:00 %"
    )
    # A naive time (a custom front-matter key PyYAML read without an offset) prints as UTC.
    assert rfc822(datetime(2020, 1, 5, 8, 0, 9)) == "Sun, 05 Jan 2020 08:00:09 +0000"
    assert rfc822(datetime(2020, 1, 5, tzinfo=timezone(timedelta(hours=5, minutes=45)))) == (
        "Sun, 05 Jan 2020 00:00:00 +0545"
    )


def test_bad_date_in_post_names_the_line() -> None:
    tree = MemoryTree({"_posts/2020-01-01-x.md": b"---\ntitle: x\ndate: someday\n---\nhi\n"})
    with pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions())
    assert (info.value.path, info.value.line) == ("_posts/2020-01-01-x.md", 3)


@pytest.mark.skipif(not POSTS.is_dir(), reason="tvm corpus not found at ../shared")
def test_broken_real_post_names_file_and_line() -> None:
    name = "2020-07-14-bert-pytorch-tvm.md"
    text = (POSTS / name).read_bytes()
    broken = text.replace(b'title: "Bridging PyTorch and TVM"', b"title: Bridging: PyTorch and TVM")
    assert broken != text
    tree = MemoryTree({f"_posts/{name}": broken})
    with pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions(timezone="America/Los_Angeles"))
    assert info.value.path == f"_posts/{name}"
    assert info.value.line == 3
    assert str(info.value).startswith(f"_posts/{name}:3: ")


@pytest.mark.parametrize(
    ("data", "expected", "body"),
    [
        (b" layout: post\n title: Indented\n", {"layout": "post", "title": "Indented"}, "x\n"),
        (b"layout: post\n\n\ntitle: Gaps\n\n", {"layout": "post", "title": "Gaps"}, "x\n"),
        (b"title:\tTabbed\t\nlayout: post\n", {"title": "Tabbed", "layout": "post"}, "x\n"),
        (b"title: 'a\tb'\n", {"title": "a\tb"}, "x\n"),
    ],
)
def test_jekyll_tolerated_front_matter_shapes(
    data: bytes, expected: dict[str, str], body: str
) -> None:
    fm = parse_front_matter(b"---\n" + data + b"---\nx\n", "p.md")
    assert fm is not None and fm.data == expected and fm.body == body


def test_crlf_keeps_line_numbers() -> None:
    fm = parse_front_matter(b"---\r\ntitle: x\r\n\r\ndate: 2020-01-01\r\n---\r\nbody\r\n", "p.md")
    assert fm is not None and fm.body_line == 6 and key_line(fm, "date") == 4


def test_tab_indentation_is_an_error_naming_the_line() -> None:
    with pytest.raises(SourceError) as info:
        parse_front_matter(b"---\ntitle: x\nauthor:\n\tname: y\n---\n", "p.md")
    assert (info.value.path, info.value.line) == ("p.md", 4)
    assert "tab in the indentation" in str(info.value)


def test_an_unclosed_front_matter_is_text_with_a_warning_as_in_jekyll() -> None:
    files = {
        "_posts/2020-01-01-a.md": b"---\ntitle: x\n\nBody text\n",
        "page.md": b"---\ntitle: y\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    post, page = built.files["2020/01/01/a.html"].decode(), built.files["page.html"].decode()
    assert "<hr />\n<p>title: x</p>\n<p>Body text</p>" in post  # kramdown's rule
    assert "<hr />\n<p>title: y</p>" in page
    unclosed = [(w.path, w.line) for w in built.warnings if "not closed" in w.message]
    assert unclosed == [("_posts/2020-01-01-a.md", 1), ("page.md", 1)]


def test_a_body_that_starts_with_a_rule_keeps_it() -> None:
    fm = parse_front_matter(b"---\ntitle: x\n---\n---\n\nText\n", "p.md")
    assert fm is not None and fm.data == {"title": "x"} and fm.body == "---\n\nText\n"
    built = build_site(
        MemoryTree({"_posts/2020-01-01-a.md": b"---\ntitle: x\n---\n---\n\nText\n"}),
        RenderOptions(),
    )
    assert "<hr />\n<p>Text</p>" in built.files["2020/01/01/a.html"].decode()


def test_a_file_that_starts_with_a_rule_but_has_no_mapping_is_an_error() -> None:
    with pytest.raises(SourceError) as info:
        parse_front_matter(b"---\n\nJust a paragraph.\n\n---\nMore\n", "p.md")
    assert info.value.line == 2 and "mapping" in str(info.value)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (b'---\nlayout: post\ntitle: "Broken: quote\nauthor: x\n---\nbody\n', 3, "quoted scalar"),
        (b"---\ntitle: x\ndate: 2020-13-45\n---\nbody\n", 3, "argument out of range"),
        (b"---\ntitle: x\ndate: 2026-10-15 25:00:00\n---\n", 3, "argument out of range"),
        (b"---\ntitle: x\ndate: tomorrow\n---\n", 3, "no time information"),
    ],
)
def test_errors_point_at_where_the_problem_starts(text: bytes, line: int, message: str) -> None:
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree({"_posts/2020-01-01-p.md": text}), RenderOptions())
    assert (info.value.path, info.value.line) == ("_posts/2020-01-01-p.md", line)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2019-02-30", "2019-03-02T00:00:00+01:00"),  # Psych keeps it as text; Time.parse runs on
        ("2019-03-07 10:00:00", "2019-03-07T11:00:00+01:00"),  # a YAML timestamp: UTC
        ("2019-03-07 10:00", "2019-03-07T10:00:00+01:00"),  # text: local time
        ("3-7-2019", "2019-07-03T00:00:00+02:00"),
        ("Thu, 07 Mar 2019 10:00:00 EST", "2019-03-07T16:00:00+01:00"),
        ("2019-03-07 10:00 CET", "2019-03-07T10:00:00+01:00"),  # the site zone's own name
        ("20190307", "2019-03-07T00:00:00+01:00"),  # a YAML integer, read as text
    ],
)
def test_front_matter_dates_follow_ruby_time_parse(value: str, expected: str) -> None:
    text = f"---\ntitle: x\ndate: {value}\n---\n{{{{ page.date | date_to_xmlschema }}}}\n"
    files = {"_config.yml": b"timezone: Europe/Berlin\npermalink: /:title.html\n"}
    files["_posts/2000-01-01-p.md"] = text.encode()
    built = build_site(MemoryTree(files), RenderOptions())
    assert f"<p>{expected}</p>" in built.files["p.html"].decode()


def test_blank_lines_after_the_closing_fence_are_no_part_of_the_body() -> None:
    """``YAML_FRONT_MATTER_REGEXP`` ends with ``\\s*$\\n?``: the blank (or blank-looking)
    lines after the fence go with it (minima's ``assets/main.scss`` has one, and Jekyll's
    source map shows its body without it)."""
    front = parse_front_matter(b"---\nx: 1\n---  \n\n \n@import 'minima';\n", "main.scss")
    assert front is not None
    assert (front.body, front.body_line) == ("@import 'minima';\n", 6)
    front = parse_front_matter(b"---\n---\n  indented\n", "a.md")
    assert front is not None
    assert (front.body, front.body_line) == ("  indented\n", 3)
