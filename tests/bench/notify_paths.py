"""Benchmark: the commit email of a huge first build, old code path vs new, git as a peer.

Builds a bare repository whose only commit (a root commit, as a site's first build) adds
``--files`` HTML pages of about ``--kb`` KB each, stored as loose objects (as ``publish``
writes them). Then, each in a fresh process so that peak RSS is its own:

* ``old``: the committed code (``git archive HEAD deploybot``): the whole
  ``format_commit_log`` text, then ``compose_combined_email``;
* ``new``: the working tree: ``read_log_excerpt`` (budgeted), then ``compose_combined_email``;
* ``git``: ``git log -C --stat -p --cc -1`` to a pipe, read and dropped (no email).

Prints seconds (the email's making, as timed inside the child; git: wall time) and peak RSS
(MiB, ``ru_maxrss`` of the child) per path, the email size and
whether old and new emails are byte-identical. Run: ``python -m tests.bench.notify_paths``.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}
WORDS = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
]

CHILD = """
import sys, time
from datetime import UTC, datetime
from pathlib import Path
from deploybot.notify.email import compose_combined_email
from deploybot.notify.envelope import Envelope
repo, mode, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
start = time.perf_counter()
if mode == "old":
    from deploybot.notify.gitlog import format_commit_log
    log = format_commit_log(repo, "refs/heads/asf-site")
else:
    from deploybot.notify.gitlog import read_log_excerpt
    log = read_log_excerpt(repo, "refs/heads/asf-site", max_lines=10000, max_line_length=500)
envelope = Envelope(
    repo_name="site", repository_url="https://example.org/site.git",
    refname="refs/heads/asf-site", pusher="bot", sender="bot@example.org",
    to=("commits@example.org",), host="example.org", date=datetime(2024, 1, 1, tzinfo=UTC),
)
email = compose_combined_email(
    envelope=envelope, log_text=log, old=None, new="b" * 40, subject_line="Build"
)
seconds = time.perf_counter() - start
out.write_bytes(email)
print(seconds)
"""


def page(rng: random.Random, k: int, kb: int) -> bytes:
    """An HTML page of about ``kb`` KB: paragraphs of random words, ~80-character lines."""
    lines = [f"<html><head><title>Post {k}</title></head><body>"]
    size = 0
    while size < kb * 1024:
        line = "<p>" + " ".join(rng.choice(WORDS) for _ in range(12)) + "</p>"
        lines.append(line)
        size += len(line) + 1
    lines.append("</body></html>")
    return ("\n".join(lines) + "\n").encode()


def make_repo(path: Path, files: int, kb: int) -> int:
    """A bare repository with one root commit of ``files`` pages; returns the content bytes."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, env=GIT_ENV)
    rng = random.Random(1)
    proc = subprocess.Popen(
        ["git", "-C", str(path), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=GIT_ENV
    )
    assert proc.stdin is not None
    ident = b"Bot <bot@example.org> 1700000000 +0000"
    proc.stdin.write(b"commit refs/heads/asf-site\nauthor %s\ncommitter %s\n" % (ident, ident))
    proc.stdin.write(b"data 6\nBuild\n\n")
    total = 0
    for k in range(files):
        data = page(rng, k, kb)
        total += len(data)
        name = b"%d/%02d/post-%05d.html" % (2000 + k % 20, k % 12 + 1, k)
        proc.stdin.write(b"M 100644 inline %s\ndata %d\n%s\n" % (name, len(data), data))
    proc.stdin.close()
    assert proc.wait() == 0
    # Loose objects, as publish writes them (and no delta-base cache in play).
    packs = list((path / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        moved = path / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as fh:
            subprocess.run(
                ["git", "-C", str(path), "unpack-objects", "-q"], stdin=fh, check=True, env=GIT_ENV
            )
        moved.unlink()
    return total


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Run ``argv``; return (wall seconds, peak RSS in MiB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    kept = b""
    while chunk := proc.stdout.read(1 << 20):
        kept = (kept + chunk)[-200:]  # read and drop: only a short tail is kept
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{argv[:3]} failed with status {status}")
    return seconds, usage.ru_maxrss / 1024, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--kb", type=int, default=40)
    parser.add_argument("--skip-old", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        repo = tmp / "site.git"
        t0 = time.perf_counter()
        size = make_repo(repo, args.files, args.kb)
        print(
            f"repo: {args.files} files, {size / 2**20:.0f} MiB ({time.perf_counter() - t0:.0f} s)"
        )
        old = tmp / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "HEAD", "deploybot"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        rows = []
        for mode, path in (("old", old), ("new", ROOT)):
            if mode == "old" and args.skip_old:
                continue
            env = {**os.environ, "PYTHONPATH": str(path)}
            out = tmp / f"{mode}.eml"
            argv = [sys.executable, "-c", CHILD, str(repo), mode, str(out)]
            _, rss, tail = measure(argv, env)
            seconds = float(tail.split()[-1])  # the child's own timing: format + compose
            rows.append((mode, seconds, rss, out.stat().st_size))
        git_argv = ["git", "-C", str(repo), "log", "-C", "--stat", "-p", "--cc", "-1", "asf-site"]
        seconds, rss, _ = measure(git_argv, GIT_ENV)
        rows.append(("git CLI (log text only)", seconds, rss, 0))
        print(f"{'path':<26}{'seconds':>9}{'peak RSS MiB':>14}{'email bytes':>13}")
        for mode, seconds, rss, nbytes in rows:
            print(f"{mode:<26}{seconds:>9.1f}{rss:>14.0f}{nbytes:>13}")
        if not args.skip_old:
            same = (tmp / "old.eml").read_bytes() == (tmp / "new.eml").read_bytes()
            print(f"old and new emails byte-identical: {same}")


if __name__ == "__main__":
    main()
