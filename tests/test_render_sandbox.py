"""Layouts are untrusted code: known Jinja2 SSTI payloads reach no Python object, environment
variable or shell, and loops, recursion and big values stop at a budget with one line naming
the layout (deploybot.render.theme.sandbox; the real CLI on a folder with a ``render.theme``).

The budget cases run the CLI in a subprocess with a timeout and a memory cap, so a regression
fails instead of hanging the suite or filling the machine's memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.render.engine.build import build_site
from deploybot.render.model import LayoutLimits, RenderOptions
from deploybot.render.read.source import MemoryTree
from tests.gitrepo import commit_snapshot, head

CANARY = "canary-5a7e1f0c"
PAGE = b"---\ntitle: Home\n---\nhello\n"


def site(tmp_path: Path, layout: str, render: str = "") -> tuple[Path, Path, Path]:
    """A source folder whose theme's ``page.html`` is ``layout``; (source, out, config)."""
    src = tmp_path / "src"
    (src / "theme").mkdir(parents=True)
    (src / "index.md").write_bytes(PAGE)
    (src / "theme" / "page.html").write_text(layout)
    cfg = tmp_path / "deploybot.toml"
    cfg.write_text(f'[source]\nurl = "src"\n[render]\ntheme = "theme"\n{render}')
    return src, tmp_path / "out", cfg


# --- SSTI: no Python object, no environment, no shell ------------------------------------

UNSAFE = "layout failed: access to attribute"
PAYLOADS = [
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", f"{UNSAFE} '__class__' of 'str'"),
    ("{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}", f"{UNSAFE} '__init__'"),
    ("{{ joiner.__init__.__globals__.os.environ }}", f"{UNSAFE} '__init__'"),
    (
        "{{ namespace.__init__.__globals__.os.environ.DEPLOYBOT_CANARY }}",
        f"{UNSAFE} '__init__'",
    ),
    ("{{ lipsum.__globals__['os'].popen('touch PWNED').read() }}", "layout failed: 'lipsum'"),
    (
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os"
        ".popen('touch PWNED').read() }}",
        f"{UNSAFE} '_TemplateReference__context'",
    ),
    ("{{ '{0.__init__.__globals__[os].environ}'.format(cycler) }}", f"{UNSAFE} '__init__'"),
    (
        "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
        f"{UNSAFE} '__class__' of 'list'",
    ),
    ("{{ range.__globals__['os'].environ }}", f"{UNSAFE} '__globals__' of 'function'"),
    (
        "{{ cycler.__init__.__globals__.__builtins__.__import__('os').system('touch PWNED') }}",
        f"{UNSAFE} '__init__'",
    ),
    ("{{ page.update({'title': 'x'}) }}", f"{UNSAFE} 'update' of 'dict'"),
    ("{{ site.__class__.__mro__ }}", f"{UNSAFE} '__class__' of 'dict'"),
    ("{{ content.__html__.__globals__ }}", f"{UNSAFE} '__html__' of 'Markup'"),
    # attr() with the name spelled out or escaped gets an undefined value, printed as nothing.
    ("[{{ ''|attr('__class__')|attr('__mro__') }}]", None),
    ("[{{ ''|attr('\\x5f\\x5fclass\\x5f\\x5f') }}]", None),
    ("[{{ page.items|attr('__self__') }}]", None),
]


@pytest.mark.parametrize(("layout", "error"), PAYLOADS)
def test_ssti_payloads_reach_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, error: str | None
) -> None:
    monkeypatch.setenv("DEPLOYBOT_CANARY", CANARY)
    monkeypatch.chdir(tmp_path)
    src, out, cfg = site(tmp_path, layout)
    result = CliRunner().invoke(main, ["build", str(src), str(out), "--config", str(cfg)])
    assert not (tmp_path / "PWNED").exists()
    assert CANARY not in result.output
    if error is None:
        assert result.exit_code == 0, result.output
        assert (out / "index.html").read_text() == "[]"
    else:
        assert result.exit_code == 1
        assert result.output.startswith(f"deploybot: error: theme/page.html:1: {error}")
        assert result.output.count("\n") == 1
        assert not out.exists()


