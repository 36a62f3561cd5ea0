"""Git servers for tests of the remote side, all on 127.0.0.1: real smart HTTP (git's own
``git http-backend`` run as a CGI program, or dulwich.web), optionally behind HTTP basic
auth (RFC 7617), or over https with a self-signed certificate; OpenSSH's sshd; a server
answering every request with one HTTP status; and hostile ones: an endless ref
advertisement (over HTTP or ``git://``), a server hanging up. For servers that trickle, see
:func:`tests.servers.trickling_server`.
"""

from __future__ import annotations

import base64
import os
import pwd
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from dulwich.repo import Repo
from dulwich.server import BackendRepo, DictBackend
from dulwich.web import make_wsgi_chain

from tests.servers import free_port, tcp_server

App = Callable[[dict[str, Any], Any], Iterable[bytes]]

ZERO = b"0" * 40


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log on the test's stderr


class _Threads(WSGIServer):
    """A WSGI server answering each connection in its own thread (a hung client, e.g. one
    the test gave up on, blocks no other)."""

    daemon_threads = True

    def process_request(self, request: Any, client_address: Any) -> None:
        def serve() -> None:
            try:
                self.finish_request(request, client_address)
            except OSError:
                pass  # the client hung up
            finally:
                self.shutdown_request(request)

        threading.Thread(target=serve, daemon=True).start()


class _Threads6(_Threads):
    """:class:`_Threads` on an IPv6 address."""

    address_family = socket.AF_INET6


