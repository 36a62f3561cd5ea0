"""Measure deploybot against real Jekyll on real sites, unmodified (issue 19's "Done when").

``python -m tests.realsites SITE_DIR [SITE_DIR ...] [--json OUT] [--keep DIR [--reuse-jekyll]]
[--timeout S]``

Each site folder is built twice into a scratch folder: by ``jekyll build -s SITE -d
TMP/jekyll`` (Jekyll 4.3 on the PATH, with whatever plugins are installed; the disk cache off
so nothing is written into SITE, and ``JEKYLL_NO_BUNDLER_REQUIRE=1`` so a site's Gemfile does
not make Bundler refuse to start over gems the build never loads), and by ``deploybot build
SITE TMP/ours`` (this checkout's deploybot, run as ``python -m deploybot``). It prints a
Markdown table, one row a site, then what each site's builds said; ``--json`` also writes
every number as JSON. A tool, not a test: the suite never runs it (``tests/test_realsites.py``
tests its comparison functions).

What is compared (Jekyll's output is the reference): the share of Jekyll's files found at the
same path in ours (HTML pages separately), the files only ours wrote, the body text of the
HTML pages both wrote (the text of ``<body>``, tags, scripts and styles left out, whitespace
collapsed; :func:`similarity`), every ``.css`` Jekyll wrote (present and non-empty in ours),
the feeds (``feed.xml``/``atom.xml``: present, same number of entries) and the head tags of
``index.html`` (``<title>``, ``rel=canonical``, ``og:title``, ``application/ld+json``). A site
Jekyll itself cannot build here (most often: a gem not installed, which the row names) is out
of the target: its row says so and nothing is compared.

``--keep DIR`` builds into ``DIR/SITE/{jekyll,ours}`` and keeps them; with ``--reuse-jekyll``
a later run rebuilds only ours, reusing the Jekyll build kept there (Jekyll's output does not
change when deploybot does).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

TIMEOUT_S = 1800.0
"""The longest either build may run by default, in seconds (``--timeout``)."""
HTML_SUFFIXES = (".html", ".htm")
FEED_NAMES = ("feed.xml", "atom.xml")
HEAD_TAGS = ("title", "canonical", "og:title", "ld+json")
OURS_MANIFEST = ".deploybot-build"
"""The file ``deploybot build`` writes into OUT listing its outputs; not an output."""


@dataclass(frozen=True)
class BuildRun:
    """One build of a site.

    ``status`` is the exit status (``-1``: killed at the time limit); ``first_error``
    the first line saying why it failed (None when it did not); ``missing_gem`` the gem
    Jekyll said is not installed (None otherwise); ``warnings`` the warning lines.
    """

    status: int
    seconds: float
    first_error: str | None
    warnings: tuple[str, ...]
    missing_gem: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Jekyll's output folder against ours (see :func:`compare`).

    Counts are of files (``/``-separated paths relative to the output folder); ``similarity``
    holds the body-text ratio (0..1) of every HTML page both wrote; ``css_missing`` the
    ``.css`` files Jekyll wrote that ours lacks or wrote empty; ``feeds`` maps each feed
    Jekyll wrote to ``"ok"`` or what differs; ``head`` maps each head tag Jekyll's
    ``index.html`` has to ``"ok"``, ``"missing"`` or ``"differs"``.
    """

    jekyll_files: int
    same_path: int
    jekyll_html: int
    same_path_html: int
    extra: tuple[str, ...]
    missing: tuple[str, ...]
    similarity: dict[str, float]
    css_total: int
    css_missing: tuple[str, ...]
    feeds: dict[str, str]
    head: dict[str, str]

    def worst(self, n: int = 3) -> list[tuple[str, float]]:
        """The ``n`` pages of lowest similarity, lowest first (ties by path)."""
        return sorted(self.similarity.items(), key=lambda kv: (kv[1], kv[0]))[:n]


@dataclass(frozen=True)
class SiteReport:
    """Everything measured for one site."""

    name: str
    jekyll: BuildRun
    ours: BuildRun
    comparison: Comparison | None
    ours_warnings_by_feature: dict[str, int] = field(default_factory=dict)


# -- reading output folders ---------------------------------------------------------------


