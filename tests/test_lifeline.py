"""deploybot.support.parent_death: the one place a child process asks to die with its parent (the
daemon's build processes, the fleet's work horses and the render workers all call it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import ctypes, sys
from deploybot.support.parent_death import set_pdeathsig
done = set_pdeathsig()
libc = ctypes.CDLL(None, use_errno=True)
sig = ctypes.c_int(-1)
libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
print(done, sig.value)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(2) is Linux's")
def test_set_pdeathsig_asks_the_kernel_for_sigkill() -> None:
    before = subprocess.run(
        [sys.executable, "-c", PROBE.replace("done = set_pdeathsig()", "done = None")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    after = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    )
    assert before.stdout.split() == ["None", "0"]
    assert after.stdout.split() == ["True", "9"]
