"""The main job end to end on the real tvm corpus: real repos on disk, real SMTP, real CLI."""

from __future__ import annotations

import email
import email.policy
import mailbox
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from tests.gitrepo import commit_files, corpus_files, head, read_branch
from tests.servers import Collector, LocalController, smtp_server

BUILD_RE = re.compile(
    r"^Build at (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ \d{4}\n$"
)
ATOM = "{http://www.w3.org/2005/Atom}"
BERT = "2020/07/14/bert-pytorch-tvm.html"
BERT_SRC = "_posts/2020-07-14-bert-pytorch-tvm.md"


class Site:
    """A real source repo holding the tvm corpus, an empty bare publish repo, and a config."""

    def __init__(self, tmp_path: Path, tvm: Path, notify: str) -> None:
        self.source = tmp_path / "source.git"
        self.publish = tmp_path / "publish.git"
        Repo.init_bare(str(self.source), mkdir=True).close()
        Repo.init_bare(str(self.publish), mkdir=True).close()
        self.first = commit_files(self.source, corpus_files(tvm / "source"), "Import tvm site")
        self.mbox = tmp_path / "commits.mbox"
        self.config = tmp_path / "deploybot.toml"
        self.config.write_text(
            f"""
[source]
url = "source.git"
[publish]
url = "publish.git"
author = "Build Bot <bot@example.org>"
timezone = "America/Los_Angeles"
keep = ["docs/", ".asf.yaml"]
[render]
timezone = "America/Los_Angeles"
[notify]
to = ["commits@tvm.example.org"]
from = "bot@example.org"
repository_url = "https://gitbox.example.org/repos/asf/incubator-tvm-site.git"
{notify}
"""
        )

    def run(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["run-once", "--config", str(self.config), *args])
        return result.exit_code, result.output

    def emails(self) -> list[email.message.EmailMessage]:
        if not self.mbox.exists():
            return []
        box = mailbox.mbox(str(self.mbox))
        try:
            return [
                email.message_from_bytes(box.get_bytes(k), policy=email.policy.default)
                for k in box.iterkeys()
            ]  # type: ignore[misc]
        finally:
            box.close()


@pytest.fixture
def site(tmp_path: Path, tvm_site: Path) -> Site:
    return Site(tmp_path, tvm_site, 'transport = "mbox"\nmbox = "commits.mbox"')


def test_first_run_publishes_the_real_site(site: Site) -> None:
    code, out = site.run()
    assert code == 0, out
    assert "published" in out
    with Repo(str(site.publish)) as repo:
        commit = repo[repo.refs[b"refs/heads/asf-site"]]
        assert BUILD_RE.match(commit.message.decode()), commit.message  # type: ignore[attr-defined]
        assert commit.author == b"Build Bot <bot@example.org>"  # type: ignore[attr-defined]
        assert commit.committer == commit.author  # type: ignore[attr-defined]
    files = read_branch(site.publish, "asf-site")
    assert BERT in files and "2019/04/29/opt-cuda-quantized.html" in files
    page = files[BERT].decode()
    assert "Bridging PyTorch and TVM" in page
    assert (
        '<div class="language-python highlighter-rouge"><div class="highlight">'
        '<pre class="highlight"><code>' in page
    )
    assert '<span class="kn">import</span>' in page
    atom = ET.fromstring(files["atom.xml"])
    entries = atom.findall(f"{ATOM}entry")
    assert len(entries) == 20
    updated = [e.findtext(f"{ATOM}updated") or "" for e in entries]
    assert updated == sorted(updated, reverse=True)
    assert entries[0].findtext(f"{ATOM}title") == "Bridging PyTorch and TVM"
    items = ET.fromstring(files["rss.xml"]).findall("./channel/item")
    assert len(items) == 20
    assert items[0].findtext("link") == "https://tvm.apache.org/2020/07/14/bert-pytorch-tvm"
    mails = site.emails()
    assert len(mails) == 1
    build = head(site.publish, "asf-site") or ""
    assert mails[0]["Subject"] == f"[incubator-tvm-site] branch asf-site created (now {build[:7]})"


