"""The benchmark's site: N posts made from the tvm corpus, a git source repo, one-post changes.

The source is a Jekyll folder (``site/``, a git work tree) that deploybot and Jekyll both
read: the 21 tvm posts (``../shared/corpus/tvm-site``; generated code-heavy posts when it
is missing) repeated under new names and dates, the corpus's ``_config.yml``, and a
minimal Liquid theme shipped in ``theme/jekyll`` (layouts ``default``/``post``, an index of
every post, the empty ``JB/setup`` include the tvm posts ask for). Each change (edit, add,
delete, rename) is committed with the git CLI and pushed to the bare ``source.git`` that
deploybot's ``run-once`` fetches; :mod:`tests.bench.peers` mirrors it into the peers'
sources.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import yaml

from tests.conftest import TVM

THEME = Path(__file__).resolve().parent / "theme"
START = date(1990, 1, 1)
# One post a day up to this many posts; a larger site has several a day, so that its last
# post is not in the future (100,000 days from START would be 2263: held back, not built).
DAYS = 10_000
# A fixed identity and clock: the commits (and so the runs) do not depend on the machine.
GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "Site Author",
    "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "Site Author",
    "GIT_COMMITTER_EMAIL": "author@example.org",
}


@dataclass(frozen=True)
class Post:
    """One post: its front matter fields and its Markdown body (Liquid tags included)."""

    title: str
    body: str
    author: str | None = None


def posts_source() -> str:
    """Which posts the bench's sites repeat, for the report's header: the tvm corpus's, or
    the generated ones when ``../shared`` is missing (a different site: its ratios are not
    comparable with a run on the corpus)."""
    if (TVM / "source" / "_posts").is_dir():
        return "posts: the 21 tvm posts and _config.yml of ../shared, repeated"
    return "posts: 21 generated ones, repeated (../shared is missing)"


def corpus_posts() -> list[Post]:
    """The tvm posts (front matter parsed with PyYAML), or 21 generated ones without the corpus."""
    folder = TVM / "source" / "_posts"
    if not folder.is_dir():
        return [_generated(i) for i in range(21)]
    posts = []
    for path in sorted(folder.iterdir()):
        _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
        meta = yaml.safe_load(front)
        author = meta.get("author")
        posts.append(Post(str(meta["title"]).strip(), body, str(author) if author else None))
    return posts


def _generated(i: int) -> Post:
    text = "\n\n".join(
        f"Paragraph {k} with `code`, *emphasis* and a [link](/x)." for k in range(30)
    )
    code = "```python\nimport tvm\nx = tvm.te.var('x')\ns = tvm.te.create_schedule(x.op)\n```\n"
    return Post(f"Generated post {i}", f"\n{text}\n\n{code}\n{text}\n", "Bench")


@dataclass
class Site:
    """A benchmark site under ``root``: ``site/`` (the Jekyll source), ``source.git``.

    ``names`` maps a post number to its current ``_posts/`` path; ``round`` counts changes,
    so each change writes different bytes.
    """

    root: Path
    posts: list[Post]
    names: dict[int, str] = field(default_factory=dict)
    changes: int = 0
    per_day: int = 1

    def day(self, i: int) -> date:
        """The date of post ``i`` (``per_day`` posts a day from :data:`START`)."""
        return START + timedelta(days=i // self.per_day)

    @property
    def folder(self) -> Path:
        """The Jekyll source folder (a git work tree)."""
        return self.root / "site"

    @property
    def source_repo(self) -> Path:
        """The bare repository deploybot fetches (branch ``main``)."""
        return self.root / "source.git"

    def text(self, i: int, day: date, extra: str = "") -> str:
        """The post file of post ``i`` dated ``day`` (front matter + body + ``extra``)."""
        post = self.posts[i % len(self.posts)]
        lines = ["---", "layout: post", f"title: {json.dumps(f'{post.title} ({i})')}"]
        lines.append(f"date: {day.isoformat()}")
        if post.author:
            lines.append(f"author: {json.dumps(post.author)}")
        return "\n".join([*lines, "---", ""]) + post.body + extra

    def write_post(self, i: int, day: date, suffix: str = "", extra: str = "") -> str:
        """Write post ``i`` at ``day``; return its path relative to the folder."""
        name = f"_posts/{day.isoformat()}-post-{i}{suffix}.md"
        (self.folder / name).write_text(self.text(i, day, extra), encoding="utf-8")
        self.names[i] = name
        return name


def make_site(root: Path, count: int) -> Site:
    """Create ``root``/site (``count`` posts, committed) and ``root``/source.git (pushed)."""
    site = Site(root, corpus_posts(), per_day=-(-count // DAYS))
    folder = site.folder
    shutil.copytree(THEME / "jekyll", folder)
    (folder / "_posts").mkdir()
    config = TVM / "source" / "_config.yml"
    text = config.read_text(encoding="utf-8") if config.is_file() else 'title: "Bench"\n'
    (folder / "_config.yml").write_text(text, encoding="utf-8")
    for i in range(count):
        site.write_post(i, site.day(i))
    git(folder, "init", "-q", "-b", "main")
    git(root, "init", "-q", "--bare", "source.git")
    git(folder, "remote", "add", "origin", str(site.source_repo))
    commit_and_push(site, "Import")
    return site


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``git`` in ``cwd`` with the fixed identity; return stdout. Raises CalledProcessError."""
    out = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**GIT_ENV, **(env or {})},
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return out.stdout


def commit_and_push(site: Site, message: str) -> None:
    """Commit every change in the folder (a fixed, growing clock) and push ``main``."""
    site.changes += 1
    stamp = f"{1_700_000_000 + 3600 * site.changes} +0000"
    git(site.folder, "add", "-A")
    git(
        site.folder,
        "commit",
        "-q",
        "-m",
        message,
        env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
    )
    git(site.folder, "push", "-q", "origin", "main")


def edit_post(site: Site, i: int) -> list[str]:
    """Add a line to post ``i``'s body; return the changed paths."""
    path = site.folder / site.names[i]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\nOne more line, change {site.changes}.\n")
    return [site.names[i]]


def add_post(site: Site, i: int) -> list[str]:
    """Add post ``i`` (a number past the site's posts), dated on or after every other post."""
    return [site.write_post(i, site.day(i))]


def delete_post(site: Site, i: int) -> list[str]:
    """Delete post ``i``; return the deleted path."""
    name = site.names.pop(i)
    (site.folder / name).unlink()
    return [name]


def rename_count(size: int) -> int:
    """How many posts the rename commit moves: 50, or a quarter of a smaller site."""
    return max(1, min(50, size // 4))


def rename_posts(site: Site, numbers: list[int]) -> list[str]:
    """Move each post to a new name and a date before the site's first post (its page
    changes a little; in the past, so no post waits for its date, which would end the no-op
    stamp's shortcut at that date).

    The output then holds renames with a small edit each (new path, new date line), which is
    what makes git's and deploybot's copy detection score similarity. Returns every path
    deleted or written.
    """
    changed = []
    for i in numbers:
        changed += delete_post(site, i)
        changed.append(site.write_post(i, START - timedelta(days=i + 1), suffix="-moved"))
    return changed
