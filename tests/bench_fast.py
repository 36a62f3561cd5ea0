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


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run ``argv``: (wall seconds, CPU seconds of it and its children: what a loaded
    machine distorts least). Raises on a failure."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{argv} failed: {err.decode(errors='replace')[-500:]}")
    return seconds, usage.ru_utime + usage.ru_stime


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
        argv = [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"]
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
        times: dict[str, list[tuple[float, float]]] = {}
        argv = [sys.executable, "-m", "deploybot", "run-once", "--config", "deploybot.toml"]
        for n in range(1, args.rounds + 1):
            for name, site in sites.items():
                edit(site, args.posts, n)
                times.setdefault(f"{name} one-post edit", []).append(run(argv, site, envs[name]))
                times.setdefault(f"{name} no-op", []).append(run(argv, site, envs[name]))
            subprocess.run(["git", "-C", str(floor), "fetch", "-q", "origin"], check=True)
            fetch = ["git", "-C", str(floor), "fetch", "-q", "origin"]
            times.setdefault("git fetch (no-op floor)", []).append(
                run(fetch, tmp, dict(os.environ))
            )
    print(f"{args.posts} posts, {args.rounds} rounds, medians of whole processes:")
    med: dict[str, tuple[float, float]] = {}
    for name, values in times.items():
        med[name] = (
            statistics.median(v[0] for v in values),
            statistics.median(v[1] for v in values),
        )
        print(f"  {name:<28}wall {med[name][0]:7.3f} s   CPU {med[name][1]:7.3f} s")
    floor = med["git fetch (no-op floor)"]
    for name in ("old", "new"):
        noop = med[f"{name} no-op"]
        print(
            f"  {name}: no-op / git fetch = {noop[0] / floor[0]:.1f}x wall, "
            f"{noop[1] / floor[1]:.1f}x CPU"
        )
    old, new = med["old one-post edit"], med["new one-post edit"]
    print(f"  one-post edit new / old = {new[0] / old[0]:.2f}x wall, {new[1] / old[1]:.2f}x CPU")


if __name__ == "__main__":
    main()
