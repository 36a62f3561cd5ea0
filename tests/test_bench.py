"""``make bench``'s harness (tests/bench/) runs end to end on a tiny site; no speed is asserted.

The whole harness runs once at 12 posts, one round, with the peers that are installed (the
others must be skipped with their line) and two pushes to each daemon, and must write the
JSON, the plot when matplotlib is there, and the report into a copy of docs/performance.md
between its markers (the plot linked beside it). The report's targets are checked on
synthetic results in tests/test_bench_report.py.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.daemon import COLD, WARM
from tests.bench.measure import Results, Sample, import_profile, run
from tests.bench.peers import find_peers, to_hugo, to_pelican
from tests.bench.report import BEGIN, END, peer_table, update_doc
from tests.bench.site import posts_source

ROOT = Path(__file__).resolve().parents[1]
DEPLOYBOT = [
    "deploybot build",
    "deploybot build, warm highlight cache",
    "run-once first publish",
    "run-once no-op",
    "git fetch (no-op floor)",
    "run-once edit",
    "run-once add",
    "run-once delete",
    "pipeline full build",
    "run-once renames",
    "email first build: deploybot",
    "email first build: git log",
    "email edit commit: deploybot",
    "email edit commit: git log",
    "email renames commit: deploybot",
    "email renames commit: git log",
]

POST = """---
layout: post
title: "A: post"
date: 2001-02-03
author: "Ann"
---
{% include JB/setup %}
Text.

{% highlight Plain Text %}
$ make
{% endhighlight %}

{% highlight python %}
x = 1
{% endhighlight %}
"""


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """Run ``python -m tests.bench`` at 12 posts; return (folder, stdout, stderr)."""
    tmp = tmp_path_factory.mktemp("bench")
    doc = tmp / "docs" / "performance.md"
    doc.parent.mkdir()
    doc.write_text(f"# x\n\nbefore\n\n{BEGIN}\nold\n{END}\n\nafter\n", encoding="utf-8")
    args = ["--sizes", "12", "--repeat", "1", "--pushes", "2", "--keep", str(tmp / "sites")]
    args += ["--peers-at", "12=jekyll,hugo"]  # Pelican, if installed, is left out
    args += ["--json", str(tmp / "bench.json"), "--plot", str(tmp / "docs" / "bench.png")]
    args += ["--doc", str(doc), "--update-doc"]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp, proc.stdout, proc.stderr


def test_every_measurement_is_taken_once(bench_run: tuple[Path, str, str]) -> None:
    tmp, _, _ = bench_run
    data = json.loads((tmp / "bench.json").read_text(encoding="utf-8"))
    table = data["sizes"]["12"]
    for name in DEPLOYBOT:
        assert len(table[name]["seconds"]) == 1, name
        assert table[name]["seconds"][0] > 0 and table[name]["median_peak_mb"] > 0, name
        assert table[name]["cpu_seconds"][0] >= 0, name
        if "git " in name:  # git's own: not Python, not profiled
            assert table[name]["modules"] == [None], name
        else:  # deploybot's start-up, even the no-op's (os, fcntl)
            assert table[name]["modules"][0] > 20 and table[name]["import_ms"][0] > 0, name
    for name in ("deploybot build", "run-once first publish", "pipeline full build"):
        assert table[name]["median_tree_pss_mb"] > 10, name  # deploybot's interpreter at least
    assert data["run"]["repeat"] == 1 and data["run"]["sizes"] == [12]
    assert data["run"]["pushes"] == 2
    assert data["run"]["posts"] == posts_source()  # a run on other posts is another site
    for name in (WARM, COLD):  # the daemon's pushes: wall time only, under the run's size
        assert len(table[name]["seconds"]) == 2 and 0 < table[name]["median_seconds"] < 60
        assert table[name]["peak_mb"] == [None, None] and table[name]["modules"] == [None] * 2
    for peer in find_peers(["jekyll", "hugo", "pelican"]):
        if peer.missing:
            assert peer.missing in data["skipped"]
        elif peer.name == "pelican":
            assert "pelican: not run at 12 posts (--peers-at)" in data["skipped"]
            assert "pelican build" not in table
        else:
            for part in ("build", "git add/commit/push", "seed pipeline", "seed first publish"):
                assert len(table[f"{peer.name} {part}"]["seconds"]) == 1


def test_the_report_goes_between_the_doc_markers(bench_run: tuple[Path, str, str]) -> None:
    tmp, out, _ = bench_run
    doc = (tmp / "docs" / "performance.md").read_text(encoding="utf-8")
    assert doc.startswith("# x\n\nbefore\n\n" + BEGIN + "\nMeasured ")
    assert f"; {posts_source()}; medians of 1 alternating rounds" in doc
    assert doc.endswith(END + "\n\nafter\n") and "\nold\n" not in doc
    body = doc.split(BEGIN)[1].split(END)[0]
    assert body.strip() == out.strip()
    assert "| target (issue 21) | measured | needs | |" in body
    # a target is checked at the size it names, never at 12 posts
    assert "| full build, 1,000 posts: ≤ 0.7 × Jekyll's | - | ≤ 0.70x | not measured |" in body
    assert "| no-op run-once, 1,000 posts: ≤ 2 × a bare git fetch | - |" in body
    assert "| email of a one-post edit's build commit, 1,000 posts: ≤ 1.5 × git log | - |" in body
    assert "| peak memory (tree PSS), deploybot build, 12 posts: ≤ 500 MB | " in body
    push = next(line for line in body.splitlines() if "| push (202) to live branch" in line)
    assert push.startswith("| push (202) to live branch, warm builder (small site; cold start ")
    assert push.endswith(("| met |", "| **not met** |"))  # measured, whichever it is here
    assert "| 12 | one-post edit, end to end |" in body
    if importlib.util.find_spec("matplotlib"):
        assert (tmp / "docs" / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "![time against site size](bench.png)" in body  # beside the doc


def test_the_rename_commit_holds_edited_renames(bench_run: tuple[Path, str, str]) -> None:
    """The 3 moved posts are renames git finds by similarity (not exact), so scoring runs."""
    tmp, _, _ = bench_run
    repo = tmp / "sites" / "12" / "run0" / "publish.git"
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "-M", "--name-status", "--format=", "asf-site"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    renames = [line for line in log if line.startswith("R")]
    assert len(renames) == 3 and all(not line.startswith("R100") for line in renames)


def test_the_warm_build_keeps_its_highlight_cache_and_the_cold_has_none(
    bench_run: tuple[Path, str, str],
) -> None:
    tmp, _, _ = bench_run
    root = tmp / "sites" / "12"
    cache = root / "warm-state" / "cache" / "highlight.sqlite"
    db = sqlite3.connect(cache)
    try:
        assert db.execute("SELECT count(*) FROM blocks").fetchone()[0] > 0
    finally:
        db.close()
    assert not (root / ".deploybot").exists()  # the cold build ran without a config
    cold, warm = (_files(root / name) for name in ("deploybot-out", "deploybot-warm-out"))
    assert cold == warm and len(cold) > 12


def _files(folder: Path) -> dict[str, bytes]:
    """The HTML pages under ``folder`` by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.html")}


