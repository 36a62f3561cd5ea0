"""The daemon's push to the live branch in the bench run: :mod:`tests.bench_daemon`, once a run.

Two ``deploybot serve`` on copies of the small test site (:class:`tests.smallsite.SmallSite`,
two posts), one starting each build as a new interpreter (cold start), one forking it from
its warm builder; the pushes alternate between them, and each time runs from the ``202``
answer to the publish branch's head moving (see :func:`tests.bench_daemon.measure`). It
does not depend on the bench site's size, so it runs once, after the sizes, and its samples
are recorded under the run's smallest size, as :data:`WARM` and :data:`COLD`. A daemon's
push is no process of its own: its samples have wall seconds only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.bench.measure import Results, Sample

WARM = "push (202) to live branch, small site: warm builder"
COLD = "push (202) to live branch, small site: cold start"


def measure_push_to_live(
    results: Results, size: int, pushes: int, log: Callable[[str], None]
) -> None:
    """Time ``pushes`` pushes to each daemon; record each as a sample of :data:`WARM` or
    :data:`COLD` under ``size``.

    A daemon that fails (no answer, not live within a minute, the warm one not forking) is
    logged and kept in ``results.skipped``, so the rest of the run is still reported.
    """
    # Imported here: the daemon's test helpers (requests, prometheus_client) are needed only
    # when it runs, not to report on a run's JSON.
    from tests.bench_daemon import measure

    log(f"push (202) to live branch: {pushes} pushes to each daemon, alternating")
    with tempfile.TemporaryDirectory(prefix="deploybot-bench-daemon-") as tmp:
        try:
            times = measure(Path(tmp), pushes)
        except (AssertionError, OSError) as exc:
            line = f"push (202) to live branch not measured: {str(exc).splitlines()[0][:300]}"
            log(line)
            results.skipped.append(line)
            return
    for how, name in (("warm", WARM), ("cold", COLD)):
        for seconds in times[how]:
            results.add(size, name, Sample(seconds, None))
        med = results.median(size, name)
        assert med is not None
        log(f"  {name}: median {med.seconds:.3f} s of {len(times[how])}")
