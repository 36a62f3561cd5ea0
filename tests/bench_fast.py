"""Benchmark: a one-post publish and a no-op ``run-once``, this tree against an earlier commit.

Two copies of one site of ``--posts`` posts (tests.bench's sites: the tvm posts repeated),
each first published by its own version: ``--old REV`` (``git archive``) and this working
tree. Then, ``--rounds`` times, alternating the versions: the same post's body is edited
in both sources and each runs ``python -m deploybot run-once`` (fetch, render, commit, push,
the email into an mbox), then ``run-once`` again (a no-op), then a bare ``git fetch`` of the
same source into an up-to-date clone (the no-op floor). Each run is its own process; the
times are wall times of the whole process (interpreter start and imports included), with
both trees' bytecode compiled first (as an installed package has it). Medians are printed.

    python -m tests.bench_fast --old a6a8dcf [--posts 1000] [--rounds 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from dulwich.repo import Repo

from tests.conftest import TVM
from tests.gitrepo import commit_files

ROOT = Path(__file__).resolve().parents[1]


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
    """``root``/source.git (``count`` posts: the tvm posts repeated), publish.git, a config
    (no email for the first build: its email is the notify stage's cost, not the build's)."""
    Repo.init_bare(str(root / "source.git"), mkdir=True).close()
    Repo.init_bare(str(root / "publish.git"), mkdir=True).close()
    files: dict[str, bytes | None] = {}
    if (TVM / "source" / "_config.yml").is_file():
        files["_config.yml"] = (TVM / "source" / "_config.yml").read_bytes()
    texts = _posts()
    for i in range(count):
        day = date(1990, 1, 1) + timedelta(days=i)
        files[f"_posts/{day.isoformat()}-post-{i}.md"] = texts[i % len(texts)]
    commit_files(root / "source.git", files, "Import", when=1_700_000_000)
    write_config(root, "none")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Run ``argv``; return its wall seconds. Raises on a failure."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return seconds


def edit(root: Path, count: int, n: int) -> None:
    """Edit the body of post ``count // 2 + n`` (the same in every copy)."""
    i = count // 2 + n
    path = f"_posts/{(date(1990, 1, 1) + timedelta(days=i)).isoformat()}-post-{i}.md"
    with Repo(str(root / "source.git")) as repo:
        tree = repo[repo[repo.refs[b"refs/heads/main"]].tree]  # type: ignore[attr-defined]
        _, sha = tree.lookup_path(repo.__getitem__, path.encode())
        data = repo[sha].as_raw_string()
    commit_files(
        root / "source.git", {path: data + b"\nRound %d.\n" % n}, "Edit", when=1_700_000_000 + n
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = args.keep or Path(tmp_name)
        trees = {"old": tmp / "old-tree", "new": ROOT}
        trees["old"].mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.old, "deploybot", "templates"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(trees["old"])], input=archive.stdout, check=True)
        envs = {}
        for name, tree in trees.items():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "deploybot")])
            envs[name] = {**os.environ, "PYTHONPATH": str(tree)}
        sites = {name: tmp / f"site-{name}" for name in trees}
        for name, site in sites.items():
            site.mkdir()
            make_site(site, args.posts)
            run(
                [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"],
                site,
                envs[name],
            )
            write_config(site, "mbox")
            edit(site, args.posts, 0)
            run(
                [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"],
                site,
                envs[name],
            )
        floor = tmp / "floor.git"
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(sites["new"] / "source.git"), str(floor)],
            check=True,
        )
        times: dict[str, list[float]] = {}
        argv = [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"]
        for n in range(1, args.rounds + 1):
            for name, site in sites.items():
                edit(site, args.posts, n)
                times.setdefault(f"{name} one-post edit", []).append(run(argv, site, envs[name]))
                times.setdefault(f"{name} no-op", []).append(run(argv, site, envs[name]))
            subprocess.run(["git", "-C", str(floor), "fetch", "-q", "origin"], check=True)
            times.setdefault("git fetch (no-op floor)", []).append(
                run(["git", "-C", str(floor), "fetch", "-q", "origin"], tmp, dict(os.environ))
            )
    print(f"{args.posts} posts, {args.rounds} rounds, medians (wall time of the whole process):")
    for name, values in times.items():
        print(f"  {name:<28}{statistics.median(values):8.3f} s   (min {min(values):.3f})")
    floor_s = statistics.median(times["git fetch (no-op floor)"])
    for name in ("old", "new"):
        edit_s = statistics.median(times[f"{name} one-post edit"])
        noop_s = statistics.median(times[f"{name} no-op"])
        print(
            f"  {name}: no-op / git fetch = {noop_s / floor_s:.1f}x; one-post edit {edit_s:.3f} s"
        )


if __name__ == "__main__":
    main()