def test_second_run_is_up_to_date(site: Site) -> None:
    assert site.run()[0] == 0
    before = head(site.publish, "asf-site")
    code, out = site.run()
    assert code == 0
    assert "up to date" in out
    assert head(site.publish, "asf-site") == before
    assert len(site.emails()) == 1


def test_state_lost_still_up_to_date(site: Site, tmp_path: Path) -> None:
    """A fresh machine (no state dir) finds the last built source commit on the publish branch."""
    assert site.run()[0] == 0
    import shutil

    shutil.rmtree(tmp_path / ".deploybot")
    code, out = site.run()
    assert (code, "up to date" in out) == (0, True)


def test_edit_one_post(site: Site) -> None:
    assert site.run()[0] == 0
    first_build = head(site.publish, "asf-site")
    old = read_branch(site.source, "main")[BERT_SRC]
    new = old.replace(b"So how do we get BERT", b"So how, revisited, do we get BERT", 1)
    assert new != old
    commit_files(site.source, {BERT_SRC: new}, "Edit the BERT post", when=1_700_000_100)
    code, out = site.run()
    assert code == 0, out
    with Repo(str(site.publish)) as repo:
        build = repo[repo.refs[b"refs/heads/asf-site"]]
        assert build.parents == [first_build.encode()]  # type: ignore[attr-defined]
    mails = site.emails()
    assert len(mails) == 2
    build = head(site.publish, "asf-site") or ""
    assert mails[1]["Subject"] == (
        f"[incubator-tvm-site] branch asf-site updated: {_subject(site.publish, build)}"
    )
    body = mails[1].get_content()
    changed = re.findall(r"^diff --git a/(\S+) ", body, flags=re.M)
    # a body edit changes the post's page and the feeds (full content), not the index
    assert set(changed) == {BERT, "atom.xml", "rss.xml"}, changed
    assert " 3 files changed" in body
    assert "revisited" in read_branch(site.publish, "asf-site")[BERT].decode()


def _subject(repo_path: Path, commit: str) -> str:
    with Repo(str(repo_path)) as repo:
        return repo[commit.encode()].message.decode().splitlines()[0]  # type: ignore[attr-defined]


def test_keep_paths_survive_every_build(site: Site) -> None:
    assert site.run()[0] == 0
    commit_files(
        site.publish,
        {"docs/index.html": b"<p>API docs</p>\n", ".asf.yaml": b"publish: {}\n"},
        "Docs build",
        branch="asf-site",
    )
    old = read_branch(site.source, "main")[BERT_SRC]
    commit_files(
        site.source, {BERT_SRC: old + b"\nOne more line.\n"}, "Add a line", when=1_700_000_200
    )
    assert site.run()[0] == 0
    files = read_branch(site.publish, "asf-site")
    assert files["docs/index.html"] == b"<p>API docs</p>\n"
    assert files[".asf.yaml"] == b"publish: {}\n"
    assert "One more line." in files[BERT].decode()


def test_broken_front_matter_exits_1_and_publishes_nothing(site: Site) -> None:
    assert site.run()[0] == 0
    before = head(site.publish, "asf-site")
    broken = b"---\nlayout: post\ntitle: [unclosed\n---\n\nBody\n"
    commit_files(
        site.source, {"_posts/2020-08-01-broken.md": broken}, "Broken post", when=1_700_000_300
    )
    code, out = site.run()
    assert code == 1, out
    assert "_posts/2020-08-01-broken.md:" in out
    assert re.search(r"_posts/2020-08-01-broken\.md:\d+", out), out
    assert head(site.publish, "asf-site") == before
    assert len(site.emails()) == 1


def test_unknown_config_key_exits_78(site: Site) -> None:
    site.config.write_text(site.config.read_text() + "\n[state]\ndirr = 'x'\n")
    code, out = site.run()
    assert code == 78
    assert "unknown key 'state.dirr'" in out
    assert str(site.config) in out


@pytest.fixture
def smtp() -> Iterator[tuple[LocalController, Collector]]:
    with smtp_server() as running:
        yield running


