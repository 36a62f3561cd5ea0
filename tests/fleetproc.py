"""Test helper for the fleet: sites under one daemon config with ``[queue] backend =
"redis"``, ``deploybot worker`` processes, and the lease log read back from Redis.

Everything waits by polling with a generous deadline; nothing sleeps for correctness.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import redis
from dulwich.repo import Repo

from tests.daemonproc import DEADLINE, SECRET, SECRET_ENV, GatedSite, daemon_table, wait_until
from tests.servers import stop_process

ROOT = Path(__file__).resolve().parent.parent


def fleet_config(tmp_path: Path, url: str, **queue: Any) -> Path:
    """``tmp_path/daemon.toml``: a daemon on any free port, no polling, the sites
    ``tmp_path/sites/*/deploybot.toml``, and ``[queue]`` on Redis at ``url``."""
    values = {"backend": "redis", "url": url, **queue}
    table = "[queue]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
    config = tmp_path / "daemon.toml"
    config.write_text(daemon_table(sites="sites/*/deploybot.toml") + table + '[state]\ndir = "d"\n')
    return config


def make_sites(tmp_path: Path, names: Iterable[str], *, gated: bool = False) -> list[GatedSite]:
    """One :class:`GatedSite` per name, at ``tmp_path/sites/<name>`` (``[daemon] name``)."""
    return [
        GatedSite(tmp_path / "sites" / n, gated=gated, extra=f'[daemon]\nname = "{n}"\n')
        for n in names
    ]


def build_commits(site: GatedSite) -> list[str]:
    """The build commits on ``site``'s publish branch, oldest first."""
    with Repo(str(site.publish)) as repo:
        head = repo.refs.as_dict().get(b"refs/heads/asf-site")
        if head is None:
            return []
        return [e.commit.id.decode() for e in repo.get_walker(include=[head])][::-1]


def emailed_commits(site: GatedSite) -> list[str]:
    """The ``X-Git-Rev`` of every commit email in the site's mbox (summaries have none)."""
    return [rev for rev in site.emails() if rev != "None"]


class WorkerProc:
    """``python -m deploybot worker`` as a subprocess; its log is collected."""

    def __init__(self, config: Path, name: str, state: Path, *args: str) -> None:
        self.config = config
        self.name = name
        self.state = state
        self.args = args
        self.log: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> WorkerProc:
        self.spawn()
        self.wait_log("taking jobs from")
        return self

    def spawn(self) -> None:
        """Start the process (without waiting for it to take jobs)."""
        argv = [sys.executable, "-m", "deploybot", "worker", "--config", str(self.config),
                "--name", self.name, "--state", str(self.state), *self.args]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
        env[SECRET_ENV] = SECRET
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env, cwd=ROOT,
        )  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line.rstrip("\n"))

    def wait_log(self, text: str, timeout: float = DEADLINE) -> str:
        def found() -> str | None:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"worker {self.name} exited: {self.log}")
            return next((line for line in list(self.log) if text in line), None)

        return wait_until(found, timeout, f"{text!r} in worker {self.name}'s log")

    def stop(self, timeout: float = DEADLINE) -> int:
        """SIGTERM, then wait for the exit; the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def kill9(self) -> None:
        """``kill -9`` the worker (its build dies with it: the machine is gone)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=DEADLINE)

    def processes(self) -> list[int]:
        """The worker's process and all its descendants (work horse, git, hooks), parents
        first."""
        assert self.proc is not None
        return descendants(self.proc.pid)

    def kill_machine(self) -> None:
        """SIGKILL the worker and every process under it (its ``git receive-pack`` too: a
        machine that died takes its push along)."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert self.proc is not None
        self.proc.wait(timeout=DEADLINE)

    def pause(self) -> list[int]:
        """SIGSTOP the worker and every process under it (a machine that stalls); returns
        the processes, for :meth:`resume`."""
        stopped = self.processes()
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        return stopped

    @staticmethod
    def resume(stopped: list[int]) -> None:
        """SIGCONT what :meth:`pause` stopped."""
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def __enter__(self) -> WorkerProc:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc, DEADLINE)


def process_children() -> dict[int, list[int]]:
    """``{pid: [its children's pids]}`` of every process now (read from ``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name, in (), may hold spaces
        children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it, parents first."""
    children = process_children()
    out, todo = [], [pid]
    while todo:
        current = todo.pop(0)
        out.append(current)
        todo += children.get(current, [])
    return out


@contextlib.contextmanager
def running_workers(config: Path, tmp_path: Path, *names: str) -> Iterator[list[WorkerProc]]:
    """Workers ``names`` (state in ``tmp_path/<name>``), started and stopped together;
    each must exit 0 at the end (a warm stop)."""
    workers = [WorkerProc(config, name, tmp_path / name) for name in names]
    try:
        for worker in workers:
            worker.spawn()
        for worker in workers:
            worker.wait_log("taking jobs from")
        yield workers
    except BaseException:
        for worker in workers:  # shown by pytest for a failed test
            print(f"--- worker {worker.name}:", *worker.log, sep="\n")
        raise
    finally:
        codes = [stop_process(w.proc, DEADLINE) for w in workers]
    assert codes == [0] * len(workers), [w.log[-5:] for w in workers]


def lease_log(client: redis.Redis) -> list[dict[str, str]]:
    """Every lease-log entry, oldest first, with ``ms``: Redis's own clock (the stream id)."""
    out = []
    for entry_id, fields in client.xrange("deploybot:lease-log"):
        event = {k.decode(): v.decode() for k, v in fields.items()}
        event["ms"] = entry_id.decode().split("-")[0]
        out.append(event)
    return out


def overlaps(events: list[dict[str, str]]) -> list[str]:
    """Where the lease log shows a site held by two tokens at once: an ``acquired`` while
    another token held it (neither released nor expired nor taken over after expiry), or
    a ``released`` by a token that did not hold it. Empty when there is none."""
    holder: dict[str, str | None] = {}
    found = []
    for event in events:
        site, kind, token = event["site"], event["event"], event.get("token")
        if kind == "acquired":
            if holder.get(site) and not event.get("took_over"):
                found.append(f"{site}: {token} acquired while {holder[site]} held it")
            holder[site] = token
        elif kind == "released":
            if holder.get(site) != token:
                found.append(f"{site}: {token} released a lease held by {holder.get(site)}")
            holder[site] = None
        elif kind == "expired":
            holder[site] = None
    return found


def builds_by_worker(events: list[dict[str, str]]) -> dict[str, int]:
    """Builds released per worker (those that did something: not ``up-to-date``)."""
    out: dict[str, int] = {}
    for event in events:
        if event["event"] == "released" and event.get("result") == "published":
            out[event["worker"]] = out.get(event["worker"], 0) + 1
    return out