def test_mutating_shared_data_is_refused() -> None:
    files = {"theme/page.html": b"{{ site.posts.append(1) }}", "index.md": PAGE}
    with pytest.raises(Exception, match="access to attribute 'append' of 'list'"):
        build_site(MemoryTree(files), RenderOptions(theme="theme"))


def test_layouts_still_do_what_layouts_do() -> None:
    layout = (
        "{% macro item(p) %}<li>{{ p.title|upper }}</li>{% endmacro %}"
        "{% set ns = namespace(n=0) %}"
        "{% for p in site.pages|sort(attribute='url') %}{% set ns.n = ns.n + 1 %}"
        "{{ item(p) }}{% endfor %}|{{ ns.n }}|{{ range(3)|join(',') }}|"
        "{{ '%03d'|format(7) }}|{{ '{:>4}'.format('x') }}|{{ 'ab' * 2 }}|{{ 2 ** 10 }}|"
        "{{ [1, 2, 3][1:] }}|{{ 'a' in 'cat' }}|{{ page.title ~ '!' }}|{{ cycler('x').next() }}"
    )
    files = {"theme/page.html": layout.encode(), "index.md": PAGE, "b.md": PAGE}
    built = build_site(MemoryTree(files), RenderOptions(theme="theme"))
    assert built.files["index.html"].decode() == (
        "<li>HOME</li><li>HOME</li>|2|0,1,2|007|   x|abab|1024|[2, 3]|True|Home!|x"
    )


# --- budgets: steps, output, depth ---------------------------------------------------------

MEMORY_CAP = 2 << 30


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def build_in_subprocess(tmp_path: Path, layout: str, render: str = "") -> tuple[int, str]:
    """Run ``deploybot build`` on a site with ``layout``; 60 s and 2 GiB at most."""
    src, out, cfg = site(tmp_path, layout, render)
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", "build", str(src), str(out), "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_cap_memory,
        env={**os.environ, "DEPLOYBOT_CANARY": CANARY},
    )
    return done.returncode, done.stdout + done.stderr


LIMIT = "deploybot: error: theme/page.html:{line}: layout ran past the render limit ({what})\n"
STEPS = "10000000 steps: [render] layout_max_steps"
OUTPUT = "50000000 characters written: [render] layout_max_output"
DEPTH = "calls nested 50 deep: [render] layout_max_depth"
PYTHON_DEPTH = "nested deeper than Python allows: an include or extends cycle?"


def too_big(what: str, size: int) -> str:
    return f"{what} of {size} characters, over 50000000: [render] layout_max_output"


