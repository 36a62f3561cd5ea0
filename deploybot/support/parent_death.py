"""A child process that dies with its parent: Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)``.

Used by every process deploybot starts to do part of a run and that must never outlive
it (a ``kill -9`` of the parent would leave it holding a lock or writing): the daemon's
build processes (:mod:`deploybot.serve.build_process`), the fleet's RQ work horses
(:mod:`deploybot.serve.fleet.job`) and the full build's render workers
(:mod:`deploybot.render.engine.parallel`). Each also has a second way out of its own (a pipe
whose end-of-file says the parent is gone), since the kernel call exists only on Linux.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

log = logging.getLogger("deploybot.lifeline")


def set_pdeathsig() -> bool:
    """Have the kernel SIGKILL this process when its parent dies (prctl(2)). Returns
    whether that is now set: False elsewhere than on Linux, or when the call is refused
    (then a warning is logged)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # lazy on purpose: only a child process calls this, once

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0
    except (OSError, AttributeError) as exc:  # no C library or no prctl in it
        log.warning("prctl(PR_SET_PDEATHSIG): %s", exc)
        return False
    if failed:
        log.warning("prctl(PR_SET_PDEATHSIG): %s", os.strerror(ctypes.get_errno()))
    return not failed
