"""Test helper: a real ``deploybot serve`` process, signed push payloads per forge, and
sites whose publish repository can hold a build at a gate (a real ``pre-receive`` hook).

Everything waits by polling with a generous deadline; nothing sleeps for correctness.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import requests
from dulwich.repo import Repo
from prometheus_client.parser import text_string_to_metric_families

from deploybot.serve.signatures import sign
from tests.gitrepo import commit_files, read_branch
from tests.servers import stop_process
from tests.smallsite import SmallSite

SECRET = "test-webhook-secret-0123"
SECRET_ENV = "DEPLOYBOT_TEST_WEBHOOK_SECRET"
DEADLINE = 60.0
T = TypeVar("T")


def wait_until(what: Callable[[], T], timeout: float = DEADLINE, message: str = "") -> T:
    """Call ``what`` until it returns something true; return it. AssertionError after
    ``timeout`` s (so a regression fails instead of hanging the suite)."""
    deadline = time.monotonic() + timeout
    while True:
        value = what()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {message or what}")
        time.sleep(0.05)


def daemon_table(**keys: Any) -> str:
    """A ``[daemon]`` table for a test: any free port, the test secret, no polling."""
    values = {"listen": "127.0.0.1:0", "secret_env": SECRET_ENV, "poll_interval": 0, **keys}
    return "[daemon]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())


def journal_socket(env: dict[str, str]) -> tuple[socket.socket, socket.socket]:
    """A connected pair of Unix stream sockets, as systemd gives a service's stdout and
    stderr: ``(ours, theirs)``; ``env["JOURNAL_STREAM"]`` is set to ``theirs``'s device
    and inode (systemd.exec(5)). Pass ``theirs`` to the process, then close it; read
    ``ours``."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    stat = os.fstat(theirs.fileno())
    env["JOURNAL_STREAM"] = f"{stat.st_dev}:{stat.st_ino}"
    return ours, theirs


class GatedSite(SmallSite):
    """A :class:`SmallSite` whose publish repository runs a ``pre-receive`` hook: each
    push appends a line to ``reached``, writes its environment to ``hook.env`` (a build
    process's, as git passes it on) and then waits until the file ``gate`` exists (at
    most 120 s), so a test holds a build in the middle of its push."""

    def __init__(self, tmp_path: Path, *, gated: bool = True, extra: str = "") -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        super().__init__(tmp_path, extra=extra)
        self.gate = tmp_path / "gate"
        self.reached = tmp_path / "reached"
        self.hook_env = tmp_path / "hook.env"
        if not gated:
            self.open_gate()
        hook = self.publish / "hooks" / "pre-receive"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(
            "#!/bin/sh\ncat >/dev/null\n"
            f"echo x >> '{self.reached}'\nenv > '{self.hook_env}'\n"
            f"i=0; while [ ! -e '{self.gate}' ] && [ $i -lt 2400 ]; do\n"
            "  sleep 0.05; i=$((i+1))\ndone\n"
        )
        hook.chmod(0o755)

    def open_gate(self) -> None:
        self.gate.touch()

    def pushes_reached(self) -> int:
        return len(self.reached.read_text().splitlines()) if self.reached.exists() else 0

    def commit(self, n: int) -> str:
        """Commit a new post (number ``n``) to the source; return the commit id."""
        return commit_files(
            self.source,
            {f"_posts/2023-05-01-post-{n}.md": f"---\ntitle: P{n}\n---\n{n}\n".encode()},
        )

    def published_source(self) -> str | None:
        """The source commit the publish head was built from (its note), or None."""
        return published_source(self)

    def build_commits(self) -> int:
        """Commits on the publish branch."""
        with Repo(str(self.publish)) as repo:
            head = repo.refs.as_dict().get(b"refs/heads/asf-site")
            return 0 if head is None else sum(1 for _ in repo.get_walker(include=[head]))


