"""A build process of the daemon: ``python -m deploybot.daemon.worker JOB CONFIG NAME``.

The daemon runs each job of a site in a process of its own, so that one site's render
(CPU, memory, a hostile page) never stalls the server or another site, its memory goes
back to the system when it ends, and a stop can wait for it or end it by its process
group. Jobs:

- ``build``: :func:`deploybot.pipeline.run_once`, under the state directory's lock as
  ``run-once`` takes it (so cron and the daemon never build one site at once);
- ``deliver``: :func:`deploybot.mailcmd.deliver_outbox` (emails whose retry is due);
- ``heads``: for the poller, read ``[[name, url, branch], ...]`` (JSON) on stdin and print
  one JSON line ``{"site", "head", "error"}`` per site as its ref advertisement arrives
  (``git ls-remote``'s exchange: no objects are fetched).

Every job prints one JSON object on stdout (its result: see :func:`run_job`) and exits
with the CLI's code (0, 1 bad input, 75 try later, 78 config) or 70 for a crash. The
result goes to the stdout the daemon reads; anything the libraries print is sent to
stderr, the daemon's log.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from deploybot.errors import DeploybotError, TemporaryError, one_line
from deploybot.redact import redact_text

if TYPE_CHECKING:
    from deploybot.config import Config

EX_SOFTWARE = 70  # sysexits: an internal error (a crash: a bug)
POLL_TIMEOUT = 30.0
"""Seconds a source server may stay silent while it advertises its refs to the poller."""
POLL_THREADS = 8

log = logging.getLogger("deploybot.daemon.worker")


def run_job(job: str, config_path: Path) -> dict[str, Any]:
    """Run ``job`` (``build`` or ``deliver``) for the site configured at ``config_path``.

    Returns the result: ``status`` (``published``, ``unchanged``, ``up-to-date``,
    ``older`` or ``delivered``), ``source_commit``, ``build_commit``, ``emails_sent``,
    ``emails_failed`` (``[[key, reason]]``: still in the outbox).

    Raises:
        DeploybotError: as ``run-once`` (or ``outbox --retry-now``) would.
    """
    from deploybot.config import load_config

    return run_loaded_job(job, load_config(config_path))


def run_loaded_job(job: str, config: Config) -> dict[str, Any]:
    """:func:`run_job` for a loaded ``config`` (a fleet worker's: its own state dir)."""
    if job == "deliver":
        from deploybot import mailcmd

        report = mailcmd.deliver_outbox(config)
        return {
            "status": "delivered",
            "emails_sent": list(report.sent),
            "emails_failed": [list(f) for f in report.failed],
        }
    from deploybot import pipeline

    result = pipeline.run_once(config)
    return {
        "status": result.status,
        "source_commit": result.source_commit,
        "build_commit": result.build_commit,
        "emails_sent": list(result.mail_sent),
        "emails_failed": [list(f) for f in result.mail_failures],
        "warnings": len(result.warnings),
    }


def failure(exc: BaseException, code: int) -> dict[str, Any]:
    """The result of a job that raised ``exc`` and exits with ``code``."""
    return {
        "status": "failed",
        "error": redact_text(one_line(exc)),
        "error_kind": type(exc).__name__,
        "temporary": isinstance(exc, TemporaryError),
        "exit_code": code,
    }


def heads(sites: list[list[str]], out: IO[str]) -> None:
    """The poller's job: print ``{"site", "head", "error"}`` per site (see the module doc)."""
    from deploybot import gitutil

    socket.setdefaulttimeout(POLL_TIMEOUT)  # this process opens no other sockets

    def one(site: list[str]) -> dict[str, Any]:
        name, url, branch = site
        try:
            return {"site": name, "head": gitutil.remote_head(url, f"refs/heads/{branch}")}
        except DeploybotError as exc:
            return {"site": name, "head": None, "error": redact_text(one_line(exc))}

    with ThreadPoolExecutor(POLL_THREADS) as pool:
        for answer in pool.map(one, sites):
            out.write(json.dumps(answer) + "\n")
            out.flush()


def main(argv: list[str]) -> int:
    """The process's entry point; see the module docstring. Returns the exit code."""
    from deploybot.daemon import logs

    job, *rest = argv
    result_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what libraries print goes to the log, not into the result
    verbose = bool(os.environ.get("DEPLOYBOT_VERBOSE"))
    if job == "heads":
        logs.setup(verbose=verbose, prefix="poll: ")
        heads(json.load(sys.stdin), result_out)
        return 0
    config_path, name = Path(rest[0]), rest[1]
    logs.setup(verbose=verbose, prefix=f"site {name}: ")
    try:
        result, code = run_job(job, config_path), 0
    except DeploybotError as exc:
        if verbose:
            log.debug("%s", traceback.format_exc())
        result, code = failure(exc, exc.exit_code), exc.exit_code
    except Exception as exc:  # a bug: say so in the log, with the traceback
        log.error("%s", redact_text(traceback.format_exc()))
        result, code = failure(exc, EX_SOFTWARE), EX_SOFTWARE
    result_out.write(json.dumps(result) + "\n")
    result_out.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
