"""Ctrl-C (SIGINT to the command's process group, as a terminal sends it) ends a command
with one line, ``deploybot: interrupted``, and exit 130 (128 + SIGINT), not click's
"Aborted!" and exit 1, the code for bad input; what the run had done is kept or undone as
for any stop (the pipeline is kill-safe), so the next run goes on from there.
``deploybot serve`` still takes SIGINT as a graceful stop (exit 0).
"""

from __future__ import annotations

import email
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.daemonproc import Daemon, daemon_table, wait_until
from tests.gitrepo import commit_files
from tests.servers import silent_server, smtp_server
from tests.smallsite import SmallSite

TIMEOUT_S = 120.0
INTERRUPTED = 128 + signal.SIGINT


def smtp_config(site: SmallSite, port: int) -> None:
    """Have ``site`` send its commit emails by SMTP to 127.0.0.1:``port``."""
    site.write_config(extra=f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 600.0\n')
    text = site.config.read_text()
    site.config.write_text(
        text.replace('transport = "mbox"\nmbox = "commits.mbox"', 'transport = "smtp"')
    )


def interrupted_when(site: SmallSite, held: Callable[[], bool]) -> subprocess.CompletedProcess[str]:
    """Start ``deploybot run-once`` in a process group of its own; once ``held()``, send
    SIGINT to the group (Ctrl-C); return the finished process."""
    argv = [sys.executable, *site.argv()[1:]]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0
    )
    try:
        wait_until(held, TIMEOUT_S, "the run waiting on its peer")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def test_ctrl_c_while_the_smtp_server_holds_the_email_keeps_it_for_the_next_run(
    tmp_path: Path,
) -> None:
    site = SmallSite(tmp_path)
    with silent_server() as (port, accepted):
        smtp_config(site, port)
        result = interrupted_when(site, lambda: len(accepted) == 1)
    assert (result.returncode, result.stderr) == (INTERRUPTED, "deploybot: interrupted\n")
    built = site.head()
    assert built is not None  # published before the email was sent
    with smtp_server() as (controller, collected):
        smtp_config(site, controller.port)
        again = site.run_process()
        assert again.returncode == 0, again.stderr
        assert f"email for {built[:12]} sent via smtp" in again.stdout
        revs = [email.message_from_bytes(m.content)["X-Git-Rev"] for m in collected.messages]
        assert revs == [built]
    assert site.head() == built


def test_ctrl_c_while_the_source_server_holds_the_fetch_publishes_nothing(
    tmp_path: Path,
) -> None:
    site = SmallSite(tmp_path)
    with silent_server() as (port, accepted):
        site.write_config(source_url=f"git://127.0.0.1:{port}/source.git")
        result = interrupted_when(site, lambda: len(accepted) == 1)
    assert (result.returncode, result.stderr) == (INTERRUPTED, "deploybot: interrupted\n")
    assert site.head() is None
    site.write_config()
    again = site.run_process()  # the state folder's lock was released
    assert again.returncode == 0, again.stderr
    assert site.head() is not None


def test_serve_takes_sigint_as_a_graceful_stop(tmp_path: Path) -> None:
    site = SmallSite(tmp_path, extra=daemon_table())
    commit_files(site.source, {"_posts/2023-01-04-x.md": b"---\ntitle: X\n---\nX\n"})
    with Daemon(site.config) as daemon:
        daemon.signal(signal.SIGINT)
        assert daemon.wait() == 0
    assert not any("interrupted" in line or "Aborted" in line for line in daemon.log)
