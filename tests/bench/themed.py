"""The themed scenario: the benchmark's posts built with a gem theme and its Sass.

A site as ``jekyll new`` makes one and real sites keep it: ``theme: minima`` (Debian's
``jekyll-theme-minima``, the gem Jekyll and deploybot both read from
``/usr/share/rubygems-integration/all/gems``), no ``_layouts`` of its own, minima's default
``plugins: [jekyll-feed, jekyll-seo-tag]``, an ``index.md`` with ``layout: home`` and an
``about.md``; the stylesheet is the theme's ``assets/main.scss`` (its ``_sass`` imports).
The posts are the size's posts (:mod:`tests.bench.site`, the same files), under the
corpus's ``_config.yml`` with the theme's keys added.

``python -m tests.bench.themed [--repeat 3]`` runs this scenario alone (a site made afresh,
medians and their ratio on stdout); ``python -m tests.bench`` runs it in its rounds.

Each round times ``deploybot build`` and ``jekyll build`` of that folder, one after the other,
as ``themed deploybot build`` and ``themed jekyll build`` (the target "theme-and-Sass site,
1,000 posts: at most 1.0x Jekyll" reads these names). It runs at :data:`SIZE` posts only, when
Jekyll is there; before the first round both outputs are compared (:func:`compare`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.bench.measure import Sample, run
from tests.bench.peers import Peer
from tests.bench.site import Site

SIZE = 1000
"""The only site size the themed scenario runs at."""
DEPLOYBOT, JEKYLL = "themed deploybot build", "themed jekyll build"
THEME_KEYS = """
description: "The deploybot benchmark's posts with the minima theme."
theme: minima
plugins:
  - jekyll-feed
  - jekyll-seo-tag
"""
"""What the themed site adds to the corpus's ``_config.yml`` (minima's own defaults)."""
HOME = "---\nlayout: home\n---\n"
ABOUT = "---\nlayout: page\ntitle: About\npermalink: /about/\n---\n\nAbout this site.\n"
BUILD_RECORD = ".deploybot-build"
"""The file deploybot's output has and Jekyll's has not (the build's record)."""

Measure = Callable[[str, list[str]], Sample]
Log = Callable[[str], None]


class ThemedError(RuntimeError):
    """deploybot and Jekyll did not write the same pages of the themed site."""


def make_themed_site(site: Site) -> Path:
    """Write ``themed/`` beside ``site``'s folder: its posts and includes, the corpus's
    ``_config.yml`` with :data:`THEME_KEYS`, the home and about pages; return the folder."""
    folder = site.root / "themed"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for part in ("_posts", "_includes"):
        shutil.copytree(site.folder / part, folder / part)
    config = (site.folder / "_config.yml").read_text(encoding="utf-8")
    (folder / "_config.yml").write_text(config.rstrip("\n") + "\n" + THEME_KEYS, "utf-8")
    (folder / "index.md").write_text(HOME, encoding="utf-8")
    (folder / "about.md").write_text(ABOUT, encoding="utf-8")
    return folder


def pages(out: Path) -> set[str]:
    """The files of the output folder ``out`` (relative POSIX paths), the build record left
    out."""
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {BUILD_RECORD}


@dataclass(frozen=True)
class Comparison:
    """What two outputs of the themed site share: ``files`` both wrote, ``same`` of them
    byte for byte; ``only_ours``/``only_jekyll``, the files one alone wrote."""

    files: int
    same: int
    only_ours: tuple[str, ...]
    only_jekyll: tuple[str, ...]


def compare(ours: Path, jekyll: Path) -> Comparison:
    """Compare deploybot's output folder with Jekyll's (the yardstick)."""
    mine, theirs = pages(ours), pages(jekyll)
    both = mine & theirs
    same = sum((ours / p).read_bytes() == (jekyll / p).read_bytes() for p in both)
    return Comparison(len(both), same, tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine)))


