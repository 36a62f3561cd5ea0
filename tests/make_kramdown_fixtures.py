"""Regenerate the kramdown fixtures' expected output with real Jekyll (not run by make test).

    python -m tests.make_kramdown_fixtures [CASE ...]

The site is ``tests/fixtures/jekyll/kramdown/``: one page ``<case>.md`` per construct, each
with ``layout: null`` so the output is kramdown's HTML alone (and, for ``{% toc %}``, the
jekyll-toc plugin's). This builds it with the ``jekyll`` on ``PATH`` (the fixtures were made
with Jekyll 4.3.1, kramdown 2.4.0, kramdown-parser-gfm 1.1.0, jekyll-toc 0.18.0) and copies
each page's output to ``expected/<case>.html``; with CASE names, only those are copied.
The tests (tests/test_render_kramdown_jekyll.py) read only the committed files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SITE = Path(__file__).resolve().parent / "fixtures" / "jekyll" / "kramdown"
EXPECTED = SITE / "expected"


def cases() -> list[str]:
    """Return the case names (the site's ``*.md`` page names, sorted)."""
    return sorted(p.stem for p in SITE.glob("*.md") if p.name != "README.md")


def main(argv: list[str]) -> int:
    """Build the site with Jekyll and copy the wanted pages; return the exit status."""
    jekyll = shutil.which("jekyll")
    if jekyll is None:
        print("jekyll is not installed (apt-get install jekyll)", file=sys.stderr)
        return 1
    version = subprocess.run([jekyll, "--version"], capture_output=True, text=True, check=True)
    print(version.stdout.strip())
    wanted = argv or cases()
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [jekyll, "build", "--quiet", "--source", str(SITE), "--destination", out],
            check=True,
        )
        EXPECTED.mkdir(exist_ok=True)
        for case in wanted:
            shutil.copyfile(Path(out) / f"{case}.html", EXPECTED / f"{case}.html")
    print(f"{len(wanted)} expected pages written to {EXPECTED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
