"""The measurements of one site size, in rounds: every tool once per round, in turn.

A round (repeated ``--repeat`` times; medians are taken across rounds, so a slow moment of
the machine hits one sample of each tool rather than all samples of one):

1. a one-post edit is committed to the site (and mirrored into the peers' sources);
2. full builds: ``deploybot build`` (the folder, as Jekyll reads it; no config, so no
   highlight cache: a clean clone's build), the same with a config whose state folder keeps
   ``cache/highlight.sqlite`` from the builds before (made before the first round, so
   every round's is warm: the highlighted code blocks of all but the edited post come from
   it), then each peer's build into its seed folder followed by ``git add -A && git commit
   && git push`` (the seed-style pipeline: a full rebuild and a push of what changed);
3. deploybot's pipeline on a fresh state dir and publish repo: the first ``run-once``
   (fetch, full build with an empty highlight cache, commit, push, the first build's email
   into an mbox); a no-op ``run-once`` next to a bare ``git fetch`` of the same source (the
   floor); one-post edit, add and delete, each committed and pushed to the source, then
   ``run-once`` (fetch -> render -> commit -> push -> email); ``run-once --full`` (the
   pipeline's full build, with nothing to publish; its highlight cache is warm);
At sizes past :data:`PEERS_UP_TO` (the 100,000-post size, run only when ``--sizes`` names
it) a round measures only what issue 21 asks there: ``deploybot build`` (no highlight
cache), the first publish, the no-op, the one-post edit, add and delete; the peers, the
warm-cache build, ``run-once --full``, the rename commit and the emails are skipped, each
with one line in the results' skipped list (:data:`LARGE_SKIPS`).

4. in the first round only, 50 posts (a quarter of a smaller site) are renamed (new name
   and date) and published; every round then times the email of three build commits of
   that first round, the first build, the one-post edit's (a small commit) and the rename
   build (``deploybot notify --transport stdout``), each against ``git log -C --stat -p
   --cc -1`` of the same commit.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from tests.bench import site as sitemod
from tests.bench.measure import MeasureError, Results, Sample, mb, run
from tests.bench.peers import Peer, SeedRepo, python_env
from tests.bench.site import Site, commit_and_push, git
from tests.bench.themed import ThemedBench

Log = Callable[[str], None]

PEERS_UP_TO = 10_000
"""The largest size the peers, the warm-cache build, ``run-once --full``, the renames and
the emails are measured at: at 10,000 posts Jekyll took 265 s a build and Hugo 4.6 GB."""
LARGE_SKIPS = (
    "peers (Jekyll ~265 s a build and Hugo 4.6 GB at 10,000 posts)",
    "deploybot build with a warm highlight cache (and the build that fills it)",
    "run-once --full (the pipeline's full build; the first publish is one)",
    "the 50-rename commit and the emails (deploybot notify against git log)",
)
"""What a round skips at sizes past :data:`PEERS_UP_TO`, for the results' skipped lines."""
LARGE_RENDER = "[render]\nmax_site_bytes = 20_000_000_000\n"
"""A large site's outputs pass ``render.max_site_bytes`` (1 GB by default; 100,000 posts
write about 1.7 GB), so its builds and runs raise it."""


class BenchError(RuntimeError):
    """A run did not do what the benchmark expects of it (so its time would mean nothing)."""


def deploybot_argv() -> list[str]:
    """How to run the ``deploybot`` CLI of this interpreter's environment."""
    script = Path(sys.executable).parent / "deploybot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "deploybot.cli.commands"]


class Instance:
    """A deploybot configuration with its own state dir, publish repo and mbox."""

    def __init__(self, root: Path, site: Site, extra: str = "") -> None:
        self.dir = root
        self.publish = root / "publish.git"
        root.mkdir()
        git(root, "init", "-q", "--bare", str(self.publish))
        self.config = root / "deploybot.toml"
        self.config.write_text(
            f'[source]\nurl = "{site.source_repo}"\n[publish]\nurl = "publish.git"\n'
            'author = "Bot <bot@example.org>"\n[notify]\ntransport = "mbox"\n'
            'mbox = "mail.mbox"\nto = ["commits@example.org"]\nfrom = "bot@example.org"\n' + extra,
            encoding="utf-8",
        )

    def run_once(self, *extra: str) -> list[str]:
        """The ``deploybot run-once`` command for this instance."""
        return [*deploybot_argv(), "run-once", "--config", str(self.config), *extra]

    def head(self) -> str:
        """The publish branch's head commit id."""
        return git(self.publish, "rev-parse", "refs/heads/asf-site").strip()