def test_email_over_smtp(
    tmp_path: Path, tvm_site: Path, smtp: tuple[LocalController, Collector]
) -> None:
    controller, handler = smtp
    port = controller.port
    site = Site(
        tmp_path,
        tvm_site,
        f'transport = "smtp"\n[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\n',
    )
    code, out = site.run()
    assert code == 0, out
    assert len(handler.messages) == 1
    msg = email.message_from_bytes(handler.messages[0].content, policy=email.policy.default)
    build = head(site.publish, "asf-site")
    # The first build creates the branch: git-multimail's "created" subject.
    assert msg["Subject"] == f"[incubator-tvm-site] branch asf-site created (now {build[:7]})"
    assert msg["X-Git-Refname"] == "refs/heads/asf-site"
    assert msg["X-Git-Rev"] == build
    assert msg["X-Git-Newrev"] == build
    assert msg["X-Git-Oldrev"] == "0" * 40
    assert msg["X-Git-Reftype"] == "branch"
    body = msg.get_content()
    summary = re.search(r"^ \d+ files changed, \d+ insertions\(\+\)\r?$", body, flags=re.M)
    assert summary, body[-2000:]


def test_smtp_down_keeps_email_and_exits_75(tmp_path: Path, tvm_site: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    site = Site(
        tmp_path,
        tvm_site,
        f'transport = "smtp"\n[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 2\n',
    )
    code, out = site.run()
    assert code == 75, out
    assert head(site.publish, "asf-site") is not None
    assert "kept in the outbox" in out
    pending = list((tmp_path / ".deploybot" / "outbox").glob("*.eml"))
    assert len(pending) == 1
    handler = Collector()
    controller = LocalController(handler, port=port)
    controller.start()
    try:
        code, out = site.run()  # the email waits for its retry time: still 75
        assert code == 75 and "waiting for a retry" in out, out
        code, out = site.run("--retry-now")
    finally:
        controller.stop()
    assert code == 0, out
    assert len(handler.messages) == 1


class _Killed(BaseException):
    """Stands for the process dying (SIGKILL, power loss)."""


def _run_killed_before_announcing(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run once, dying right after the push, before the build's email reaches the outbox."""
    import deploybot.notify.stage

    def die(*args: object, **kwargs: object) -> None:
        raise _Killed

    with monkeypatch.context() as patch:
        patch.setattr(deploybot.notify.stage, "announce", die)
        with pytest.raises(_Killed):
            CliRunner().invoke(
                main, ["run-once", "--config", str(site.config)], catch_exceptions=False
            )


def test_killed_after_push_still_emails_once(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that pushed its build but died before queueing the email: the next run, finding
    the source up to date, still sends that build's email, once."""
    assert site.run()[0] == 0
    old = read_branch(site.source, "main")[BERT_SRC]
    commit_files(site.source, {BERT_SRC: old + b"\nMore.\n"}, "More", when=1_700_000_400)
    _run_killed_before_announcing(site, monkeypatch)
    build = head(site.publish, "asf-site") or ""
    assert len(site.emails()) == 1
    code, out = site.run()
    assert code == 0 and "up to date" in out, out
    mails = site.emails()
    assert len(mails) == 2
    assert mails[1]["X-Git-Rev"] == build
    assert site.run()[0] == 0
    assert len(site.emails()) == 2


def test_first_build_killed_after_push_still_emails(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No email was ever sent from this state dir: the record of what it pushed still
    tells the next run that the first build's email is owed."""
    _run_killed_before_announcing(site, monkeypatch)
    assert site.emails() == []
    code, out = site.run()
    assert code == 0 and "up to date" in out, out
    mails = site.emails()
    assert [m["X-Git-Rev"] for m in mails] == [head(site.publish, "asf-site")]


def test_missing_source_path_exits_78_naming_key_and_file(site: Site) -> None:
    site.config.write_text(
        site.config.read_text().replace('url = "source.git"', 'url = "nope.git"')
    )
    code, out = site.run()
    assert code == 78
    assert f"{site.config}: source.url: " in out and "nope.git does not exist" in out
