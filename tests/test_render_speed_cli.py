"""``[render] jobs`` and ``highlight_cache_bytes`` as the config and the CLI see them: bad
values are exit 78 naming the key; a worker's error is ``deploybot build``'s one line; the
progress bar shows on a terminal (a pty) and never in a pipe."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.render.engine.parallel import worker_count
from deploybot.support import progress
from deploybot.support.errors import EX_CONFIG, ConfigError

DEPLOYBOT = [sys.executable, "-m", "deploybot"]


def _config(tmp_path: Path, render: str) -> Path:
    path = tmp_path / "deploybot.toml"
    path.write_text(f'[source]\nurl = "src"\n[render]\n{render}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("jobs = -1", "'render.jobs' must be 0 or more and at most 256, not -1"),
        ("jobs = 257", "'render.jobs' must be 0 or more and at most 256, not 257"),
        ('jobs = "2"', "'render.jobs' must be an integer, not str '2'"),
        ("jobs = 1.5", "'render.jobs' must be an integer, not float 1.5"),
        ("jobs = true", "'render.jobs' must be an integer, not bool True"),
        ("highlight_cache_bytes = -5", "'render.highlight_cache_bytes' must be 0 or more"),
        ('highlight_cache_bytes = "1M"', "'render.highlight_cache_bytes' must be an integer"),
    ],
)
def test_bad_values_are_config_errors_naming_the_key(
    tmp_path: Path, line: str, expected: str
) -> None:
    path = _config(tmp_path, line)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and expected in str(info.value)
    assert info.value.exit_code == EX_CONFIG


def test_bad_jobs_exit_78_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    cfg = _config(tmp_path, "jobs = -2")
    done = subprocess.run(
        [*DEPLOYBOT, "build", str(tmp_path / "src"), str(tmp_path / "o"), "--config", str(cfg)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 78
    assert done.stderr.count("\n") == 1 and "'render.jobs'" in done.stderr


def test_defaults_and_worker_count(tmp_path: Path) -> None:
    render = load_config(_config(tmp_path, "jobs = 3")).render
    assert (render.jobs, render.highlight_cache_bytes) == (3, 100_000_000)
    assert load_config(_config(tmp_path, "")).render.jobs == 0
    assert worker_count(3) == 3
    assert worker_count(0) == len(os.sched_getaffinity(0))


def _site(root: Path, count: int, bad: int | None = None) -> Path:
    posts = root / "src" / "_posts"
    posts.mkdir(parents=True)
    code = "\n".join(f"def f{j}(x):\n    return x * {j}" for j in range(40))
    for i in range(count):
        body = f"Words {i} 'quoted' -- more.\n\n" * 30 + f"```python\n# {i}\n{code}\n```\n"
        if i == bad:
            body += "\n{% if x %}never closed\n"
        (posts / f"2020-03-{1 + i % 28:02d}-p{i}.md").write_text(f"---\ntitle: P{i}\n---\n{body}")
    return root / "src"


def test_a_workers_error_is_one_line_naming_the_file(tmp_path: Path) -> None:
    src = _site(tmp_path, 60, bad=33)
    for jobs in (1, 2):
        cfg = _config(tmp_path, f"jobs = {jobs}")
        done = subprocess.run(
            [*DEPLOYBOT, "build", str(src), str(tmp_path / f"o{jobs}"), "--config", str(cfg)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 1
        assert done.stderr.startswith("deploybot: error: _posts/2020-03-06-p33.md:")
        assert done.stderr.count("\n") == 1
        assert not (tmp_path / f"o{jobs}").exists()


def _run_on_pty(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``command`` with stderr on a pseudo-terminal; return (exit code, what it showed)."""
    leader, follower = pty.openpty()
    # A terminal of 24 rows and 100 columns (a fresh pty has 0 columns: no room for a bar).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty closed: the command ended
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=60), shown.decode("utf-8", "replace")


def test_the_bar_delay_is_one_second_unless_the_environment_sets_it() -> None:
    assert progress.bar_delay({}) == progress.DELAY == 1.0
    assert progress.bar_delay({progress.DELAY_ENV: "0"}) == 0.0
    assert progress.bar_delay({progress.DELAY_ENV: "2.5"}) == 2.5
    for bad in ("", "soon", "-1", "nan", "inf"):
        assert progress.bar_delay({progress.DELAY_ENV: bad}) == 1.0, bad


def test_the_progress_bar_shows_on_a_terminal_only(tmp_path: Path) -> None:
    src = _site(tmp_path, 150)
    cfg = _config(tmp_path, "jobs = 1\nhighlight_cache_bytes = 0")
    command = [sys.executable, "-m", "deploybot", "build", str(src)]
    env = {**os.environ, progress.DELAY_ENV: "0"}  # at once: however quick the build
    code, shown = _run_on_pty([*command, str(tmp_path / "tty"), "--config", str(cfg)], env)
    assert code == 0
    assert "rendering:" in shown and "/150" in shown and "page" in shown
    piped = subprocess.run(
        [*command, str(tmp_path / "pipe"), "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert piped.returncode == 0
    assert "rendering" not in piped.stderr and "\r" not in piped.stderr


@pytest.mark.parametrize("jobs", [1, 2])
def test_deploybot_build_keeps_highlighted_blocks_in_the_state_folder(
    tmp_path: Path, jobs: int
) -> None:
    """The config's state folder keeps the blocks (not the build's scratch folder in OUT,
    which is removed), so a second build reads every block from it."""
    src = _site(tmp_path, 12)
    cfg = _config(tmp_path, f"jobs = {jobs}")
    for out in ("o1", "o2"):
        done = subprocess.run(
            [*DEPLOYBOT, "build", str(src), str(tmp_path / out), "--config", str(cfg)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    db = sqlite3.connect(tmp_path / ".deploybot" / "cache" / "highlight.sqlite")
    try:
        # 12 distinct blocks (each post's comment differs), each used by the second build
        assert db.execute("SELECT count(*), min(used) FROM blocks").fetchone() == (12, 2)
    finally:
        db.close()
    first, second = ((tmp_path / o / "2020/03/01/p0.html").read_bytes() for o in ("o1", "o2"))
    assert first == second and b'<span class="c1"># 0</span>' in first


def test_a_build_config_needs_only_render_and_state(tmp_path: Path) -> None:
    """``deploybot build --config`` uses only [render] and [state]: a file with just those
    builds (it was exit 78, "missing required key 'source'"), and its state folder is made
    private and keeps the highlighted blocks."""
    src = _site(tmp_path, 3)
    cfg = tmp_path / "build.toml"
    cfg.write_text('[render]\njobs = 1\n[state]\ndir = "st"\n')
    command = [*DEPLOYBOT, "build", str(src), str(tmp_path / "out"), "--config", str(cfg)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "st").stat().st_mode & 0o777 == 0o700
    db = sqlite3.connect(tmp_path / "st" / "cache" / "highlight.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM blocks").fetchone() == (3,)
    finally:
        db.close()
    cfg.write_text('[render]\njobs = 1\n[notify]\ntransport = "none"\n')
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == EX_CONFIG
    assert done.stderr.strip() == (
        f"deploybot: error: {cfg}: 'notify' needs a [source] table: a config for "
        "'deploybot build' alone holds only [render] and [state]"
    )
    cfg.write_text('[render]\ntimezone = "Mars/Olympus"\n')
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == EX_CONFIG and "render.timezone" in done.stderr
