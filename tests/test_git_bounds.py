"""Bounds on one exchange with a hostile git server (issue 17): a server trickling a byte
every few tenths of a second (in its answer's body, in its headers, over ``git://``, behind
``ssh``) ends at the whole-call deadline (``source.timeout``/``publish.timeout``: exit 75,
the server may heal); an endless ref advertisement ends at 100,000 refs with memory bounded
(exit 78 naming the URL); a pack over ``max_fetch_bytes`` ends there (exit 78 naming the
key). Real servers on 127.0.0.1; memory measured in a subprocess under RLIMIT_AS."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deploybot.git import repository
from deploybot.git.bounds import MAX_ADVERTISED_REFS
from deploybot.git.remote import Remote
from deploybot.support.errors import EX_CONFIG, EX_TEMPFAIL, ConfigError, FetchError, PublishError
from deploybot.watch.fetch import fetch_source
from tests.gitrepo import SNAPSHOT_AUTHOR, SNAPSHOT_WHEN, commit_snapshot
from tests.gitservers import dulwich_app, endless_advertisement, wsgi_server
from tests.servers import call_within, git_daemon, trickling_server
from tests.smallsite import SmallSite

HTTP_OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n\r\n"
REFS = ["refs/heads/main"]


def fetch_error(tmp_path: Path, remote: Remote, within: float = 60) -> BaseException | None:
    """What ``fetch_refs`` from ``remote`` raised (None: nothing), failing the test when
    it has not ended after ``within`` s."""
    with repository.bare_repo(tmp_path / "mirror.git") as repo:
        return call_within(within, lambda: repository.fetch_refs(remote, repo, REFS, FetchError))


# --- the whole-call deadline -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "answer"),
    [
        ("http", HTTP_OK + b"fff0"),  # a 65,520-byte pkt-line, one byte at a time
        ("http", b"HTTP/1.1 200 OK\r\nX-Slow: "),  # a header line without end
        ("git", b"fff0"),
    ],
    ids=["http-body", "http-headers", "git"],
)
def test_a_trickling_server_ends_at_the_deadline(
    tmp_path: Path, scheme: str, answer: bytes
) -> None:
    """The issue: one byte every 20 s kept a fetch going past 450 s; only a 5-minute
    silence was bounded. Now the whole exchange has a deadline (here 2 s)."""
    with trickling_server(answer=answer, drip=b"x", interval=0.2) as port:
        url = f"{scheme}://127.0.0.1:{port}/site.git"
        error = fetch_error(tmp_path, Remote(url, timeout=2.0))
    assert isinstance(error, FetchError), error
    assert error.exit_code == EX_TEMPFAIL
    assert str(error) == f"cannot fetch from {url}: took more than 2 s in all (source.timeout)"


def test_a_trickling_ssh_server_ends_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind ssh the deadline kills the ssh process (here an ``ssh`` on PATH that sends
    the start of a pkt-line, then a byte every 0.2 s, without end)."""
    ssh = tmp_path / "bin" / "ssh"
    ssh.parent.mkdir()
    ssh.write_text("#!/bin/sh\nprintf fff0\nwhile :; do printf x; sleep 0.2; done\n")
    ssh.chmod(ssh.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{ssh.parent}{os.pathsep}{os.environ['PATH']}")
    url = "git@git.example.org:site.git"
    error = fetch_error(tmp_path, Remote(url, timeout=2.0))
    assert isinstance(error, FetchError), error
    assert str(error) == f"cannot fetch from {url}: took more than 2 s in all (source.timeout)"


def test_a_push_to_a_trickling_server_ends_at_the_deadline(tmp_path: Path) -> None:
    with trickling_server(answer=HTTP_OK + b"fff0", drip=b"x", interval=0.2) as port:
        url = f"http://127.0.0.1:{port}/site.git"
        remote = Remote(url, "publish.url", timeout=2.0)
        with repository.bare_repo(tmp_path / "m.git") as repo:
            blob = repository.add_blob(repo, b"x")
            tree = repository.write_tree(repo, {"x": (repository.MODE_FILE, blob)})
            commit = repository.make_commit(
                repo, tree, [], author=SNAPSHOT_AUTHOR, message="m\n", when=SNAPSHOT_WHEN
            )
            updates = {"refs/heads/asf-site": (None, commit)}
            error = call_within(
                60, lambda: repository.push_refs(remote, repo, updates, PublishError)
            )
    assert isinstance(error, PublishError), error
    assert str(error) == f"cannot push to {url}: took more than 2 s in all (publish.timeout)"


def test_run_once_reads_the_deadline_from_the_config(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    with trickling_server(answer=HTTP_OK + b"fff0", drip=b"x", interval=0.2) as port:
        url = f"http://127.0.0.1:{port}/site.git"
        site.write_config(source_url=url)
        site.config.write_text(
            site.config.read_text().replace("[publish]", "timeout = 1.5\n[publish]", 1)
        )
        outcome: list[tuple[int, str]] = []
        assert call_within(60, lambda: outcome.append(site.run())) is None
    assert outcome == [
        (
            EX_TEMPFAIL,
            f"deploybot: error: cannot fetch from {url}: took more than 1.5 s in all "
            "(source.timeout)\n",
        )
    ]


def test_the_deadline_leaves_a_normal_fetch_alone(tmp_path: Path) -> None:
    """A fetch well within its deadline is untouched; its watchdog stops with it."""
    remote = tmp_path / "src.git"
    tip = commit_snapshot(remote, {"index.md": b"# Hi\n"})
    with wsgi_server(dulwich_app(remote)) as base:
        snap = fetch_source(Remote(f"{base}/site.git", timeout=30.0), "main", tmp_path / "m")
    assert snap.commit == tip


# --- caps on what a server sends -------------------------------------------------------------

_FETCH = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from deploybot.git import repository as gitutil
    from deploybot.support.errors import FetchError
    from deploybot.git.remote import Remote
    resource.setrlimit(resource.RLIMIT_AS, (%(limit)d, %(limit)d))
    outcome = {}
    try:
        with gitutil.bare_repo(Path(sys.argv[2])) as repo:
            remote = Remote(sys.argv[1], timeout=120.0)
            gitutil.fetch_refs(remote, repo, ["refs/heads/main"], FetchError)
    except BaseException as exc:
        outcome = {"type": type(exc).__name__, "message": str(exc)[:500]}
    # VmHWM: this program's own peak. ru_maxrss also counts the parent's memory at the
    # fork (pytest's, 400 MB late in a full run), which exec does not reset.
    status = Path("/proc/self/status").read_text()
    outcome["maxrss_kb"] = int(status.split("VmHWM:")[1].split()[0])
    print(json.dumps(outcome))
    """
)
_AS_LIMIT = 1024 * 2**20  # the old code grew past 3 GB; this fails it fast instead


def fetch_in_a_subprocess(url: str, mirror: Path) -> dict[str, object]:
    """``fetch_refs`` of ``url`` in a Python under RLIMIT_AS (:data:`_AS_LIMIT`): what it
    raised (``type``, ``message``) and its peak RSS (``maxrss_kb``, the child's VmHWM)."""
    code = _FETCH % {"limit": _AS_LIMIT}
    done = subprocess.run(
        [sys.executable, "-c", code, url, str(mirror)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("http", [True, False], ids=["http", "git"])
def test_an_endless_ref_advertisement_ends_at_the_cap(tmp_path: Path, http: bool) -> None:
    """The issue: an endless ref advertisement grew a fetch to 3.5 GB. Now at most
    100,000 refs (or 64 MiB) are read: a config error naming the URL, memory bounded."""
    with endless_advertisement(http=http) as (url, sent):
        outcome = fetch_in_a_subprocess(url, tmp_path / "mirror.git")
        sent_bytes = sent[0]
    assert outcome["type"] == "ConfigError", outcome
    assert outcome["message"] == (
        f"'source.url' {url}: the server advertised more than {MAX_ADVERTISED_REFS:,} refs, "
        "more than deploybot reads from one server: is it the git repository meant?"
    )
    maxrss_kb = outcome["maxrss_kb"]
    assert isinstance(maxrss_kb, int) and maxrss_kb < 400 * 1024, outcome  # MB, generous
    assert sent_bytes < 200 * 2**20  # the client stopped reading (a socket buffer or two)


def test_a_pack_over_max_fetch_bytes_ends_there(tmp_path: Path) -> None:
    remote = tmp_path / "src.git"
    commit_snapshot(remote, {"big.bin": os.urandom(200_000), "index.md": b"# Hi\n"})
    with git_daemon(tmp_path) as base:
        url = f"{base}/src.git"
        error = fetch_error(tmp_path, Remote(url, "publish.url", max_fetch_bytes=50_000))
    assert isinstance(error, ConfigError), error
    assert error.exit_code == EX_CONFIG
    assert str(error) == (
        f"'publish.max_fetch_bytes': {url} sent more than 50,000 bytes in one fetch: raise it "
        "if the repository is that big"
    )
    with git_daemon(tmp_path) as base:  # within the cap, the same fetch goes through
        assert fetch_error(tmp_path, Remote(f"{base}/src.git", max_fetch_bytes=10**6)) is None


def test_memory_limit_of_the_subprocess_allows_a_real_fetch(tmp_path: Path) -> None:
    """The RLIMIT_AS above leaves room for a real fetch (else the cap test proves nothing)."""
    remote = tmp_path / "src.git"
    commit_snapshot(remote, {"index.md": b"# Hi\n"})
    with wsgi_server(dulwich_app(remote)) as base:
        outcome = fetch_in_a_subprocess(f"{base}/site.git", tmp_path / "mirror.git")
    assert "type" not in outcome, outcome