def test_peers_get_the_posts_in_their_own_formats() -> None:
    hugo = to_hugo(POST)
    assert hugo.startswith("---\nlayout: post\ntitle: 'A: post'\ndate: 2001-02-03\nauthor: Ann\n")
    assert "{%" not in hugo and "\n```text\n$ make\n```\n" in hugo and "```python\nx = 1" in hugo
    pelican = to_pelican(POST, "a-post")
    assert pelican.startswith("Title: A: post\nDate: 2001-02-03\nSlug: a-post\nAuthor: Ann\n\n")
    assert "{%" not in pelican and "```python\nx = 1\n```\n" in pelican


def test_update_doc_needs_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no <!-- bench:begin -->"):
        update_doc(doc, "x\n")


def test_a_measured_command_reports_its_own_peak_not_the_harness() -> None:
    ballast = bytearray(300 * 2**20)  # the harness grows; a small child must stay small
    ballast[:: 1 << 12] = b"x" * len(ballast[:: 1 << 12])
    sample = run(["git", "--version"])
    assert 0 < sample.peak_mb < 100
    big = run(
        [sys.executable, "-c", "b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"]
    )
    assert big.peak_mb > 200


WORKER = "import time; b = bytearray(80 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1)"


def test_the_tree_figure_sums_the_workers_where_ru_maxrss_sees_one() -> None:
    """Two workers of 80 MB each: ru_maxrss reports the largest process, the tree PSS both."""
    spawn = (
        "import subprocess, sys; "
        f"ps = [subprocess.Popen([sys.executable, '-c', {WORKER!r}]) for _ in range(2)]; "
        "[p.wait() for p in ps]"
    )
    sample = run([sys.executable, "-c", spawn])
    assert 80 < sample.peak_mb < 130
    assert sample.tree_pss_mb is not None and 160 < sample.tree_pss_mb < 260
    assert sample.tree_rss_mb is not None and sample.tree_rss_mb >= sample.tree_pss_mb


@pytest.mark.parametrize("peers", [(), ("jekyll",), ("jekyll", "hugo", "pelican")])
def test_the_peer_table_has_as_many_cells_as_its_header(peers: tuple[str, ...]) -> None:
    """Without peers too (``--peers none``): a header wider than its separator line is no
    Markdown table."""
    results = Results()
    results.add(100, "deploybot build", Sample(1.0, 50))
    for peer in peers:
        results.add(100, f"{peer} build", Sample(2.0, 50))
    lines = list(peer_table(results))
    assert [line.count("|") for line in lines] == [3 + 2 * len(peers) + 1] * len(lines)
    assert lines[2].startswith("| 100 | full build | 1.000 s |")


def test_import_profile_sums_the_self_times_of_distinct_modules() -> None:
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |   _io\n"
        "import time:      1500 |       1620 | deploybot.cli\n"
        "warning: something else\n"
        "import time:        30 |         30 |   _io\n"  # a forked child's, the same module
    )
    assert import_profile(stderr) == (1.65, 2)
    assert import_profile("no profile\n") is None


def test_a_profiled_python_command_reports_its_imports() -> None:
    plain = run([sys.executable, "-c", "import json"])
    profiled = run([sys.executable, "-c", "import json"], imports=True)
    assert plain.modules is None and plain.import_ms is None
    assert profiled.modules is not None and profiled.modules >= 3  # json, json.decoder, ...
    assert profiled.import_ms is not None and profiled.import_ms > 0
