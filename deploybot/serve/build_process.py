"""A build process of the daemon: ``python -m deploybot.serve.build_process JOB CONFIG NAME``.

The daemon runs each job of a site in a process of its own, so that one site's render
(CPU, memory, a hostile page) never stalls the server or another site, its memory goes
back to the system when it ends, and a stop can wait for it or end it by its process
group. Jobs:

- ``build``: :func:`deploybot.pipeline.run.run_once`, under the state directory's lock as
  ``run-once`` takes it (so cron and the daemon never build one site at once). After its
  fetch, when a build follows, it prints ``{"fetched": commit}`` and waits for the daemon
  to write ``go`` on its stdin (a worker slot is free): a build stuck in its fetch holds no
  worker. Anything else (end-of-file: the daemon stops) ends it there
  (:class:`NotStarted`), its mirrors fetched and nothing else done;
- ``deliver``: :func:`deploybot.pipeline.mail.deliver_outbox` (emails whose retry is due);
- ``heads``: for the poller, read ``[[name, url, branch, token_env, timeout], ...]`` (JSON:
  each site's ``source`` keys) on stdin and print
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
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from deploybot.git.remote import Remote
from deploybot.support.errors import DeploybotError, TemporaryError, holds, memory_error, one_line
from deploybot.support.parent_death import set_pdeathsig
from deploybot.support.redact import redact_text

if TYPE_CHECKING:
    from deploybot.config.schema import Config, NotifyConfig

EX_SOFTWARE = 70  # sysexits: an internal error (a crash: a bug)
EX_TEMPFAIL = 75
LIFELINE_FD = "DEPLOYBOT_LIFELINE_FD"
"""The environment variable naming the pipe's read end whose end-of-file says the daemon
is gone (see :func:`die_with_daemon`)."""
DAEMON_PID = "DEPLOYBOT_DAEMON_PID"
POLL_TIMEOUT = 30.0
"""Seconds a source server may stay silent while it advertises its refs to the poller."""
POLL_THREADS = 8

log = logging.getLogger("deploybot.daemon.worker")


def run_job(
    job: str, config_path: Path, before_build: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run ``job`` (``build`` or ``deliver``) for the site configured at ``config_path``;
    ``before_build``: as :func:`deploybot.pipeline.run.run_once` takes it.

    Returns the result: ``status`` (``published``, ``unchanged``, ``up-to-date``,
    ``older`` or ``delivered``), ``source_commit``, ``build_commit``, ``next_future``
    (Unix seconds: the date of the first post the published build holds back, or None),
    ``emails_sent``, ``emails_failed`` (``[[key, reason]]``: still in the outbox),
    ``previews`` (``[{branch, folder, status, source_commit, commit, url, error}]``: the
    branch previews built or removed, :class:`deploybot.pipeline.preview.PreviewResult`).

    Raises:
        DeploybotError: as ``run-once`` (or ``outbox --retry-now``) would.
    """
    from deploybot.config.load import load_config

    return run_loaded_job(job, load_config(config_path), before_build)


