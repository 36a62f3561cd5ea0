"""Exit codes by cause, not by place (issue 17): a remote that is not there, that wants
credentials, or whose host does not resolve is a configuration error (78, naming the key
and the file), a corrupt source tree is bad input (1, naming the path), and only what can
heal by waiting is 75. Each against a real server on 127.0.0.1 (or a name that never
resolves, RFC 2606's ``.invalid``), through the real CLI."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from deploybot.git import repository
from deploybot.support.errors import EX_CONFIG, EX_INPUT, EX_TEMPFAIL
from tests.gitcli import run_git
from tests.gitrepo import commit_snapshot
from tests.gitservers import (
    BasicAuth,
    dulwich_app,
    hanging_up_server,
    http_backend_app,
    self_signed_cert,
    sshd_server,
    status_app,
    wsgi_server,
)
from tests.hostile import commit_names
from tests.servers import call_within, free_port, git_daemon, silent_server
from tests.smallsite import SmallSite


def run(site: SmallSite) -> tuple[int, str]:
    """``deploybot run-once`` of ``site``: (exit code, its one line)."""
    code, output = site.run()
    assert output.count("\n") == 1 and output.startswith("deploybot: error: "), output
    return code, output.removeprefix("deploybot: error: ").rstrip("\n")


@contextmanager
def answering(status: str, *headers: tuple[str, str]) -> Iterator[str]:
    """A server answering every request with ``status``; yields a repository URL on it."""
    with wsgi_server(status_app(status, headers)) as base:
        yield f"{base}/o/site.git"


_CHALLENGE = ("WWW-Authenticate", 'Basic realm="git"')


@pytest.mark.parametrize(
    ("status", "code", "words"),
    [
        ("404 Not Found", EX_CONFIG, "no git repository there (HTTP 404 Not Found)"),
        ("410 Gone", EX_CONFIG, "no git repository there (HTTP 410"),
        ("401 Unauthorized", EX_CONFIG, "the server wants credentials (HTTP 401)"),
        ("403 Forbidden", EX_CONFIG, "the server refuses access (HTTP 403)"),
        ("400 Bad Request", EX_CONFIG, "the server refuses the request (HTTP 400 Bad Request)"),
        ("500 Internal Server Error", EX_TEMPFAIL, "HTTP 500"),
        ("503 Service Unavailable", EX_TEMPFAIL, "HTTP 503"),
        ("429 Too Many Requests", EX_TEMPFAIL, "HTTP 429"),
    ],
)
@pytest.mark.parametrize("side", ["source", "publish"])
def test_http_answers_by_cause(
    tmp_path: Path, status: str, code: int, words: str, side: str
) -> None:
    site = SmallSite(tmp_path)
    with answering(status, _CHALLENGE) as url:
        if side == "source":
            site.write_config(source_url=url)
        else:
            site.write_config(publish_url=url)
        got, line = run(site)
    assert got == code, line
    assert words in line
    if code == EX_CONFIG:
        assert line.startswith(f"{site.config}: '{side}.url' {url}: ")
    else:
        assert url in line and "'" not in line.partition(url)[0]  # no key: nothing to change
    if status.startswith("401"):  # how to give credentials
        assert f"set {side}.token_env to the name of an environment variable" in line
        assert "or use an ssh:// URL with a key" in line


def test_a_host_that_does_not_resolve_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.invalid`` never resolves (RFC 2606). The resolver is asked nothing (it could send
    the name off this machine): for that host it answers as glibc's does for a name DNS does
    not know, ``EAI_NONAME``."""
    real, asked = socket.getaddrinfo, []

    def no_such_name(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "nonexistent.invalid":
            asked.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    site = SmallSite(tmp_path)
    url = "http://nonexistent.invalid/x.git"
    site.write_config(source_url=url)
    outcome: list[tuple[int, str]] = []
    assert call_within(60, lambda: outcome.append(run(site))) is None
    code, line = outcome[0]
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'source.url' {url}: the host nonexistent.invalid does not resolve "
        "(no such name in DNS)",
    )
    site.write_config(publish_url="git://nonexistent.invalid/p.git")
    code, line = run(site)
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'publish.url' git://nonexistent.invalid/p.git: the host "
        "nonexistent.invalid does not resolve (no such name in DNS)",
    )
    assert asked and set(asked) == {"nonexistent.invalid"}