@pytest.mark.parametrize(
    ("layout", "line", "what"),
    [
        # loops that write nothing
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            1,
            STEPS,
        ),
        (
            "{% for i in range(100000) %}\n{% for j in range(100000) if j < 0 %}{% endfor %}"
            "{% endfor %}",
            2,
            STEPS,
        ),
        ("{% for i in range(100000) %}{% set s = range(100000)|list %}{% endfor %}", 1, STEPS),
        # recursion
        ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", 1, DEPTH),
        ("{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}", 1, DEPTH),
        ("{% block a %}{{ self.a() }}{% endblock %}", 1, DEPTH),
        ("x\n{% include 'page.html' %}", 2, PYTHON_DEPTH),
        ("{% extends 'page.html' %}", 1, PYTHON_DEPTH),
        # output and value sizes
        ("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", 1, OUTPUT),
        (
            "{% set s %}{% for i in range(100000) %}" + "x" * 1000 + "{% endfor %}{% endset %}",
            1,
            OUTPUT,
        ),
        ("{{ 'x' * 10000000000 }}", 1, too_big("a repeated value", 10000000000)),
        ("{{ ['x'] * 10000000 }}", 1, too_big("a repeated value", 80000000)),
        (
            "{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}"
            "{{ f('xx', 45) }}",
            1,
            too_big("a value", 67108864),
        ),
        (
            "{% set ns = namespace(s='xx') %}{% for i in range(64) %}"
            "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
            1,
            too_big("a value", 67108864),
        ),
        ("{{ 2 ** 100000 }}", 1, "a number over 65536 bits"),
        ("{{ 10 ** 20000 * 10 ** 20000 }}", 1, "a number over 65536 bits"),
        ("{{ '{:>9999999999}'.format(1) }}", 1, too_big("a format width", 9999999999)),
        ("{{ '%9999999999d' % 1 }}", 1, too_big("a % format width", 9999999999)),
        ("{{ '%9999999999d'|format(1) }}", 1, too_big("a % format width", 9999999999)),
        ("{{ '%*d' % (9999999999, 1) }}", 1, "a '*' width in a % format"),
        ("{{ 'x'|center(9999999999) }}", 1, too_big("width 9999999999", 9999999999)),
        ("{{ 'x'.ljust(9999999999) }}", 1, too_big("a count or width", 9999999999)),
        ("{{ (1).to_bytes(9999999999, 'big') }}", 1, too_big("a count or width", 9999999999)),
        ("{{ range(100000)|join('x' * 10000) }}", 1, too_big("a join", 1000000000)),
        ("{{ ('x' * 10000).join(range(100000)|map('string')) }}", 1, too_big("a join", 1000000000)),
        ("{{ ('x' * 100000)|replace('', 'y' * 1000) }}", 1, too_big("a replace", 100101000)),
        ("{{ [1]|batch(9999999999, 'x') }}", 1, too_big("linecount 9999999999", 79999999992)),
        ("{{ ([[1]] * 1000000)|sum(start=[]) }}", 1, STEPS),
    ],
)
def test_layout_budgets(tmp_path: Path, layout: str, line: int, what: str) -> None:
    code, output = build_in_subprocess(tmp_path, layout)
    assert (code, output) == (1, LIMIT.format(line=line, what=what))
    assert not (tmp_path / "out").exists()


def test_limits_come_from_the_config(tmp_path: Path) -> None:
    # range(1000): the call (1 step), its 1,000-item result (1 + 1,000), 1,000 iterations.
    layout = "{% for i in range(1000) %}{% endfor %}"
    code, output = build_in_subprocess(tmp_path / "a", layout, "layout_max_steps = 999\n")
    assert (code, output) == (
        1,
        LIMIT.format(line=1, what="999 steps: [render] layout_max_steps"),
    )
    code, output = build_in_subprocess(tmp_path / "b", layout, "layout_max_steps = 2002\n")
    assert (code, output) == (0, f"built 3 files into {tmp_path / 'b' / 'out'}\n")
    code, output = build_in_subprocess(tmp_path / "c", layout, "layout_max_steps = 2001\n")
    assert code == 1


def test_each_render_gets_a_fresh_budget() -> None:
    # 1,202 steps per page; two pages fit a 1,500-step budget only if each starts afresh.
    layout = b"{% for i in range(600) %}{% endfor %}ok"
    files = {"theme/page.html": layout, "a.md": PAGE, "b.md": PAGE}
    options = RenderOptions(theme="theme", layout_limits=LayoutLimits(max_steps=1500))
    built = build_site(MemoryTree(files), options)
    assert built.files["a.html"] == built.files["b.html"] == b"ok"


def test_run_once_with_a_hostile_theme_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source, publish = tmp_path / "source.git", tmp_path / "publish.git"
    Repo.init_bare(str(publish), mkdir=True).close()
    layout = b"{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}"
    commit_snapshot(source, {"index.md": PAGE, "_theme/page.html": layout})
    config = tmp_path / "deploybot.toml"
    config.write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n[render]\ntheme = "_theme"\n'
    )
    result = CliRunner().invoke(main, ["run-once", "--config", str(config)])
    assert (result.exit_code, result.output) == (
        1,
        "deploybot: error: _theme/page.html:1: layout failed: access to attribute '__init__' "
        "of 'type' object is unsafe.\n",
    )
    assert not (tmp_path / "PWNED").exists()
    assert head(publish, "asf-site") is None
