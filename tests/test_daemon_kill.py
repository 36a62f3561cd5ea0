"""``kill -9`` of ``deploybot serve`` during a build: the build process dies with it (it
would hold the site's lock, and the restarted daemon would wait on it), and the next
daemon builds as if nothing happened (a killed build leaves nothing to clean by hand).

Real processes; the build is held inside its push by the publish repository's hook.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from deploybot.serve.build_process import DAEMON_PID, LIFELINE_FD
from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until
from tests.fleetproc import process_children

HOOK = "/webhook/deploybot"


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its new parent to reap it is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_build_dies_with_a_killed_daemon_and_the_next_daemon_builds(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, extra=daemon_table())
    daemon = Daemon(site.config).start()
    try:
        first = site.commit(1)
        assert daemon.push(HOOK, github(first)).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)  # the build is inside its push
        assert daemon.proc is not None
        builds = process_children().get(daemon.proc.pid, [])
        assert builds, "no build process"
        daemon.proc.kill()
        daemon.proc.wait(timeout=30)
        wait_until(lambda: not any(_alive(pid) for pid in builds), timeout=20)
    finally:
        # git's receive-pack had the whole push: it may still take it once its hook ends
        # (the build's record makes the next run email it, as after any kill).
        site.open_gate()
        daemon.stop()
    with Daemon(site.config) as again:
        newer = site.commit(2)
        answer = again.push(HOOK, github(newer))
        assert answer.status_code == 202
        wait_until(lambda: site.published_source() == newer)
        run = wait_until(lambda: again.last_run("deploybot"))
        assert run["result"] == "published", run
    assert site.emails()[-1] == site.head()


def test_a_job_ends_when_the_daemons_pipe_closes(tmp_path: Path) -> None:
    """The fallback where ``PR_SET_PDEATHSIG`` is missing (or the daemon is not the
    parent): the job's process group ends when the pipe's write end is gone. Here the
    parent (this test) lives on; only the pipe closes."""
    read_end, write_end = os.pipe()
    env = {**os.environ, LIFELINE_FD: str(read_end)}
    env.pop(DAEMON_PID, None)
    code = (
        "import subprocess, sys, time\n"
        "from deploybot.serve.build_process import die_with_daemon\n"
        "die_with_daemon()\n"
        "child = subprocess.Popen(['sleep', '120'])\n"  # as a build runs git
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    job = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env,
        pass_fds=(read_end,), start_new_session=True,
    )  # fmt: skip
    try:
        assert job.stdout is not None
        grandchild = int(job.stdout.readline())
        os.close(read_end)
        assert job.poll() is None and _alive(grandchild)
        os.close(write_end)
        assert job.wait(timeout=20) == -signal.SIGKILL
        wait_until(lambda: not _alive(grandchild), timeout=20)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.pid, signal.SIGKILL)  # its own group: the job and its sleep
        job.wait()
