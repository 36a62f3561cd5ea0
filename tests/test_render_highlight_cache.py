"""Highlighted code blocks kept across builds (deploybot.render.highlight.cache): a hit gives
the same bytes without running Pygments; a damaged entry or file is ignored and written
again; the size bound holds; incremental builds through the cache equal full builds."""

from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.highlight.cache import FILE_NAME, block_key, kind_key
from deploybot.render.highlight.highlighter import LEXER_OPTIONS, builtin_lexer, lexer_for
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.incremental_site import T0, THEME, Incremental, apply, initial_site

CODE = "def f{n}(x):\n    return x * {n}  # the {n}th\n"


def _site(blocks: int, start: int = 0) -> dict[str, bytes]:
    files = {}
    for i in range(start, start + blocks):
        code = CODE.format(n=i)
        ruby = f"{{% highlight ruby %}}\nx = {i}\n{{% endhighlight %}}\n"
        post = f"---\ntitle: P{i}\n---\nText {i}.\n\n```python\n{code}```\n\n{ruby}"
        files[f"_posts/2020-02-{1 + i % 28:02d}-p{i}.md"] = post.encode()
    return files


def _build(files: dict[str, bytes], folder: Path | None, **options: object) -> dict[str, bytes]:
    sink = MemorySink()
    with open_cache(folder) as cache:
        build_into(MemoryTree(files), RenderOptions(build_time=T0, **options), cache, sink, None)  # type: ignore[arg-type]
    return sink.files


def _rows(folder: Path) -> list[tuple[str, bytes, str, int]]:
    with sqlite3.connect(folder / FILE_NAME) as conn:
        return list(conn.execute("SELECT key, html, digest, size FROM blocks ORDER BY key"))


def test_a_hit_gives_the_same_bytes_without_highlighting(tmp_path: Path) -> None:
    files = _site(6)
    first = _build(files, tmp_path)
    assert len(_rows(tmp_path)) == 12  # a python and a ruby block per post
    # A budget no highlighting could meet: only blocks taken from the cache pass.
    second = _build(files, tmp_path, highlight_timeout=1e-9)
    assert second == first == _build(files, None)
    key = block_key(lexer_for("python"), CODE.format(n=0))  # type: ignore[arg-type]
    assert key in {row[0] for row in _rows(tmp_path)}


def test_without_the_cache_the_budget_still_applies(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"render\.highlight_timeout"):
        _build(_site(1), tmp_path, highlight_timeout=1e-9)
    assert not _rows(tmp_path)  # a failed build writes nothing


def test_a_damaged_entry_is_ignored_and_written_again(tmp_path: Path) -> None:
    files = _site(3)
    first = _build(files, tmp_path)
    before = _rows(tmp_path)
    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        conn.execute("UPDATE blocks SET html = substr(html, 1, 7)")  # truncated
        conn.execute("UPDATE blocks SET digest = 'x' WHERE rowid % 2 = 0")
    assert _build(files, tmp_path) == first
    assert [(k, h, d) for k, h, d, _ in _rows(tmp_path)] == [(k, h, d) for k, h, d, _ in before]


def test_a_file_sqlite_cannot_read_is_started_anew(tmp_path: Path) -> None:
    files = _site(3)
    first = _build(files, tmp_path)
    path = tmp_path / FILE_NAME
    path.write_bytes(path.read_bytes()[:1000])  # cut short
    assert _build(files, tmp_path) == first
    path.write_bytes(b"not a database at all" * 100)
    assert _build(files, tmp_path) == first
    assert len(_rows(tmp_path)) == 6


def test_the_size_bound_is_respected(tmp_path: Path) -> None:
    bound = 1500
    for start in (0, 20, 40):  # three builds of different posts: the oldest entries go
        _build(_site(20, start), tmp_path, highlight_cache_bytes=bound)
        rows = _rows(tmp_path)
        assert 0 < sum(size for *_, size in rows) <= bound
    python, ruby = lexer_for("python"), lexer_for("ruby")
    assert python is not None and ruby is not None
    last = {block_key(python, CODE.format(n=n)) for n in range(40, 60)}
    last |= {block_key(ruby, f"x = {n}") for n in range(40, 60)}
    assert {row[0] for row in rows} <= last  # the earlier builds' entries went first
    assert (tmp_path / FILE_NAME).stat().st_size < 64 * 1024  # pages given back


