"""The peers: Jekyll, Hugo and Pelican on the same posts, and the seed-style pipeline.

Jekyll reads the benchmark's Jekyll folder as it is. Hugo and Pelican get a copy of each
post converted to their content layout (:func:`to_hugo`, :func:`to_pelican`): Jekyll's
``{% highlight x %}`` blocks become fenced code (all three highlight them: Rouge, Chroma,
Pygments) and ``{% include %}`` lines, which only Jekyll runs, are dropped. Hugo uses the
minimal layouts in ``theme/hugo``; Pelican its default theme. A peer whose program is
missing is skipped with :attr:`Peer.missing` saying why.

The seed-style pipeline (``git add -A && git commit && git push`` of a peer's output, as the
tvm site's CI does after ``jekyll build``) keeps its git directory apart from the output
folder (``GIT_DIR``/``GIT_WORK_TREE``), so no peer's clean-up of its output meets ``.git``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.bench.site import GIT_ENV, THEME, Site, git

ROOT = Path(__file__).resolve().parents[2]
PELICAN_VENV = ROOT / ".venv-pelican"
# Whole lines: a fence's info string and its code start on lines of their own.
_HIGHLIGHT = re.compile(r"^[ \t]*\{%-?\s*highlight\s+(\w+)[^%]*%\}[ \t]*\n?", re.M)
_END = re.compile(r"^[ \t]*\{%-?\s*endhighlight\s*-?%\}", re.M)
_INCLUDE = re.compile(r"^[ \t]*\{%-?\s*include\s[^%]*%\}[ \t]*\n?", re.M)

HUGO_CONFIG = """baseURL = "https://example.org/"
title = "TVM"
languageCode = "en"
[markup.goldmark.renderer]
unsafe = true
[frontmatter]
date = ["date", ":filename", ":default"]
[permalinks]
posts = "/:year/:month/:day/:slug/"
"""

PELICAN_CONFIG = """SITENAME = "TVM"
SITEURL = ""
PATH = "content"
TIMEZONE = "UTC"
DEFAULT_LANG = "en"
ARTICLE_URL = "{date:%Y}/{date:%m}/{date:%d}/{slug}.html"
ARTICLE_SAVE_AS = ARTICLE_URL
RELATIVE_URLS = True
"""


def split_post(text: str) -> tuple[dict[str, object], str]:
    """Split a Jekyll post into (front matter, body with Liquid blocks made plain Markdown)."""
    _, front, body = text.split("---\n", 2)
    body = _END.sub("```", _HIGHLIGHT.sub(_fence, _INCLUDE.sub("", body)))
    return dict(yaml.safe_load(front)), body


def _fence(match: re.Match[str]) -> str:
    """The opening fence for ``{% highlight LANG %}`` (Rouge's ``Plain Text`` is ``text``)."""
    lang = match[1].lower()
    return "\n```" + ("text" if lang == "plain" else lang) + "\n"


def to_hugo(text: str) -> str:
    """A Jekyll post as a Hugo page: the same YAML front matter, plain Markdown body."""
    front, body = split_post(text)
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + body


def to_pelican(text: str, slug: str) -> str:
    """A Jekyll post as a Pelican Markdown article (``Key: value`` metadata, then the body)."""
    front, body = split_post(text)
    meta = [f"Title: {front['title']}", f"Date: {front['date']}", f"Slug: {slug}"]
    if front.get("author"):
        meta.append(f"Author: {front['author']}")
    return "\n".join(meta) + "\n\n" + body


@dataclass
class Peer:
    """A static site generator: where its source is and how to run a full build into a folder.

    ``missing`` is None when it can run, else one line saying why it is skipped.
    """

    name: str
    program: str | None
    missing: str | None = None

    def version(self) -> str:
        """The peer's name and version as its program prints them (first line)."""
        assert self.program is not None
        arg = "version" if self.name == "hugo" else "--version"
        out = subprocess.run([self.program, arg], capture_output=True, text=True, check=False)
        first = (out.stdout.strip().splitlines() or ["?"])[0]
        if self.name == "hugo":  # "hugo v0.111.3+extended linux/amd64 BuildDate=..."
            first = " ".join(first.split()[:2])
        return first if first.lower().startswith(self.name) else f"{self.name} {first}"

    def source(self, site: Site) -> Path:
        """The folder the peer builds from."""
        return site.folder if self.name == "jekyll" else site.root / self.name

    def build_argv(self, site: Site, out: Path) -> list[str]:
        """The command of a full build of ``site`` into ``out``."""
        assert self.program is not None
        src = self.source(site)
        if self.name == "jekyll":  # no disk cache: a CI build starts from a clean clone
            args = ["build", "-q", "--disable-disk-cache", "-s", str(src), "-d", str(out)]
        elif self.name == "hugo":
            args = ["--quiet", "--cleanDestinationDir", "-s", str(src), "-d", str(out)]
        else:
            args = ["-q", str(src / "content"), "-o", str(out), "-s", str(src / "pelicanconf.py")]
        return [self.program, *args]

    def prepare(self, site: Site) -> None:
        """Write the peer's source from every post of ``site`` (Jekyll reads it as it is)."""
        if self.name == "jekyll":
            return
        src = self.source(site)
        if self.name == "hugo":
            shutil.copytree(THEME / "hugo", src)
            (src / "config.toml").write_text(HUGO_CONFIG, encoding="utf-8")
        else:
            src.mkdir()
            (src / "pelicanconf.py").write_text(PELICAN_CONFIG, encoding="utf-8")
        self.sync(site, site.names.values())

    def sync(self, site: Site, paths: Iterable[str]) -> None:
        """Mirror the site's changed (written or deleted) ``_posts/`` paths into the peer."""
        if self.name == "jekyll":
            return
        folder = self.source(site) / "content" / ("posts" if self.name == "hugo" else "")
        folder.mkdir(parents=True, exist_ok=True)
        for path in paths:
            name = path.removeprefix("_posts/")
            target = folder / name
            source = site.folder / path
            if not source.exists():
                target.unlink(missing_ok=True)
                continue
            text = source.read_text(encoding="utf-8")
            slug = name.rsplit(".", 1)[0][11:]  # Jekyll's slug: the name less its date
            out = to_hugo(text) if self.name == "hugo" else to_pelican(text, slug)
            target.write_text(out, encoding="utf-8")


def find_peers(names: Iterable[str]) -> list[Peer]:
    """The peers named (``jekyll``, ``hugo``, ``pelican``), each found or marked missing."""
    peers = []
    for name in names:
        if name == "pelican":
            candidates = [os.environ.get("BENCH_PELICAN"), str(PELICAN_VENV / "bin" / "pelican")]
            program = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
            program = program or shutil.which("pelican")
            why = "not in .venv-pelican nor on PATH (make bench installs it from PyPI)"
        else:
            program = shutil.which(name)
            why = (
                f"`{name}` not on PATH (Debian package `{name}`; make bench installs hugo as root)"
            )
        peers.append(Peer(name, program, None if program else f"skipped {name}: {why}"))
    return peers


class SeedRepo:
    """A peer's seed-style publish: output folder + separate git dir, pushed to a bare repo."""

    def __init__(self, root: Path, peer: str) -> None:
        self.out = root / f"seed-{peer}-out"
        self.git_dir = root / f"seed-{peer}-work.git"
        self.remote = root / f"seed-{peer}.git"
        self.out.mkdir()
        git(root, "init", "-q", "--bare", "-b", "asf-site", str(self.remote))
        git(root, "init", "-q", "--bare", "-b", "asf-site", str(self.git_dir))
        git(root, "--git-dir", str(self.git_dir), "config", "core.bare", "false")
        git(root, "--git-dir", str(self.git_dir), "remote", "add", "origin", str(self.remote))
        self.builds = 0

    def publish_argv(self) -> tuple[list[str], dict[str, str]]:
        """The ``git add -A && git commit && git push`` command and its environment."""
        self.builds += 1
        stamp = f"{1_800_000_000 + self.builds} +0000"
        env = {
            **GIT_ENV,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.out),
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
        }
        script = "git add -A && git commit -q -m Build && git push -q origin asf-site"
        return ["sh", "-c", script], env


def python_env() -> dict[str, str]:
    """The environment for deploybot's CLI: this interpreter's venv first on PATH."""
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k != "DEPLOYBOT_CONFIG"}
    return {**env, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
