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

import pytest

from deploybot.render.limits import out_of_memory
from deploybot.support.errors import DeploybotError, memory_error
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


def test_a_static_file_under_the_size_limit_that_the_memory_cannot_hold_is_exit_75(
    tmp_path: Path,
) -> None:
    """Copying a static file within ``render.max_file_bytes`` takes its size in memory: when
    the machine has less, that heals by waiting (exit 75, naming the file), not the source's
    fault (it was exit 1, so the daemon never retried); a file over the limit stays exit 1."""
    small = SmallSite(tmp_path, extra="[render]\nmax_file_bytes = 100_000_000\n")
    assert small.run_process().returncode == 0
    published = small.head()
    commit_files(small.source, {"big.bin": bytes(200_000_000)}, "Big")  # zlib: 200 KB
    # Uncapped, so that the source mirror has the blob (git's upload-pack of it alone
    # needs more than the cap below).
    result = small.run_process()
    assert result.returncode == 1, result.stderr
    assert one_error_line(result) == (
        "deploybot: error: big.bin: 200,000,000 bytes, more than render.max_file_bytes "
        "(100,000,000)"
    )
    small.write_config(extra="[render]\nmax_file_bytes = 300_000_000\n")
    result = deploybot(250_000_000, tmp_path, "run-once", "--config", str(small.config))
    assert result.returncode == 75, result.stderr
    # Reading it (to tell a static file from a page) runs out first; dulwich then fails
    # as it cleans up (a BufferError), which no longer hides the file.
    assert one_error_line(result) == (
        "deploybot: error: big.bin: out of memory while reading this file (try again later)"
    )
    assert small.head() == published


@pytest.mark.parametrize(
    ("doing", "code", "line"),
    [
        ("copying", 75, "a.bin: out of memory while copying this file (try again later)"),
        ("reading", 75, "a.bin: out of memory while reading this file (try again later)"),
        ("rendering", 1, "a.bin: out of memory while rendering this file"),
    ],
)
def test_out_of_memory_on_a_file_is_the_machines_unless_rendering_it(
    doing: str, code: int, line: str
) -> None:
    """Copying or reading a file takes memory its size bounds (at most render.max_file_bytes):
    running out is the machine's shortage; rendering may need any amount: the file's."""
    with pytest.raises(DeploybotError) as caught, out_of_memory("a.bin", doing):
        raise MemoryError
    assert (caught.value.exit_code, str(caught.value)) == (code, line)
    cleanup = BufferError("cannot close exported pointers exist")
    cleanup.__context__ = caught.value
    assert memory_error(cleanup, "deploybot build") is caught.value
    assert str(memory_error(MemoryError(), "deploybot build")) == (
        "out of memory while running deploybot build"
    )
