"""Test helper: a real ``redis-server`` on 127.0.0.1, a free port and a folder of its own.

It runs with the append-only file on (as docs/fleet.md asks of a fleet's Redis) and no RDB
snapshots, so a restart (:meth:`RedisServer.restart`) keeps every key, as a production
Redis restarted by its init system does. Tests that need it skip, saying why, when no
``redis-server`` is installed (``make test`` installs Debian's package when it can).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.servers import free_port, stop_process

SKIP_REASON = (
    "redis-server is not installed (make test installs Debian's redis-server when run as "
    "root or with sudo)"
)


def redis_binary() -> str:
    """The path of ``redis-server``; skips the test when there is none."""
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if found is None:
        pytest.skip(SKIP_REASON)
    return found


class RedisServer:
    """``redis-server`` in ``folder`` on a free port of 127.0.0.1 (start, stop, restart)."""

    def __init__(self, folder: Path) -> None:
        self.binary = redis_binary()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        argv = [
            self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
            str(self.folder), "--save", "", "--appendonly", "yes", "--daemonize", "no",
            "--logfile", str(self.folder / "redis.log"), "--protected-mode", "yes",
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis(port=self.port, socket_timeout=1).ping()
                return self
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"redis-server did not start: {self.log()}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (Redis writes its append-only file and exits), then wait."""
        stop_process(self.proc, 20)

    def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down ``down_for`` s, start again on the same port."""
        self.stop()
        time.sleep(down_for)
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=10)

    def log(self) -> str:
        path = self.folder / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
