"""The Markdown report of a benchmark run: targets of issue 21, ratios to each peer, medians.

All ratios are of medians from one run (deploybot's time / the other's time), so a ratio
below 1 means deploybot is faster. Each target of issue 21 names 1,000, 10,000 or 100,000
posts and is checked at that size only: a run without that size (``make bench-quick`` has
1,000 only), that peer or that measurement says "not measured". Issue 12's full-build
memory target (≤ 500 MB) is checked at the run's largest size up to 10,000. Memory is the
peak of the PSS summed over the process tree (:func:`tests.bench.measure.tree_memory`),
which counts a parallel build's workers; ``ru_maxrss`` (the largest single process) is
shown beside it in the table of every measurement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.bench.daemon import COLD, WARM
from tests.bench.measure import BUDGET, INTERVAL, Results, Sample, mb
from tests.bench.site import rename_count

PEERS = ("jekyll", "hugo", "pelican")
LABEL = {"jekyll": "Jekyll", "hugo": "Hugo", "pelican": "Pelican"}
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
MEMORY_NOTE = (
    "Memory is the peak of the PSS (proportional set size) summed over the measured command "
    "and every process it started (deploybot's render workers, git's subprocesses, a peer's "
    f"whole process tree), sampled from `/proc/<pid>/smaps_rollup` every {INTERVAL * 1000:.0f} "
    f"ms (less often for a large tree: the sampling takes at most {BUDGET:.0%} of a core): "
    "pages the workers share with their parent count once. `ru_maxrss`, the largest "
    "single process, is beside it below and in the JSON; `-`: the command ended before the "
    "first sample."
)


IMPORTS_NOTE = (
    "Each deploybot run's start-up is in the table of every measurement: the modules its "
    "Python processes imported and the sum of their self times (`python -X importtime`, "
    "`PYTHONPROFILEIMPORTTIME=1` on the measured run itself)."
)


@dataclass(frozen=True)
class Target:
    """One target: what it says, the measured value (a ratio or MB) and the limit it needs."""

    text: str
    value: float | None
    limit: float
    unit: str = "x"  # "x" (a ratio), "MB" (MiB) or "s" (seconds)
    strict: bool = False  # "faster than": the value must be below the limit, not equal

    def met(self) -> bool | None:
        """Whether the target is met; None when not measured (a peer or a size missing)."""
        if self.value is None:
            return None
        return self.value < self.limit if self.strict else self.value <= self.limit

    def row(self) -> str:
        """The target's Markdown table row."""
        met = self.met()
        verdict = "not measured" if met is None else "met" if met else "**not met**"
        value = "-" if self.value is None else _num(self.value, self.unit)
        bound = ("< " if self.strict else "≤ ") + _num(self.limit, self.unit)
        return f"| {self.text} | {value} | {bound} | {verdict} |"


def _num(value: float, unit: str) -> str:
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit == "s":
        return f"{value:.3f} s"
    return f"{value:.3f}x" if value < 0.1 else f"{value:.2f}x"


SMALL, LARGE, HUGE = 1000, 10_000, 100_000
"""The site sizes issue 21's targets name: each target is checked at the size it names."""

FULL_BUILDS = (
    "deploybot build",
    "deploybot build, warm highlight cache",
    "run-once first publish",
    "pipeline full build",
)
"""The measurements the full-build memory target (≤ 500 MB) is checked on."""

INCREMENTAL = ("no-op", "edit", "add", "delete")
"""The ``run-once`` measurements the incremental memory targets take the largest of."""

THEMED = ("themed deploybot build", "themed jekyll build")
"""The theme-and-Sass site's full builds (deploybot's, Jekyll's), recorded at 1,000 posts."""

EMAILS = ("first build", "edit commit", "renames commit")
"""The build commits whose email is timed (``email <label>: deploybot`` and ``: git log``)."""


def _memory(sample: Sample | None) -> float | None:
    """The report's memory figure of a median: the process tree's peak PSS, MiB."""
    return None if sample is None else sample.tree_pss_mb


def _ratio(a: Sample | None, b: Sample | None) -> float | None:
    return None if a is None or b is None or b.seconds <= 0 else a.seconds / b.seconds


def _vs(results: Results, size: int, ours: str, theirs: str) -> float | None:
    """The ratio of two measurements' median times at ``size``; None if either is missing."""
    return _ratio(results.median(size, ours), results.median(size, theirs))


