"""Benchmark: the commit email's log text, git's own ``git log`` against deploybot's two paths.

Commits in bare repositories made with ``git fast-import`` (loose objects, as publish writes
them):

* ``first``: a site's first build, a root commit adding ``--files`` pages of about ``--kb``
  KB each (the email of the 10,000-post first build);
* ``renames``: in a site of ``--site`` pages, 50 pages moved to new paths, 40 of them edited
  a little on the way (a permalink inside changed), and every other page edited (its list of
  recent posts): with copy detection (``-C``) every modified page is a source, so 40
  destinations are scored against 1,000 sources;
* ``added`` (only with ``--only added``): ``--added`` new pages of 20 KB next to 50 edited
  ones: every new page is a destination scored against the 50 (the Python path's memory).

For each, alternating, ``--runs`` times (medians): ``git log -C --stat -p --cc -1`` to a
pipe (read and dropped), and deploybot's ``read_log_excerpt`` with ``engine="git"`` and
``engine="python"`` (each in a fresh process; the wall time is the call's, without the
process start; the CPU time is the whole process's with its children, which a loaded
machine distorts least; the peak RSS is ``ru_maxrss`` of the process, interpreter
included, or of its largest child, taken by a small launcher so that this harness's own
memory is not counted). Each of ours composes the email from its text (its size is printed):
the emails of all our paths must be byte-identical, else the run fails. ``--old REV`` adds
that commit's pure-Python path (``--old HEAD``: the committed code against the working
tree), held to the same emails. With ``--threshold``, small commits instead (1 to 10 files
of 1 to 120 KB), for where starting git pays (:func:`deploybot.notify.gitlog.git_cli.prefer_git`).

    python -m tests.bench_email [--files 10000] [--kb 40] [--site 1000] [--runs 3]
        [--only first|renames|added] [--added 2000] [--old REV]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
import hashlib, inspect, json, sys, time
from datetime import UTC, datetime
from pathlib import Path
from deploybot.notify.compose.email import compose_combined_email
from deploybot.notify.compose.envelope import Envelope
from deploybot.notify.gitlog.commit_log import read_log_excerpt
known = inspect.signature(read_log_excerpt).parameters
kwargs = {"engine": sys.argv[3]} if "engine" in known else {}
start = time.perf_counter()
log = read_log_excerpt(Path(sys.argv[1]), sys.argv[2], max_lines=10000, max_line_length=500,
                       **kwargs)
seconds = time.perf_counter() - start
envelope = Envelope(
    repo_name="site", repository_url="https://example.org/site.git",
    refname="refs/heads/asf-site", pusher="bot", sender="bot@example.org",
    to=("commits@example.org",), host="example.org", date=datetime(2024, 1, 1, tzinfo=UTC),
)
email = compose_combined_email(
    envelope=envelope, log_text=log, old=None, new="b" * 40, subject_line="Build"
)
digest = hashlib.sha256(email).hexdigest()
print(json.dumps({"seconds": seconds, "total": log.total, "email": digest, "bytes": len(email)}))
"""


def page(k: int, kb: int, name: str = "") -> bytes:
    """An HTML page of about ``kb`` KB (~80-character lines) that names itself."""
    rng = random.Random(k)
    lines = [f"<html><head><title>Post {k}</title>", f'<link rel="canonical" href="/{name}">']
    size = 0
    while size < kb * 1024:
        line = "<p>" + " ".join(rng.choice(WORDS) for _ in range(12)) + "</p>"
        lines.append(line)
        size += len(line) + 1
    return ("\n".join([*lines, "</body></html>"]) + "\n").encode()


def fast_import(repo: Path, commits: list[dict[str, bytes | None]]) -> None:
    """Commit each ``{path: content or None (delete)}`` on ``refs/heads/asf-site``, in turn."""
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True, env=GIT_ENV)
    proc = subprocess.Popen(
        ["git", "-C", str(repo), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=GIT_ENV
    )
    assert proc.stdin is not None
    ident = b"Bot <bot@example.org> 1700000000 +0000"
    for n, files in enumerate(commits, 1):
        head = b"commit refs/heads/asf-site\nmark :%d\nauthor %s\ncommitter %s\n" % (
            n,
            ident,
            ident,
        )
        proc.stdin.write(head + b"data 6\nBuild\n" + (b"from :%d\n" % (n - 1) if n > 1 else b""))
        for name, data in files.items():
            if data is None:
                proc.stdin.write(b"D %s\n" % name.encode())
            else:
                proc.stdin.write(b"M 100644 inline %s\ndata %d\n" % (name.encode(), len(data)))
                proc.stdin.write(data + b"\n")
    proc.stdin.close()
    assert proc.wait() == 0
    _unpack(repo)


def _unpack(repo: Path) -> None:
    """Loose objects, as publish writes them."""
    for pack in list((repo / "objects" / "pack").glob("*.pack")):
        moved = repo / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as fh:
            subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], stdin=fh, check=True)
        moved.unlink()


