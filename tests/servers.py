"""Real servers for tests, all on 127.0.0.1: git over HTTP (dulwich.web), ``git daemon``, SMTP.

Each is a context manager (or fixture) that stops its server when the test ends.
"""

from __future__ import annotations

import asyncio
import email
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from wsgiref.simple_server import make_server

import pytest
from aiosmtpd.controller import Controller
from dulwich.repo import Repo
from dulwich.server import BackendRepo, DictBackend
from dulwich.web import WSGIRequestHandlerLogger, WSGIServerLogger, make_wsgi_chain


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop_process(proc: subprocess.Popen[Any] | None, timeout: float) -> int | None:
    """SIGTERM ``proc`` unless it has ended, wait up to ``timeout`` s for it, then SIGKILL
    it and wait. Returns its exit code (negative: the signal that ended it, so a process
    that had to be killed shows as -9), or None for no process."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


@contextmanager
def serve_http(repo_path: Path, before_push: Callable[[], None] | None = None) -> Iterator[str]:
    """Serve ``repo_path`` with dulwich.web on 127.0.0.1; yield its URL; stop the server.

    ``before_push`` (optional) runs as a push starts (when receive-pack's refs are
    advertised), so a test can play another writer moving the branch first.
    """
    repo = Repo(str(repo_path))
    repos: dict[str, BackendRepo] = {"/site.git": repo}
    app = make_wsgi_chain(DictBackend(repos))

    def hooked(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        advertising = environ.get("PATH_INFO", "").endswith("/info/refs")
        pushing = "git-receive-pack" in environ.get("QUERY_STRING", "")
        if advertising and pushing and before_push is not None:
            before_push()
        result: Iterable[bytes] = app(environ, start_response)
        return result

    server = make_server(
        "127.0.0.1",
        0,
        hooked,
        handler_class=WSGIRequestHandlerLogger,
        server_class=WSGIServerLogger,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/site.git"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        repo.close()


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Run ``git daemon`` over ``base`` on 127.0.0.1; yield ``git://127.0.0.1:PORT``; stop it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    port = free_port()
    args = ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}"]
    args += [f"--base-path={base}", "--export-all", "--enable=receive-pack", str(base)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("git daemon did not start") from None
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@dataclass(frozen=True)
class Received:
    """One message as the SMTP server accepted it."""

    mail_from: str
    rcpt_tos: list[str]
    mail_options: list[str]
    content: bytes
    tls: bool


@dataclass
class Collector:
    """aiosmtpd handler keeping every message it accepts."""

    messages: list[Received] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(
            Received(
                envelope.mail_from,
                list(envelope.rcpt_tos),
                list(envelope.mail_options),
                envelope.content,
                session.ssl is not None,
            )
        )
        return "250 OK"

    def message_ids(self) -> list[str]:
        return [email.message_from_bytes(m.content)["Message-ID"] for m in self.messages]


class LocalController(Controller):
    """A Controller on 127.0.0.1 that may listen on port 0 (the real port goes to ``.port``)."""

    def __init__(self, handler: Collector, port: int = 0, **kwargs: Any) -> None:
        super().__init__(handler, hostname="127.0.0.1", port=port, **kwargs)

    def _trigger_server(self) -> None:
        assert isinstance(self.server, asyncio.Server)
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()  # type: ignore[no-untyped-call]


@contextmanager
def smtp_server(port: int = 0) -> Iterator[tuple[LocalController, Collector]]:
    """Run an aiosmtpd server on 127.0.0.1; yield (controller, collector); stop it."""
    handler = Collector()
    controller = LocalController(handler, port=port)
    controller.start()
    try:
        yield controller, handler
    finally:
        controller.stop()


@contextmanager
def tcp_server(
    serve: Callable[[socket.socket, threading.Event], None], *, each_in_a_thread: bool = True
) -> Iterator[int]:
    """A TCP server on 127.0.0.1 running ``serve(connection, stop)`` for each client (in a
    thread of its own, or one after the other when not ``each_in_a_thread``); yields its
    port. On leaving, ``stop`` is set, the accepting thread joined and the socket closed."""
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if each_in_a_thread:
                threading.Thread(target=serve, args=(conn, stop), daemon=True).start()
            else:
                serve(conn, stop)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=10)
        server.close()


@contextmanager
def trickling_server(
    *, greeting: bytes = b"", answer: bytes | None, drip: bytes, interval: float = 0.3
) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that never finishes its answer; yields its port.

    Each connection gets ``greeting`` at once; after the client's first bytes, ``answer``
    (``None``: without waiting for the client), then ``drip`` every ``interval`` seconds
    until the client hangs up or the server stops. A client whose timeout applies to each
    read (smtplib, requests) waits forever.
    """

    def serve(conn: socket.socket, stop: threading.Event) -> None:
        with conn:
            try:
                conn.sendall(greeting)
                if answer is not None:
                    conn.recv(65536)
                    conn.sendall(answer)
                while not stop.wait(interval):
                    conn.sendall(drip)
            except OSError:
                pass  # the client gave up: that is the point

    with tcp_server(serve) as port:
        yield port


@contextmanager
def silent_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word (a
    wedged git server); yields its port and the list of connections accepted so far."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], held
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


@contextmanager
def flooding_server(
    head: bytes, chunk: bytes, total: int
) -> Iterator[tuple[int, list[int], threading.Event]]:
    """A TCP server on 127.0.0.1 that answers the client's first bytes with ``head``, then
    sends ``chunk`` as fast as the client takes it until ``total`` bytes went out or the
    client hangs up; yields its port, a one-item list: the bytes of chunks sent so far, and
    an event set once it stopped sending (the client hung up, or ``total`` went out)."""
    sent = [0]
    stopped = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(head)
                while sent[0] < total:
                    conn.sendall(chunk)
                    sent[0] += len(chunk)
            except OSError:
                pass  # the client stopped reading and hung up: that is the point
            finally:
                stopped.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], sent, stopped
    finally:
        server.close()
        thread.join(timeout=10)


def call_within(seconds: float, func: Callable[[], object]) -> BaseException | None:
    """Run ``func`` in a thread; return the exception it raised (None if it returned).

    Fails the test when ``func`` has not finished after ``seconds`` (the thread is left to
    end when its server stops), so a regression fails instead of hanging the suite.
    """
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            func()
            outcome.append(None)
        except BaseException as exc:  # handed to the test, which asserts on it
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    return outcome[0]


@dataclass
class Refusing(Collector):
    """aiosmtpd handler that answers each RCPT TO named in ``refuse`` with its reply there
    (``550 5.1.1 no such user here``, ``450 4.2.1 mailbox busy``) and keeps every message it
    accepts; ``asked`` lists every RCPT TO, in order."""

    refuse: dict[str, str] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        self.asked.append(address)
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"


@contextmanager
def refusing_smtp_server(refuse: dict[str, str]) -> Iterator[tuple[LocalController, Refusing]]:
    """An aiosmtpd server on 127.0.0.1 answering the recipients of ``refuse`` with their
    replies (:class:`Refusing`); yield (controller, handler); stop it."""
    handler = Refusing(refuse=dict(refuse))
    controller = LocalController(handler)
    controller.start()
    try:
        yield controller, handler
    finally:
        controller.stop()