def fastest_seed(results: Results, size: int) -> tuple[str, Sample] | None:
    """The peer whose seed-style pipeline (full build + git push of a one-post edit) is fastest."""
    found = [(p, results.median(size, f"{p} seed pipeline")) for p in PEERS]
    runs = [(p, s) for p, s in found if s is not None]
    return min(runs, key=lambda ps: ps[1].seconds) if runs else None


def targets(results: Results) -> list[Target]:
    """The targets of issue 21, and issue 12's full-build memory, each with its measured value
    from ``results`` at the size it names (1,000, 10,000 or 100,000 posts): None, "not
    measured", when the run lacks that size, that peer or that measurement."""
    return [
        *full_build_targets(results),
        *edit_targets(results),
        *(
            Target(
                f"no-op run-once, {size:,} posts: ≤ 2 × a bare git fetch",
                _vs(results, size, "run-once no-op", "git fetch (no-op floor)"),
                2.0,
            )
            for size in (SMALL, LARGE, HUGE)
        ),
        *email_targets(results),
        push_to_live_target(results),
        *memory_targets(results),
    ]


def full_build_targets(results: Results) -> list[Target]:
    """Full builds against Jekyll at 1,000 posts and Hugo at 10,000, and the theme-and-Sass
    site's against Jekyll's at 1,000 (issue 21, item 4)."""
    return [
        Target(
            f"full build, {SMALL:,} posts: ≤ 0.7 × Jekyll's",
            _vs(results, SMALL, "deploybot build", "jekyll build"),
            0.7,
        ),
        Target(
            f"full build, {LARGE:,} posts: ≤ 0.5 × Hugo's",
            _vs(results, LARGE, "deploybot build", "hugo build"),
            0.5,
        ),
        Target(
            f"theme-and-Sass site, {SMALL:,} posts: deploybot build ≤ 1.0 × Jekyll's",
            _vs(results, SMALL, *THEMED),
            1.0,
        ),
    ]


def edit_targets(results: Results) -> list[Target]:
    """The one-post edit end to end against the fastest peer's full build + git push at
    1,000 and 10,000 posts, and at 100,000 against itself at 1,000 (issue 21: why, item 5)."""
    rows = []
    for size in (SMALL, LARGE):
        seed = fastest_seed(results, size)
        name = f" ({LABEL[seed[0]]})" if seed else ""
        rows.append(
            Target(
                f"one-post edit, end to end, {size:,} posts: ≤ 0.1 × fastest peer "
                f"full build + git push{name}",
                _ratio(results.median(size, "run-once edit"), seed[1] if seed else None),
                0.1,
            )
        )
    edit = "run-once edit"
    rows.append(
        Target(
            f"one-post edit at {HUGE:,} ≤ 1.5 × at {SMALL:,}",
            _ratio(results.median(HUGE, edit), results.median(SMALL, edit)),
            1.5,
        )
    )
    return rows


def email_targets(results: Results) -> list[Target]:
    """Each timed email (:data:`EMAILS`) against ``git log -C --stat -p --cc -1`` of the same
    commit, at each size (issue 21, item 3: "at every size")."""
    rows = []
    for size in (SMALL, LARGE, HUGE):
        texts = {
            "first build": "the first build",
            "edit commit": "a one-post edit's build commit",
            "renames commit": f"a {rename_count(size)}-rename commit",
        }
        for label in EMAILS:
            rows.append(
                Target(
                    f"email of {texts[label]}, {size:,} posts: ≤ 1.5 × git log",
                    _vs(results, size, f"email {label}: deploybot", f"email {label}: git log"),
                    1.5,
                )
            )
    return rows


def push_to_live_target(results: Results) -> Target:
    """The daemon's push (202) to the live branch with its warm builder (issue 21, item 2),
    in seconds, its cold start named beside it; from whichever size holds it
    (:mod:`tests.bench.daemon`)."""
    found = [(results.median(s, WARM), results.median(s, COLD)) for s in sorted(results.samples)]
    warm, cold = next(((w, c) for w, c in found if w is not None), (None, None))
    beside = "" if cold is None else f"; cold start {_num(cold.seconds, 's')}"
    return Target(
        f"push (202) to live branch, warm builder (small site{beside}): < 0.5 s",
        None if warm is None else warm.seconds,
        0.5,
        "s",
        strict=True,
    )


