"""Benchmark: full vs incremental ``run_once`` at 1,000 and 10,000 posts (``make bench``).

Sites are made by repeating the tvm posts under new names and dates (generated posts when
../shared is missing). For each size: a full build (first ``run_once``, with
``notify.transport = "none"``: the first build's email, a diff of every file, is the notify
stage's cost, not the build's), then one post's body is edited and ``run_once`` runs
incrementally (fetch -> render -> commit -> push -> email formatted into an mbox). Each
measurement runs in its own subprocess, so the peak RSS (``resource.getrusage``) of one does
not mix with another's.

    python -m tests.bench [--sizes 1000,10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from dulwich.repo import Repo

from tests.conftest import TVM
from tests.gitrepo import commit_files


def _posts() -> list[bytes]:
    folder = TVM / "source" / "_posts"
    if folder.is_dir():
        return [p.read_bytes() for p in sorted(folder.iterdir())]
    body = "\n\n".join(f"Paragraph {i} with `code` and *emphasis*." for i in range(40))
    code = "```python\nimport tvm\nx = tvm.te.var('x')\n```\n"
    return [f"---\nlayout: post\ntitle: Post {i}\n---\n{body}\n{code}".encode() for i in range(21)]


def write_config(root: Path, transport: str) -> None:
    """Write ``root``/deploybot.toml with ``notify.transport`` = ``transport``."""
    (root / "deploybot.toml").write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
        'author = "Bot <bot@example.org>"\n'
        f'[notify]\ntransport = "{transport}"\nmbox = "mail.mbox"\n'
        'to = ["commits@example.org"]\nfrom = "bot@example.org"\n'
    )


def make_site(root: Path, count: int) -> None:
    """Create ``root``/source.git (``count`` posts), publish.git and deploybot.toml."""
    source, publish = root / "source.git", root / "publish.git"
    Repo.init_bare(str(source), mkdir=True).close()
    Repo.init_bare(str(publish), mkdir=True).close()
    files: dict[str, bytes | None] = {}
    if (TVM / "source" / "_config.yml").is_file():
        files["_config.yml"] = (TVM / "source" / "_config.yml").read_bytes()
    texts = _posts()
    start = date(1990, 1, 1)
    for i in range(count):
        day = start + timedelta(days=i)
        files[f"_posts/{day.isoformat()}-post-{i}.md"] = texts[i % len(texts)]
    commit_files(source, files, "Import", when=1_700_000_000)
    write_config(root, "none")


def edit_one_post(root: Path, count: int) -> None:
    """Commit a body edit of a post in the middle of the site."""
    source = root / "source.git"
    i = count // 2
    path = f"_posts/{(date(1990, 1, 1) + timedelta(days=i)).isoformat()}-post-{i}.md"
    with Repo(str(source)) as repo:
        tree = repo[repo[repo.refs[b"refs/heads/main"]].tree]  # type: ignore[attr-defined]
        _, sha = tree.lookup_path(repo.__getitem__, path.encode())
        data = repo[sha].as_raw_string()
    commit_files(source, {path: data + b"\nOne more line.\n"}, "Edit", when=1_700_003_600)


def measure(root: Path, full: bool) -> dict[str, object]:
    """Run ``run_once`` once (in this process); return seconds, peak RSS and the timings."""
    from deploybot import pipeline
    from deploybot.config import load_config

    config = load_config(root / "deploybot.toml")
    if os.environ.get("DEPLOYBOT_BENCH_LOG"):  # say why a run was full, on stderr
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        logging.getLogger("deploybot.pipeline").addFilter(
            lambda r: not r.getMessage().startswith("warning:")
        )
    start = time.perf_counter()
    result = pipeline.run_once(config, full=full)
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seconds": elapsed,
        "peak_mb": peak_mb,
        "status": result.status,
        "changed": len(result.changed_paths),
        "timings": result.timings,
    }


def _child(root: Path, full: bool) -> dict[str, object]:
    args = [sys.executable, "-m", "tests.bench", "--measure", str(root)]
    out = subprocess.run(
        [*args, "--full"] if full else args, check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    """Parse the arguments; run the benchmark or one measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--measure", type=Path)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--keep", type=Path, help="make the sites here and keep them")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.full)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in (int(s) for s in args.sizes.split(",")):
            root = (args.keep or Path(tmp)) / str(count)
            root.mkdir(parents=True)
            make_site(root, count)
            full = _child(root, False)
            write_config(root, "mbox")
            edit_one_post(root, count)
            inc = _child(root, False)
            rows.append((count, full, inc))
            print(
                f"{count} posts: full {full['seconds']:.2f}s ({full['peak_mb']:.0f} MB), "
                f"incremental {inc['seconds']:.3f}s ({inc['peak_mb']:.0f} MB) {inc['timings']}",
                flush=True,
            )
    print(f"\n{datetime.now(UTC):%Y-%m-%d}, python -m tests.bench --sizes {args.sizes}\n")
    print(
        "| posts | full run-once (no email) | peak RSS | incremental run-once | peak RSS "
        "| incr/full |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for count, full, inc in rows:
        ratio = float(inc["seconds"]) / float(full["seconds"])  # type: ignore[arg-type]
        print(
            f"| {count} | {full['seconds']:.2f} s | {full['peak_mb']:.0f} MB | "
            f"{inc['seconds']:.3f} s | {inc['peak_mb']:.0f} MB | {ratio:.1%} |"
        )
    if len(rows) > 1:
        flat = float(rows[-1][2]["seconds"]) / float(rows[0][2]["seconds"])  # type: ignore[arg-type]
        print(f"\nincremental at {rows[-1][0]} / at {rows[0][0]}: {flat:.2f}x")


if __name__ == "__main__":
    main()