class Daemon:
    """``python -m deploybot serve --config ...`` as a subprocess; its log is collected."""

    def __init__(
        self,
        *configs: Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        journal: bool = False,
    ) -> None:
        self.configs = configs
        self.cwd = cwd
        self.env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
        self.env.update({SECRET_ENV: SECRET, **(env or {})})
        self.journal = journal
        self.log: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self._output: Any = None

    def start(self, *, expect_listening: bool = True) -> Daemon:
        """Start ``deploybot serve``; with ``journal``, its stdout and stderr are a socket
        named by ``JOURNAL_STREAM``, as systemd connects a service to journald."""
        argv = [sys.executable, "-m", "deploybot", "serve"]
        for config in self.configs:
            argv += ["--config", str(config)]
        if self.journal:
            ours, theirs = journal_socket(self.env)
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=theirs, stderr=theirs, text=True,
                env=self.env, cwd=self.cwd,
            )  # fmt: skip
            theirs.close()
            self._output = ours.makefile("r", encoding="utf-8", errors="replace")
        else:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, env=self.env, cwd=self.cwd,
            )  # fmt: skip
            self._output = self.proc.stdout
        threading.Thread(target=self._read, daemon=True).start()
        if expect_listening:
            line = self.wait_log(r"listening on (\S+)")
            self.url = re.search(r"listening on (\S+)", line).group(1)  # type: ignore[union-attr]
        return self

    def _read(self) -> None:
        assert self._output is not None
        for line in self._output:
            self.log.append(line.rstrip("\n"))

    def wait_log(self, pattern: str, timeout: float = DEADLINE) -> str:
        """The first log line matching ``pattern`` (waiting for it)."""
        regex = re.compile(pattern)

        def found() -> str | None:
            if self.proc is not None and self.proc.poll() is not None and not self.log:
                raise AssertionError(f"deploybot serve exited with {self.proc.returncode}")
            return next((line for line in list(self.log) if regex.search(line)), None)

        return wait_until(found, timeout, f"log line {pattern!r} in {self.log}")

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> requests.Response:
        return requests.post(self.url + path, data=body, headers=headers, timeout=30)

    def push(self, path: str, payload: tuple[dict[str, str], bytes]) -> requests.Response:
        headers, body = payload
        return self.post(path, body, headers)

    def health(self) -> tuple[int, dict[str, Any]]:
        answer = requests.get(self.url + "/healthz", timeout=30)
        return answer.status_code, answer.json()

    def last_run(self, site: str) -> dict[str, Any] | None:
        run: dict[str, Any] | None = self.health()[1]["sites"][site]["last_run"]
        return run

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """``{(sample name, sorted labels): value}`` from ``/metrics``."""
        text = requests.get(self.url + "/metrics", timeout=30).text
        out = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return out

    def runs(self, site: str) -> int:
        """Builds of ``site`` finished so far (all results)."""
        metrics = self.metrics()
        return int(
            sum(v for (name, labels), v in metrics.items()
                if name == "deploybot_runs_total" and ("site", site) in labels)
        )  # fmt: skip

    def deliveries(self, result: str) -> int:
        key = ("deploybot_webhook_deliveries_total", (("result", result),))
        return int(self.metrics().get(key, 0))

    def idle(self, site: str) -> bool:
        state = self.health()[1]["sites"][site]
        return not state["building"] and not state["queued"]

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float = DEADLINE) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout: float = DEADLINE) -> int:
        """SIGTERM, then wait for the exit; return the exit code."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def __enter__(self) -> Daemon:
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc, DEADLINE)


# Signed push payloads, as each forge sends them (the fields deploybot reads, and the
# headers: event, delivery id, signature).


def push_commit(daemon: Daemon, site: GatedSite, n: int) -> str:
    """Commit ``site``'s change ``n`` and deliver its signed GitHub push to the daemon at
    ``/webhook/<site folder name>``; assert it was queued (202). Returns the commit."""
    commit = site.commit(n)
    answer = daemon.push(f"/webhook/{site.root.name}", github(commit))
    assert answer.status_code == 202, answer.text
    return commit


def commit_post_due_in(site: SmallSite, seconds: float, n: int = 0) -> tuple[str, str]:
    """Commit to ``site``'s source a post dated ``seconds`` from now (whole seconds, UTC);
    return the commit and the post's output path (held back until that date)."""
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=seconds)
    post = f"---\ntitle: Soon\ndate: {due:%Y-%m-%d %H:%M:%S} +0000\n---\nSoon.\n".encode()
    commit = commit_files(site.source, {f"_posts/{due:%Y-%m-%d}-soon-{n}.md": post})
    return commit, f"{due:%Y/%m/%d}/soon-{n}.html"


def held_back_post(site: SmallSite, push: Callable[[str], None], seconds: float) -> str:
    """Push (``push(commit)``) a post dated ``seconds`` ahead and wait for its build; again,
    up to 3 times, while that build already published it (a slow machine built after
    the date). Returns the post's output path, held back by the published build."""
    for n in range(3):
        commit, path = commit_post_due_in(site, seconds, n)
        push(commit)
        wait_until(lambda c=commit: published_source(site) == c)
        if path not in read_branch(site.publish, "asf-site"):
            return path
    raise AssertionError(f"each build of {site.root} ran after its post's date")