def test_a_zero_bound_keeps_nothing(tmp_path: Path) -> None:
    _build(_site(2), tmp_path, highlight_cache_bytes=0)
    assert not (tmp_path / FILE_NAME).exists()


def test_incremental_builds_through_the_cache_equal_full_builds(tmp_path: Path) -> None:
    options = RenderOptions(theme=THEME, timezone="UTC", feed_limit=3, build_time=T0)
    files = initial_site()
    inc = Incremental(open_cache(tmp_path), options, {})
    edits = [
        {"_posts/2021-01-02-post-1.md": b"---\ntitle: S\n---\n```python\ny = 2\n```\n"},
        {"_posts/2021-01-03-post-9.md": b"---\ntitle: N\n---\n```python\nx = 1\n```\n"},
        {"_posts/2021-01-02-post-1.md": b"---\ntitle: S\n---\n```python\nx = 1\n```\n"},
    ]
    inc.build(files, options)
    for edit in edits:
        files = apply(files, edit)
        inc.build(files, options)
        assert inc.outputs == dict(build_site(MemoryTree(files), options).files)
    assert _rows(tmp_path)


LANGS = ["python", "ruby", "c++", "cpp", "bash", "sh", "yaml", "html", "json", "js", "diff"]


@pytest.mark.parametrize("lang", [*LANGS, "Python", "console", "text"])
def test_the_table_names_the_lexer_get_lexer_by_name_gives(lang: str) -> None:
    """A hit is found by the class path Pygments' table gives (no lexer made): it is the
    class ``lexer_for`` makes, and its key is the one of the lexer itself."""
    lexer = lexer_for(lang)
    assert lexer is not None
    kind = type(lexer)
    assert builtin_lexer(lang) == f"{kind.__module__}.{kind.__qualname__}"
    assert kind_key(f"{kind.__module__}.{kind.__qualname__}", LEXER_OPTIONS, "x") == block_key(
        lexer, "x"
    )


def test_an_unknown_language_is_in_no_table() -> None:
    assert builtin_lexer("no-such-language") is None and lexer_for("no-such-language") is None


def test_a_hit_makes_no_lexer(tmp_path: Path) -> None:
    """A build whose blocks are all in the store imports no lexer module (a one-post edit of
    a code-heavy post: Python's lexer compiles its regexes at its first instance)."""
    files = _site(2)
    first = _build(files, tmp_path)
    options = pickle.dumps(RenderOptions(build_time=T0)).hex()
    probe = (
        "import sys, pickle\nfrom pathlib import Path\n"  # not pytest: it imports lexers
        "from deploybot.render.engine.incremental import build_into, open_cache\n"
        "from deploybot.render.model import RenderOptions\n"
        "from deploybot.render.outputs.sinks import MemorySink\n"
        "from deploybot.render.read.source import MemoryTree\n"
        "files, folder = pickle.loads(bytes.fromhex(sys.argv[1])), Path(sys.argv[2])\n"
        "sink = MemorySink()\nwith open_cache(folder) as cache:\n"
        "    build_into(MemoryTree(files), pickle.loads(bytes.fromhex(sys.argv[3])), cache,"
        " sink, None)\n"
        "sys.stdout.write(pickle.dumps(sink.files).hex() + '\\n')\n"
        "print(' '.join(m for m in sys.modules if m.startswith('pygments.lexers.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, pickle.dumps(files).hex(), str(tmp_path), options],
        capture_output=True,
        text=True,
        check=True,
    )
    built, modules = done.stdout.split("\n")[:2]
    assert pickle.loads(bytes.fromhex(built)) == first
    assert modules.split() == ["pygments.lexers._mapping"]