def run_loaded_job(
    job: str, config: Config, before_build: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """:func:`run_job` for a loaded ``config`` (a fleet worker's: its own state dir)."""
    if job == "deliver":
        from deploybot.pipeline import mail as mailcmd

        report = mailcmd.deliver_outbox(config)
        return {
            "status": "delivered",
            "emails_sent": list(report.sent),
            "emails_failed": [list(f) for f in report.failed],
            "emails_refused": [list(f) for f in report.refused],
            "mail": describe_mail(
                report.sent, report.failed, config.notify, refused=report.refused,
                config_path=config.path,
            ),
        }  # fmt: skip
    from deploybot.pipeline import run

    result = run.run_once(config, before_build=before_build)
    published = result.status == run.RunStatus.PUBLISHED
    due = None if result.next_future is None else result.next_future.timestamp()
    return {
        "status": result.status,
        "source_commit": result.source_commit,
        "build_commit": result.build_commit,
        "next_future": due,
        "emails_sent": list(result.mail_sent),
        "emails_failed": [list(f) for f in result.mail_failures],
        "emails_refused": [list(f) for f in result.mail_refused],
        "warnings": len(result.warnings),
        "mail": describe_mail(
            result.mail_sent,
            result.mail_failures,
            config.notify,
            published=published,
            refused=result.mail_refused,
            config_path=config.path,
        ),
        "previews": [
            {
                "branch": p.branch,
                "folder": p.folder,
                "status": p.status.value,
                "source_commit": p.source_commit,
                "commit": p.commit,
                "url": p.url,
                "error": p.error,
            }
            for p in result.previews
        ],
    }


def describe_preview(preview: Mapping[str, Any]) -> str:
    """One branch preview of a build's result (its ``previews`` entry), for the daemon's
    log: ``preview of feature/x at 1a2b3c4d5e6f: published 9f8e7d6c5b4a in
    preview/feature-x/: https://previews.example.org/preview/feature-x/``."""
    source = str(preview.get("source_commit") or "")[:12]
    head = f"preview of {preview.get('branch')}" + (f" at {source}" if source else "")
    if preview.get("error"):
        return f"{head}: {preview.get('status')}: {preview.get('error')}"
    commit = str(preview.get("commit") or "")[:12]
    url = f": {preview['url']}" if preview.get("url") else ""
    return f"{head}: {preview.get('status')} {commit} in {preview.get('folder')}/{url}"


MAIL_NAMED = 3
"""Messages a log line names one by one; beyond, it counts them."""


def job_level(*, failed: bool, refused: int) -> int:
    """The log level of a job's line: ERROR for a failed job, WARNING when an email was
    refused for good (told once: this line is where the daemon and the fleet tell it),
    else INFO."""
    if failed:
        return logging.ERROR
    return logging.WARNING if refused else logging.INFO


def describe_mail(
    sent: Sequence[str],
    waiting: Sequence[Sequence[str]],
    notify: NotifyConfig,
    *,
    published: bool = False,
    refused: Sequence[Sequence[str]] = (),
    config_path: Path | None = None,
) -> str:
    """What a job did with its messages, for its log line: ``email for 0123456789ab sent to
    a@example.org, b@example.org (smtp)``, ``webhook post for 0123456789ab sent``, ``email
    for 0123456789ab waiting in the outbox: <why>``, each part joined by ``; ``; past
    :data:`MAIL_NAMED` messages of a kind, ``4 emails sent to ... (smtp): email for ...,
    ... and 1 more``. ``sent`` and ``waiting`` (``(outbox key, reason)``) are
    :class:`deploybot.pipeline.run.RunResult`'s ``mail_sent`` and ``mail_failures`` (or a
    delivery report's); ``refused``, ``(key, reason)`` of messages refused for good this
    time, each as :func:`deploybot.notify.deliver.outbox.refusal_line` says it (naming
    ``config_path``); a ``published`` build with ``notify.transport = "none"`` says
    ``no email (notify.transport is "none")``. Empty when there is nothing to say."""
    from deploybot.notify.deliver.outbox import (
        STATUS_KEY_PREFIX,
        WEBHOOK_KEY_PREFIX,
        describe_key,
        refusal_line,
    )

    def named(keys: Sequence[str]) -> str:
        shown = ", ".join(describe_key(k) for k in keys[:MAIL_NAMED])
        return shown + (f" and {len(keys) - MAIL_NAMED} more" if len(keys) > MAIL_NAMED else "")

    parts = []
    posted = (WEBHOOK_KEY_PREFIX, STATUS_KEY_PREFIX)
    emails = [k for k in sent if not k.startswith(posted)]
    where = f"sent to {', '.join(notify.to) or 'no one'} ({notify.transport})"
    if len(emails) == 1:
        parts.append(f"{describe_key(emails[0])} {where}")
    elif emails:
        parts.append(f"{len(emails)} emails {where}: {named(emails)}")
    posts = [k for k in sent if k.startswith(posted)]
    if posts:
        parts.append(f"{named(posts)} sent")
    for key, reason in list(waiting)[:MAIL_NAMED]:
        why = redact_text(one_line(reason))[:300]
        parts.append(f"{describe_key(key)} waiting in the outbox: {why}")
    if len(waiting) > MAIL_NAMED:
        parts.append(f"{len(waiting) - MAIL_NAMED} more waiting in the outbox")
    for key, reason in refused:
        parts.append(refusal_line(key, redact_text(one_line(reason))[:300], config_path))
    if not parts and published and notify.transport == "none":
        parts.append('no email (notify.transport is "none")')
    return "; ".join(parts)


class NotStarted(TemporaryError):
    """The daemon did not let the build start (it stops): the run ends after its fetch."""


class Gate:
    """The ``before_build`` of a daemon's build: say ``{"fetched": commit}`` on ``out``,
    then wait for ``go`` on ``inp`` (once: a run redone after a damaged mirror goes on)."""

    def __init__(self, out: IO[str], inp: IO[str]) -> None:
        self.out, self.inp, self.open = out, inp, False

    def __call__(self, commit: str) -> None:
        if self.open:
            return
        self.out.write(json.dumps({"fetched": commit}) + "\n")
        self.out.flush()
        if self.inp.readline().strip() != "go":
            raise NotStarted("the daemon stopped before the build could start")
        self.open = True


def failure(exc: BaseException, code: int) -> dict[str, Any]:
    """The result of a job that raised ``exc`` and exits with ``code``."""
    return {
        "status": "failed",
        "error": redact_text(one_line(exc)),
        "error_kind": type(exc).__name__,
        "temporary": isinstance(exc, TemporaryError),
        "exit_code": code,
    }


def out_of_memory(exc: BaseException, job: str) -> dict[str, Any]:
    """The result of a ``job`` that ran out of memory: ``exc`` is a MemoryError, or an
    exception a library raised while it cleaned up after one
    (:func:`~deploybot.support.errors.holds`). As the CLI says it
    (:func:`~deploybot.support.errors.memory_error`): one line, naming the source file
    when the error in the chain does, else try again later (exit 75)."""
    error = memory_error(exc, f"the {job} job")
    return failure(error, error.exit_code)


def heads(sites: list[list[Any]], out: IO[str]) -> None:
    """The poller's job: print ``{"site", "head", "error"}`` per site (see the module doc)."""
    from deploybot.git import repository

    socket.setdefaulttimeout(POLL_TIMEOUT)  # this process opens no other sockets

    def one(site: list[Any]) -> dict[str, Any]:
        name, url, branch, token_env, timeout = site
        remote = Remote(url, "source.url", token_env, timeout)
        try:
            return {"site": name, "head": repository.remote_head(remote, f"refs/heads/{branch}")}
        except DeploybotError as exc:
            return {"site": name, "head": None, "error": redact_text(one_line(exc))}

    with ThreadPoolExecutor(POLL_THREADS) as pool:
        for answer in pool.map(one, sites):
            out.write(json.dumps(answer) + "\n")
            out.flush()


def describe(
    status: str,
    seconds: float,
    source_commit: str | None,
    build_commit: str | None,
    *,
    error: str | None = None,
    waiting: int = 0,
    mail: str = "",
) -> str:
    """One log line for a finished job: what it did (by ``status``, as :func:`run_job`
    and :func:`failure` give it, or ``locked``), from which commits (abbreviated to 12
    hex digits), in how many ``seconds``, then what it did with its messages (``mail``,
    from :func:`describe_mail`), else how many still wait in the site's outbox
    (``waiting``), e.g. ``published 0123456789ab from source ba9876543210 in 1.20 s; email
    for 0123456789ab sent to commits@example.org (smtp)``."""
    source = (source_commit or "?")[:12]
    build = (build_commit or "?")[:12]
    what = {
        "published": f"published {build} from source {source}",
        "unchanged": f"source {source} builds the published tree: no new build commit",
        "up-to-date": f"up to date (source {source})",
        "older": f"not publishing: source {source} is older than the published one",
        "delivered": "outbox delivered",
        "locked": "the state directory is locked (a run-once?): tried again later",
        "failed": f"failed: {error}",
    }.get(status, status)
    if mail:
        return f"{what} in {seconds:.2f} s; {mail}"
    tail = f"; {waiting} message(s) wait in the outbox" if waiting else ""
    return f"{what} in {seconds:.2f} s{tail}"


def die_with_daemon(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """Make this job process end when the daemon that started it ends, however it ends
    (``kill -9`` included), so it never holds a site's lock for a daemon that is gone.

    Two ways, both set up here: on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2):
    the kernel kills this process when its parent dies); everywhere, a thread reading the
    daemon's pipe (:data:`LIFELINE_FD`) that, at its end-of-file, kills this process's
    group (the job and the git processes it runs). A daemon already gone before the
    ``prctl`` (this process then has another parent) ends the job at once. Both variables
    are taken out of the environment, so the build's own processes do not see them.
    """
    fd, parent = environ.pop(LIFELINE_FD, None), environ.pop(DAEMON_PID, None)
    set_pdeathsig()
    if parent is not None and os.getppid() != int(parent):
        os._exit(EX_TEMPFAIL)  # the daemon died while this process started
    if fd is not None:
        lifeline = int(fd)
        os.set_inheritable(lifeline, False)  # git and hooks started by the build: not theirs
        threading.Thread(target=_end_with_pipe, args=(lifeline,), daemon=True).start()


def _end_with_pipe(fd: int) -> None:
    """Wait for end-of-file on ``fd`` (the daemon is gone), then kill this process group."""
    while True:
        try:
            if not os.read(fd, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    if os.getpgrp() == os.getpid():  # the daemon started it as a group of its own
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> int:
    """The process's entry point; see the module docstring. Returns the exit code."""
    from deploybot.support import logs

    die_with_daemon()
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
        gate = Gate(result_out, sys.stdin) if job == "build" else None
        result, code = run_job(job, config_path, gate), 0
    except DeploybotError as exc:
        if verbose:
            log.debug("%s", traceback.format_exc())
        result, code = failure(exc, exc.exit_code), exc.exit_code
    except Exception as exc:
        if not holds(exc, MemoryError):  # a bug: say so in the log, with the traceback
            log.error("%s", redact_text(traceback.format_exc()))
            result, code = failure(exc, EX_SOFTWARE), EX_SOFTWARE
        else:  # as the CLI reports it: one line, try again later
            if verbose:
                log.debug("%s", traceback.format_exc())
            result = out_of_memory(exc, job)
            code = int(result["exit_code"])
            log.error("%s", result["error"])
    result_out.write(json.dumps(result) + "\n")
    result_out.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