def published_source(site: SmallSite) -> str | None:
    """The source commit ``site``'s publish head was built from (its note), or None."""
    from deploybot.record.notes_tree import read_source_commit
    from deploybot.record.refs import NOTES_REF

    with Repo(str(site.publish)) as repo:
        refs = repo.refs.as_dict()
        head, notes = refs.get(b"refs/heads/asf-site"), refs.get(NOTES_REF.encode())
        if head is None or notes is None:
            return None
        return read_source_commit(repo, notes.decode(), head.decode())


def _delivery() -> str:
    return str(uuid.uuid4())


def github(after: str, *, ref: str = "refs/heads/main", deleted: bool = False,
           repo_url: str = "https://github.com/o/site", delivery: str | None = None,
           secret: str = SECRET, event: str = "push") -> tuple[dict[str, str], bytes]:  # fmt: skip
    """A GitHub push (``X-Hub-Signature-256``)."""
    body = json.dumps({
        "ref": ref, "before": "0" * 40, "after": "0" * 40 if deleted else after,
        "created": False, "deleted": deleted, "forced": False,
        "repository": {"clone_url": repo_url, "html_url": repo_url.removesuffix(".git")},
        "head_commit": None if deleted else {"id": after},
    }).encode()  # fmt: skip
    headers = {
        "Content-Type": "application/json", "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or _delivery(), "X-Hub-Signature-256": sign(body, secret),
        "User-Agent": "GitHub-Hookshot/test",
    }  # fmt: skip
    return headers, body


Payload = tuple[dict[str, str], bytes]


def gitea(after: str, *, ref: str = "refs/heads/main", secret: str = SECRET,
          repo_url: str = "https://gitea.example.org/o/site.git") -> Payload:  # fmt: skip
    """A Gitea push: bare hex ``X-Gitea-Signature`` (no GitHub-style headers)."""
    body = json.dumps({
        "ref": ref, "before": "0" * 40, "after": after, "compare_url": "",
        "repository": {"clone_url": repo_url, "ssh_url": "git@gitea.example.org:o/site.git"},
        "pusher": {"login": "dev"},
    }).encode()  # fmt: skip
    hex_mac = sign(body, secret).removeprefix("sha256=")
    headers = {
        "Content-Type": "application/json", "X-Gitea-Event": "push",
        "X-Gitea-Delivery": _delivery(), "X-Gitea-Signature": hex_mac,
    }  # fmt: skip
    return headers, body


def gitlab(after: str, *, ref: str = "refs/heads/main", token: str = SECRET,
           repo_url: str = "https://gitlab.example.org/g/site.git") -> Payload:  # fmt: skip
    """A GitLab ``Push Hook`` with ``X-Gitlab-Token``."""
    body = json.dumps({
        "object_kind": "push", "ref": ref, "before": "0" * 40, "after": after,
        "checkout_sha": after, "total_commits_count": 1,
        "project": {"git_http_url": repo_url, "git_ssh_url": "git@gitlab.example.org:g/site.git"},
        "repository": {"url": "git@gitlab.example.org:g/site.git"},
    }).encode()  # fmt: skip
    headers = {
        "Content-Type": "application/json", "X-Gitlab-Event": "Push Hook",
        "X-Gitlab-Event-UUID": _delivery(), "X-Gitlab-Token": token,
    }  # fmt: skip
    return headers, body


def bitbucket_server(after: str, *, ref: str = "refs/heads/main", kind: str = "UPDATE",
                     secret: str = SECRET) -> tuple[dict[str, str], bytes]:  # fmt: skip
    """A Bitbucket Server ``repo:refs_changed`` (``X-Hub-Signature: sha256=``)."""
    body = json.dumps({
        "eventKey": "repo:refs_changed", "actor": {"name": "dev"},
        "repository": {"slug": "site", "project": {"key": "WEB"}, "links": {"clone": [
            {"href": "ssh://git@bitbucket.example.org:7999/web/site.git", "name": "ssh"},
            {"href": "https://bitbucket.example.org/scm/web/site.git", "name": "http"}]}},
        "changes": [{"ref": {"id": ref, "type": "BRANCH"}, "refId": ref, "fromHash": "0" * 40,
                     "toHash": "0" * 40 if kind == "DELETE" else after, "type": kind}],
    }).encode()  # fmt: skip
    headers = {
        "Content-Type": "application/json; charset=UTF-8", "X-Event-Key": "repo:refs_changed",
        "X-Request-Id": _delivery(), "X-Hub-Signature": sign(body, secret),
    }  # fmt: skip
    return headers, body