@pytest.mark.parametrize("scheme", ["http", "git"])
def test_a_refused_connection_is_temporary(tmp_path: Path, scheme: str) -> None:
    """In words: it read "ReportingHTTPConnectionPool(host='127.0.0.1', port=18081): Max
    retries exceeded ... NewConnectionError(...)" over http."""
    site = SmallSite(tmp_path)
    url = f"{scheme}://127.0.0.1:{free_port()}/site.git"
    site.write_config(source_url=url)
    code, line = run(site)
    assert (code, line) == (
        EX_TEMPFAIL,
        f"cannot fetch from {url}: the connection was refused (is the server running?)",
    )


@pytest.mark.parametrize(
    ("scheme", "reset", "words"),
    [
        ("http", True, "the server reset the connection"),
        ("git", True, "the server reset the connection"),
        ("http", False, "the server closed the connection without answering"),
    ],
)
def test_a_server_hanging_up_is_temporary_in_words(
    tmp_path: Path, scheme: str, reset: bool, words: str
) -> None:
    site = SmallSite(tmp_path)
    with hanging_up_server(reset=reset) as port:
        url = f"{scheme}://127.0.0.1:{port}/site.git"
        site.write_config(source_url=url)
        code, line = run(site)
    assert (code, line) == (EX_TEMPFAIL, f"cannot fetch from {url}: {words}")


@pytest.mark.parametrize("scheme", ["http", "git"])
def test_a_server_that_stops_answering_times_out_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    monkeypatch.setattr(repository, "IDLE_TIMEOUT", 0.5)
    site = SmallSite(tmp_path)
    with silent_server() as (port, _accepted):
        url = f"{scheme}://127.0.0.1:{port}/site.git"
        site.write_config(source_url=url)
        code, line = run(site)
    assert (code, line) == (
        EX_TEMPFAIL,
        f"cannot fetch from {url}: the server stopped answering (timed out)",
    )


def test_a_certificate_that_cannot_be_verified_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waiting does not heal it (exit 78): the line names the host and what failed, and
    what it says to do works (a CA bundle holding the certificate, in SSL_CERT_FILE)."""
    site = SmallSite(tmp_path)
    cert, context = self_signed_cert(tmp_path)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with wsgi_server(dulwich_app(site.source), tls=context) as base:
        url = f"{base}/site.git"
        site.write_config(source_url=url)
        code, line = run(site)
        assert (code, line) == (
            EX_CONFIG,
            f"{site.config}: 'source.url' {url}: the TLS certificate of 127.0.0.1 cannot be "
            "verified (self-signed certificate): give the server a certificate from an "
            "authority this machine trusts, or add its authority to the system's trust "
            "store (or a CA bundle holding it in the environment variable SSL_CERT_FILE)",
        )
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        code, output = site.run()
    assert code == 0, output


def test_https_to_a_plain_http_server_is_a_config_error(tmp_path: Path) -> None:
    """OpenSSL's "wrong version number": the server answered in plain text."""
    site = SmallSite(tmp_path)
    with wsgi_server(dulwich_app(site.source)) as base:
        url = base.replace("http://", "https://") + "/site.git"
        site.write_config(source_url=url)
        code, line = run(site)
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'source.url' {url}: the server does not speak TLS there (OpenSSL: "
        "wrong version number): is it an http:// URL?",
    )


def test_a_missing_repository_on_git_http_backend_is_a_config_error(tmp_path: Path) -> None:
    """git's own smart HTTP server answers 404 for a repository it does not have."""
    site = SmallSite(tmp_path)
    with wsgi_server(http_backend_app(tmp_path)) as base:
        site.write_config(source_url=f"{base}/nowhere.git")
        code, line = run(site)
        assert code == EX_CONFIG and "no git repository there (HTTP 404" in line
        site.write_config(source_url=f"{base}/source.git")  # and the real one fetches
        code, output = site.run()
    assert code == 0, output