def memory_targets(results: Results) -> list[Target]:
    """Peak memory (tree PSS) of the incremental runs at 10,000 and 100,000 posts (issue 21,
    item 5), and of each full build (:data:`FULL_BUILDS`, issue 12) at the run's largest size
    up to 10,000 posts."""
    rows = []
    for size, limit in ((LARGE, 150), (HUGE, 300)):
        peaks = [_memory(results.median(size, f"run-once {k}")) for k in INCREMENTAL]
        known = [peak for peak in peaks if peak is not None]
        rows.append(
            Target(
                f"peak memory (tree PSS), incremental run-once ({', '.join(INCREMENTAL)}), "
                f"{size:,} posts: ≤ {limit} MB",
                max(known) if known else None,
                limit,
                "MB",
            )
        )
    size = max((s for s in results.samples if s <= LARGE), default=LARGE)
    for name in FULL_BUILDS:
        rows.append(
            Target(
                f"peak memory (tree PSS), {name}, {size:,} posts: ≤ 500 MB",
                _memory(results.median(size, name)),
                500,
                "MB",
            )
        )
    return rows


def peer_table(results: Results) -> Iterator[str]:
    """Rows of deploybot's time against each peer's (time and ratio) for each size."""
    peers = [p for p in PEERS if any(f"{p} build" in t for t in results.samples.values())]
    yield (
        "| "
        + " | ".join(["posts", "measurement", "deploybot"] + [f"{LABEL[p]} | ratio" for p in peers])
        + " |"
    )
    yield "|---:|---|---:|" + "---:|---:|" * len(peers)
    pairs = [
        ("full build", "deploybot build", "build"),
        (
            "first publish (build, commit, push; deploybot: + email)",
            "run-once first publish",
            "seed first publish",
        ),
        ("one-post edit, end to end", "run-once edit", "seed pipeline"),
    ]
    for size in sorted(results.samples):
        for what, ours, theirs in pairs:
            mine = results.median(size, ours)
            if mine is None:
                continue
            cells = [f"{size:,}", what, f"{mine.seconds:.3f} s"]
            for peer in peers:
                other = results.median(size, f"{peer} {theirs}")
                ratio = _ratio(mine, other)
                cells += [
                    "-" if other is None else f"{other.seconds:.3f} s",
                    "-" if ratio is None else _num(ratio, "x"),
                ]
            yield "| " + " | ".join(cells) + " |"


def medians_table(results: Results) -> Iterator[str]:
    """Rows of every measurement's medians: wall time, CPU time, peak memory (tree PSS),
    ru_maxrss, and deploybot's imports (modules, and the sum of their self times: ``python -X
    importtime``), six columns per size."""
    sizes = sorted(results.samples)
    names = list(dict.fromkeys(n for s in sizes for n in results.samples[s]))
    columns = "{:,} posts | CPU | memory (tree PSS) | ru_maxrss | modules | imports"
    yield "| measurement | " + " | ".join(columns.format(s) for s in sizes) + " |"
    yield "|---|" + "---:|---:|---:|---:|---:|---:|" * len(sizes)
    for name in names:
        cells = [name]
        for size in sizes:
            sample = results.median(size, name)
            runs = len(results.samples[size].get(name, []))
            if sample is None:
                cells += ["-"] * 6
                continue
            cells += [
                f"{sample.seconds:.3f} s" + ("" if runs > 1 else " (1 run)"),
                "-" if sample.cpu_seconds is None else f"{sample.cpu_seconds:.2f} s",
                mb(sample.tree_pss_mb),
                mb(sample.peak_mb),
                "-" if sample.modules is None else f"{sample.modules:.0f}",
                "-" if sample.import_ms is None else f"{sample.import_ms:.0f} ms",
            ]
        yield "| " + " | ".join(cells) + " |"


def markdown(results: Results, header: str, plot: str | None) -> str:
    """The whole report: a header line, the targets, the peer ratios, every median."""
    lines = [header, "", "| target (issue 21) | measured | needs | |", "|---|---:|---:|---|"]
    lines += [t.row() for t in targets(results)]
    lines += ["", MEMORY_NOTE, "", *peer_table(results), ""]
    if results.skipped:
        lines += [*(f"- {s}" for s in results.skipped), ""]
    if plot:
        lines += [f"![time against site size]({plot})", ""]
    lines += [IMPORTS_NOTE, "", "<details><summary>Every measurement (medians)</summary>", ""]
    lines += [*medians_table(results), "", "</details>"]
    return "\n".join(lines) + "\n"


def update_doc(doc: Path, text: str) -> None:
    """Put ``text`` between the bench markers of the Markdown file ``doc`` (docs/performance.md;
    raises ValueError without them)."""
    old = doc.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(old):
        raise ValueError(f"{doc}: no {BEGIN} ... {END} markers")
    doc.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}{END}", old), encoding="utf-8")
