"""Test helper: a generated site whose every run is its own ``deploybot`` process, for the
kill -9 tests (:mod:`tests.test_pipeline_kill`) and the kill loop (:mod:`tests.killloop`).

The site: ``_config.yml``, a theme folder in the source (a copy of the bundled ``templates/``,
so a layout edit is a source commit that rewrites every page), an about page and ``posts``
posts. :meth:`KillSite.change` makes site-wide changes (site title, layouts, posts added,
deleted and renamed); :meth:`KillSite.audit` checks the mbox against the publish branch.
"""

from __future__ import annotations

import email
import email.policy
import mailbox
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.git import repository
from tests.gitrepo import commit_files, corpus_files, head

ROOT = Path(__file__).resolve().parents[1]
THEME = "_theme"
T0 = 1_700_000_000


def _post(n: int, words: int = 120) -> bytes:
    day = datetime(2021, 1, 1, tzinfo=UTC) + timedelta(days=n)
    body = " ".join(f"word{(n * 7 + i) % 97}" for i in range(words))
    return (
        f"---\nlayout: post\ntitle: Post number {n}\ndate: {day:%Y-%m-%d} 10:00:00 +0000\n---\n\n"
        f"# Heading {n}\n\n{body}\n\n```python\nprint({n})\n```\n"
    ).encode()


def _post_path(n: int) -> str:
    day = datetime(2021, 1, 1, tzinfo=UTC) + timedelta(days=n)
    return f"_posts/{day:%Y-%m-%d}-post-{n}.md"


@dataclass(frozen=True)
class Run:
    """One finished ``deploybot`` process: exit status (negative: killed by that signal)."""

    code: int
    out: str


