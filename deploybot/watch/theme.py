"""Find and fetch the Jekyll theme a site's ``_config.yml`` names, for the render stage.

Two ways a site names a theme, as GitHub Pages reads them:

- ``theme: NAME``, a gem theme (``lib/jekyll/theme.rb`` finds it among the installed gems).
  deploybot has no gems: ``render.themes`` maps a gem name to where its files are, a git
  URL with ``@REF`` or a local folder (an installed gem: Debian's ``minima`` is
  ``/usr/share/rubygems-integration/all/gems/minima-2.5.1``), over :data:`DEFAULT_THEMES`,
  the themes GitHub Pages supports at the versions it pins (``github-pages`` 232). A name
  neither maps is a ConfigError naming ``render.themes``: never a silent fallback.
- ``remote_theme: OWNER/NAME[@REF]`` (jekyll-remote-theme): ``OWNER/NAME`` on GitHub, or any
  git URL (``https://…``, ``file://…``, a local path), ``@REF`` after the last ``/`` (a
  branch, a tag or a commit id; default the remote's ``HEAD``).

A git theme is kept in a bare mirror under the state folder (``themes/<digest>.git``, one
per URL) and fetched with dulwich (:mod:`deploybot.git.repository`, the source's timeout and
size bounds) only when its ref points at a commit the mirror lacks; the build is pinned to
that commit, which the build record keeps, so a build can be made again from it
(``pinned``). The theme's tree is read from git objects, with the same path rules as the
source (:class:`~deploybot.git.tree.GitTree`); a folder is read by the pipeline
(:mod:`deploybot.pipeline.theme`) as ``deploybot build`` reads one. No theme code runs: a
theme is files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Commit, ObjectID, Tag
from dulwich.repo import Repo

from deploybot.git import repository
from deploybot.git.locations import is_remote_url
from deploybot.git.remote import DEFAULT_MAX_FETCH_BYTES, DEFAULT_TIMEOUT, Remote
from deploybot.git.repository import GitTree
from deploybot.support.errors import ConfigError
from deploybot.support.redact import redact_url

GITHUB = "https://github.com/"
PAGES_THEMES = (
    "architect", "cayman", "dinky", "hacker", "leap-day", "merlot", "midnight", "minimal",
    "modernist", "slate", "tactile", "time-machine",
)  # fmt: skip
"""The ``pages-themes`` themes GitHub Pages supports besides ``primer`` (at 0.2.0)."""
DEFAULT_THEMES: dict[str, str] = {
    "minima": f"{GITHUB}jekyll/minima@v2.5.1",
    "jekyll-theme-primer": f"{GITHUB}pages-themes/primer@v0.6.0",
    **{f"jekyll-theme-{name}": f"{GITHUB}pages-themes/{name}@v0.2.0" for name in PAGES_THEMES},
}
"""Gem name -> git URL ``@`` tag of each theme GitHub Pages supports (``github-pages`` 232's
versions); ``render.themes`` adds to and overrides these."""
THEMES_KEY = "render.themes"
GEM_DIRS = (Path("/usr/share/rubygems-integration/all/gems"), Path("/var/lib/gems/3.1.0/gems"))
"""Where Debian's RubyGems keeps installed gems: a default theme installed there at the
version :data:`DEFAULT_THEMES` pins is read from that folder, as Jekyll reads the installed
gem (the same files as the tag; no fetch)."""
_OWNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
_HEX40 = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class ThemeLocation:
    """Where a theme's files are: a git repository ``url`` at ``ref`` (None: its ``HEAD``), or,
    with ``folder`` True, the local folder ``url``. ``key`` is what named it, for messages
    (``render.themes``, ``_config.yml remote_theme``)."""

    url: str
    ref: str | None
    folder: bool
    key: str


def split_ref(spec: str) -> tuple[str, str | None]:
    """Split ``LOCATION@REF`` at an ``@`` after the last ``/`` (jekyll-remote-theme's rule:
    ``user@host:path`` keeps its ``@``); return ``(location, ref or None)``."""
    head, slash, last = spec.rpartition("/")
    name, at, ref = last.partition("@")
    if not at:
        return spec, None
    return head + slash + name, ref or None


def remote_location(spec: str, base: Path) -> ThemeLocation:
    """Return where the ``remote_theme`` ``spec`` is: ``OWNER/NAME[@REF]`` on GitHub, else
    a git URL or a local path (relative to ``base``, the site's config folder) with
    ``@REF``. Raises ``ConfigError`` for an empty location."""
    location, ref = split_ref(spec.strip())
    key = "_config.yml remote_theme"
    if not location:
        raise ConfigError(f"{key}: {spec!r} names no repository")
    if _OWNER_NAME.fullmatch(location) and not (base / location).exists():
        return ThemeLocation(f"{GITHUB}{location}", ref, False, key)
    if not is_remote_url(location):
        location = str((base / location).resolve())
    return ThemeLocation(location, ref, False, key)


def gem_location(name: str, themes: tuple[str, ...], base: Path) -> ThemeLocation:
    """Return where the gem theme ``name`` is: ``render.themes`` (``NAME=LOCATION`` entries,
    the later winning) over :data:`DEFAULT_THEMES`. A location with a URL scheme or an
    ``@REF`` is a git repository; any other is a folder, relative to ``base``. Raises
    ``ConfigError`` naming ``render.themes`` for a name neither maps."""
    mapping = dict(DEFAULT_THEMES)
    for entry in themes:
        gem, _, where = entry.partition("=")
        mapping[gem.strip().lower()] = where.strip()
    found = mapping.get(name.lower())
    if found is not None and found == DEFAULT_THEMES.get(name.lower()):
        installed = installed_gem(name.lower(), found)
        if installed is not None:
            return ThemeLocation(str(installed), None, True, THEMES_KEY)
    if found is None:
        raise ConfigError(
            f"'{THEMES_KEY}': _config.yml names the theme {name!r}, which it does not map "
            f'(add "{name}=<git URL>@<ref>" or "{name}=<folder>")'
        )
    location, ref = split_ref(found)
    if ref is None and not is_remote_url(location):
        return ThemeLocation(str((base / location).resolve()), None, True, THEMES_KEY)
    if not is_remote_url(location):
        location = str((base / location).resolve())
    return ThemeLocation(location, ref, False, THEMES_KEY)


def installed_gem(name: str, default: str, dirs: tuple[Path, ...] = GEM_DIRS) -> Path | None:
    """Return the folder of the gem ``name`` installed at the version of its ``default``
    location's ``@vX.Y.Z`` tag, in the first of ``dirs`` that has it; ``None`` when none
    does (or the tag is no version)."""
    _, ref = split_ref(default)
    if ref is None or not re.fullmatch(r"v\d+(?:\.\d+)*", ref):
        return None
    for folder in dirs:
        candidate = folder / f"{name}-{ref[1:]}"
        if candidate.is_dir():
            return candidate
    return None


def mirror_of(themes_dir: Path, url: str) -> Path:
    """Return the bare mirror of the theme repository ``url`` under ``themes_dir``."""
    return themes_dir / (hashlib.sha1(url.encode("utf-8")).hexdigest()[:16] + ".git")


def fetch_theme(
    location: ThemeLocation,
    themes_dir: Path,
    *,
    pinned: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES,
) -> tuple[str, GitTree]:
    """Fetch the git theme ``location`` into its mirror under ``themes_dir``; return the commit
    (40 hex) its ref points at, or ``pinned`` when given, and that commit's tree.

    Only the ref advertisement is read when the mirror already holds the commit (``pinned``
    held: nothing at all). Raises ``ConfigError`` (naming ``location.key``) when the remote
    has no such ref or commit, ``FetchError`` when it cannot be reached for now."""
    remote = Remote(
        location.url, location.key, timeout=timeout, max_fetch_bytes=max_fetch_bytes,
        section="source",
    )  # fmt: skip
    repository.check_local_repository(location.url, location.key)
    with repository.bare_repo(mirror_of(themes_dir, location.url)) as repo:
        want = pinned or _remote_commit(remote, location)
        if ObjectID(want.encode("ascii")) not in repo.object_store:
            _fetch_commit(remote, repo, want, location)
        obj = repo[ObjectID(want.encode("ascii"))]
        while isinstance(obj, Tag):  # an annotated tag: the commit it tags
            obj = repo[obj.object[1]]
        if not isinstance(obj, Commit):
            raise ConfigError(f"{location.key}: {location.ref or want} is not a commit")
        commit = obj.id.decode("ascii")
        repository.set_local_refs(repo, {"refs/deploybot/theme": commit})  # kept by a gc
        tree_id = obj.tree.decode("ascii")
    return commit, GitTree(mirror_of(themes_dir, location.url), tree_id)


def _fetch_commit(remote: Remote, repo: Repo, want: str, location: ThemeLocation) -> None:
    """Fetch the commit ``want`` of the theme into its mirror ``repo``: by its id, else (a
    server that serves only what its refs advertise, git's default) with every branch and
    tag. Raises ``ConfigError`` (naming ``location.key``) when none of them holds it: a pin
    no waiting mends; ``FetchError`` when the remote cannot be reached for now."""
    if repository.fetch_commit(remote, repo, want) is None:
        return
    why = repository.fetch_branches_and_tags(remote, repo, want)
    if why is not None:
        shown = redact_url(location.url)
        raise ConfigError(f"{location.key}: {shown} has no commit {want[:12]}: {why}")


def _remote_commit(remote: Remote, location: ThemeLocation) -> str:
    """The id the theme's ref points at in ``remote`` (its ``HEAD`` when none; a 40-hex ref
    is a commit id as it is). Raises ``ConfigError`` when there is no such ref."""
    ref = location.ref
    if ref is not None and _HEX40.fullmatch(ref):
        return ref
    names = ["HEAD"] if ref is None else [f"refs/heads/{ref}", f"refs/tags/{ref}", ref]
    found = repository.remote_refs(remote, names)
    for name in names:
        if name in found:
            return found[name]
    raise ConfigError(
        f"{location.key}: {redact_url(location.url)} has no {ref or 'HEAD'!r} "
        "(a branch, a tag or a commit id)"
    )


MAX_GEMSPEC = 256 * 1024
"""Bytes of a theme's gemspec read at most (real ones are a few KB)."""


def folder_gemspec(folder: Path) -> str:
    """The text of the gemspec of the gem theme in ``folder``: its own ``*.gemspec`` (a
    checkout), else the installed one RubyGems keeps in ``../../specifications/``
    (Debian's ``/usr/share/rubygems-integration/all``); '' when there is none."""
    found = sorted(folder.glob("*.gemspec")) or sorted(
        (folder.parent.parent / "specifications").glob(f"{folder.name}.gemspec")
    )
    for path in found[:1]:
        with path.open("rb") as handle:
            return handle.read(MAX_GEMSPEC).decode("utf-8", "replace")
    return ""


def is_installed_gem(folder: Path) -> bool:
    """Whether the theme ``folder`` is an installed gem's (RubyGems keeps its spec in
    ``../../specifications/NAME-VERSION.gemspec``): then it holds exactly the gem's files,
    where a checkout of the theme's repository also holds files its gem leaves out."""
    return (folder.parent.parent / "specifications" / f"{folder.name}.gemspec").is_file()


def tree_gemspec(tree: GitTree) -> str:
    """The text of the ``*.gemspec`` at the root of the theme's ``tree`` ('' when none)."""
    for path in tree.paths():
        if "/" not in path and path.endswith(".gemspec") and tree.size(path) <= MAX_GEMSPEC:
            return tree.read(path).decode("utf-8", "replace")
    return ""
