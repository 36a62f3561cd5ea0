"""Bounded resources: ``[render]`` limits on YAML alias expansion, file size and page size.

Hostile input must end in exit 1 with one line naming the file (and the line where known),
quickly and in bounded memory: the CLI cases run ``deploybot build`` in a child process with
an address-space limit and a timeout, so a regression fails instead of eating the machine.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.config.load import load_config
from deploybot.git.tree import GitTree
from deploybot.render.read.yamlload import (
    ExpansionError,
    expanded_size,
    load_yaml,
    within_limits,
)
from deploybot.support.errors import ConfigError
from tests.gitcli import run_git
from tests.gitrepo import commit_files, commit_snapshot, head

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "deploybot.example.toml"
ID = {"name": "t", "email": "t@example.org"}
MEMORY_CAP = 1_500_000_000  # bytes of address space for the child
TIMEOUT_S = 60.0


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_build(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``deploybot build SOURCE OUT`` in a memory-capped child (fails the test on
    timeout)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "deploybot", "build", str(source), str(out), *extra],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            preexec_fn=_cap_memory,
            cwd=source.parent,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"deploybot build did not finish within {TIMEOUT_S} s")


def site(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` under ``root`` and return it."""
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


# Nine levels of nine aliases: 9**9 (387 million) "lol"s once expanded.
BOMB = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [
        f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """Return the one ``deploybot: error:`` line of a failed run (asserting there is one)."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- YAML alias expansion ------------------------------------------------------------------


def test_alias_bomb_in_front_matter_is_exit_1_naming_file_and_line(tmp_path: Path) -> None:
    post = f"---\ntitle: Bomb\n{BOMB}\nx: *i\n---\n{{{{ page.x }}}}\n"
    src = site(tmp_path / "site", {"_posts/2024-01-01-bomb.md": post})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    # line 9: "g: &g [...]", the first key whose expansion passes the limit
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-bomb.md:9: front matter: YAML aliases expand "
        "to more than 10,000,000 characters (render.max_yaml_size)"
    )
    assert not (tmp_path / "out").exists()


def test_alias_bomb_in_site_config_is_exit_1(tmp_path: Path) -> None:
    files = {
        "_config.yml": f"title: T\n{BOMB}\nx: *i\n",
        "_posts/2024-01-01-a.md": "---\ntitle: A\n---\n{{ site.x }}\n",
    }
    result = run_build(site(tmp_path / "site", files), tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _config.yml:8: YAML aliases expand to more than 10,000,000 "
        "characters (render.max_yaml_size)"
    )


def test_alias_inside_its_own_anchor_is_exit_1(tmp_path: Path) -> None:
    post = "---\ntitle: Loop\nx: &x [1, *x]\n---\n{{ page.x }}\n"
    src = site(tmp_path / "site", {"_posts/2024-01-01-loop.md": post})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-loop.md:3: front matter: "
        "a YAML alias is inside its own anchor"
    )


def test_yaml_limit_is_a_render_key(tmp_path: Path) -> None:
    post = "---\ntitle: Small\nlist: &l [aaaa, bbbb]\ntwice: [*l, *l]\n---\n{{ page.twice }}\n"
    src = site(tmp_path / "site", {"_posts/2024-01-01-small.md": post})
    assert run_build(src, tmp_path / "out").returncode == 0
    assert "aaaabbbbaaaabbbb" in (tmp_path / "out/2024/01/01/small.html").read_text()
    config = tmp_path / "deploybot.toml"
    config.write_text('[source]\nurl = "site"\n[render]\nmax_yaml_size = 40\n')
    result = run_build(src, tmp_path / "out2", "--config", str(config))
    assert result.returncode == 1
    assert one_error_line(result).startswith(
        "deploybot: error: _posts/2024-01-01-small.md:4: front matter: YAML aliases expand "
        "to more than 40 characters"
    )


def test_expanded_size_counts_nodes_and_scalar_characters() -> None:
    loader = yaml.SafeLoader("a: &x [1, 22]\nb: [*x, *x]\n")
    root = loader.get_single_node()
    # {a: [1, 22], b: [[1, 22], [1, 22]]}: mapping 1, "a" 2, [1, 22] 1+2+3, "b" 2,
    # the outer list 1 + 6 + 6
    assert expanded_size(root, 10**9) == 1 + 2 + 6 + 2 + 13
    assert expanded_size(root, 5) == 6  # stops at the cap + 1


_TREES = [
    "title: 'A: b'\ndate: 2020-01-02 10:00\ntags: [x, y]\n",
    "a:\nb:\n? \n- \n",
    "{a, b, c: [d, {e: f}]}\n",
    'say: "\\x41\\U0001F600\\N"\nlong: |\n  one\n  two\n',
    "- - - - - x\n",
]


@pytest.mark.parametrize("text", _TREES)
def test_within_limits_only_when_the_walk_agrees(text: str) -> None:
    # every text within the limits measures within them once composed
    node = yaml.SafeLoader(text).get_single_node()
    for cap in range(1, 8 * len(text) + 40):
        if within_limits(text, cap):
            assert expanded_size(node, cap) <= cap
    assert within_limits(text, 10**6)


def test_within_limits_refuses_aliases_and_deep_nesting() -> None:
    assert not within_limits("a: &x 1\nb: *x\n", 10**6)
    assert not within_limits("[" * 100 + "]" * 100, 10**6)
    with pytest.raises(ExpansionError, match="nested more than 100 deep"):
        load_yaml("[" * 101 + "]" * 101, 10**6)
    assert load_yaml("[" * 99 + "]" * 99, 10**6) is not None


def test_load_yaml_keeps_ordinary_aliases_and_merge_keys() -> None:
    text = "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\nsame: *b\n"
    assert load_yaml(text, 1000) == {
        "base": {"x": 1, "y": 2},
        "derived": {"x": 1, "y": 3},
        "same": {"x": 1, "y": 2},
    }


def test_merge_key_bomb_is_refused() -> None:
    # merge keys flatten by copying: each level doubles what the next one merges
    lines = ["a0: &a0 {k: v}"] + [
        f"a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}]}}" for i in range(1, 40)
    ]
    with pytest.raises(ExpansionError, match="more than 1,000,000 characters"):
        load_yaml("\n".join(lines), 1_000_000)


@pytest.mark.parametrize("key", ["max_file_bytes", "max_page_bytes", "max_yaml_size"])
@pytest.mark.parametrize("value", ["0", "-1", '"big"'])
def test_limits_are_checked_at_load(tmp_path: Path, key: str, value: str) -> None:
    config = tmp_path / "deploybot.toml"
    config.write_text(f'[source]\nurl = "site"\n[render]\n{key} = {value}\n')
    with pytest.raises(ConfigError, match=rf"deploybot.toml: 'render.{key}' must be"):
        load_config(config)


def test_limits_have_defaults_and_are_in_the_example_config() -> None:
    render = load_config(EXAMPLE).render
    assert (render.max_file_bytes, render.max_page_bytes, render.max_yaml_size) == (
        50_000_000,
        50_000_000,
        10_000_000,
    )
    text = EXAMPLE.read_text()
    for line in ("max_file_bytes = 50_000_000", "max_page_bytes = 50_000_000"):
        assert line in text
    assert "max_yaml_size = 10_000_000" in text
    assert (render.max_site_bytes, render.highlight_timeout) == (1_000_000_000, 10.0)
    assert "max_site_bytes = 1_000_000_000" in text
    assert "highlight_timeout = 10.0" in text


# --- max_file_bytes ------------------------------------------------------------------------


def test_static_file_over_the_default_limit_is_exit_1(tmp_path: Path) -> None:
    src = site(tmp_path / "site", {"index.md": "---\ntitle: Home\n---\nhi\n"})
    with open(src / "big.bin", "wb") as f:
        f.truncate(60_000_000)  # sparse: no disk, no memory
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: big.bin: 60,000,000 bytes, more than render.max_file_bytes (50,000,000)"
    )
    assert not (tmp_path / "out").exists()


def _bare_repo(path: Path, files: dict[str, bytes]) -> Path:
    Repo.init_bare(str(path), mkdir=True).close()
    commit_files(path, files, "Import")
    with Repo(str(path)) as repo:
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    return path


def _config(tmp_path: Path, render: str) -> Path:
    path = tmp_path / "deploybot.toml"
    path.write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
        f'author = "Bot <bot@example.org>"\n[render]\n{render}\n'
    )
    return path


@pytest.mark.parametrize(
    "name", ["_posts/2023-01-02-big.md", "about.md", "_layouts_theme/post.html", "a.css"]
)
def test_any_source_file_over_the_limit_in_a_git_revision_is_exit_1(
    tmp_path: Path, name: str
) -> None:
    files = {
        "_posts/2023-01-01-a.md": b"---\ntitle: A\n---\nsmall\n",
        "_layouts_theme/post.html": b"{{ content }}",
        "_layouts_theme/page.html": b"{{ content }}",
    }
    files[name] = b"---\ntitle: Big\n---\n" + b"x" * 3000
    repo = _bare_repo(tmp_path / "source.git", files)
    config = _config(tmp_path, 'theme = "_layouts_theme"\nmax_file_bytes = 2000')
    result = run_build(repo, tmp_path / "out", "--rev", "main", "--config", str(config))
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        f"deploybot: error: {name}: 3,019 bytes, more than render.max_file_bytes (2,000)"
    )


def test_git_blob_size_is_read_without_inflating_the_blob(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with open(work / "big.bin", "wb") as f:
        f.truncate(60_000_000)
    run_git(work, "init", "-q", **ID)
    run_git(work, "add", "big.bin", **ID)
    run_git(work, "commit", "-q", "-m", "big", **ID)
    tree_id = run_git(work, "rev-parse", "HEAD^{tree}", **ID).strip()
    with GitTree(work / ".git", tree_id) as tree:
        tracemalloc.start()
        try:
            size = tree.size("big.bin")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert size == 60_000_000
    assert peak < 1_000_000


def test_run_once_refuses_a_large_file_and_publishes_nothing(tmp_path: Path) -> None:
    _bare_repo(
        tmp_path / "source.git", {"index.md": b"---\ntitle: H\n---\nhi\n", "a.bin": b"\0" * 3000}
    )
    Repo.init_bare(str(tmp_path / "publish.git"), mkdir=True).close()
    config = _config(tmp_path, "max_file_bytes = 2000")
    result = CliRunner().invoke(main, ["run-once", "--config", str(config)])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        "deploybot: error: a.bin: 3,000 bytes, more than render.max_file_bytes (2,000)"
    )
    assert head(tmp_path / "publish.git", "asf-site") is None


# --- max_page_bytes ------------------------------------------------------------------------


def test_liquid_output_stops_at_the_limit_naming_the_line(tmp_path: Path) -> None:
    # 100 copies of a 1 MB value: 100 MB of Markdown source before the limit existed
    body = "intro\n\n" + "{{ page.x }}\n" * 100
    post = f"---\ntitle: Big\nx: {'y' * 1_000_000}\n---\n{body}"
    src = site(tmp_path / "site", {"_posts/2024-01-01-big.md": post})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    # line 6 holds the first output; the 51st copy (line 56) passes 50,000,000 bytes
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-big.md:56: the page's output is more than "
        "50,000,000 bytes (render.max_page_bytes)"
    )


def test_markdown_output_stops_at_the_limit(tmp_path: Path) -> None:
    # one 10 kB link definition used 10,000 times: 100 MB of HTML from 80 kB of Markdown
    body = f"[x]: /{'u' * 10_000}\n\n" + "[a][x] " * 10_000 + "\n"
    src = site(tmp_path / "site", {"_posts/2024-01-01-links.md": f"---\ntitle: L\n---\n{body}"})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-links.md: the page's output is more than "
        "50,000,000 bytes (render.max_page_bytes)"
    )


def test_fragments_copied_by_markdown_stop_at_the_limit(tmp_path: Path) -> None:
    # A highlight block's placeholder as a link URL: each use of the link copies the block.
    code = "x = 1\n" * 2000
    body = f"[x]: {{% highlight python %}}\n{code}{{% endhighlight %}}\n\n" + "[a][x] " * 20_000
    src = site(tmp_path / "site", {"_posts/2024-01-01-hl.md": f"---\ntitle: H\n---\n{body}\n"})
    result = run_build(src, tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-hl.md: the page's output is more than "
        "50,000,000 bytes (render.max_page_bytes)"
    )


def test_layout_output_over_the_limit_is_exit_1(tmp_path: Path) -> None:
    files = {
        "_posts/2024-01-01-a.md": "---\ntitle: A\n---\n" + "word " * 400 + "\n",
        "theme/post.html": "{{ content }}{{ content }}",
        "theme/page.html": "{{ content }}",
    }
    src = site(tmp_path / "site", files)
    config = tmp_path / "deploybot.toml"
    config.write_text('[source]\nurl = "site"\n[render]\ntheme = "theme"\nmax_page_bytes = 3000\n')
    result = run_build(src, tmp_path / "out", "--config", str(config))
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-a.md: the page's output is more than "
        "3,000 bytes (render.max_page_bytes)"
    )
    config.write_text('[source]\nurl = "site"\n[render]\ntheme = "theme"\nmax_page_bytes = 5000\n')
    assert run_build(src, tmp_path / "out", "--config", str(config)).returncode == 0


# --- max_site_bytes: the output of one build in all ----------------------------------------

SITE_LAYOUT = b"{{ 'x' * 4000000 }}"  # 4 MB a page: within every per-page limit


def _theme_site(root: Path, posts: int) -> tuple[Path, Path]:
    src = root / "src"
    (src / "_theme").mkdir(parents=True)
    (src / "_posts").mkdir()
    for name in ("default", "post", "page"):
        (src / "_theme" / f"{name}.html").write_bytes(SITE_LAYOUT)
    for day in range(1, posts + 1):
        (src / "_posts" / f"2020-01-{day:02d}-p.md").write_bytes(b"---\ntitle: p\n---\nx\n")
    (src / "big.bin").write_bytes(b"s" * 3_000_000)  # a static copy: does not count
    config = root / "deploybot.toml"
    config.write_text(
        '[source]\nurl = "src"\n[render]\ntheme = "_theme"\nmax_site_bytes = 10000000\n'
    )
    return src, config


def test_max_site_bytes_bounds_the_whole_build(tmp_path: Path) -> None:
    src, config = _theme_site(tmp_path, 3)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(src), str(out), "--config", str(config)])
    assert (result.exit_code, result.output) == (
        1,
        "deploybot: error: 2020/01/01/p.html: the build's output passes 10,000,000 bytes "
        "(render.max_site_bytes)\n",
    )
    assert not out.exists()


def test_max_site_bytes_bounds_run_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    src, config = _theme_site(tmp_path, 3)
    files = {p.relative_to(src).as_posix(): p.read_bytes() for p in src.rglob("*") if p.is_file()}
    commit_snapshot(tmp_path / "source.git", files)
    Repo.init_bare(str(tmp_path / "publish.git"), mkdir=True).close()
    config.write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n[notify]\n'
        'transport = "none"\n[render]\ntheme = "_theme"\nmax_site_bytes = 10000000\n'
    )
    result = CliRunner().invoke(main, ["run-once", "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.endswith(
        ": the build's output passes 10,000,000 bytes (render.max_site_bytes)\n"
    )
    assert head(tmp_path / "publish.git", "asf-site") is None


def test_two_pages_fit_max_site_bytes(tmp_path: Path) -> None:
    src, config = _theme_site(tmp_path, 2)
    result = CliRunner().invoke(
        main, ["build", str(src), str(tmp_path / "out"), "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