class KillSite:
    """A source repo, an empty publish repo, a config (mbox transport) and a state dir,
    all under ``root``."""

    def __init__(self, root: Path, posts: int = 30) -> None:
        self.root = root
        self.source = root / "source.git"
        self.publish = root / "publish.git"
        self.mbox = root / "commits.mbox"
        self.state = root / "state"
        self.config = root / "deploybot.toml"
        self.posts = list(range(posts))
        self.next_post = posts
        self.changes = 0
        root.mkdir(parents=True, exist_ok=True)
        Repo.init_bare(str(self.source), mkdir=True).close()
        Repo.init_bare(str(self.publish), mkdir=True).close()
        files = {f"{THEME}/{p}": data for p, data in corpus_files(ROOT / "templates").items()}
        files["_config.yml"] = b"title: Kill Site\nurl: https://kill.example.org\n"
        files["about.md"] = b"---\nlayout: page\ntitle: About\n---\n\nAbout this site.\n"
        files |= {_post_path(n): _post(n) for n in self.posts}
        commit_files(self.source, files, "Import the site", when=T0)
        self.write_config(self.config, "state")

    def write_config(self, path: Path, state: str) -> Path:
        """Write a config for this site with state dir ``state`` (relative to ``root``)."""
        path.write_text(
            '[source]\nurl = "source.git"\n'
            '[publish]\nurl = "publish.git"\nauthor = "Build Bot <bot@example.org>"\n'
            f'[render]\ntheme = "{THEME}"\n'
            '[notify]\ntransport = "mbox"\nmbox = "commits.mbox"\n'
            'to = ["commits@example.org"]\nfrom = "bot@example.org"\n'
            f'[state]\ndir = "{state}"\n'
        )
        return path

    def argv(self, *args: str, kill_at: str | None = None, config: Path | None = None) -> list[str]:
        """The command line of one run (``kill_at``: a :mod:`tests.killpoints` point;
        ``config``: another instance's config, default :attr:`config`)."""
        run = ["run-once", "--config", str(config or self.config), *args]
        if kill_at is None:
            return [sys.executable, "-m", "deploybot", *run]
        return [sys.executable, "-m", "tests.killpoints", kill_at, *run]

    def run(
        self,
        *args: str,
        kill_at: str | None = None,
        config: Path | None = None,
        timeout: float = 120,
    ) -> Run:
        """Run once to the end (or to the kill point); never hangs past ``timeout`` s."""
        done = subprocess.run(
            self.argv(*args, kill_at=kill_at, config=config),
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            timeout=timeout,
        )
        return Run(done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace"))

    def run_killed_after(self, delay: float, *args: str) -> Run:
        """Start a run and SIGKILL it after ``delay`` seconds (if it is still running)."""
        proc = subprocess.Popen(
            self.argv(*args),
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            out, _ = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate()
        return Run(proc.returncode, out.decode("utf-8", "replace"))

    def settle(self, limit: int = 6) -> list[Run]:
        """Run without kills until a run exits 0 saying "up to date" with nothing left in
        the outbox; ``limit`` runs at most. After a 75 the next run adds ``--retry-now``."""
        runs: list[Run] = []
        retry: tuple[str, ...] = ()
        for _ in range(limit):
            runs.append(self.run(*retry))
            if runs[-1].code == 0 and "up to date" in runs[-1].out and not self.waiting():
                break
            retry = ("--retry-now",) if runs[-1].code == 75 else ()
        return runs

    def publish_head(self) -> str | None:
        """The publish branch's head in the publish repository (None before the first)."""
        return head(self.publish, "asf-site")

    def lock_files(self) -> list[Path]:
        """Lock files in the state dir (git's ``*.lock``) and the mbox's dot-lock."""
        dot = self.mbox.with_name(self.mbox.name + ".lock")
        found = sorted(self.state.rglob("*.lock")) if self.state.is_dir() else []
        return found + ([dot] if dot.exists() else [])

    def waiting(self) -> list[Path]:
        """The emails waiting in the outbox."""
        outbox = self.state / "outbox"
        return sorted(outbox.glob("*.eml")) if outbox.is_dir() else []

    def change(self) -> str:
        """Commit the next site-wide change to the source; return its description."""
        kind = self.changes % 5
        self.changes += 1
        when = T0 + 100 * self.changes
        edits: dict[str, bytes | None]
        if kind == 0:
            title = f"Kill Site {self.changes}"
            edits = {"_config.yml": f"title: {title}\nurl: https://kill.example.org\n".encode()}
            what = "site title (every page)"
        elif kind == 1:
            base = (ROOT / "templates" / "base.html").read_bytes()
            footer = f"<p>edition {self.changes}</p>\n  </footer>".encode()
            edits = {f"{THEME}/base.html": base.replace(b"</footer>", footer)}
            what = "base layout (every page)"
        elif kind == 2:
            new = [self.next_post, self.next_post + 1, self.next_post + 2]
            self.next_post += 3
            self.posts += new
            edits = {_post_path(n): _post(n) for n in new}
            what = "three posts added (index, feeds, neighbours)"
        elif kind == 3:
            gone, self.posts = self.posts[:2], self.posts[2:]
            edits = {_post_path(n): None for n in gone}
            what = "two posts deleted"
        else:
            old, new = self.posts[0], self.next_post
            self.next_post += 1
            self.posts = [*self.posts[1:], new]
            post = (ROOT / "templates" / "post.html").read_bytes()
            marked = post.replace(b"<article", f"<!-- {self.changes} -->\n<article".encode())
            edits = {
                _post_path(old): None,
                _post_path(new): _post(old),
                f"{THEME}/post.html": marked,
            }
            what = "post layout edited and a post renamed"
        commit_files(self.source, edits, f"Change {self.changes}: {what}", when=when)
        return what

    def audit(self) -> Audit:
        """Compare the mbox with the publish branch: one email per build commit."""
        builds = _first_parent_chain(self.publish, "asf-site")
        revs: dict[str, int] = {}
        summaries: dict[str, int] = {}
        torn = 0
        for msg in read_mbox(self.mbox):
            rev, newrev = msg["X-Git-Rev"], msg["X-Git-Newrev"]
            if rev is not None:
                revs[str(rev)] = revs.get(str(rev), 0) + 1
            elif newrev is not None:  # a summary email: once per range
                span = f"{msg['X-Git-Oldrev']}..{newrev}"
                summaries[span] = summaries.get(span, 0) + 1
            else:
                torn += 1  # neither a commit email nor a summary: a broken message
        lost = [c for c in builds if c not in revs]
        duplicated = [c for c, n in revs.items() if n > 1]
        duplicated += [span for span, n in summaries.items() if n > 1]
        stray = [c for c in revs if c not in builds]
        return Audit(len(builds), sum(revs.values()), lost, duplicated, stray, torn)


@dataclass(frozen=True)
class Audit:
    """What :meth:`KillSite.audit` found: build commits on the branch, commit emails in the
    mbox, builds with no email, builds with more than one, emails for commits not on the
    branch, and broken messages."""

    builds: int
    emails: int
    lost: list[str]
    duplicated: list[str]
    stray: list[str]
    torn: int

    @property
    def ok(self) -> bool:
        """Exactly one email per build and nothing else."""
        return not (self.lost or self.duplicated or self.stray or self.torn)


def read_mbox(path: Path) -> list[email.message.EmailMessage]:
    """Every message of the mbox at ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    box = mailbox.mbox(str(path), create=False)
    try:
        return [
            email.message_from_bytes(box.get_bytes(key), policy=email.policy.default)  # type: ignore[misc]
            for key in box.iterkeys()
        ]
    finally:
        box.close()


def _first_parent_chain(repo_path: Path, branch: str) -> list[str]:
    tip = head(repo_path, branch)
    chain: list[str] = []
    with Repo(str(repo_path)) as repo:
        while tip is not None:
            chain.append(tip)
            commit = repo[repository.oid(tip)]
            assert isinstance(commit, Commit)
            tip = commit.parents[0].decode("ascii") if commit.parents else None
    return chain[::-1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