def _pick(site: Site, start: int) -> int:
    """The first post number at or after ``start`` (wrapping) that the site still has."""
    numbers = sorted(site.names)
    return next((i for i in numbers if i >= start), numbers[0])


class SizeBench:
    """The benchmark of one site size under ``root``; samples go into ``results``."""

    def __init__(
        self, root: Path, size: int, peers: list[Peer], results: Results, log: Log
    ) -> None:
        self.root, self.size, self.results, self.log = root, size, results, log
        self.large = size > PEERS_UP_TO
        self.peers = [p for p in peers if p.missing is None and not self.large]
        if self.large:
            for what in LARGE_SKIPS:
                line = f"skipped at {size:,} posts: {what}"
                log(line)
                results.skipped.append(line)
        self.env = python_env()
        self.site = sitemod.make_site(root, size)
        self.themed = ThemedBench.maybe(
            size, self.site, self.peers, deploybot_argv(), self.env, log
        )
        self.next_post = size
        self.renames = sitemod.rename_count(size)
        self.emails: dict[str, str] = {}  # which build commit each email measurement reads
        self.keep: Instance | None = None
        for peer in self.peers:
            peer.prepare(self.site)
        self.seeds = {p.name: SeedRepo(root, p.name) for p in self.peers}
        for peer in self.peers:  # the seed's first publish pushes every file, once
            self.seed_pipeline(peer, "seed first publish")
        git(root, "clone", "-q", "--mirror", str(self.site.source_repo), "floor.git")
        if self.large:
            return
        self.warm_config = root / "warm.toml"
        self.warm_config.write_text(
            f'[source]\nurl = "{self.site.source_repo}"\n[state]\ndir = "warm-state"\n',
            encoding="utf-8",
        )
        log(f"{size} posts: filling the highlight cache of the warm build")
        run(self.build_argv("deploybot-warm-out", self.warm_config), env=self.env, cwd=root)

    def publish(self, inst: Instance, name: str, *extra: str, moves: bool = True) -> str:
        """Measure ``run-once`` as ``name``; check it published (``moves``) or not; the head.

        Raises:
            BenchError: the publish branch moved when it should not have, or the reverse.
        """
        before = inst.head() if (inst.publish / "refs/heads/asf-site").exists() else None
        self.measure(name, inst.run_once(*extra))
        after = inst.head()
        if (after != before) != moves:
            raise BenchError(f"{name}: the publish branch {'did not move' if moves else 'moved'}")
        return after

    def measure(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Sample:
        """Run ``argv`` as measurement ``name``; record, log and return the sample."""
        ours = argv[: len(deploybot_argv())] == deploybot_argv()  # its imports are profiled
        sample = run(argv, env=env or self.env, cwd=self.root, imports=ours)
        self.results.add(self.size, name, sample)
        imports = (
            ""
            if sample.modules is None
            else f", imports {sample.modules:.0f} modules in {sample.import_ms:.0f} ms"
        )
        self.log(
            f"  {self.size} {name}: {sample.seconds:.3f} s (CPU {sample.cpu_seconds:.2f} s), "
            f"tree PSS {mb(sample.tree_pss_mb)}, ru_maxrss {mb(sample.peak_mb)}{imports}"
        )
        return sample

    def change(self, paths: list[str], message: str) -> None:
        """Commit and push ``paths`` of the site, and mirror them into the peers."""
        commit_and_push(self.site, message)
        for peer in self.peers:
            peer.sync(self.site, paths)

    def round(self, r: int) -> None:
        """One round of every measurement (see the module docstring)."""
        half = self.size // 2
        self.change(sitemod.edit_post(self.site, _pick(self.site, half + 2 * r)), "Edit")
        self.full_builds()
        inst = Instance(self.root / f"run{r}", self.site, LARGE_RENDER if self.large else "")
        first = self.publish(inst, "run-once first publish")
        git(self.root / "floor.git", "fetch", "-q", "origin")
        self.publish(inst, "run-once no-op", moves=False)
        self.measure("git fetch (no-op floor)", ["git", "-C", "floor.git", "fetch", "-q", "origin"])
        self.change(sitemod.edit_post(self.site, _pick(self.site, half + 2 * r + 1)), "Edit")
        edited = self.publish(inst, "run-once edit")
        self.change(sitemod.add_post(self.site, self.next_post), "Add")
        self.next_post += 1
        self.publish(inst, "run-once add")
        self.change(sitemod.delete_post(self.site, _pick(self.site, self.size - 1 - r)), "Delete")
        self.publish(inst, "run-once delete")
        if self.large:
            shutil.rmtree(inst.dir)
            return
        self.publish(inst, "pipeline full build", "--full", moves=False)
        if self.keep is None:
            step = max(1, half // self.renames)
            numbers = [_pick(self.site, k * step) for k in range(self.renames)]
            self.change(sitemod.rename_posts(self.site, sorted(set(numbers))), "Rename")
            renamed = self.publish(inst, "run-once renames")
            self.emails = {
                "first build": first,
                "edit commit": edited,
                "renames commit": renamed,
            }
            self.keep = inst
        else:
            shutil.rmtree(inst.dir)  # its repo and state: up to GBs at 10k posts
        self.emails_round()

    def build_argv(self, out: str, config: Path | None = None) -> list[str]:
        """``deploybot build`` of the site into the emptied folder ``out`` (with ``config``)."""
        shutil.rmtree(self.root / out, ignore_errors=True)
        extra = [] if config is None else ["--config", str(config)]
        return [*deploybot_argv(), "build", "site", out, *extra]

    def full_builds(self) -> None:
        """``deploybot build`` cold and warm, then each peer's seed-style pipeline, in turn."""
        if self.large:  # a config for the limit, its state (highlight cache) made afresh
            shutil.rmtree(self.root / "large-state", ignore_errors=True)
            config = self.root / "large.toml"
            config.write_text(f'[state]\ndir = "large-state"\n{LARGE_RENDER}', encoding="utf-8")
            self.measure("deploybot build", self.build_argv("deploybot-out", config))
            shutil.rmtree(self.root / "deploybot-out")  # GBs at 100,000 posts
            return
        self.measure("deploybot build", self.build_argv("deploybot-out"))
        self.measure(
            "deploybot build, warm highlight cache",
            self.build_argv("deploybot-warm-out", self.warm_config),
        )
        for peer in list(self.peers):
            self.seed_pipeline(peer, "seed pipeline")
        if self.themed is not None:  # the theme-and-Sass site: tests.bench.themed
            self.themed.round(self.measure)

    def seed_pipeline(self, peer: Peer, name: str) -> None:
        """A peer's full build into its seed folder, then git add/commit/push; record the sum.

        The parts are recorded too (``<peer> build``, ``<peer> git add/commit/push``),
        except on the seed's first publish.
        """
        seed = self.seeds[peer.name]
        first = name == "seed first publish"
        parts = ("first build", "first git push") if first else ("build", "git add/commit/push")
        try:
            build = self.measure(f"{peer.name} {parts[0]}", peer.build_argv(self.site, seed.out))
            argv, env = seed.publish_argv()
            push = self.measure(f"{peer.name} {parts[1]}", argv, env)
        except MeasureError as exc:  # a peer's failure drops that peer, not the whole run
            line = f"dropped {peer.name} at {self.size} posts: {str(exc).splitlines()[0][:300]}"
            self.log(line)
            self.results.skipped.append(line)
            self.peers.remove(peer)
            return
        self.results.add(self.size, f"{peer.name} {name}", build.then(push))

    def emails_round(self) -> None:
        """Time each kept build's email: deploybot's CLI, then git's log of the commit."""
        assert self.keep is not None
        repo = str(self.keep.publish)
        for label, commit in self.emails.items():
            args = ["--commit", commit, "--repo", repo, "--branch", "asf-site"]
            self.measure(
                f"email {label}: deploybot",
                [*deploybot_argv(), "notify", *args, "--transport", "stdout"],
            )
            self.measure(
                f"email {label}: git log",
                ["git", "-C", repo, "log", "-C", "--stat", "-p", "--cc", "-1", commit],
                sitemod.GIT_ENV,
            )
