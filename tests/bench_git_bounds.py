"""Measure ``deploybot run-once`` against a hostile git server (issue 17): its wall time,
peak memory (the run's ``ru_maxrss``, from ``wait4``), exit code and last line.

    python -m tests.bench_git_bounds trickle [--interval 20] [--timeout 30] [--kill 120]
    python -m tests.bench_git_bounds endless [--kill 120] [--as-limit-mb 4096]
    ... --code /path/to/other/checkout   # run another checkout's deploybot (PYTHONPATH)

``trickle``: an HTTP git server that answers with a 65,520-byte pkt-line, one byte every
``--interval`` s. ``endless``: an HTTP git server whose ref advertisement has no end.
``--timeout`` writes ``source.timeout`` into the config (leave it out for a checkout that
does not know the key); ``--kill`` ends a run still going after that many seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.gitservers import endless_advertisement
from tests.servers import trickling_server

HTTP_OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n\r\n"


def measure(url: str, folder: Path, args: argparse.Namespace) -> str:
    """Run run-once against ``url``; one line of what it did."""
    from dulwich.repo import Repo

    Repo.init_bare(str(folder / "publish.git"), mkdir=True).close()
    extra = f"timeout = {args.timeout}\n" if args.timeout else ""
    config = folder / "deploybot.toml"
    config.write_text(f'[source]\nurl = "{url}"\n{extra}[publish]\nurl = "publish.git"\n')
    env = dict(os.environ)
    if args.code:
        env["PYTHONPATH"] = args.code
    limit = args.as_limit_mb * 2**20

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    argv = [sys.executable, "-m", "deploybot", "run-once", "--config", str(config)]
    start = time.monotonic()
    proc = subprocess.Popen(  # cwd: not this checkout, whose deploybot -m would find first
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=limits,
    )  # fmt: skip
    killed = threading.Timer(args.kill, lambda: os.kill(proc.pid, signal.SIGKILL))
    killed.start()
    assert proc.stdout is not None
    output = proc.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    killed.cancel()
    elapsed = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    last = output.strip().splitlines()[-1][:200] if output.strip() else ""
    return f"{elapsed:.1f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MB, exit {code}: {last}"


def main() -> None:
    """See the module docstring."""
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["trickle", "endless"])
    parser.add_argument("--interval", type=float, default=20.0)
    parser.add_argument("--timeout", type=float, default=0.0)
    parser.add_argument("--kill", type=float, default=120.0)
    parser.add_argument("--as-limit-mb", type=int, default=4096)
    parser.add_argument("--code", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.case == "trickle":
            with trickling_server(answer=HTTP_OK + b"fff0", drip=b"x", interval=args.interval) as p:
                print(measure(f"http://127.0.0.1:{p}/site.git", Path(tmp), args))
        else:
            with endless_advertisement(http=True) as (url, sent):
                line = measure(url, Path(tmp), args)
                print(f"{line} (server sent {sent[0] / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