def ipv6_loopback() -> str | None:
    """Why ``::1`` cannot be listened on here (no IPv6 loopback), or None when it can."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError as exc:
        return f"no IPv6 loopback (::1): {exc}"
    return None


@contextmanager
def wsgi_server(
    app: App, tls: ssl.SSLContext | None = None, host: str = "127.0.0.1"
) -> Iterator[str]:
    """Serve ``app`` on ``host`` (127.0.0.1, or ``::1``); yield ``http://127.0.0.1:PORT``
    (``http://[::1]:PORT``; ``https://`` with a server-side ``tls`` context); stop the
    server."""
    server_class = _Threads6 if ":" in host else _Threads
    server = make_server(host, 0, app, server_class=server_class, handler_class=_Quiet)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    netloc = f"[{host}]" if ":" in host else host
    try:
        yield f"{'https' if tls else 'http'}://{netloc}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def status_app(status: str, headers: tuple[tuple[str, str], ...] = ()) -> App:
    """A WSGI app answering every request with ``status`` (``"404 Not Found"``) and an
    empty body."""

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response(status, [("Content-Length", "0"), *headers])
        return [b""]

    return app


def dulwich_app(repo_path: Path) -> App:
    """dulwich.web serving ``repo_path`` at ``/site.git`` (fetch and push)."""
    repos: dict[str, BackendRepo] = {"/site.git": Repo(str(repo_path))}
    return make_wsgi_chain(DictBackend(repos))


def http_backend_app(root: Path) -> App:
    """git's own smart HTTP server: ``git http-backend`` run as a CGI program (RFC 3875)
    for every request, serving the repositories under ``root`` (fetch, protocol v2
    included, and push). Skips the test when git is missing."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        env = {
            "GIT_PROJECT_ROOT": str(root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": environ.get("REMOTE_USER", "deploybot"),  # lets receive-pack run
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": environ["REQUEST_METHOD"],
            "PATH_INFO": environ.get("PATH_INFO", ""),
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": environ.get("HTTP_GIT_PROTOCOL", ""),
            "HOME": str(root),
            "PATH": "/usr/bin:/bin",
        }
        done = subprocess.run(
            [git, "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status, headers = "200 OK", []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = value.strip()
            elif name:
                headers.append((name.strip(), value.strip()))
        start_response(status, headers)
        return [payload]

    return app


class BasicAuth:
    """WSGI middleware: ``app`` behind HTTP basic auth (RFC 7617) for ``user``:``password``
    (``user`` None: any user name), else 401 with a ``WWW-Authenticate`` challenge.
    ``seen`` keeps every ``Authorization`` header received (None when absent)."""

    def __init__(self, app: App, user: str | None, password: str) -> None:
        self.app, self.user, self.password = app, user, password
        self.seen: list[str | None] = []

    def credentials(self) -> list[tuple[str, str] | None]:
        """The (user, password) pairs of :attr:`seen`."""
        found: list[tuple[str, str] | None] = []
        for header in self.seen:
            if header is None or not header.startswith("Basic "):
                found.append(None)
                continue
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            found.append((user, password))
        return found

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        header = environ.get("HTTP_AUTHORIZATION")
        self.seen.append(header)
        pair = self.credentials()[-1]
        if pair is None or pair[1] != self.password or self.user not in (None, pair[0]):
            start_response(
                "401 Unauthorized",
                [("WWW-Authenticate", 'Basic realm="git"'), ("Content-Length", "0")],
            )
            return [b""]
        environ["REMOTE_USER"] = pair[0]
        return self.app(environ, start_response)


def _pkt(payload: bytes) -> bytes:
    return b"%04x" % (len(payload) + 4) + payload


def endless_refs(start: int = 0) -> Iterator[bytes]:
    """Ref advertisement lines without end, each a new ref (``refs/heads/b<N>``), in
    batches of 1,000 pkt-lines."""
    n = start
    while True:
        yield b"".join(
            _pkt(b"%s refs/heads/b%d\n" % (ZERO[:-1] + b"1", i)) for i in range(n, n + 1000)
        )
        n += 1000


@contextmanager
def endless_advertisement(*, http: bool) -> Iterator[tuple[str, list[int]]]:
    """A git server on 127.0.0.1 whose ref advertisement never ends: protocol v0 (what
    every git server speaks), a new ref per line, as fast as the client reads. Yields its
    URL (``http://127.0.0.1:PORT/site.git`` or ``git://127.0.0.1:PORT/site.git``) and a
    one-item list: the bytes sent so far (over all connections)."""
    sent = [0]
    first = _pkt(ZERO[:-1] + b"1 HEAD\0multi_ack side-band-64k ofs-delta agent=git/2\n")
    if http:
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n"
            b"Connection: close\r\n\r\n" + _pkt(b"# service=git-upload-pack\n") + b"0000"
        )
    else:
        head = b""

    def serve(conn: socket.socket, stop: threading.Event) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(head + first)
                for batch in endless_refs():
                    if stop.is_set():
                        return
                    conn.sendall(batch)
                    sent[0] += len(batch)
            except OSError:
                pass  # the client stopped reading and hung up: that is the point

    scheme = "http" if http else "git"
    with tcp_server(serve) as port:
        yield f"{scheme}://127.0.0.1:{port}/site.git", sent


def self_signed_cert(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1 made with the openssl CLI in ``folder``: its
    PEM file (a CA bundle of its own for clients) and a server context serving it. Skips
    the test when openssl is missing."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl CLI is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context


@contextmanager
def hanging_up_server(*, reset: bool) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that reads what a client sends first, then hangs up:
    with a TCP reset (RST, ``SO_LINGER`` 0) when ``reset``, else an orderly close (FIN)
    without a word. Yields its port."""

    def serve(conn: socket.socket, _stop: threading.Event) -> None:
        with conn:
            try:
                conn.settimeout(5)
                conn.recv(65536)
            except OSError:
                pass
            if reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    with tcp_server(serve, each_in_a_thread=False) as port:
        yield port


@dataclass(frozen=True)
class SshServer:
    """An OpenSSH server on 127.0.0.1 (:func:`sshd_server`) and a client set up for it.

    ``port``: where it listens; ``user``: the account to log in as (the one running the
    tests); ``known_hosts``: the client's known_hosts file (empty at first); ``bin``: a
    folder to put first on PATH, holding an ``ssh`` that runs OpenSSH's client with the
    test's key and known_hosts only (``-F /dev/null``: no ssh_config of the machine),
    in batch mode (as from cron: never a prompt)."""

    port: int
    user: str
    known_hosts: Path
    bin: Path


@contextmanager
def sshd_server(folder: Path) -> Iterator[SshServer]:
    """OpenSSH's ``sshd`` on 127.0.0.1 with a fresh host key, taking the test's own key
    (made here) for the user running the tests: a real ssh remote, ``git-upload-pack``
    and ``git-receive-pack`` run by the login shell. Everything but the privilege
    separation folder sshd wants (``/run/sshd``) is under ``folder``. Skips the test
    when sshd, ssh, ssh-keygen or git is missing."""
    sshd = shutil.which("sshd", path="/usr/sbin:/usr/bin:/sbin")
    ssh, keygen = shutil.which("ssh") or "", shutil.which("ssh-keygen") or ""
    if not (sshd and ssh and keygen and shutil.which("git")):
        pytest.skip("OpenSSH (sshd, ssh, ssh-keygen) or git is not installed")
    if os.geteuid() == 0 and not Path("/run/sshd").is_dir():
        pytest.skip("sshd run as root needs its privilege separation folder /run/sshd")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)],
                       check=True, capture_output=True)  # fmt: skip
    shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {folder / 'host_key'}\n"
        f"PidFile none\nAuthorizedKeysFile {folder / 'authorized_keys'}\nStrictModes no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "PermitRootLogin prohibit-password\n"
    )
    known_hosts, bin_folder = folder / "known_hosts", folder / "bin"
    known_hosts.write_text("")
    bin_folder.mkdir(exist_ok=True)
    wrapper = bin_folder / "ssh"
    wrapper.write_text(
        f"#!/bin/sh\nexec {ssh} -F /dev/null -o BatchMode=yes -o UserKnownHostsFile="
        f'{known_hosts} -o GlobalKnownHostsFile=/dev/null -i {folder / "client_key"} "$@"\n'
    )
    wrapper.chmod(0o755)
    log = (folder / "sshd.log").open("wb")
    proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
    try:
        _wait_for_port(port, proc, "sshd")
        yield SshServer(port, pwd.getpwuid(os.geteuid()).pw_name, known_hosts, bin_folder)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], name: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{name} did not start") from None
            time.sleep(0.05)
