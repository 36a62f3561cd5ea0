"""The bench report's targets (tests/bench/report.py): issue 21's, each at the size it names.

Every row is checked on synthetic results (medians of real :class:`Sample` values): met,
not met, and "not measured" when the run lacks the size, the peer or the measurement.
"""

from __future__ import annotations

import pytest

from tests.bench.__main__ import parse_args
from tests.bench.daemon import COLD, WARM
from tests.bench.measure import Results, Sample
from tests.bench.report import Target, markdown, medians_table, targets

PEER = "≤ 0.1 × fastest peer full build + git push"
INCREMENTAL = "peak memory (tree PSS), incremental run-once (no-op, edit, add, delete)"


def results_of(*rows: tuple[int, str, float] | tuple[int, str, float, float]) -> Results:
    """Results of ``(size, name, seconds[, tree PSS MiB])`` samples (ru_maxrss: half the PSS,
    so a target that read it instead would be off)."""
    results = Results()
    for size, name, seconds, *pss in rows:
        mb = pss[0] if pss else 50.0
        results.add(size, name, Sample(seconds, mb / 2, tree_pss_mb=mb))
    return results


def by_text(results: Results) -> dict[str, Target]:
    return {t.text: t for t in targets(results)}


def test_the_report_lists_every_target_of_issue_21_not_measured_without_samples() -> None:
    rows = targets(Results())
    assert [t.text for t in rows] == [
        "full build, 1,000 posts: ≤ 0.7 × Jekyll's",
        "full build, 10,000 posts: ≤ 0.5 × Hugo's",
        "theme-and-Sass site, 1,000 posts: deploybot build ≤ 1.0 × Jekyll's",
        f"one-post edit, end to end, 1,000 posts: {PEER}",
        f"one-post edit, end to end, 10,000 posts: {PEER}",
        "one-post edit at 100,000 ≤ 1.5 × at 1,000",
        "no-op run-once, 1,000 posts: ≤ 2 × a bare git fetch",
        "no-op run-once, 10,000 posts: ≤ 2 × a bare git fetch",
        "no-op run-once, 100,000 posts: ≤ 2 × a bare git fetch",
        "email of the first build, 1,000 posts: ≤ 1.5 × git log",
        "email of a one-post edit's build commit, 1,000 posts: ≤ 1.5 × git log",
        "email of a 50-rename commit, 1,000 posts: ≤ 1.5 × git log",
        "email of the first build, 10,000 posts: ≤ 1.5 × git log",
        "email of a one-post edit's build commit, 10,000 posts: ≤ 1.5 × git log",
        "email of a 50-rename commit, 10,000 posts: ≤ 1.5 × git log",
        "email of the first build, 100,000 posts: ≤ 1.5 × git log",
        "email of a one-post edit's build commit, 100,000 posts: ≤ 1.5 × git log",
        "email of a 50-rename commit, 100,000 posts: ≤ 1.5 × git log",
        "push (202) to live branch, warm builder (small site): < 0.5 s",
        f"{INCREMENTAL}, 10,000 posts: ≤ 150 MB",
        f"{INCREMENTAL}, 100,000 posts: ≤ 300 MB",
        "peak memory (tree PSS), deploybot build, 10,000 posts: ≤ 500 MB",
        "peak memory (tree PSS), deploybot build, warm highlight cache, 10,000 posts: ≤ 500 MB",
        "peak memory (tree PSS), run-once first publish, 10,000 posts: ≤ 500 MB",
        "peak memory (tree PSS), pipeline full build, 10,000 posts: ≤ 500 MB",
    ]
    for target in rows:
        cells = target.row().split(" | ")
        assert target.met() is None and cells[-3] == "-" and cells[-1] == "not measured |"


def test_full_builds_against_jekyll_at_1000_hugo_at_10000_and_the_themed_site() -> None:
    results = results_of(
        (1000, "deploybot build", 1.0),
        (1000, "jekyll build", 2.0),  # 0.5x: met
        (1000, "hugo build", 0.1),  # Hugo at 1,000 is no target
        (10000, "deploybot build", 30.0),
        (10000, "hugo build", 50.0),  # 0.6x: not met
        (10000, "jekyll build", 300.0),  # Jekyll at 10,000 is no target
        (1000, "themed deploybot build", 3.0),
        (1000, "themed jekyll build", 3.0),  # 1.0x: met (at least as fast)
    )
    rows = by_text(results)
    assert (
        rows["full build, 1,000 posts: ≤ 0.7 × Jekyll's"]
        .row()
        .endswith("| 0.50x | ≤ 0.70x | met |")
    )
    assert (
        rows["full build, 10,000 posts: ≤ 0.5 × Hugo's"]
        .row()
        .endswith("| 0.60x | ≤ 0.50x | **not met** |")
    )
    themed = rows["theme-and-Sass site, 1,000 posts: deploybot build ≤ 1.0 × Jekyll's"]
    assert themed.value == pytest.approx(1.0) and themed.met() is True
    results.add(1000, "themed deploybot build", Sample(3.4, 50))  # median 3.2: 1.07x
    results.add(1000, "themed deploybot build", Sample(3.2, 50))
    themed = by_text(results)["theme-and-Sass site, 1,000 posts: deploybot build ≤ 1.0 × Jekyll's"]
    assert themed.row().endswith("| 1.07x | ≤ 1.00x | **not met** |")


