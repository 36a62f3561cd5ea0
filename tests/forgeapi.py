"""A fake forge API on 127.0.0.1 for the commit status tests: GitHub, Gitea/Forgejo or GitLab.

It checks each POST against the forge's documentation (the path, the headers, the JSON body's
fields and states; sources in :mod:`deploybot.config.forges`) and answers as the forge
would: 201 with the status, 401 for another token, 422 naming what is wrong with a body (the
problem is also kept in :attr:`FakeForge.problems`, so a test asserts there are none). It
records what arrives, with the time, and can be told to answer 500, 401, 404, or to hang (a
timeout), for the next requests or for all.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

TOKEN = "ghp_S3cretT0kenN0tToBeSeen0123456789abcd"
SHA_RE = r"(?P<sha>[0-9a-f]{40})"

STATES = {
    "github": {"error", "failure", "pending", "success"},
    "gitea": {"pending", "success", "error", "failure", "warning"},
    "gitlab": {"pending", "running", "success", "failed", "canceled"},
}
FIELDS = {
    "github": {"state", "target_url", "description", "context"},
    "gitea": {"state", "target_url", "description", "context"},
    "gitlab": {"state", "ref", "name", "context", "target_url", "description", "coverage",
               "pipeline_id"},
}  # fmt: skip
_MESSAGES = {401: "Bad credentials", 404: "Not Found", 307: "Moved", 429: "Slow down"}
MAX_DESCRIPTION = {"github": 140, "gitea": 255, "gitlab": 255}


@dataclass(frozen=True)
class Received:
    """One POST the forge took: its raw ``path``, ``headers``, JSON ``body`` and the time it
    arrived (``at``, Unix seconds)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float

    @property
    def state(self) -> str:
        return str(self.body["state"])


class FakeForge:
    """The forge ``api`` serving ``repository`` (``owner/name``; GitLab: a path or id).

    ``answers``: what to do with the next requests, in order (an HTTP status such as 500 or
    401, or ``"hang"``: answer nothing for :attr:`hang_for` seconds); then ``always`` if set,
    else the forge's own answer. Only requests answered 201 are in :attr:`received`; every
    request is in :attr:`tried`."""

    def __init__(
        self, api: str, repository: str = "owner/site", token: str = TOKEN, port: int = 0
    ) -> None:
        self.api, self.repository, self.token = api, repository, token
        self.answers: list[int | str] = []
        self.always: int | str | None = None
        self.hang_for = 5.0
        self.received: list[Received] = []
        self.tried: list[str] = []
        self.problems: list[str] = []
        self.echo_token_in_errors = False
        self._lock = threading.Lock()
        forge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                forge._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        """What ``status.url`` is set to: GitHub's base has no path; Gitea's is the host
        (deploybot adds ``/api/v1``); GitLab's ends in ``/api/v4``."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/api/v4" if self.api == "gitlab" else root

    def states(self) -> list[str]:
        """The states received, in order."""
        with self._lock:
            return [r.state for r in self.received]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _path_re(self) -> re.Pattern[str]:
        if self.api == "gitlab":
            project = re.escape(quote(self.repository, safe=""))
            return re.compile(rf"^/api/v4/projects/{project}/statuses/{SHA_RE}$")
        prefix = "/api/v1" if self.api == "gitea" else ""
        return re.compile(rf"^{prefix}/repos/{re.escape(self.repository)}/statuses/{SHA_RE}$")

    def _auth_ok(self, headers: dict[str, str]) -> bool:
        if self.api == "gitlab":
            return headers.get("private-token") == self.token
        scheme = "Bearer" if self.api == "github" else "token"
        return headers.get("authorization") == f"{scheme} {self.token}"

    def _check(self, path: str, headers: dict[str, str], body: Any) -> list[str]:
        problems = []
        if not self._path_re().match(path):
            problems.append(f"path {path}")
        if not headers.get("content-type", "").startswith("application/json"):
            problems.append(f"content-type {headers.get('content-type')}")
        if not headers.get("user-agent"):  # GitHub refuses a request without one
            problems.append("no user-agent")
        if self.api == "github":
            if headers.get("accept") != "application/vnd.github+json":
                problems.append(f"accept {headers.get('accept')}")
            if headers.get("x-github-api-version") != "2022-11-28":
                problems.append(f"api version {headers.get('x-github-api-version')}")
        if not isinstance(body, dict):
            return [*problems, "body is not a JSON object"]
        if set(body) - FIELDS[self.api]:
            problems.append(f"unknown fields {sorted(set(body) - FIELDS[self.api])}")
        if body.get("state") not in STATES[self.api]:
            problems.append(f"state {body.get('state')!r}")
        name = body.get("name" if self.api == "gitlab" else "context")
        if not isinstance(name, str) or not name:
            problems.append("no context")
        description = body.get("description", "")
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION[self.api]:
            problems.append(f"description too long ({len(str(description))})")
        if any(not isinstance(v, str) for v in body.values()):
            problems.append("a field is not a string")
        return problems

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.tried.append(handler.path)
            answer = self.answers.pop(0) if self.answers else self.always
        if answer == "hang":
            time.sleep(self.hang_for)
            return
        if isinstance(answer, int):
            token = f" {headers.get('authorization') or headers.get('private-token')}"
            text = "Server Error" if answer >= 500 else _MESSAGES.get(answer, "Refused")
            message = text + (token if self.echo_token_in_errors else "")
            return _answer(handler, answer, {"message": message})
        if not self._auth_ok(headers):
            message = "Bad credentials"
            if self.echo_token_in_errors:
                message += f": {headers.get('authorization') or headers.get('private-token')}"
            return _answer(handler, 401, {"message": message})
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        problems = self._check(handler.path, headers, body)
        if problems:
            with self._lock:
                self.problems += problems
            return _answer(handler, 422, {"message": "Validation Failed: " + "; ".join(problems)})
        assert isinstance(body, dict)
        with self._lock:
            self.received.append(Received(handler.path, headers, body, time.time()))
        _answer(handler, 201, {"id": len(self.received), **body})


def _answer(handler: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
    payload = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


@contextmanager
def fake_forge(api: str, repository: str = "owner/site") -> Iterator[FakeForge]:
    forge = FakeForge(api, repository)
    try:
        yield forge
    finally:
        forge.stop()


def status_table(
    forge: FakeForge, *, token_env: str = "DEPLOYBOT_STATUS_TOKEN", **more: str
) -> str:
    """The ``[status]`` table posting to ``forge``."""
    lines = [
        "[status]",
        f'api = "{forge.api}"',
        f'url = "{forge.url}"',
        f'repository = "{forge.repository}"',
        f'token_env = "{token_env}"',
        *(f'{k} = "{v}"' for k, v in more.items()),
    ]
    return "\n".join(lines) + "\n"
