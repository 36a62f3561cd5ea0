"""Running out of memory is one line on stderr, never a traceback, and publishes nothing.

Each run is a real ``deploybot`` in a child process whose address space is capped below
what its work needs (what it needs was measured: the post of headings below peaks at
460 MB, the 20 feed entries at over 300 MB): a source file that needs more is exit 1
naming it, the rest (here the feeds) exit 75, try again later.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.gitrepo import commit_files
from tests.smallsite import SmallSite
from tests.test_render_limits import one_error_line, site

TIMEOUT_S = 120.0
# 450,000 headings (900 KB): under render.markdown_max_elements, ~460 MB as tokens.
HEADINGS = "---\ntitle: Headings\n---\n" + "#\n" * 450_000


def capped(cap: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return limit


def deploybot(cap: int, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m deploybot ARGS`` in ``cwd`` with ``cap`` bytes of address space."""
    return subprocess.run(
        [sys.executable, "-m", "deploybot", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=capped(cap),
        cwd=cwd,
    )


def test_a_post_that_needs_more_memory_than_there_is_is_exit_1_naming_it(tmp_path: Path) -> None:
    src = site(tmp_path / "site", {"_posts/2024-01-01-headings.md": HEADINGS})
    result = deploybot(250_000_000, tmp_path, "build", str(src), str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-headings.md: out of memory while rendering this file"
    )
    assert not (tmp_path / "out").exists()


def test_running_out_of_memory_outside_a_source_file_is_exit_75(tmp_path: Path) -> None:
    # 20 posts of 2 MB each render in ~100 MB; their feeds (atom.xml, rss.xml) need more.
    body = "---\ntitle: P\n---\n" + "a " * 1_000_000 + "\n"
    posts = {f"_posts/2024-01-{day}-p.md": body for day in range(10, 30)}
    src = site(tmp_path / "site", {"_config.yml": "url: https://x.example.org\n", **posts})
    result = deploybot(220_000_000, tmp_path, "build", str(src), str(tmp_path / "out"))
    assert result.returncode == 75, result.stderr
    assert one_error_line(result) == "deploybot: error: out of memory while running deploybot build"
    assert not (tmp_path / "out").exists()


def test_run_once_out_of_memory_publishes_nothing(tmp_path: Path) -> None:
    small = SmallSite(tmp_path)
    first = small.run_process()
    assert first.returncode == 0, first.stderr
    published, emails = small.head(), small.emails()
    commit_files(small.source, {"_posts/2024-01-01-headings.md": HEADINGS.encode()}, "Add")
    config = str(small.config)
    result = deploybot(250_000_000, tmp_path, "run-once", "--config", config)
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: _posts/2024-01-01-headings.md: out of memory while rendering this file"
    )
    assert (small.head(), small.emails()) == (published, emails)


def test_a_daemon_build_job_out_of_memory_is_one_line_and_exit_75(tmp_path: Path) -> None:
    """The daemon's build process (deploybot.serve.build_process) reports running out of memory
    outside a source file as the CLI does: one log line, exit 75, a 'failed' result whose
    error says so, and nothing published (it was a traceback and exit 70, a crash)."""
    small = SmallSite(tmp_path)
    assert small.run_process().returncode == 0
    published = small.head()
    body = b"---\ntitle: P\n---\n" + b"a " * 1_000_000 + b"\n"
    posts = {f"_posts/2024-01-{day}-p.md": body for day in range(10, 30)}
    commit_files(small.source, posts, "Twenty long posts")
    argv = [sys.executable, "-m", "deploybot.serve.build_process", "build", str(small.config), "s"]
    result = subprocess.run(
        argv,
        input="go\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=capped(220_000_000),
        cwd=tmp_path,
    )
    assert result.returncode == 75, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "memory" in line.lower()]
    assert len(errors) == 1, result.stderr
    assert errors[0].endswith(" ERROR site s: out of memory while running the build job")
    last = json.loads(result.stdout.splitlines()[-1])
    assert (last["status"], last["exit_code"], last["temporary"]) == ("failed", 75, True)
    assert last["error"] == "out of memory while running the build job"
    assert small.head() == published


def _big_blob(small: SmallSite) -> None:
    """Publish ``small`` once, then commit a 45 MB blob to its source: fetching it under a
    200 MB cap runs dulwich out of memory, and its clean-up then raises a BufferError
    ("cannot close exported pointers exist") while handling the MemoryError."""
    assert small.run_process().returncode == 0
    commit_files(small.source, {"big.bin": random.Random(1).randbytes(45_000_000)}, "Big")


def test_a_library_failing_as_it_cleans_up_after_a_memory_error_is_out_of_memory(
    tmp_path: Path,
) -> None:
    small = SmallSite(tmp_path)
    _big_blob(small)
    published, emails = small.head(), small.emails()
    result = deploybot(200_000_000, tmp_path, "run-once", "--config", str(small.config))
    assert result.returncode == 75, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: out of memory while running deploybot run-once"
    )
    assert (small.head(), small.emails()) == (published, emails)
    again = small.run_process()  # with memory enough, the next run publishes it
    assert again.returncode == 0, again.stderr
    assert small.head() != published


def test_a_daemon_build_job_whose_memory_error_is_in_the_context_is_exit_75(
    tmp_path: Path,
) -> None:
    small = SmallSite(tmp_path)
    _big_blob(small)
    published = small.head()
    argv = [sys.executable, "-m", "deploybot.serve.build_process", "build", str(small.config), "s"]
    result = subprocess.run(
        argv,
        input="go\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=capped(200_000_000),
        cwd=tmp_path,
    )
    assert result.returncode == 75, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().endswith(
        " ERROR site s: out of memory while running the build job"
    )
    last = json.loads(result.stdout.splitlines()[-1])
    assert (last["status"], last["exit_code"], last["temporary"]) == ("failed", 75, True)
    assert small.head() == published
