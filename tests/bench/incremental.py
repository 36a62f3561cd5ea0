"""``python -m tests.bench.incremental``: the incremental ``run-once`` of one site size, alone.

    python -m tests.bench.incremental --posts 10000 [--rounds 3] [--keep DIR]

Makes the bench's site (:mod:`tests.bench.site`), publishes it once with ``run-once`` (the
first publish), then, each round, a no-op ``run-once`` and a one-post edit, add and delete,
each pushed to the source and published end to end (fetch, render, commit, push, email),
as ``make bench`` does (:mod:`tests.bench.scenarios`) but without the full builds and the
peers: the quick loop for the incremental path's time and memory (the peak PSS of its
process tree, :mod:`tests.bench.measure`). With ``--keep DIR`` the site and the instance
are kept, and a later run with ``--keep`` the same DIR starts from them (no new site,
no first publish). Prints one line per run and the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from tests.bench import site as sitemod
from tests.bench.measure import Sample, run
from tests.bench.peers import python_env
from tests.bench.scenarios import Instance, _pick
from tests.bench.site import Site, commit_and_push

NAMES = ("run-once no-op", "run-once edit", "run-once add", "run-once delete")


def measure(inst: Instance, name: str, samples: dict[str, list[Sample]]) -> None:
    """Run ``run-once`` as ``name`` and print its sample (time, CPU, tree PSS, ru_maxrss)."""
    sample = run(inst.run_once(), env=python_env(), cwd=inst.dir.parent)
    samples.setdefault(name, []).append(sample)
    print(
        f"{name}: {sample.seconds:.3f} s, CPU {sample.cpu_seconds:.2f} s, "
        f"tree PSS {sample.tree_pss_mb or 0:.0f} MB, ru_maxrss {sample.peak_mb:.0f} MB",
        flush=True,
    )


def one_round(site: Site, inst: Instance, r: int, samples: dict[str, list[Sample]]) -> None:
    """A no-op, then a one-post edit, add and delete, each published."""
    measure(inst, "run-once no-op", samples)
    half = len(site.names) // 2
    sitemod.edit_post(site, _pick(site, half + 2 * r + 1))
    commit_and_push(site, "Edit")
    measure(inst, "run-once edit", samples)
    sitemod.add_post(site, max(site.names) + 1)
    commit_and_push(site, "Add")
    measure(inst, "run-once add", samples)
    sitemod.delete_post(site, _pick(site, len(site.names) - 1 - r))
    commit_and_push(site, "Delete")
    measure(inst, "run-once delete", samples)


def save(site: Site, state: Path) -> None:
    """Write what :func:`reopen` needs of ``site`` into ``state`` (JSON)."""
    kept = {"names": site.names, "changes": site.changes, "per_day": site.per_day}
    state.write_text(json.dumps(kept), encoding="utf-8")


def reopen(root: Path, state: Path) -> tuple[Site, Instance]:
    """The site and instance a run with ``--keep`` left under ``root``."""
    saved = json.loads(state.read_text(encoding="utf-8"))
    names = {int(k): v for k, v in saved["names"].items()}
    site = Site(root, sitemod.corpus_posts(), names, saved["changes"], saved["per_day"])
    inst = Instance.__new__(Instance)  # its folder is there: no new publish repo
    inst.dir, inst.publish = root / "run", root / "run" / "publish.git"
    inst.config = inst.dir / "deploybot.toml"
    return site, inst


def main(argv: list[str] | None = None) -> None:
    """Make (or reopen) the site, then run the rounds; print each run and the medians."""
    parser = argparse.ArgumentParser(prog="python -m tests.bench.incremental")
    parser.add_argument("--posts", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep (or reuse) the site in this folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="deploybot-incr-") as tmp:
        root = (args.keep or Path(tmp)) / str(args.posts)
        state = root / "incremental.json"
        samples: dict[str, list[Sample]] = {}
        if state.is_file():
            site, inst = reopen(root, state)
        else:
            root.mkdir(parents=True)
            print(f"making {args.posts} posts", file=sys.stderr, flush=True)
            site = sitemod.make_site(root, args.posts)
            inst = Instance(root / "run", site)
            measure(inst, "run-once first publish", samples)
            save(site, state)
        for r in range(args.rounds):
            one_round(site, inst, r, samples)
            save(site, state)
        for name in NAMES:
            runs = samples[name]
            print(
                f"median {name}: {statistics.median(s.seconds for s in runs):.3f} s, "
                f"CPU {statistics.median(s.cpu_seconds or 0 for s in runs):.2f} s, "
                f"tree PSS {statistics.median(s.tree_pss_mb or 0 for s in runs):.0f} MB "
                f"(max {max(s.tree_pss_mb or 0 for s in runs):.0f} MB)"
            )


if __name__ == "__main__":
    main()