def test_a_target_is_checked_at_the_size_it_names_not_the_runs_smallest() -> None:
    """A 100- and 10,000-post run has no 1,000-post full build: not measured, not the 100's."""
    rows = by_text(
        results_of(
            (100, "deploybot build", 0.1),
            (100, "jekyll build", 1.0),
            (10000, "deploybot build", 30.0),
            (10000, "jekyll build", 300.0),
            (100, "run-once no-op", 0.01),
            (100, "git fetch (no-op floor)", 0.01),
        )
    )
    assert rows["full build, 1,000 posts: ≤ 0.7 × Jekyll's"].met() is None
    assert rows["full build, 10,000 posts: ≤ 0.5 × Hugo's"].met() is None  # no Hugo
    assert rows["no-op run-once, 1,000 posts: ≤ 2 × a bare git fetch"].met() is None


def test_the_one_post_edit_against_the_fastest_peer_and_at_100000() -> None:
    results = results_of(
        (1000, "run-once edit", 0.5),
        (1000, "run-once edit", 0.7),  # median 0.6
        (1000, "jekyll seed pipeline", 4.0),
        (1000, "hugo seed pipeline", 2.0),  # the fastest: 0.3x, not met
        (10000, "run-once edit", 1.0),
        (10000, "jekyll seed pipeline", 267.0),
        (10000, "hugo seed pipeline", 75.0),  # 0.013x: met
        (100000, "run-once edit", 0.84),  # 1.4x the 1,000's: met
    )
    rows = by_text(results)
    small = rows[f"one-post edit, end to end, 1,000 posts: {PEER} (Hugo)"]
    assert small.value == pytest.approx(0.3) and small.row().endswith("| **not met** |")
    large = rows[f"one-post edit, end to end, 10,000 posts: {PEER} (Hugo)"]
    assert large.row().endswith("| 0.013x | ≤ 0.10x | met |")
    assert (
        rows["one-post edit at 100,000 ≤ 1.5 × at 1,000"]
        .row()
        .endswith("| 1.40x | ≤ 1.50x | met |")
    )
    results.add(100000, "run-once edit", Sample(1.2, 50))
    results.add(100000, "run-once edit", Sample(1.0, 50))  # median 1.0: 1.67x
    scale = by_text(results)["one-post edit at 100,000 ≤ 1.5 × at 1,000"]
    assert scale.row().endswith("| 1.67x | ≤ 1.50x | **not met** |")
    without = by_text(results_of((1000, "run-once edit", 0.5), (100000, "run-once edit", 0.6)))
    assert without[f"one-post edit, end to end, 1,000 posts: {PEER}"].met() is None  # no peer


def test_the_no_op_against_a_bare_git_fetch_at_each_size() -> None:
    rows = by_text(
        results_of(
            (1000, "run-once no-op", 0.030),
            (1000, "git fetch (no-op floor)", 0.015),  # 2.0x: met (≤)
            (10000, "run-once no-op", 0.25),
            (10000, "git fetch (no-op floor)", 0.010),  # 25x: not met
        )
    )
    assert (
        rows["no-op run-once, 1,000 posts: ≤ 2 × a bare git fetch"]
        .row()
        .endswith("| 2.00x | ≤ 2.00x | met |")
    )
    assert (
        rows["no-op run-once, 10,000 posts: ≤ 2 × a bare git fetch"]
        .row()
        .endswith("| 25.00x | ≤ 2.00x | **not met** |")
    )
    assert rows["no-op run-once, 100,000 posts: ≤ 2 × a bare git fetch"].met() is None


def test_each_email_against_git_log_of_the_same_commit() -> None:
    rows = by_text(
        results_of(
            (1000, "email first build: deploybot", 0.260),
            (1000, "email first build: git log", 0.087),  # 2.99x: not met
            (1000, "email edit commit: deploybot", 0.004),
            (1000, "email edit commit: git log", 0.003),  # 1.33x: met
            (10000, "email renames commit: deploybot", 0.060),
            (10000, "email renames commit: git log", 0.050),  # 1.2x: met
            (10000, "email edit commit: deploybot", 0.171),  # no git log beside it
        )
    )
    first = rows["email of the first build, 1,000 posts: ≤ 1.5 × git log"]
    assert first.row().endswith("| 2.99x | ≤ 1.50x | **not met** |")
    edit = rows["email of a one-post edit's build commit, 1,000 posts: ≤ 1.5 × git log"]
    assert edit.row().endswith("| 1.33x | ≤ 1.50x | met |")
    renames = rows["email of a 50-rename commit, 10,000 posts: ≤ 1.5 × git log"]
    assert renames.row().endswith("| 1.20x | ≤ 1.50x | met |")
    for text in (
        "email of a 50-rename commit, 1,000 posts: ≤ 1.5 × git log",
        "email of a one-post edit's build commit, 10,000 posts: ≤ 1.5 × git log",
        "email of the first build, 100,000 posts: ≤ 1.5 × git log",
    ):
        assert rows[text].met() is None, text


