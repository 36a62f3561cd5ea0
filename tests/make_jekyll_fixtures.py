"""Regenerate the Jekyll fixtures: build each ``tests/fixtures/jekyll/<case>/site`` with real
Jekyll into ``<case>/expected`` (``python -m tests.make_jekyll_fixtures [CASE ...]``).

Needs ``jekyll`` 4.3 on the PATH with jekyll-paginate (Debian: ``apt-get install jekyll
ruby-jekyll-paginate``); the test suite never runs it, it reads the committed output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "jekyll"
SAFE = frozenset({"content_model", "reading", "symlinks"})
"""Cases built with ``--safe`` (GitHub Pages' mode): symlinks are copied as their target's
bytes and those pointing outside the source are skipped, which deploybot follows."""
IN_SITE = frozenset({"sass", "sass_collection", "sass_options"})
"""Cases built from inside ``site/`` (``-s .``): jekyll-sass-converter names the files in
source maps, line comments and errors relative to the folder Jekyll runs in; deploybot
names them relative to the site folder, as a ``jekyll build`` run there does."""
THEMES = Path(__file__).resolve().parent / "fixtures" / "themes"
GEM_THEMES = {"theme": "jekyll-theme-fixture", "theme_config": "jekyll-theme-configured"}
"""Cases whose site names a gem theme of ``tests/fixtures/themes``: Jekyll finds it as an
installed gem (no Gemfile) through a ``GEM_PATH`` folder made for the build
(:func:`gem_path`), holding the theme as ``gems/NAME-VERSION`` and its gemspec."""

FROM_SOURCE = {"plugins_jemoji": ("jemoji", "gemoji")}
"""Cases whose plugins Debian does not package: Jekyll loads them from the ``lib`` folders
of their sources (``ruby -I``), found under the folder ``FIXTURE_GEM_SOURCES`` names, one
folder per gem (``jemoji`` 0.13.0 from github.com/jekyll/jemoji, ``gemoji`` 4.1.0 from
github.com/github/gemoji, with its ``db/emoji.json``)."""
SOURCES_ENV = "FIXTURE_GEM_SOURCES"

LOGGED = frozenset({"liquid_tolerance"})
"""Cases whose Liquid warnings are kept too, in ``<case>/jekyll-warnings.txt``: Jekyll's
``Liquid Warning:`` lines, colours removed and the source folder's absolute path cut to
``site/`` (the tests compare deploybot's warnings with them)."""
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def gem_path(theme: str, folder: Path) -> dict[str, str]:
    """Install the fixture theme ``theme`` as a gem under ``folder`` (:func:`gem_env`, at its
    gemspec's version); return the environment that finds it."""
    source = THEMES / theme
    spec = (source / f"{theme}.gemspec").read_text()
    version = next(line.split('"')[1] for line in spec.splitlines() if "spec.version" in line)
    return gem_env(source, theme, version, folder)


def gem_env(source: Path, name: str, version: str, folder: Path) -> dict[str, str]:
    """Install the theme folder ``source`` as the gem ``name`` ``version`` under ``folder`` (a
    copy of its files and a gemspec, as ``gem install`` lays them out); return the
    environment whose ``GEM_PATH`` puts it first, before the system's gems (a higher
    version than an installed gem of that name wins: ``Gem::Specification.find_by_name``)."""
    shutil.copytree(source, folder / "gems" / f"{name}-{version}")
    (folder / "specifications").mkdir(exist_ok=True)
    (folder / "specifications" / f"{name}-{version}.gemspec").write_text(
        "Gem::Specification.new do |spec|\n"
        f'  spec.name = "{name}"\n  spec.version = "{version}"\n'
        '  spec.summary = "a theme for deploybot\'s tests"\n  spec.authors = ["tests"]\nend\n'
    )
    system = subprocess.run(
        ["ruby", "-e", "puts Gem.path"], check=True, capture_output=True, text=True
    ).stdout.split()
    return {**os.environ, "GEM_PATH": os.pathsep.join([str(folder), *system])}


def build(case: Path) -> None:
    """Build ``case/site`` into a fresh ``case/expected`` with ``jekyll build``."""
    expected = case / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    command = ["jekyll", "build", "--disable-disk-cache", "-s", "site", "-d", "expected"]
    cwd = case
    if case.name in IN_SITE:
        command[-4:] = ["-s", ".", "-d", "../expected"]
        cwd = case / "site"
    if case.name not in LOGGED:
        command.append("--quiet")
    if case.name in SAFE:
        command.append("--safe")
    if case.name in FROM_SOURCE:
        command = [*ruby_with_sources(FROM_SOURCE[case.name]), *command[1:]]
    with tempfile.TemporaryDirectory() as gems:
        theme = GEM_THEMES.get(case.name)
        env = None if theme is None else gem_path(theme, Path(gems))
        done = subprocess.run(command, cwd=cwd, check=True, env=env, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    if case.name in LOGGED:
        site = f"{(case / 'site').resolve()}/"
        lines = [
            _COLOUR.sub("", line).strip().replace(site, "")
            for line in (done.stdout + done.stderr).splitlines()
            if "Liquid Warning:" in line
        ]
        (case / "jekyll-warnings.txt").write_text("".join(f"{line}\n" for line in lines))


def ruby_with_sources(gems: tuple[str, ...]) -> list[str]:
    """Return the command that runs ``jekyll`` with the ``lib`` folders of ``gems``' sources
    on Ruby's load path (:data:`FROM_SOURCE`). Raises ``SystemExit`` without them."""
    root = os.environ.get(SOURCES_ENV)
    if not root:
        raise SystemExit(f"{SOURCES_ENV} must name a folder holding the sources of {gems}")
    libs = [arg for gem in gems for arg in ("-I", str(Path(root) / gem / "lib"))]
    jekyll = shutil.which("jekyll")
    if jekyll is None:
        raise SystemExit("jekyll is not on the PATH")
    return ["ruby", *libs, jekyll]


def main(names: list[str]) -> int:
    """Build the named cases (all when none); return the exit status."""
    cases = [FIXTURES / n for n in names] or sorted(
        p for p in FIXTURES.iterdir() if (p / "site").is_dir()
    )
    for case in cases:
        build(case)
        print(f"{case.name}: {sum(1 for p in (case / 'expected').rglob('*') if p.is_file())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
