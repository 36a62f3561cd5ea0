"""Extreme values in front matter, ``_config.yml`` and commit headers: each is one
``SourceError`` naming the file and line (exit 1), never a Python traceback: integers past
Python's 4,300-digit limit, dates that leave years 1-9999 once placed in a timezone, YAML
scalars a tag cannot hold, nesting past what ``repr`` and ``pickle`` recurse through, and
commit dates ``datetime`` cannot hold. A property test feeds such values to the full and the
incremental build alike (deploybot.render.read.yamlload, dates, revision)."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.objects import Blob, Commit, Tree
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.cli.commands import main
from deploybot.git import repository
from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError

POST = "_posts/2020-01-01-x.md"
OPTIONS = RenderOptions(build_time=datetime(2021, 1, 1, tzinfo=UTC))


def build(front: str, config: str = "title: T\n") -> None:
    """Build a site whose post has ``front`` as front matter, fully and incrementally."""
    files = {
        "_config.yml": config.encode(),
        POST: f"---\n{front}---\nHello {{{{ page.x }}}}\n".encode(),
        "index.html": b"---\nlayout: default\n---\n{% for p in site.posts %}{{ p.x }}{% endfor %}",
    }
    build_site(MemoryTree(files), OPTIONS)
    build_into(MemoryTree(files), OPTIONS, open_cache(None), MemorySink(), None)


BIG = "an integer of more than 4,300 digits"
NESTED = "YAML nested more than 100 deep"
SET = "!!set is not allowed (Jekyll's YAML loader refuses it)"
# Ten aliases, each ten lists deep around the one before: 101 deep at j (line 11).
ALIASES = "a: &a [[[[[[[[[[1]]]]]]]]]]\n" + "".join(
    f"{c}: &{c} [[[[[[[[[[*{p}]]]]]]]]]]\n" for p, c in zip("abcdefghi", "bcdefghij", strict=True)
)


@pytest.mark.parametrize(
    ("front", "error"),
    [
        ("x: " + "9" * 5000 + "\n", f"{POST}:2: front matter: {BIG}"),
        ("x: 0x" + "f" * 5000 + "\n", f"{POST}:2: front matter: {BIG}"),
        ("? " + "1" * 4400 + "\n: x\n", f"{POST}:2: front matter: {BIG}"),
        (
            "date: 0001-01-01 00:00:00 +14:00\n",
            f"{POST}:2: date 0001-01-01 00:00:00+14:00 is out of range in the site's timezone",
        ),
        (
            "date: 9999-12-31 23:59:59 -14:00\n",
            f"{POST}:2: date 9999-12-31 23:59:59-14:00 is out of range in the site's timezone",
        ),
        (
            "date: '0001-01-01 00:00:00 +14:00'\n",
            f"{POST}:2: date 0001-01-01 00:00:00 +14:00 is out of range in the site's timezone",
        ),
        (
            "date: 0000-01-01\n",
            f"{POST}:2: front matter: not a valid date: '0000-01-01' (year 0 is out of range)",
        ),
        ("x: !!timestamp nope\n", f"{POST}:2: front matter: not a valid date: 'nope'"),
        ("x: !!bool maybe\n", f"{POST}:2: front matter: not true or false: 'maybe'"),
        ("x: !!int\n", f"{POST}:2: front matter: not a valid integer: ''"),
        (
            "x: !!float abc\n",
            f"{POST}:2: front matter: not a number: 'abc' (could not convert string to float: "
            "'abc')",
        ),
        ("x: !!set {a, b}\n", f"{POST}:2: front matter: {SET}"),
        ("x: " + "[" * 500 + "]" * 500 + "\n", f"{POST}:2: front matter: {NESTED}"),
        (ALIASES + "k: [*j]\n", f"{POST}:11: front matter: {NESTED}"),
    ],
)
def test_extreme_front_matter_is_one_line(front: str, error: str) -> None:
    with pytest.raises(SourceError) as caught:
        build(front)
    assert str(caught.value) == error


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ("n: " + "9" * 5000 + "\n", f"_config.yml:1: {BIG}"),
        (
            "n: !!int 12x\n",
            "_config.yml:1: not a valid integer: '12x' (invalid literal for int() with base 10: "
            "'12x')",
        ),
        ("n: !!timestamp\n", "_config.yml:1: not a valid date: ''"),
        ("n: 1\nm: !!set {a}\n", f"_config.yml:2: {SET}"),
        ("n: " + "{a: " * 200 + "1" + "}" * 200 + "\n", f"_config.yml:1: {NESTED}"),
    ],
)
def test_extreme_site_config_is_one_line(config: str, error: str) -> None:
    with pytest.raises(SourceError) as caught:
        build("title: x\n", config)
    assert str(caught.value) == error


ZERO = " ~ 2020-01-01 00:00:00 +0000"


@pytest.mark.parametrize(
    ("front", "output", "line"),
    [
        # Jekyll 4.3.1 printed each of these (timezone UTC, future: true) unless noted.
        ("date: 0001-01-01 00:00:00 +00:00\n", "0001/01/01/x.html", " ~ 0001-01-01 00:00:00 +0000"),
        ("date: 9999-12-31 23:59:59 +00:00\n", "9999/12/31/x.html", " ~ 9999-12-31 23:59:59 +0000"),
        ("x: 1e999\n", "2020/01/01/x.html", "1e999" + ZERO),  # YAML 1.1: no dot, a string
        ("x: .nan\n", "2020/01/01/x.html", "NaN" + ZERO),
        ("x: -.inf\n", "2020/01/01/x.html", "-Infinity" + ZERO),
        ("x: 0b" + "1" * 14000 + "\n", "2020/01/01/x.html", f"{2**14000 - 1}{ZERO}"),
        ("x: " + "[" * 99 + "]" * 99 + "\n", "2020/01/01/x.html", ZERO),
        # Jekyll stops the build (kramdown cannot convert the binary string to UTF-8);
        # deploybot prints Python's bytes.
        ("x: !!binary AAEC/w==\n", "2020/01/01/x.html", "b’\\x00\\x01\\x02\\xff’" + ZERO),
        # Jekyll prints a mapping as Ruby's Hash#inspect ({“a”=&gt;1, “b”=&gt;2}, and
        # {1=&gt;”a”, true=&gt;”b”, nil=&gt;”c”, #&lt;Date: …&gt;=&gt;”d”, 1.5=&gt;”e”});
        # so does deploybot, but it joins an omap's pairs, and the key true is the key 1.
        ("x: !!omap [a: 1, b: 2]\n", "2020/01/01/x.html", "a1b2" + ZERO),
        (
            "x: {1: a, true: b, ~: c, 2020-01-01: d, 1.5: e}\n",
            "2020/01/01/x.html",
            "{1=&gt;”b”, nil=&gt;”c”, #&lt;Date: 2020-01-01 ((2458850j,0s,0n),+0s,2299161j)&gt;"
            "=&gt;”d”, 1.5=&gt;”e”}" + ZERO,
        ),
    ],
)
def test_odd_but_valid_front_matter_renders(front: str, output: str, line: str) -> None:
    files = {
        "_config.yml": b"future: true\n",
        POST: f"---\n{front}---\nHello {{{{ page.x }}}} ~ {{{{ page.date }}}}\n".encode(),
    }
    full = build_site(MemoryTree(files), OPTIONS).files
    sink = MemorySink()
    build_into(MemoryTree(files), OPTIONS, open_cache(None), sink, None)
    assert sink.files == dict(full)
    assert f"<p>Hello {line}</p>" in full[output].decode()


_VALUES = st.sampled_from(
    [
        "1" * 4400, "0x" + "f" * 4000, "1e309", ".nan", "-.inf", "0001-01-01 00:00:00 +14:00",
        "9999-12-31 23:59:59 -14:00", "0000-01-01", "2020-02-30", "'2020-01-01 00:00 +9999'",
        "!!binary aGVsbG8=", "!!binary x", "!!set {a, b}", "!!omap [a: 1]", "!!timestamp x",
        "!!bool maybe", "!!float x", "!!int x", "!!null x", "[" * 150 + "]" * 150, "{1: a}",
        "{[1]: a}", "&a [1, *a]", "'/" + "a" * 300 + "/'", "'/../x'", "~", "[]", "{}",
    ]
)  # fmt: skip
_KEYS = st.sampled_from(
    ["title", "date", "permalink", "layout", "categories", "tags", "excerpt", "slug", "x"]
)
_CONFIG_KEYS = st.sampled_from(
    ["title", "url", "baseurl", "permalink", "timezone", "exclude", "author", "future", "x"]
)


@settings(max_examples=150)
@given(
    st.lists(st.tuples(_KEYS, _VALUES), max_size=3),
    st.lists(st.tuples(_CONFIG_KEYS, _VALUES), max_size=2),
)
def test_any_front_matter_and_config_builds_or_is_one_source_error(
    front: list[tuple[str, str]], config: list[tuple[str, str]]
) -> None:
    try:
        build("".join(f"{k}: {v}\n" for k, v in front), "".join(f"{k}: {v}\n" for k, v in config))
    except SourceError as exc:
        assert "\n" not in str(exc)


# --- commit dates ---------------------------------------------------------------------------


def commit_dated(repo_path: Path, seconds: int, offset: int) -> str:
    with repository.bare_repo(repo_path) as repo:
        store = repo.object_store
        blob = Blob.from_string(b"---\ntitle: x\n---\nhi\n")
        store.add_object(blob)
        posts = Tree()
        posts.add(b"2020-01-01-x.md", repository.MODE_FILE, blob.id)
        store.add_object(posts)
        root = Tree()
        root.add(b"_posts", stat.S_IFDIR, posts.id)
        store.add_object(root)
        commit = Commit()
        commit.tree = root.id
        commit.author = commit.committer = b"M <m@example.org>"
        commit.author_time = commit.commit_time = seconds
        commit.author_timezone = commit.commit_timezone = offset
        commit.message = b"x\n"
        store.add_object(commit)
        repo.refs[b"refs/heads/main"] = commit.id
        return commit.id.decode()


@pytest.mark.parametrize(
    ("seconds", "offset", "shown"),
    [
        (1_600_000_000, 99 * 3600 + 59 * 60, "1600000000 +9959"),
        (10**12, 0, "1000000000000 +0000"),
        (-(10**12), -3600, "-1000000000000 -0100"),
    ],
)
def test_a_commit_date_out_of_range_is_one_line(
    tmp_path: Path, seconds: int, offset: int, shown: str
) -> None:
    commit = commit_dated(tmp_path / "src.git", seconds, offset)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["build", str(tmp_path / "src.git"), str(out), "--rev", "main"]
    )
    assert (result.exit_code, result.output) == (
        1,
        f"deploybot: error: commit {commit}: committer date {shown} is out of range (a date "
        "needs an offset under 24 hours and a year from 1 to 9999)\n",
    )
    assert not out.exists()