def test_a_missing_repository_on_git_daemon_is_a_config_error(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    with git_daemon(tmp_path) as base:
        site.write_config(source_url=f"{base}/nowhere.git")
        code, line = run(site)
    assert code == EX_CONFIG, line
    assert line.startswith(f"{site.config}: 'source.url' {base}/nowhere.git: no git repository")


def test_unauthorized_with_a_token_says_the_token_was_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITE_TOKEN", "wrong-token-123456")
    site = SmallSite(tmp_path)
    guarded = BasicAuth(dulwich_app(site.source), None, "right-token-123456")
    with wsgi_server(guarded) as base:
        site.write_config(source_url=f"{base}/site.git", extra="")
        site.config.write_text(
            site.config.read_text().replace("[publish]", 'token_env = "SITE_TOKEN"\n[publish]', 1)
        )
        code, line = run(site)
    assert code == EX_CONFIG
    assert line == (
        f"{site.config}: 'source.url' {base}/site.git: the server refused the token in "
        "SITE_TOKEN (HTTP 401): check the token, and that it may read the repository"
    )
    assert "wrong-token" not in line


# --- ssh: what the ssh client says -----------------------------------------------------------


def fake_ssh(folder: Path, say: str, status: int = 255) -> None:
    """An ``ssh`` on PATH that says ``say`` on stderr and exits ``status``, as OpenSSH does
    when it cannot log in (dulwich runs ``ssh`` from PATH)."""
    folder.mkdir(exist_ok=True)
    ssh = folder / "ssh"
    ssh.write_text(f"#!/bin/sh\necho '{say}' >&2\nexit {status}\n")
    ssh.chmod(ssh.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize(
    ("say", "code", "words"),
    [
        (
            "git@git.example.org: Permission denied (publickey).",
            EX_CONFIG,
            "ssh could not log in (git@git.example.org: Permission denied (publickey).): give "
            "the ssh key of the user running deploybot access to the repository (a deploy key)",
        ),
        (
            "ssh: Could not resolve hostname git.example.org: Name or service not known",
            EX_CONFIG,
            "the host git.example.org does not resolve",
        ),
        (
            "Host key verification failed.",
            EX_CONFIG,
            "ssh does not know the server's host key (Host key verification failed.): add it to "
            "~/.ssh/known_hosts of the user running deploybot",
        ),
        ("ERROR: Repository not found.", EX_CONFIG, "no git repository there"),
        (
            "fatal: '/srv/x.git' does not appear to be a git repository",
            EX_CONFIG,
            "no git repository there",
        ),
        (
            "ssh: connect to host git.example.org port 22: Connection refused",
            EX_TEMPFAIL,
            "Connection refused",
        ),
        (
            "ssh: Could not resolve hostname git.example.org: Temporary failure in name resolution",
            EX_TEMPFAIL,
            "Temporary failure in name resolution",
        ),
    ],
)
def test_ssh_failures_by_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, say: str, code: int, words: str
) -> None:
    fake_ssh(tmp_path / "bin", say)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    site = SmallSite(tmp_path)
    url = "git@git.example.org:o/site.git"
    site.write_config(source_url=url)
    got, line = run(site)
    assert got == code, line
    assert words in line
    if code == EX_CONFIG:
        assert line.startswith(f"{site.config}: 'source.url' {url}: ")


@pytest.mark.parametrize("side", ["source", "publish"])
def test_an_unknown_ssh_host_key_says_how_to_add_it_with_the_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side: str
) -> None:
    """The trial, against OpenSSH's sshd on a port of its own: the hint said
    ``ssh-keyscan 127.0.0.1`` (no ``-p``) and the URL lost its user (``ssh://127.0.0.1:2222/``
    for ``root@``). What the hint says to do works: the run then fetches and pushes over ssh."""
    site = SmallSite(tmp_path)
    with sshd_server(tmp_path / "ssh") as sshd:
        monkeypatch.setenv("PATH", f"{sshd.bin}{os.pathsep}{os.environ['PATH']}")
        base = f"ssh://{sshd.user}@127.0.0.1:{sshd.port}"
        url = f"{base}{site.source if side == 'source' else site.publish}"
        site.write_config(source_url=f"{base}{site.source}", publish_url=f"{base}{site.publish}")
        code, line = run(site)
        assert (code, line) == (
            EX_CONFIG,
            f"{site.config}: 'publish.url' {base}{site.publish}: ssh does not know the "
            "server's host key (Host key verification failed.): add it to ~/.ssh/known_hosts "
            f"of the user running deploybot (ssh-keyscan -p {sshd.port} 127.0.0.1)",
        )  # the publish branch is fetched first
        if side == "source":
            site.write_config(source_url=url)
            code, line = run(site)
            assert line.startswith(f"{site.config}: 'source.url' {url}: ssh does not know ")
            assert line.endswith(f"(ssh-keyscan -p {sshd.port} 127.0.0.1)")
        keys = subprocess.run(
            ["ssh-keyscan", "-p", str(sshd.port), "127.0.0.1"], capture_output=True, check=True
        )
        sshd.known_hosts.write_bytes(keys.stdout)
        code, output = site.run()
    assert code == 0, output
    assert site.head() is not None


# --- a branch the source repository does not have -------------------------------------------


def with_source_branch(site: SmallSite, branch: str) -> None:
    text = site.config.read_text()
    site.config.write_text(text.replace("[publish]\n", f'branch = "{branch}"\n[publish]\n', 1))


