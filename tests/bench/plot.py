"""The PNG plot of a run: median seconds against site size, deploybot and each peer.

Needs matplotlib (the ``bench`` extra of pyproject.toml); :func:`plot` returns False
without it, and the run says so in one line.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.measure import Results
from tests.bench.report import LABEL, PEERS

COLORS = dict(zip(PEERS, ("C1", "C2", "C3"), strict=True))
LINES = [
    ("deploybot build", "deploybot: full build", "C0", "-"),
    (
        "deploybot build, warm highlight cache",
        "deploybot: full build, warm highlight cache",
        "C0",
        "-.",
    ),
    ("run-once edit", "deploybot: one-post edit, end to end", "C0", "--"),
    *[(f"{p} build", f"{LABEL[p]}: full build", COLORS[p], "-") for p in PEERS],
    *[
        (f"{p} seed pipeline", f"{LABEL[p]}: one-post edit (full build + git push)", COLORS[p], ":")
        for p in PEERS
    ],
]


def plot(results: Results, path: Path, title: str) -> bool:
    """Draw the lines that have data into the PNG ``path``; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: write the file only
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, NullLocator
    except ImportError:
        return False
    sizes = sorted(results.samples)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for name, label, color, style in LINES:
        points = [(s, results.median(s, name)) for s in sizes]
        xs = [s for s, m in points if m is not None]
        ys = [m.seconds for _, m in points if m is not None]
        if xs:
            ax.plot(xs, ys, style, color=color, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    seconds = FuncFormatter(lambda v, _: f"{v:g} s")
    ax.yaxis.set_major_formatter(seconds)
    ax.yaxis.set_minor_formatter(seconds)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xlabel("posts")
    ax.set_ylabel("seconds (median)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True
