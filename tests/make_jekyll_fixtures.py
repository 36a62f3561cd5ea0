"""Regenerate the Jekyll fixtures: build each ``tests/fixtures/jekyll/<case>/site`` with real
Jekyll into ``<case>/expected`` (``python -m tests.make_jekyll_fixtures [CASE ...]``).

Needs ``jekyll`` 4.3 on the PATH with jekyll-paginate (Debian: ``apt-get install jekyll
ruby-jekyll-paginate``); the test suite never runs it, it reads the committed output.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "jekyll"
SAFE = frozenset({"content_model", "reading", "symlinks"})
"""Cases built with ``--safe`` (GitHub Pages' mode): symlinks are copied as their target's
bytes and those pointing outside the source are skipped, which deploybot follows."""
IN_SITE = frozenset({"sass", "sass_options"})
"""Cases built from inside ``site/`` (``-s .``): jekyll-sass-converter names the files in
source maps, line comments and errors relative to the folder Jekyll runs in; deploybot
names them relative to the site folder, as a ``jekyll build`` run there does."""


def build(case: Path) -> None:
    """Build ``case/site`` into a fresh ``case/expected`` with ``jekyll build``."""
    expected = case / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    command = ["jekyll", "build", "--quiet", "--disable-disk-cache", "-s", "site", "-d", "expected"]
    cwd = case
    if case.name in IN_SITE:
        command[-4:] = ["-s", ".", "-d", "../expected"]
        cwd = case / "site"
    if case.name in SAFE:
        command.append("--safe")
    subprocess.run(command, cwd=cwd, check=True)


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