def post_path(k: int, year: int = 2000) -> str:
    return f"{year + k % 20}/{k % 12 + 1:02d}/post-{k:05d}.html"


def first_build(repo: Path, files: int, kb: int) -> None:
    fast_import(repo, [{post_path(k): page(k, kb, post_path(k)) for k in range(files)}])


def renames(repo: Path, site: int, kb: int, moved: int = 50) -> None:
    pages = {post_path(k): page(k, kb, post_path(k)) for k in range(site)}
    index = "".join(f'<li><a href="/{p}">{p}</a></li>\n' for p in pages).encode()
    change: dict[str, bytes | None] = {}
    for n in range(moved):
        k = n * (site // moved)
        old, new = post_path(k), post_path(k, 2030)
        data = pages[old]
        change[old] = None
        change[new] = data if n % 5 == 0 else data.replace(old.encode(), new.encode())
        index = index.replace(old.encode(), new.encode())
    change["index.html"] = index
    for path, data in pages.items():  # every page's "recent posts" list changed
        if path not in change:
            change[path] = data.replace(b"</body>", b"<p>recent: moved</p>\n</body>")
    fast_import(repo, [{**pages, "index.html": b"x\n"}, change])


def added(repo: Path, pages: int, modified: int = 50, kb: int = 20) -> None:
    """``pages`` new pages next to ``modified`` edited ones (not alike: scored, none taken)."""
    base = {post_path(k): page(k, kb, post_path(k)) for k in range(modified)}
    change: dict[str, bytes | None] = {
        path: data.replace(b"</body>", b"<p>edited</p>\n</body>") for path, data in base.items()
    }
    for k in range(modified, modified + pages):
        change[post_path(k, 2030)] = page(k, kb, post_path(k, 2030))
    fast_import(repo, [dict(base), change])


OLD_TREE: Path | None = None  # --old REV: that commit's deploybot, for "before" numbers


@dataclass(frozen=True)
class Run:
    """One measured run: wall and CPU seconds, peak RSS (MiB), and the child's JSON line
    (for ours: the call's own seconds, the email's SHA-256 and size) or None (git)."""

    wall: float
    cpu: float
    rss: float
    out: dict[str, Any] | None = None


# Spawns argv[2:] and writes to argv[1] the child's wall seconds, CPU seconds and ru_maxrss
# (KiB). Linux counts in a process's ru_maxrss the image its exec replaced, so a command
# started straight from this process (which holds the generated pages) would report at least
# this process's peak. This launcher's own image (``-I -S``, about 8 MiB) is the floor: git
# log's peak may read as that.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
took = time.perf_counter() - start
with open(sys.argv[1], "w") as report:
    report.write(f"{took} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, bytes]:
    """Run ``argv`` under :data:`LAUNCHER`: (wall seconds, CPU seconds of it and its children,
    peak RSS in MiB, stdout's tail). CPU time is what a loaded machine distorts least; the
    peak RSS is ``wait4``'s ``ru_maxrss`` (the process's, or its largest waited-for child's:
    git, for ours through git).

    Raises:
        SystemExit: the command failed.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER, str(report)]
        # cwd "/": a child's "-c" puts its working folder first on sys.path, and this checkout
        # there would shadow the PYTHONPATH of --old.
        proc = subprocess.Popen([*launcher, *argv], stdout=subprocess.PIPE, env=env, cwd="/")
        assert proc.stdout is not None
        tail = b""
        while chunk := proc.stdout.read(1 << 20):
            tail = (tail + chunk)[-4096:]  # read and dropped but for the child's last line
        proc.stdout.close()
        if proc.wait() != 0:
            raise SystemExit(f"{argv[:4]} failed")
        wall, cpu, rss_kib = report.read_text().split()
    return float(wall), float(cpu), int(rss_kib) / 1024, tail


def _ours(repo: Path, engine: str) -> Run:
    root = Path(__file__).resolve().parents[1]
    if engine == "old":
        assert OLD_TREE is not None
        root, engine = OLD_TREE, "python"
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = [sys.executable, "-c", CHILD, str(repo), "refs/heads/asf-site", engine]
    _, cpu, rss, out = _measure(argv, env)
    result = json.loads(out.decode().strip().splitlines()[-1])
    return Run(float(result["seconds"]), cpu, rss, result)


def _git(repo: Path) -> Run:
    argv = ["git", "-C", str(repo), "log", "-C", "--stat", "-p", "--cc", "-1", "asf-site"]
    wall, cpu, rss, _ = _measure(argv, GIT_ENV)
    return Run(wall, cpu, rss)


def compare(repo: Path, runs: int, engines: tuple[str, ...]) -> dict[str, Run]:
    """Median run per path, runs alternating. Wall: git's process, or the call inside ours
    (no interpreter start); CPU: the whole process with its children (git's, for ours
    through git); RSS: the process's peak.

    Raises:
        SystemExit: two of our paths made different emails.
    """
    times: dict[str, list[Run]] = {"git log": [], **{e: [] for e in engines}}
    for _ in range(runs):
        times["git log"].append(_git(repo))
        for engine in engines:
            times[engine].append(_ours(repo, engine))
    emails = {run.out["email"]: engine for engine in engines for run in times[engine] if run.out}
    if len(emails) > 1:
        raise SystemExit(f"{repo.name}: the emails differ between {sorted(emails.values())}")
    return {
        name: Run(
            statistics.median(r.wall for r in values),
            statistics.median(r.cpu for r in values),
            statistics.median(r.rss for r in values),
            values[0].out,
        )
        for name, values in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--kb", type=int, default=40)
    parser.add_argument("--site", type=int, default=1000)
    parser.add_argument("--added", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-python-first", action="store_true")
    parser.add_argument("--only", choices=["first", "renames", "added"])
    parser.add_argument("--threshold", action="store_true")
    parser.add_argument("--old", help="also time the pure-Python path of this commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.threshold:
            _threshold(tmp, args.runs)
            return
        extra: tuple[str, ...] = ()
        if args.old:
            _extract(args.old, tmp / "old")
            extra = ("old",)
        rows = []
        if args.only in (None, "renames"):
            renames(tmp / "renames.git", args.site, 20)
            engines = ("git", "python", *extra)
            rows.append(("50 renames", compare(tmp / "renames.git", args.runs, engines)))
        if args.only in (None, "first"):
            first_build(tmp / "first.git", args.files, args.kb)
            engines = ("git",) if args.skip_python_first else ("git", "python", *extra)
            name = f"first build, {args.files} files"
            rows.append((name, compare(tmp / "first.git", args.runs, engines)))
        if args.only == "added":
            added(tmp / "added.git", args.added)
            name = f"{args.added} added, 50 edited"
            rows.append((name, compare(tmp / "added.git", args.runs, ("git", "python", *extra))))
    labels = {"git": "ours, git", "python": "ours, Python", "old": f"{args.old}, Python"}
    head = f"{'commit':<28}{'path':<22}{'wall':>8}{'ratio':>8}{'CPU':>8}{'ratio':>8}"
    print(f"{head}{'peak RSS':>11}{'email':>11}")
    for name, t in rows:
        base = t["git log"]
        for path, run in t.items():
            label = labels.get(path, path)
            print(f"{name:<28}{label:<22}{run.wall:>7.2f}s{run.wall / base.wall:>7.2f}x", end="")
            email = f"{run.out['bytes']:>9}B" if run.out else ""
            print(f"{run.cpu:>7.2f}s{run.cpu / base.cpu:>7.2f}x{run.rss:>8.0f}MiB{email}")
    print("the emails of our paths are byte-identical (checked per commit)")


def _extract(rev: str, folder: Path) -> None:
    """``rev``'s deploybot package into ``folder``, for the ``old`` path."""
    global OLD_TREE
    root = Path(__file__).resolve().parents[1]
    folder.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", rev, "deploybot"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    OLD_TREE = folder


def _threshold(tmp: Path, runs: int) -> None:
    """Small commits: one parent with the files, the next edits each in the middle."""
    print(f"{'files x KB':<12}{'Python ms':>10}{'git ms':>8}")
    for files, kb in ((1, 1), (1, 40), (1, 120), (2, 40), (3, 40), (10, 4), (10, 40)):
        repo = tmp / f"t{files}-{kb}.git"
        base = {f"p{k}.html": page(k, kb) for k in range(files)}
        edit = {p: d.replace(b"</body>", b"<p>edited</p>\n</body>") for p, d in base.items()}
        fast_import(repo, [base, dict(edit)])
        t = compare(repo, runs, ("python", "git"))
        print(f"{files} x {kb:<7}{t['python'].wall * 1000:>10.1f}{t['git'].wall * 1000:>8.1f}")


if __name__ == "__main__":
    main()