def output_files(folder: Path) -> set[str]:
    """The files under ``folder`` as ``/``-separated relative paths (our manifest left out;
    empty when ``folder`` is missing)."""
    if not folder.is_dir():
        return set()
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    found.discard(OURS_MANIFEST)
    return found


def is_html(path: str) -> bool:
    """Whether ``path`` is an HTML page (by its suffix, as Jekyll names them)."""
    return path.lower().endswith(HTML_SUFFIXES)


_BLOCK_NAMES = (
    "address article aside blockquote br dd details div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol option p pre section summary "
    "table tbody td tfoot th thead tr ul"
)
_BLOCKS = frozenset(_BLOCK_NAMES.split())
"""The elements whose edges separate words, as a browser shows them; other tags (``<span>``
of highlighted code, ``<a>``, ``<em>``) join the text on either side."""


class _TextParser(HTMLParser):
    """Collects the text of ``<body>`` (all of it when there is no ``<body>``), leaving out
    what is inside ``<script>``, ``<style>`` and ``<template>``; a space at each edge of a
    block element (:data:`_BLOCKS`)."""

    _HIDDEN = frozenset({"script", "style", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.all: list[str] = []
        self.body: list[str] = []
        self.in_body = False
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.in_body = True
        elif tag in self._HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.handle_data(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.handle_data(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN and self.hidden:
            self.hidden -= 1
        elif tag in _BLOCKS:
            self.handle_data(" ")

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        self.all.append(data)
        if self.in_body:
            self.body.append(data)


def body_text(html: str) -> str:
    """The text of ``html``'s ``<body>`` (the whole document when it has none): tags,
    scripts and styles left out (a block element's edges count as a space, an inline
    element's as nothing), character references decoded, whitespace runs made one space,
    stripped."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.body if parser.in_body else parser.all).split())


def similarity(a: str, b: str) -> float:
    """difflib's ratio (0..1) of two texts compared word by word (much faster than by
    character on long pages, and a changed word counts once); 1.0 for equal texts."""
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a.split(" "), b.split(" "), autojunk=False).ratio()


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


# -- what to compare ----------------------------------------------------------------------

_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_CANONICAL_RE = re.compile(r"<link\b[^>]*\brel=[\"']?canonical\b[^>]*>", re.I)
_OG_TITLE_RE = re.compile(r"<meta\b[^>]*\bproperty=[\"']?og:title\b[^>]*>", re.I)
_LD_JSON_RE = re.compile(
    r"<script\b[^>]*\btype=[\"']?application/ld\+json[^>]*>(.*?)</script>", re.I | re.S
)
_ENTRY_RE = re.compile(r"<(entry|item)[\s>]")


def head_tags(html: str) -> dict[str, str]:
    """The head tags of :data:`HEAD_TAGS` that ``html`` has, each mapped to its text (the
    title, the whole ``<link>``/``<meta>`` tag, the JSON-LD), whitespace collapsed."""
    found: dict[str, str] = {}
    for name, pattern in (
        ("title", _TITLE_RE),
        ("canonical", _CANONICAL_RE),
        ("og:title", _OG_TITLE_RE),
        ("ld+json", _LD_JSON_RE),
    ):
        match = pattern.search(html)
        if match:
            text = match.group(1) if match.groups() else match.group(0)
            found[name] = " ".join(text.split())
    return found


def compare_head(jekyll_html: str, ours_html: str | None) -> dict[str, str]:
    """For each head tag Jekyll's page has: ``"ok"`` (same text in ours), ``"differs"`` or
    ``"missing"``."""
    theirs = head_tags(jekyll_html)
    mine = head_tags(ours_html) if ours_html is not None else {}
    return {
        name: "missing" if name not in mine else ("ok" if mine[name] == text else "differs")
        for name, text in theirs.items()
    }


def compare_feed(jekyll_xml: str, ours_xml: str | None) -> str:
    """``"ok"`` when ours is there, non-empty, with as many ``<entry>``/``<item>`` as
    Jekyll's; else what differs."""
    if not ours_xml:
        return "missing" if ours_xml is None else "empty"
    want, got = len(_ENTRY_RE.findall(jekyll_xml)), len(_ENTRY_RE.findall(ours_xml))
    return "ok" if want == got else f"{got} entries, Jekyll {want}"


def compare(jekyll_dir: Path, ours_dir: Path) -> Comparison:
    """Compare the output folder ``ours_dir`` with Jekyll's ``jekyll_dir`` (see
    :class:`Comparison`). Reads files only; a missing folder counts as empty."""
    theirs, mine = output_files(jekyll_dir), output_files(ours_dir)
    both = theirs & mine
    html_theirs = {p for p in theirs if is_html(p)}
    scores = {
        p: similarity(body_text(_read_text(jekyll_dir / p)), body_text(_read_text(ours_dir / p)))
        for p in sorted(html_theirs & both)
    }
    css = sorted(p for p in theirs if p.endswith(".css"))
    css_missing = tuple(p for p in css if p not in mine or (ours_dir / p).stat().st_size == 0)
    feeds = {
        p: compare_feed(_read_text(jekyll_dir / p), _read_text(ours_dir / p) if p in mine else None)
        for p in sorted(theirs)
        if p.rsplit("/", 1)[-1] in FEED_NAMES
    }
    head: dict[str, str] = {}
    if "index.html" in theirs:
        ours_index = _read_text(ours_dir / "index.html") if "index.html" in mine else None
        head = compare_head(_read_text(jekyll_dir / "index.html"), ours_index)
    return Comparison(
        jekyll_files=len(theirs),
        same_path=len(both),
        jekyll_html=len(html_theirs),
        same_path_html=len(html_theirs & both),
        extra=tuple(sorted(mine - theirs)),
        missing=tuple(sorted(theirs - mine)),
        similarity=scores,
        css_total=len(css),
        css_missing=css_missing,
        feeds=feeds,
        head=head,
    )


# -- running the builds -------------------------------------------------------------------

_MISSING_GEM_RES = (
    re.compile(r"you don't have (\S+) or one of its dependencies installed"),
    re.compile(r"[Tt]he (\S+) theme could not be found"),
    re.compile(r"cannot load such file -- (\S+)"),
    re.compile(r"Could not find gem '([^' ]+)"),
)
_JEKYLL_ERROR_RE = re.compile(r"(Error|Exception|error)(:|\))")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_JEKYLL_WARNING_RE = re.compile(r"^\s*[\w ]*(Warning|Deprecation):", re.I)
_OURS_WARNING_RE = re.compile(r"^warning: (?P<where>[^:]*(?::\d+)?): (?P<message>.*)$")


def _run(
    command: Sequence[str], env: dict[str, str] | None, timeout: float
) -> tuple[int, float, str]:
    """Run ``command``; return its exit status (-1 when killed after ``timeout`` seconds),
    the seconds it took and what it wrote on stdout and stderr."""
    start = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, errors="replace", env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        text = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        return -1, time.monotonic() - start, text + f"\nError: timed out after {timeout:.0f} s"
    return done.returncode, time.monotonic() - start, done.stdout + done.stderr


def jekyll_run(status: int, seconds: float, output: str) -> BuildRun:
    """Read what ``jekyll build`` said: its warning lines, the first error line and the gem
    it said is missing (see :class:`BuildRun`)."""
    output = _ANSI_RE.sub("", output)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    warnings = tuple(line for line in lines if _JEKYLL_WARNING_RE.match(line))
    gem = next((m.group(1) for r in _MISSING_GEM_RES for m in [r.search(output)] if m), None)
    error = None
    if status != 0:  # the message, not the backtrace's "from ..." lines or the banner
        said = [line for line in lines if not line.startswith(("from ", "-", "Jekyll "))]
        error = next((line for line in said if _JEKYLL_ERROR_RE.search(line)), None)
        error = error or (said[-1] if said else f"exit status {status}")
    return BuildRun(status, round(seconds, 2), error, warnings, gem)


def ours_run(status: int, seconds: float, output: str) -> BuildRun:
    """Read what ``deploybot build`` said: its ``warning:`` lines and its first error line
    (``deploybot: error: ...``, or a traceback's last line)."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    warnings = tuple(line for line in lines if _OURS_WARNING_RE.match(line))
    error = None
    if status != 0:
        error = next((line for line in lines if line.startswith("deploybot: error:")), None)
        error = error or (lines[-1] if lines else f"exit status {status}")
    return BuildRun(status, round(seconds, 2), error, warnings)


_QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_NUMBER_RE = re.compile(r"\d+")


def warning_feature(line: str) -> str:
    """The feature a ``warning: PATH:LINE: MESSAGE`` line is about, to group warnings: the
    message with numbers made ``N``, and quoted names kept only in the first 60 characters
    (``unknown tag 'seo'`` stays apart from ``unknown tag 'feed_meta'``, a quoted path of a
    long message does not split a group)."""
    match = _OURS_WARNING_RE.match(line)
    message = match.group("message") if match else line
    head, tail = message[:60], _QUOTED_RE.sub("…", message[60:])
    return _NUMBER_RE.sub("N", head + tail)[:120]


def by_feature(lines: Iterable[str]) -> dict[str, int]:
    """Warning lines counted by :func:`warning_feature`, most frequent first."""
    return dict(Counter(warning_feature(line) for line in lines).most_common())


JEKYLL_RUN = "jekyll-run.json"
"""Beside a kept ``jekyll`` folder: what that Jekyll build said (a :class:`BuildRun`)."""


def build_with_jekyll(
    site: Path, scratch: Path, *, reuse: bool = False, timeout: float = TIMEOUT_S
) -> BuildRun:
    """Build ``site`` with Jekyll into ``scratch/jekyll`` and record the run in
    ``scratch/``:data:`JEKYLL_RUN`; with ``reuse``, an earlier recorded run (and its
    output) is returned instead when there is one that was not killed at its time limit."""
    record, out = scratch / JEKYLL_RUN, scratch / "jekyll"
    if reuse and record.is_file():
        fields = json.loads(record.read_text("utf-8"))
        if fields["status"] != -1:
            return BuildRun(**{**fields, "warnings": tuple(fields["warnings"])})
    shutil.rmtree(out, ignore_errors=True)
    record.unlink(missing_ok=True)
    env = {**os.environ, "JEKYLL_NO_BUNDLER_REQUIRE": "1"}
    command = ["jekyll", "build", "--disable-disk-cache", "-s", str(site), "-d", str(out)]
    run = jekyll_run(*_run(command, env, timeout))
    scratch.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(asdict(run), indent=1) + "\n", "utf-8")
    return run


def measure(
    site: Path, scratch: Path, *, reuse_jekyll: bool = False, timeout: float = TIMEOUT_S
) -> SiteReport:
    """Build ``site`` with Jekyll into ``scratch/jekyll`` (see :func:`build_with_jekyll`)
    and with deploybot into ``scratch/ours``, and compare (no comparison when Jekyll
    failed)."""
    jekyll = build_with_jekyll(site, scratch, reuse=reuse_jekyll, timeout=timeout)
    ours_dir = scratch / "ours"
    shutil.rmtree(ours_dir, ignore_errors=True)
    ours = ours_run(
        *_run([sys.executable, "-m", "deploybot", "build", str(site), str(ours_dir)], None, timeout)
    )
    comparison = compare(scratch / "jekyll", ours_dir) if jekyll.status == 0 else None
    return SiteReport(site.name, jekyll, ours, comparison, by_feature(ours.warnings))


# -- the report ---------------------------------------------------------------------------


def _share(part: int, whole: int) -> str:
    return "-" if whole == 0 else f"{part}/{whole} ({100 * part / whole:.0f}%)"


def _yn(run: BuildRun) -> str:
    return "y" if run.status == 0 else f"n ({run.status})"


TABLE_HEADER = (
    "| site | Jekyll | ours | files at same path | HTML at same path | extra "
    "| body text median / min | CSS | feed | head tags |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def table_row(report: SiteReport) -> str:
    """One Markdown table row for ``report`` (see :data:`TABLE_HEADER`)."""
    j, o, c = report.jekyll, report.ours, report.comparison
    jekyll = f"{_yn(j)}, {j.seconds:.1f} s, {len(j.warnings)} w"
    ours = f"{_yn(o)}, {o.seconds:.1f} s, {len(o.warnings)} w"
    if c is None:
        why = (
            f"out of target: gem {j.missing_gem} not installed"
            if j.missing_gem
            else "out of target: Jekyll fails (see below)"
        )
        return f"| {report.name} | {jekyll} | {ours} | {why} | | | | | | |"
    scores = list(c.similarity.values())
    sims = f"{statistics.median(scores):.3f} / {min(scores):.3f}" if scores else "-"
    css = "-" if not c.css_total else f"{c.css_total - len(c.css_missing)}/{c.css_total}"
    feed = ", ".join(f"{p}: {v}" for p, v in c.feeds.items()) or "-"
    head = ", ".join(f"{k} {v}" for k, v in c.head.items()) or "-"
    return (
        f"| {report.name} | {jekyll} | {ours} | {_share(c.same_path, c.jekyll_files)} "
        f"| {_share(c.same_path_html, c.jekyll_html)} | {len(c.extra)} | {sims} | {css} "
        f"| {feed} | {head} |"
    )


def details(report: SiteReport, top: int = 8) -> str:
    """The Markdown section under the table for one site: first error lines, the worst
    pages, a few missing and extra files, our warnings by feature."""
    out = [f"### {report.name}", ""]
    for label, run in (("Jekyll", report.jekyll), ("ours", report.ours)):
        if run.first_error:
            out.append(f"- {label} failed: `{run.first_error[:300]}`")
    if report.jekyll.missing_gem:
        out.append(f"- Jekyll: gem `{report.jekyll.missing_gem}` is not installed")
    c = report.comparison
    if c is not None:
        worst = ", ".join(f"`{p}` {s:.3f}" for p, s in c.worst())
        out.append(f"- worst pages: {worst or '-'}")
        for label, paths in (("missing", c.missing), ("extra", c.extra)):
            if paths:
                shown = ", ".join(f"`{p}`" for p in paths[:6])
                out.append(f"- {label} ({len(paths)}): {shown}{' …' if len(paths) > 6 else ''}")
        if c.css_missing:
            out.append(f"- CSS missing or empty: {', '.join(c.css_missing[:6])}")
    if report.jekyll.warnings:
        out.append(f"- Jekyll warnings ({len(report.jekyll.warnings)}), first: ")
        out.extend(f"  - `{w[:200]}`" for w in report.jekyll.warnings[:3])
    if report.ours_warnings_by_feature:
        out.append(f"- our warnings by feature ({len(report.ours.warnings)}):")
        items = list(report.ours_warnings_by_feature.items())
        out.extend(f"  - {n} × `{feature}`" for feature, n in items[:top])
        if len(items) > top:
            rest = sum(n for _, n in items[top:])
            out.append(f"  - {rest} more in {len(items) - top} other groups")
    return "\n".join(out) + "\n"


def markdown(reports: Sequence[SiteReport]) -> str:
    """The whole report: the table, then each site's details."""
    rows = "\n".join(table_row(r) for r in reports)
    return f"{TABLE_HEADER}\n{rows}\n\n" + "\n".join(details(r) for r in reports)


def as_json(reports: Sequence[SiteReport]) -> str:
    """Every report as JSON (the dataclasses' fields, plus each site's worst pages)."""
    items = []
    for report in reports:
        item = asdict(report)
        if report.comparison is not None:
            item["comparison"]["worst"] = report.comparison.worst()
        items.append(item)
    return json.dumps(items, indent=1, sort_keys=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Build and compare each site folder given; print the Markdown report; 0 always
    (a failed build is a measurement, not an error of the tool)."""
    parser = argparse.ArgumentParser(prog="python -m tests.realsites", description=__doc__)
    parser.add_argument("sites", nargs="+", type=Path, help="site folders (read only)")
    parser.add_argument("--json", type=Path, default=None, help="also write JSON here")
    parser.add_argument("--keep", type=Path, default=None, help="build into DIR/SITE, kept")
    parser.add_argument(
        "--reuse-jekyll",
        action="store_true",
        help="with --keep: use the Jekyll build an earlier run kept there (only ours is built)",
    )
    parser.add_argument(
        "--timeout", type=float, default=TIMEOUT_S, help="seconds each build may take"
    )
    args = parser.parse_args(argv)
    reports = []
    with tempfile.TemporaryDirectory(prefix="realsites-") as tmp:
        for site in args.sites:
            scratch = (args.keep or Path(tmp)) / site.resolve().name
            print(f"building {site} ...", file=sys.stderr, flush=True)
            reuse = args.reuse_jekyll and args.keep is not None
            reports.append(
                measure(site.resolve(), scratch, reuse_jekyll=reuse, timeout=args.timeout)
            )
    print(markdown(reports))
    if args.json is not None:
        args.json.write_text(as_json(reports) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