def push_results(size: int, warm: list[float], cold: list[float]) -> Results:
    """Results holding the daemon's pushes as :mod:`tests.bench.daemon` records them."""
    results = Results()
    for name, times in ((WARM, warm), (COLD, cold)):
        for seconds in times:
            results.add(size, name, Sample(seconds, None))
    return results


def push_target(results: Results) -> Target:
    """The push-to-live row of the report on ``results``."""
    return next(t for t in targets(results) if t.text.startswith("push (202) to live branch"))


def test_push_to_live_with_the_warm_builder_under_half_a_second() -> None:
    met = push_target(push_results(1000, [0.19, 0.23, 0.21], [0.45, 0.50, 0.44]))
    assert met.row() == (
        "| push (202) to live branch, warm builder (small site; cold start 0.450 s): < 0.5 s "
        "| 0.210 s | < 0.500 s | met |"
    )
    # strictly under: half a second is not met; recorded under another size it is found too
    exactly = push_target(push_results(10000, [0.5], [1.4]))
    assert exactly.value == 0.5 and exactly.row().endswith("| 0.500 s | < 0.500 s | **not met** |")
    assert "cold start 1.400 s" in exactly.text


def test_a_push_sample_has_no_memory_and_the_table_says_so() -> None:
    results = push_results(1000, [0.2, 0.3], [0.5, 0.6])
    warm = results.median(1000, WARM)
    assert warm is not None and warm.seconds == pytest.approx(0.25) and warm.peak_mb is None
    rows = list(medians_table(results))
    assert f"| {WARM} | 0.250 s | - | - | - | - | - |" in rows


def test_peak_memory_of_incremental_runs_and_of_full_builds() -> None:
    results = results_of(
        (1000, "deploybot build", 3.0, 140),
        (10000, "run-once no-op", 0.2, 25),
        (10000, "run-once edit", 1.0, 104),
        (10000, "run-once delete", 2.0, 160),  # the largest: 160 MB, not met
        (10000, "deploybot build", 26.0, 362),
        (10000, "run-once first publish", 64.0, 520),  # over 500 MB
        (100000, "run-once no-op", 0.3, 40),
        (100000, "run-once edit", 2.0, 280),  # 280 MB: met
        (100000, "deploybot build", 300.0, 3000),  # past 10,000: no target
    )
    rows = by_text(results)
    assert (
        rows[f"{INCREMENTAL}, 10,000 posts: ≤ 150 MB"]
        .row()
        .endswith("| 160 MB | ≤ 150 MB | **not met** |")
    )
    assert (
        rows[f"{INCREMENTAL}, 100,000 posts: ≤ 300 MB"]
        .row()
        .endswith("| 280 MB | ≤ 300 MB | met |")
    )
    assert (
        rows["peak memory (tree PSS), deploybot build, 10,000 posts: ≤ 500 MB"]
        .row()
        .endswith("| 362 MB | ≤ 500 MB | met |")
    )
    first = rows["peak memory (tree PSS), run-once first publish, 10,000 posts: ≤ 500 MB"]
    assert first.met() is False and first.value == 520
    assert rows["peak memory (tree PSS), pipeline full build, 10,000 posts: ≤ 500 MB"].met() is None
    # the quick form's 1,000 posts: its full builds are checked there, the 10,000s are not
    quick = by_text(results_of((1000, "deploybot build", 3.0, 140)))
    assert quick["peak memory (tree PSS), deploybot build, 1,000 posts: ≤ 500 MB"].met() is True
    assert quick[f"{INCREMENTAL}, 10,000 posts: ≤ 150 MB"].met() is None


def test_the_report_has_issue_21s_heading_and_the_peer_ratios() -> None:
    results = results_of(
        (1000, "deploybot build", 2.0),
        (1000, "jekyll build", 4.0),
        (1000, "hugo build", 3.0),
    )
    text = markdown(results, "header", None)
    assert "| target (issue 21) | measured | needs | |\n|---|---:|---:|---|\n" in text
    assert "| full build, 1,000 posts: ≤ 0.7 × Jekyll's | 0.50x | ≤ 0.70x | met |" in text
    assert "| 1,000 | full build | 2.000 s | 4.000 s | 0.50x | 3.000 s | 0.67x |" in text


def test_peers_at_names_the_peers_of_one_size() -> None:
    args = parse_args(["--peers", "jekyll,hugo", "--peers-at", "10000=hugo"])
    assert args.peers_at == {10000: ["hugo"]}
    assert parse_args(["--peers-at", "100000=none"]).peers_at == {100000: []}
    with pytest.raises(SystemExit):
        parse_args(["--peers-at", "hugo"])
