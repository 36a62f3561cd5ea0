"""The daemon's warm builder: ``python -m deploybot.serve.zygote``, a process that imports
the build's modules once and forks a build process per job, so a webhook build pays no
interpreter start nor imports (about 0.3 s each; see docs/performance.md).

The daemon starts it (:class:`deploybot.serve.warm.WarmBuilder`) with one end of a Unix
``SOCK_SEQPACKET`` socket pair on the fd named by :data:`CONTROL_FD`. Each request is one
message: JSON ``{"argv": [...], "env": {...}, "cwd": "..."}`` (``argv`` as
:func:`deploybot.serve.build_process.main` takes it) with four fds (SCM_RIGHTS, unix(7)):
the job's stdin, stdout and stderr, and a status socket. The zygote forks; the child
becomes exactly what ``python -m deploybot.serve.build_process ARGV`` is (a session of its
own, the job's environment and working directory, default signal handlers, fresh random
seeds, no fd but 0, 1, 2 and the daemon's lifeline, ``PR_SET_PDEATHSIG``: see
:func:`child`), and the zygote writes ``pid <pid>\\n`` on the status socket, then
``exit <code>\\n`` when it has reaped the child (``<code>`` as
:attr:`subprocess.Popen.returncode` has it: negative for a signal), and closes it. A
request it cannot serve gets ``error <why>\\n``.

It stays single-threaded (a fork copies only the calling thread: a lock held by another
would stay locked in the child); it refuses to fork when it is not. It ends with the
daemon: ``PR_SET_PDEATHSIG``, and end-of-file on the daemon's lifeline pipe, which makes
it kill its children's process groups. End-of-file on its control socket (the daemon
retires it: SIGHUP, new code on disk) makes it take no more requests, wait for its
children to end, and exit 0; so a reload never cuts a running build short.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import pkgutil
import random
import selectors
import signal
import socket
import sys
import time
from typing import Any

from deploybot.serve.build_process import DAEMON_PID, EX_SOFTWARE, LIFELINE_FD
from deploybot.support.parent_death import set_pdeathsig

CONTROL_FD = "DEPLOYBOT_ZYGOTE_FD"
"""The environment variable naming the zygote's end of its control socket."""
REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request (its JSON: the environment is most of it)."""
WARM_PACKAGES = (
    "deploybot.config",
    "deploybot.git",
    "deploybot.notify",
    "deploybot.pipeline",
    "deploybot.publish",
    "deploybot.record",
    "deploybot.render",
    "deploybot.state",
    "deploybot.support",
    "deploybot.watch",
)
"""The packages the zygote imports whole (each module in them), so that no build
imports them again: the stages of a run (:func:`deploybot.pipeline.run.run_once`)."""
WARM_MODULES = (
    "deploybot.serve.build_process",
    "dulwich.commit_graph",
    "email.policy",
    "encodings.unicode_escape",
    "encodings.utf_8_sig",
    "jinja2.sandbox",
    "liquid",
    "lxml.etree",
    "mistune",
    "pygments.formatters.html",
    "pygments.lexers",
    "requests",
    "sqlite3",
    "yaml",
)
"""What the build's modules import only inside a function, when a run needs it (the
Jinja2 theme, Liquid, highlighting, HTTP): imported once in the zygote, it costs a warm
build nothing."""

log = logging.getLogger("deploybot.daemon.zygote")


def warm_up(
    packages: tuple[str, ...] = WARM_PACKAGES, modules: tuple[str, ...] = WARM_MODULES
) -> float:
    """Import every module of ``packages``, then ``modules``; return the seconds it took.
    A module that fails to import is left to the build that needs it (it fails there, as
    a cold build would)."""
    clock = time.monotonic()
    names = list(modules)
    for package in packages:
        if _load(package):
            path = sys.modules[package].__path__
            names += [info.name for info in pkgutil.walk_packages(path, package + ".")]
    for name in names:
        _load(name)
    return time.monotonic() - clock


def _load(name: str) -> bool:
    """Import module ``name``; False (logged at DEBUG) when it does not import."""
    try:
        importlib.import_module(name)
    except Exception as exc:  # any error a module raises at import: the build will see it
        log.debug("not warmed up: %s: %s", name, exc)
        return False
    return True


def child(request: dict[str, Any], fds: list[int], keep: int | None, zygote: int) -> None:
    """In the forked child: become the build process of ``request`` and never return
    (``os._exit`` with the job's code, :data:`EX_SOFTWARE` when it raised).

    ``fds``: the job's stdin, stdout, stderr (then the status socket, closed here);
    ``keep``: the daemon's lifeline fd, kept; ``zygote``: the parent's pid, as
    :func:`deploybot.serve.build_process.die_with_daemon` checks it."""
    code = EX_SOFTWARE
    try:
        os.setsid()  # a session of its own, as the cold start's start_new_session
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)  # dup2's copy is inheritable, as a new process's 0, 1, 2
        _close_all_but(keep)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[DAEMON_PID] = str(zygote)  # the parent die_with_daemon checks
        os.chdir(request["cwd"])
        random.seed()
        sys.argv = ["deploybot.serve.build_process", *request["argv"]]
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        logging.root.handlers.clear()
        from deploybot.serve import build_process

        code = build_process.main(list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EX_SOFTWARE
    except BaseException:  # a crash: say it, exit 70 as a cold build would
        import traceback

        with contextlib.suppress(OSError, ValueError):
            traceback.print_exc()
    finally:
        with contextlib.suppress(OSError, ValueError):
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _close_all_but(keep: int | None) -> None:
    """Close every fd from 3 on but ``keep``."""
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536
    if keep is None or keep < 3:
        os.closerange(3, top)
        return
    os.closerange(3, keep)
    os.closerange(keep + 1, top)


class Zygote:
    """The zygote's loop: requests on ``control``, children reaped on SIGCHLD."""

    def __init__(self, control: socket.socket, lifeline: int | None) -> None:
        self.control, self.lifeline = control, lifeline
        self.children: dict[int, socket.socket] = {}
        self.accepting = True
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(control, selectors.EVENT_READ, "control")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "reap")
        if lifeline is not None:
            self.selector.register(lifeline, selectors.EVENT_READ, "lifeline")

    def serve(self) -> int:
        """Serve until retired and childless (0), or the daemon is gone (killed)."""
        while self.accepting or self.children:
            for key, _ in self.selector.select(timeout=1.0):
                if key.data == "control":
                    self._request()
                elif key.data == "reap":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                elif key.data == "lifeline":
                    self._daemon_gone()
            self._reap()
        return 0

    def _request(self) -> None:
        try:
            data, fds, _, _ = socket.recv_fds(self.control, REQUEST_BYTES, 4)
        except OSError as exc:
            log.warning("control socket: %s", exc)
            data, fds = b"", []
        if not data:  # retired by the daemon
            self.accepting = False
            self.selector.unregister(self.control)
            self.control.close()
            return
        try:
            self._fork(json.loads(data), fds)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _fork(self, request: dict[str, Any], fds: list[int]) -> None:
        if len(fds) != 4:
            return
        status = socket.socket(fileno=os.dup(fds[3]))
        if threading_count() != 1:  # a fork would copy a half-held lock: refuse
            _say(status, "error the zygote is not single-threaded")
            status.close()
            return
        pid = os.fork()
        if pid == 0:
            status.close()
            child(request, fds, self.lifeline, os.getppid())
        self.children[pid] = status
        _say(status, f"pid {pid}")

    def _reap(self) -> None:
        while self.children:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status = self.children.pop(pid, None)
            if status is not None:
                _say(status, f"exit {_returncode(wait_status)}")
                status.close()

    def _daemon_gone(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        os._exit(0)


def threading_count() -> int:
    """Threads of this process (1 when single-threaded), as the kernel counts them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _returncode(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def _say(status: socket.socket, line: str) -> None:
    with contextlib.suppress(OSError):
        status.sendall(line.encode() + b"\n")


def main() -> int:
    """The zygote's entry point: see the module doc. Returns its exit code."""
    set_pdeathsig()
    parent = os.environ.get(DAEMON_PID)
    if parent is not None and os.getppid() != int(parent):
        return 75  # the daemon died while this process started
    lifeline = os.environ.get(LIFELINE_FD)
    control = socket.socket(fileno=int(os.environ[CONTROL_FD]))
    os.set_inheritable(control.fileno(), False)
    seconds = warm_up()
    lifeline_fd = None if lifeline is None else int(lifeline)
    zygote = Zygote(control, lifeline_fd)
    try:
        control.sendall(json.dumps({"ready": os.getpid(), "seconds": seconds}).encode())
    except OSError:  # the daemon stopped, or retired this zygote, while it warmed up
        return 0
    return zygote.serve()


if __name__ == "__main__":
    sys.exit(main())
