"""A full build rendered by worker processes (``[render] jobs``) is the serial build, byte for
byte; a worker's error is the serial build's one line; its limits and highlight clock still
hold; and workers die with their parent, even by ``kill -9`` (deploybot.render.engine.parallel)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.config.schema import RenderConfig
from deploybot.pipeline.theme import ThemeFetch, themed_source
from deploybot.render.engine.build import build_site
from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import BuildReport, MemorySink
from deploybot.render.read.source import DirTree, MemoryTree, SourceTree
from deploybot.support.errors import SourceError
from tests.daemonproc import wait_until
from tests.incremental_site import T0, THEME, apply, change, initial_site
from tests.make_jekyll_fixtures import GEM_THEMES

OPTIONS = RenderOptions(theme=THEME, timezone="UTC", feed_limit=3, build_time=T0)
# Pygments' systemd lexer is about cubic on it: a minute at 1,000 pairs, some 40 at 3,000.
SYSTEMD = " \t" * 3000 + "x"


def _full(
    tree: SourceTree, options: RenderOptions, jobs: int
) -> tuple[dict[str, bytes], BuildReport]:
    sink = MemorySink()
    with open_cache(None) as cache:
        options = RenderOptions(**{**options.__dict__, "jobs": jobs, "parallel_from": 1})
        report = build_into(tree, options, cache, sink, None)
    return sink.files, report


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(b")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def test_parallel_equals_serial_on_the_tvm_corpus(tvm_site: Path) -> None:
    tree = DirTree(tvm_site / "source")
    options = RenderOptions(build_time=T0)
    serial, serial_report = _full(tree, options, 1)
    parallel, parallel_report = _full(tree, options, 3)
    assert list(parallel) == list(serial)
    assert parallel == serial
    assert parallel_report.warnings == serial_report.warnings
    assert parallel_report.rendered == serial_report.rendered
    assert parallel == dict(build_site(tree, options).files)


JEKYLL_CASES = Path(__file__).resolve().parent / "fixtures" / "jekyll"


@pytest.mark.parametrize(
    "case", sorted(p.name for p in JEKYLL_CASES.iterdir() if (p / "site").is_dir())
)
def test_parallel_equals_serial_on_every_jekyll_fixture(case: str, tmp_path: Path) -> None:
    """Collections, pages of any extension, symlinks, future posts, Liquid themes, a gem
    theme: the parallel build makes what the serial one makes, with the same warnings."""
    tree: SourceTree = DirTree(JEKYLL_CASES / case / "site")
    gem = GEM_THEMES.get(case)
    if gem is not None:  # its gem theme, mapped to the fixture's folder
        theme = f"{gem}={JEKYLL_CASES.parent / 'themes' / gem}"
        tree = themed_source(tree, RenderConfig(themes=(theme,)), ThemeFetch(tmp_path)).tree
    options = RenderOptions(build_time=T0)
    serial, serial_report = _full(tree, options, 1)
    parallel, parallel_report = _full(tree, options, 2)
    assert len(serial) > 1
    assert parallel == serial
    assert parallel_report.warnings == serial_report.warnings
    assert parallel_report.rendered == serial_report.rendered
    assert parallel_report.waiting == serial_report.waiting


@settings(max_examples=25)
@given(st.data())
def test_parallel_equals_serial_on_generated_sites(data: st.DataObject) -> None:
    files = initial_site()
    for step in range(data.draw(st.integers(0, 6), label="commits")):
        files = apply(files, data.draw(change(files), label=f"commit {step}"))
    tree = MemoryTree(files)
    serial, serial_report = _full(tree, OPTIONS, 1)
    parallel, parallel_report = _full(tree, OPTIONS, 2)
    assert parallel == serial
    assert parallel_report.warnings == serial_report.warnings


def test_the_cache_a_parallel_build_leaves_serves_an_incremental_build() -> None:
    files = initial_site()
    options = RenderOptions(**{**OPTIONS.__dict__, "jobs": 2, "parallel_from": 1})
    with open_cache(None) as cache:
        sink = MemorySink()
        build_into(MemoryTree(files), options, cache, sink, None)
        cache.commit({})
        edited = apply(files, {"_posts/2021-01-01-post-0.md": b"---\ntitle: New\n---\nBye\n"})
        build_into(MemoryTree(edited), options, cache, sink, ["_posts/2021-01-01-post-0.md"])
    assert sink.files == dict(build_site(MemoryTree(edited), OPTIONS).files)


def _posts(count: int, bad: dict[int, str] | None = None) -> dict[str, bytes]:
    files = {}
    for i in range(count):
        body = (bad or {}).get(i, f"Post {i} with `code` and *emphasis*.\n")
        files[f"_posts/2020-01-{1 + i % 28:02d}-p{i}.md"] = (
            f"---\ntitle: P{i}\n---\n{body}".encode()
        )
    return files


def test_a_workers_source_error_is_the_serial_builds_one_line() -> None:
    tree = MemoryTree(_posts(40, {17: "Fine\n\n{% if x %}never closed\n"}))
    errors = []
    for jobs in (1, 2):
        with pytest.raises(SourceError) as info:
            _full(tree, RenderOptions(build_time=T0), jobs)
        errors.append((str(info.value), info.value.path, info.value.line))
    assert errors[0] == errors[1]
    message, path, _ = errors[1]
    assert path == "_posts/2020-01-18-p17.md"
    assert "\n" not in message and message.startswith("_posts/2020-01-18-p17.md:")


def test_the_first_error_in_document_order_wins() -> None:
    bad = {i: "{% if x %}open\n" for i in (3, 30)}
    for jobs in (1, 2):
        with pytest.raises(SourceError) as info:
            _full(MemoryTree(_posts(40, bad)), RenderOptions(build_time=T0), jobs)
        assert info.value.path == "_posts/2020-01-04-p3.md"  # newest first: p3 before p30


def test_limits_hold_inside_workers() -> None:
    tree = MemoryTree(_posts(40, {9: "x" * 5000 + "\n"}))
    options = RenderOptions(build_time=T0, max_page_bytes=4000)
    with pytest.raises(SourceError) as info:
        _full(tree, options, 2)
    assert info.value.path == "_posts/2020-01-10-p9.md"
    assert "render.max_page_bytes" in str(info.value)


def test_the_highlight_clock_holds_inside_workers_started_from_any_thread() -> None:
    body = f"intro\n\n```systemd\n{SYSTEMD}\n```\n"
    tree = MemoryTree(_posts(40, {5: body}))
    options = RenderOptions(build_time=T0, highlight_timeout=0.5, highlight_cache_bytes=0)
    caught: list[BaseException] = []

    def build() -> None:
        try:
            _full(tree, options, 2)
        except BaseException as exc:
            caught.append(exc)

    worker = threading.Thread(target=build)  # the daemon builds in a worker thread
    worker.start()
    # Unless interrupted mid-match, the block would take some 40 minutes: the wait is a
    # safety net, which only an interrupted match meets.
    worker.join(timeout=300)
    assert not worker.is_alive(), "the highlighting clock did not interrupt the match"
    assert len(caught) == 1 and isinstance(caught[0], SourceError)
    assert str(caught[0]).startswith("_posts/2020-01-06-p5.md:6: highlighting as systemd")


def _big_site(root: Path, count: int) -> Path:
    """A folder of ``count`` distinct posts with code (slow enough to catch workers)."""
    posts = root / "src" / "_posts"
    posts.mkdir(parents=True)
    code = "\n".join(f"def f{j}(x):\n    return x * {j}  # {j}" for j in range(60))
    for i in range(count):
        text = f"---\ntitle: Post {i}\n---\n" + f"Words {i} 'quoted' -- more.\n\n" * 40
        (posts / f"2021-01-{1 + i % 28:02d}-p{i}.md").write_text(
            f"{text}\n```python\n# post {i}\n{code}\n```\n"
        )
    return root / "src"


def _wait_for_workers(proc: subprocess.Popen[bytes], count: int) -> set[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        if len(workers) >= count:
            return workers
        time.sleep(0.02)
    pytest.fail(f"no {count} render workers appeared (exit {proc.poll()})")


def test_kill_9_of_the_build_leaves_no_worker_behind(tmp_path: Path) -> None:
    src = _big_site(tmp_path, 400)
    cfg = tmp_path / "deploybot.toml"
    cfg.write_text('[source]\nurl = "src"\n[render]\njobs = 2\nhighlight_cache_bytes = 0\n')
    command = [sys.executable, "-m", "deploybot", "build", str(src), str(tmp_path / "out")]
    proc = subprocess.Popen([*command, "--config", str(cfg)], stderr=subprocess.DEVNULL)
    workers = _wait_for_workers(proc, 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_until(lambda: not [w for w in workers if _alive(w)], 60, "the workers outlived the build")


def test_kill_9_of_run_once_leaves_nothing_that_wedges_the_next_run(tmp_path: Path) -> None:
    from tests.gitrepo import commit_files

    source, publish = tmp_path / "source.git", tmp_path / "publish.git"
    for repo in (source, publish):
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    src = _big_site(tmp_path, 300)
    files: dict[str, bytes | None] = {
        p.relative_to(src).as_posix(): p.read_bytes() for p in src.rglob("*.md")
    }
    commit_files(source, files, "Import")
    cfg = tmp_path / "deploybot.toml"
    cfg.write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
        'author = "Bot <bot@example.org>"\n[notify]\ntransport = "none"\n'
        "[render]\njobs = 2\nhighlight_cache_bytes = 0\n"
    )
    command = [sys.executable, "-m", "deploybot", "run-once", "--config", str(cfg)]
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    workers = _wait_for_workers(proc, 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_until(lambda: not [w for w in workers if _alive(w)], 60, "the workers outlived run-once")
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr  # the state lock was not held by an orphan


def test_ranges_split_where_the_owner_changes() -> None:
    from deploybot.render.engine.parallel import _ranges

    assert _ranges(5, 2, ()) == [(0, 2), (2, 4), (4, 5)]
    assert _ranges(7, 3, [0, 0, 1, 1, 1, 1, 0]) == [(0, 2), (2, 5), (5, 6), (6, 7)]
    assert _ranges(0, 16, ()) == []