@pytest.mark.parametrize("server", ["local", "git-daemon", "dulwich-http"])
def test_a_missing_branch_lists_the_branches_there(tmp_path: Path, server: str) -> None:
    """It said "no branch 'trunk'" and no more: which ones are there is what one needs."""
    site = SmallSite(tmp_path)
    for name in ("asf-site", "docs", "release/1.x"):
        run_git(site.source, "branch", name, "main", name="A", email="a@e.org")
    serving = {
        "local": nullcontext(str(site.source)),
        "git-daemon": git_daemon(tmp_path),
        "dulwich-http": wsgi_server(dulwich_app(site.source)),
    }[server]
    with serving as base:
        url = {"local": base, "git-daemon": f"{base}/source.git"}.get(server, f"{base}/site.git")
        site.write_config(source_url=url)
        with_source_branch(site, "trunk")
        code, line = run(site)
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'source.branch': no branch 'trunk' in {url} (its branches: "
        "asf-site, docs, main, release/1.x)",
    )


def test_many_branches_are_listed_up_to_ten(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    for n in range(14):
        run_git(site.source, "branch", f"b{n:02d}", "main", name="A", email="a@e.org")
    with_source_branch(site, "trunk")
    code, line = run(site)
    shown = ", ".join(f"b{n:02d}" for n in range(10))
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'source.branch': no branch 'trunk' in {site.source} (its branches: "
        f"{shown} and 5 more)",
    )


@pytest.mark.parametrize("server", ["local", "git-http-backend"])
def test_an_empty_source_repository_says_it_has_no_commits_yet(tmp_path: Path, server: str) -> None:
    site = SmallSite(tmp_path)
    empty = tmp_path / "empty.git"
    run_git(tmp_path, "init", "-q", "--bare", str(empty), name="A", email="a@e.org")
    serving = nullcontext("") if server == "local" else wsgi_server(http_backend_app(tmp_path))
    with serving as base:
        url = f"{base}/empty.git" if base else str(empty)
        site.write_config(source_url=url)
        code, line = run(site)
    assert (code, line) == (
        EX_CONFIG,
        f"{site.config}: 'source.branch': no branch 'main' in {url}: the repository has no "
        "commits yet (no branch at all)",
    )


# --- a corrupt tree is bad input, not a network problem --------------------------------------


@pytest.mark.parametrize("git_cli", [True, False])
def test_a_tree_entry_with_an_empty_name_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_cli: bool
) -> None:
    """git's upload-pack refuses such a tree ("empty filename in tree entry"), which came
    back as "possible repository corruption on the remote side": exit 75, forever."""
    if not git_cli:
        monkeypatch.setattr(repository.shutil, "which", lambda name: None)
    site = SmallSite(tmp_path)
    commit_names(site.source, {(b"index.md",): b"# Hi\n", (b"sub", b""): b"x"})
    tree = run_git(site.source, "rev-parse", "main:sub", name="A", email="a@e.org").strip()
    code, line = run(site)
    # git refuses to send it (the fetch names the tree); dulwich's own transport sends it
    # and the build refuses the name
    named = f" (tree {tree})" if git_cli else ""
    assert (code, line) == (EX_INPUT, f"sub/: refused path: an empty name{named}")
    assert site.head() is None


@pytest.mark.parametrize("server", ["git-daemon", "git-http-backend"])
def test_a_corrupt_remote_repository_is_bad_input(tmp_path: Path, server: str) -> None:
    """Over the network only the server's words tell: git's "possible repository
    corruption on the remote side" is not what waiting heals."""
    site = SmallSite(tmp_path)
    commit_names(site.source, {(b"index.md",): b"# Hi\n", (b"",): b"x"})
    serving = (
        git_daemon(tmp_path) if server == "git-daemon" else wsgi_server(http_backend_app(tmp_path))
    )
    with serving as base:
        site.write_config(source_url=f"{base}/source.git")
        code, line = run(site)
    assert code == EX_INPUT, line
    assert line.startswith(f"source.url {base}/source.git: the server says its repository is ")
    # git sends the NUL ending its C string too: it read "... remote side.?)"
    assert line.endswith(
        "(aborting due to possible repository corruption on the remote side.): run git fsck there"
    )


def test_a_fetch_from_a_local_repository_still_works(tmp_path: Path) -> None:
    """The classification leaves a good fetch alone (the path the tests above change)."""
    remote = tmp_path / "src.git"
    tip = commit_snapshot(remote, {"index.md": b"# Hi\n"})
    from deploybot.watch.fetch import fetch_source

    assert fetch_source(str(remote), "main", tmp_path / "m").commit == tip