class ThemedBench:
    """The themed site of one benchmark size and its two builds (see the module docstring)."""

    def __init__(
        self, site: Site, jekyll: str, deploybot: list[str], env: dict[str, str], log: Log
    ) -> None:
        self.root, self.jekyll, self.deploybot, self.env = site.root, jekyll, deploybot, env
        self.folder = make_themed_site(site)
        self.check(log)

    @classmethod
    def maybe(
        cls,
        size: int,
        site: Site,
        peers: list[Peer],
        deploybot: list[str],
        env: dict[str, str],
        log: Log,
    ) -> ThemedBench | None:
        """The themed bench at :data:`SIZE` posts when the Jekyll peer runs (its commands
        run with ``env``, ``deploybot`` the CLI's argv); else None."""
        jekyll = next((p.program for p in peers if p.name == "jekyll" and p.program), None)
        if size != SIZE or jekyll is None:
            return None
        log(f"{size} posts: making the themed site (theme: minima) and comparing its outputs")
        return cls(site, jekyll, deploybot, env, log)

    def deploybot_argv(self) -> list[str]:
        """``deploybot build`` of the themed folder into an emptied ``themed-deploybot-out``."""
        out = self.root / "themed-deploybot-out"
        shutil.rmtree(out, ignore_errors=True)
        return [*self.deploybot, "build", str(self.folder), str(out)]

    def jekyll_argv(self) -> list[str]:
        """``jekyll build`` of the themed folder (no disk cache: a clean clone's build)."""
        out = self.root / "themed-jekyll-out"
        return [self.jekyll, "build", "-q", "--disable-disk-cache", "-s", str(self.folder),
                "-d", str(out)]  # fmt: skip

    def check(self, log: Log) -> None:
        """Build once with each and compare; log how many files are the same.

        Raises:
            ThemedError: one tool wrote a file the other did not.
        """
        for argv in (self.deploybot_argv(), self.jekyll_argv()):
            run(argv, env=self.env, cwd=self.root)
        found = compare(self.root / "themed-deploybot-out", self.root / "themed-jekyll-out")
        if found.only_ours or found.only_jekyll:
            raise ThemedError(
                f"themed site: only deploybot wrote {list(found.only_ours[:5])}, "
                f"only Jekyll {list(found.only_jekyll[:5])}"
            )
        log(
            f"  themed site: both wrote the same {found.files} files, {found.same} of them "
            "byte for byte (kramdown and Rouge differ in whitespace and token classes)"
        )

    def round(self, measure: Measure) -> None:
        """One round: ``deploybot build``, then ``jekyll build``, of the themed site."""
        measure(DEPLOYBOT, self.deploybot_argv())
        measure(JEKYLL, self.jekyll_argv())


OLD = "themed deploybot build (old)"


def main(argv: list[str] | None = None) -> None:
    """Run the themed scenario alone: ``--repeat`` rounds; print the medians (wall and CPU
    seconds) and their ratios to Jekyll's. ``--old DIR``: each round also times the
    deploybot checked out in DIR (``git worktree add DIR COMMIT``), first."""
    from tests.bench.peers import find_peers, python_env
    from tests.bench.scenarios import deploybot_argv
    from tests.bench.site import make_site

    parser = argparse.ArgumentParser(prog="python -m tests.bench.themed")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are taken")
    parser.add_argument("--old", type=Path, help="an earlier deploybot's checkout, timed too")
    args = parser.parse_args(argv)
    samples: dict[str, list[Sample]] = {OLD: [], DEPLOYBOT: [], JEKYLL: []}

    def measure(name: str, command: list[str], extra: dict[str, str] | None = None) -> Sample:
        sample = run(command, env={**env, **(extra or {})}, cwd=site.root)
        samples[name].append(sample)
        cpu = f"{sample.cpu_seconds:.2f}" if sample.cpu_seconds is not None else "-"
        print(f"  {name}: {sample.seconds:.3f} s (CPU {cpu} s)", file=sys.stderr, flush=True)
        return sample

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    env = python_env()
    with tempfile.TemporaryDirectory(prefix="deploybot-themed-") as tmp:
        site = make_site(Path(tmp), SIZE)
        bench = ThemedBench.maybe(SIZE, site, find_peers(["jekyll"]), deploybot_argv(), env, log)
        if bench is None:
            sys.exit("jekyll is not on PATH")
        for _ in range(args.repeat):
            if args.old is not None:  # its build command, into the emptied output folder
                old = [sys.executable, "-m", "deploybot.cli.commands", *bench.deploybot_argv()[-3:]]
                measure(OLD, old, {"PYTHONPATH": str(args.old.resolve())})
            bench.round(measure)
    jekyll = samples[JEKYLL]
    for name, found in samples.items():
        if found:
            print(_medians(name, found, jekyll))


def _medians(name: str, found: list[Sample], jekyll: list[Sample]) -> str:
    """``NAME: W s wall, C s CPU`` (medians), with their ratios to Jekyll's medians."""
    wall, cpu = (statistics.median(s.seconds for s in found),
                 statistics.median(s.cpu_seconds or 0.0 for s in found))  # fmt: skip
    line = f"{name}: {wall:.3f} s wall, {cpu:.2f} s CPU"
    if found is jekyll:
        return line
    their_wall = statistics.median(s.seconds for s in jekyll)
    their_cpu = statistics.median(s.cpu_seconds or 0.0 for s in jekyll)
    return line + f" ({wall / their_wall:.2f}x Jekyll's wall time, {cpu / their_cpu:.2f}x CPU)"


if __name__ == "__main__":
    main()
