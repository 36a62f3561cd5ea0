"""A site with its own Liquid theme: layout chains, precedence of themes, ``site.data``,
and errors in layouts and data files naming the file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.data import read_data
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError

POST = "_posts/2024-01-02-a.md"


def site(**files: bytes) -> dict[str, bytes]:
    base = {
        "_config.yml": b"title: S\n",
        "_layouts/base.html": b"---\nlang: de\nwho: base\n---\n<html {{ layout.lang }} "
        b"{{ layout.who }}>{{ content }}</html>\n",
        "_layouts/post.html": b"---\nlayout: base\nwho: post\n---\n<h1>{{ page.title }}</h1>"
        b"{{ content }}{{ page.content | size }}\n",
        POST: b"---\ntitle: A\nlayout: post\n---\nHi {{ layout.who }}\n",
    }
    base.update({k.replace("__", "/").replace("_DOT_", "."): v for k, v in files.items()})
    return base


def test_layout_chain_with_merged_layout_data() -> None:
    out = build_site(MemoryTree(site()), RenderOptions()).files
    assert out["2024/01/02/a.html"] == b"<html de post><h1>A</h1><p>Hi post</p>\n15\n</html>\n"
    # the site's own theme: no bundled index, assets or feeds
    assert sorted(out) == ["2024/01/02/a.html"]


def test_missing_layout_warns_and_renders_the_content_alone() -> None:
    files = site()
    files[POST] = b"---\ntitle: A\nlayout: nope\n---\nHi\n"
    build = build_site(MemoryTree(files), RenderOptions())
    assert build.files["2024/01/02/a.html"] == b"<p>Hi</p>\n"
    assert [w.message for w in build.warnings] == [
        f"Layout 'nope' requested in {POST} does not exist"
    ]


def test_an_explicit_render_theme_wins_over_the_sites_layouts() -> None:
    files = site()
    files["_jinja/post.html"] = b"jinja {{ page.title }}\n"
    out = build_site(MemoryTree(files), RenderOptions(theme="_jinja")).files
    assert out["2024/01/02/a.html"] == b"jinja A\n"


def test_error_in_a_layout_names_the_layout_and_its_line() -> None:
    files = site()
    files["_layouts/post.html"] = b"---\nlayout: base\n---\nfine\n{% for %}\n"
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(files), RenderOptions())
    assert (info.value.path, info.value.line) == ("_layouts/post.html", 5)


def test_loop_bomb_in_a_layout_names_the_layout() -> None:
    files = site()
    files["_layouts/base.html"] = (
        b"x\n{% for a in (1..99999) %}{% for b in (1..99999) %}{% for c in (1..99999) %}"
        b"{% endfor %}{% endfor %}{% endfor %}{{ content }}\n"
    )
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(files), RenderOptions())
    assert (info.value.path, info.value.line) == ("_layouts/base.html", 2)


def test_data_files_nest_by_folder() -> None:
    tree = MemoryTree(
        {
            "_data/a.yml": b"x: 1\n",
            "_data/b/c.json": b'{"y": [1, 2]}',
            "_data/b/d e.csv": b"k,v\n1,2\n",
            "_data/notes.txt": b"ignored",
        }
    )
    assert read_data(tree, tree.paths()) == {
        "a": {"x": 1},
        "b": {"c": {"y": [1, 2]}, "d_e": [{"k": "1", "v": "2"}]},
    }


def test_bad_data_file_names_file_and_line() -> None:
    files = site(_data__team_DOT_yml=b"- a\n- b: [\n")
    files[POST] = b"---\ntitle: A\nlayout: post\n---\n{{ site.data.team }}\n"
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(files), RenderOptions())
    assert info.value.path == "_data/team.yml" and info.value.line is not None


def test_data_yaml_alias_bomb_is_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(8):
        prev, name = chr(97 + i), chr(98 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    bomb = ("\n".join(lines) + "\n").encode()
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(site(_data__bomb_DOT_yml=bomb)), RenderOptions())
    assert info.value.path == "_data/bomb.yml" and "max_yaml_size" in info.value.message


def test_loop_bomb_in_a_post_exits_1_naming_the_file(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "_posts").mkdir(parents=True)
    (source / "_posts" / "2024-01-01-bomb.md").write_text(
        "---\ntitle: B\n---\nok\n"
        "{% for a in (1..1000000) %}{% for b in (1..1000000) %}x{% endfor %}{% endfor %}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "build", str(source), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=600,  # a safety net: the loops are refused before they run (test_render_liquid)
    )
    assert done.returncode == 1
    assert "_posts/2024-01-01-bomb.md:5:" in done.stderr
    assert "render.liquid_max_loop_iterations" in done.stderr
