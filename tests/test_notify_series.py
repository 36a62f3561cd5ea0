"""Several commits since the last email: git-multimail's summary email + ``NN/TT`` emails.

Layout: notifier-research.md §1.2-§1.5. Oracle: the git CLI (``git log``, ``git diff-tree``).
Delivery: a real aiosmtpd server on 127.0.0.1, down and then up.
"""

from __future__ import annotations

import email
import email.policy
import os
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from deploybot.config.schema import NotifyConfig
from deploybot.notify.announce import RefUpdate, read_record, write_record
from deploybot.notify.compose.email import message_id
from deploybot.notify.compose.series import summary_message_id
from deploybot.notify.gitlog.summary import diff_tree, diff_tree_summary
from deploybot.notify.stage import announce, deliver_all, list_outbox, queue_emails
from tests.gitcli import run_git
from tests.servers import Collector, LocalController
from tests.test_notify_transport import smtp_notify

REF = "refs/heads/asf-site"
HOST = "bot.example.org"
WHEN = datetime(2020, 7, 14, 16, 12, 5, tzinfo=UTC)
SUMMARY_ORDER = [
    "Date",
    "To",
    "Subject",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Message-ID",
    "From",
    "X-Git-Host",
    "X-Git-Repo",
    "X-Git-Refname",
    "X-Git-Reftype",
    "X-Git-Oldrev",
    "X-Git-Newrev",
    "X-Git-NotificationType",
    "X-Deploybot-Version",
    "Auto-Submitted",
]
COMMIT_ORDER = [
    "Date",
    "To",
    "Subject",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Message-ID",
    "From",
    "In-Reply-To",
    "References",
    "X-Git-Host",
    "X-Git-Repo",
    "X-Git-Refname",
    "X-Git-Reftype",
    "X-Git-Rev",
    "X-Git-NotificationType",
    "X-Deploybot-Version",
    "Auto-Submitted",
]


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return run_git(repo, *args, name="Build Bot", email="bot@example.org", input=input)


def build(repo: Path, files: dict[str, str], message: str) -> str:
    """Commit ``files`` on asf-site (creating the repository first); return the commit id."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "asf-site")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-F", "-", input=message.encode())
    return git(repo, "rev-parse", "HEAD").strip()


def history(repo: Path, n: int) -> list[str]:
    """c0 (the first build) and n more builds, each editing index.html and a feed."""
    commits = [build(repo, {"index.html": "<p>0</p>\n", "feed.xml": "<f>0</f>\n"}, "Build 0")]
    for i in range(1, n + 1):
        files = {"index.html": f"<p>{i}</p>\n", f"{i}/post.html": f"post {i}\n"}
        commits.append(build(repo, files, f"Build at {i}"))
    return commits


def notify_for(port: int, **changes: object) -> NotifyConfig:
    base = smtp_notify(port)
    return replace(base, repository_url="https://git.example.org/repos/site.git", **changes)  # type: ignore[arg-type]


def parse(raw: bytes) -> email.message.EmailMessage:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, email.message.EmailMessage)
    return msg


def header_names(raw: bytes) -> list[str]:
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0].decode("ascii")
    return [line.split(":", 1)[0] for line in head.split("\n") if not line.startswith(" ")]


def body_of(raw: bytes) -> str:
    return raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[1].decode("utf-8")


@pytest.fixture
def down_port() -> int:
    """A port on 127.0.0.1 with nothing listening (yet)."""
    controller = LocalController(Collector())
    controller.start()
    port = controller.port
    controller.stop()
    return port


# --- three builds while SMTP is down, then one run with it up ------------------------------


def test_three_builds_while_down_become_one_threaded_series(tmp_path: Path, down_port: int) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1, c2, c3 = history(repo, 3)
    notify = notify_for(down_port)
    write_record(state, REF, c0)  # c0 was emailed earlier
    for old, new in ((c0, c1), (c1, c2), (c2, c3)):
        report = announce(
            RefUpdate(repo, REF, old, new), notify, state_dir=state, now=WHEN, host=HOST
        )
        assert report.sent == () and report.failed  # the server is down
    assert read_record(state, REF) == c3
    keys = [p.key for p in list_outbox(state / "outbox")]
    assert keys == [f"{c0}-{c3}", c1, c2, c3]  # the earlier attempts were folded in

    handler = Collector()
    controller = LocalController(handler, port=down_port)
    controller.start()
    try:
        later = lambda: time.time() + 7200  # noqa: E731 - every backoff has expired
        first = deliver_all(notify, state / "outbox", clock=later)
        second = deliver_all(notify, state / "outbox", clock=later)
    finally:
        controller.stop()
    assert first.sent == (f"{c0}-{c3}", c1, c2, c3) and first.failed == ()
    assert second.sent == ()
    mails = [parse(m.content) for m in handler.messages]
    assert len(mails) == 4  # each delivered exactly once
    summary_id = summary_message_id(c0, c3, notify.to, HOST)
    assert mails[0]["Message-ID"] == summary_id
    assert mails[0]["Subject"] == f"[site] branch asf-site updated ({c0[:7]} -> {c3[:7]})"
    assert mails[0]["X-Git-NotificationType"] == "ref_changed"
    for num, (mail, commit) in enumerate(zip(mails[1:], (c1, c2, c3), strict=True), 1):
        assert mail["Subject"] == f"[site] {num:02d}/03: Build at {num}"
        assert mail["In-Reply-To"] == mail["References"] == summary_id
        assert mail["X-Git-Rev"] == commit
        assert mail["Message-ID"] == message_id(commit, notify.to, HOST)
    dates = [email.utils.parsedate_to_datetime(m["Date"]) for m in mails]
    assert [(d - dates[0]).seconds for d in dates] == [0, 1, 2, 3]  # IncrementalDateTime


def test_a_sent_email_is_never_folded_into_a_later_series(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1, c2 = history(repo, 2)
    handler = Collector()
    controller = LocalController(handler)
    controller.start()
    try:
        notify = notify_for(controller.port)
        announce(RefUpdate(repo, REF, None, c0), notify, state_dir=state, now=WHEN, host=HOST)
        announce(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN, host=HOST)
        announce(RefUpdate(repo, REF, c1, c2), notify, state_dir=state, now=WHEN, host=HOST)
    finally:
        controller.stop()
    subjects = [parse(m.content)["Subject"] for m in handler.messages]
    assert subjects == [
        f"[site] branch asf-site created (now {c0[:7]})",
        "[site] branch asf-site updated: Build at 1",
        "[site] branch asf-site updated: Build at 2",
    ]


def test_fresh_machine_emails_only_the_newest_build(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    commits = history(repo, 5)
    notify = notify_for(25)
    keys = queue_emails(
        RefUpdate(repo, REF, commits[-2], commits[-1]), notify, state_dir=state, now=WHEN
    )
    assert keys == [commits[-1]]
    [pending] = list_outbox(state / "outbox")
    assert pending.subject == "[site] branch asf-site updated: Build at 5"
    assert read_record(state, REF) == commits[-1]
    # Announcing the same commit again queues nothing.
    again = queue_emails(
        RefUpdate(repo, REF, commits[-2], commits[-1]), notify, state_dir=state, now=WHEN
    )
    assert again == []


def test_history_rewritten_emails_only_the_new_build(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1 = history(repo, 1)
    write_record(state, REF, "f" * 40)  # not in this repository
    assert queue_emails(
        RefUpdate(repo, REF, c0, c1), notify_for(25), state_dir=state, now=WHEN
    ) == [c1]


def test_more_than_max_commit_emails_sends_the_summary_only(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, *rest = history(repo, 3)
    write_record(state, REF, c0)
    notify = notify_for(25, max_commit_emails=2)
    keys = queue_emails(RefUpdate(repo, REF, rest[-2], rest[-1]), notify, state_dir=state, now=WHEN)
    assert keys == [f"{c0}-{rest[-1]}"]


def test_transport_none_queues_nothing_but_moves_the_record(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1 = history(repo, 1)
    notify = NotifyConfig(transport="none")
    assert queue_emails(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN) == []
    assert read_record(state, REF) == c1


# --- layout against git ---------------------------------------------------------------------


def series(tmp_path: Path, n: int = 3) -> tuple[Path, list[str], list[bytes]]:
    repo, state = tmp_path / "site", tmp_path / "state"
    commits = history(repo, n)
    write_record(state, REF, commits[0])
    notify = notify_for(25, pusher="Build Bot")
    queue_emails(
        RefUpdate(repo, REF, commits[-2], commits[-1]), notify, state_dir=state, now=WHEN, host=HOST
    )
    return repo, commits, [p.path.read_bytes() for p in list_outbox(state / "outbox")]


def test_summary_layout_line_by_line(tmp_path: Path) -> None:
    repo, commits, [summary, *_] = series(tmp_path)
    c0, c3 = commits[0], commits[-1]
    brief = git(repo, "log", "--reverse", "--format=%h %s", f"{c0}..{c3}").splitlines()
    stat = git(repo, "diff-tree", "--stat", "--summary", "--find-copies-harder", f"{c0}..{c3}")
    expected = [
        "This is an automated email from the git repository.",
        "",
        "Build Bot pushed a change to branch asf-site",
        "in repository https://git.example.org/repos/site.git.",
        "",
        "",
        f"    from {c0[:7]}  Build 0",
        *(f"     new {line[:7]}  {line[8:]}" for line in brief),
        "",
        'The 3 revisions listed above as "new" are entirely new to this',
        "repository and will be described in separate emails.  The revisions",
        'listed as "add" were already present in the repository and have only',
        "been added to this reference.",
        "",
        "",
        "Summary of changes:",
        *stat.splitlines(),
        "",
    ]
    assert body_of(summary).split("\n")[:-1] == expected
    assert header_names(summary) == SUMMARY_ORDER
    assert parse(summary)["X-Git-Oldrev"] == c0 and parse(summary)["X-Git-Newrev"] == c3


def test_commit_email_layout_and_git_log_body(tmp_path: Path) -> None:
    repo, commits, [_summary, *mails] = series(tmp_path)
    for num, (raw, commit) in enumerate(zip(mails, commits[1:], strict=True), 1):
        assert header_names(raw) == COMMIT_ORDER
        msg = parse(raw)
        assert msg["X-Git-NotificationType"] == "diff"
        assert msg["Subject"] == f"[site] {num:02d}/03: Build at {num}"
        log = git(repo, "log", "-C", "--stat", "-p", "--cc", "-1", commit)
        log = log.replace("\nDate:   ", "\nAuthorDate: ", 1)
        intro = (
            "This is an automated email from the git repository.\n\n"
            "Build Bot pushed a commit to branch asf-site\n"
            "in repository https://git.example.org/repos/site.git\n\n"
        )
        assert body_of(raw) == intro + log + "\n"


def test_summary_of_changes_matches_git_diff_tree_with_copies(tmp_path: Path) -> None:
    """--find-copies-harder: a copy of an *unchanged* file is found, unlike with -C."""
    repo = tmp_path / "site"
    text = "".join(f"line {i}\n" for i in range(40))
    c0 = build(repo, {"a.html": text, "b.html": "b\n", "run.sh": "x\n"}, "Build 0")
    git(repo, "mv", "b.html", "b2.html")
    os.chmod(repo / "run.sh", 0o755)
    c1 = build(repo, {"copy.html": text, "new.txt": "n\n"}, "Build 1")
    git(repo, "rm", "-q", "new.txt")
    c2 = build(repo, {"z.bin": "\0binary"}, "Build 2")
    oracle = git(repo, "diff-tree", "--stat", "--summary", "--find-copies-harder", f"{c0}..{c2}")
    assert "copy a.html => copy.html (100%)" in oracle
    assert diff_tree_summary(repo, c0, c2) == oracle.splitlines()
    assert (
        diff_tree_summary(repo, c0, c1)
        == git(
            repo, "diff-tree", "--stat", "--summary", "--find-copies-harder", f"{c0}..{c1}"
        ).splitlines()
    )


def test_diff_tree_without_harder_matches_git_diff_tree_c(tmp_path: Path) -> None:
    """``harder=False`` (the webhook's diff) is ``-C``: copies of modified files only;
    also across a file that becomes a folder and a nested folder that goes away."""
    repo = tmp_path / "site"
    text = "".join(f"line {i}\n" for i in range(40))
    c0 = build(repo, {"a.html": text, "m.html": text, "d/e/f.txt": "f\n", "p": "p\n"}, "Build 0")
    git(repo, "rm", "-q", "-r", "d", "p")
    c1 = build(
        repo, {"copy.html": text, "m.html": text + "more\n", "m2.html": text, "p/q": "q\n"}, "1"
    )
    for old, new in ((c0, c1), (c1, c0)):
        diff = diff_tree(repo, old, new, harder=False)
        oracle = git(repo, "diff-tree", "--stat", "--summary", "-C", f"{old}..{new}")
        assert [*diff.stat, *diff.summary] == oracle.splitlines()
    forward = diff_tree(repo, c0, c1, harder=False).summary
    assert " copy m.html => copy.html (100%)" in forward  # the unchanged a.html is no source


def test_hostile_commit_messages_cannot_inject_headers(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0 = build(repo, {"a": "0\n"}, "Build 0")
    c1 = build(repo, {"a": "1\n"}, "Evil\rBcc: victim@example.org\rX-Injected: yes")
    c2 = build(repo, {"a": "2\n"}, "Naïve =?utf-8?q?Bcc:_x@y?= subject\nBcc: z@example.org")
    write_record(state, REF, c0)
    notify = notify_for(25, pusher="Eve\r\nBcc: p@example.org")
    queue_emails(RefUpdate(repo, REF, c1, c2), notify, state_dir=state, now=WHEN, host=HOST)
    raws = [p.path.read_bytes() for p in list_outbox(state / "outbox")]
    assert len(raws) == 3
    for raw in raws:
        msg = parse(raw)
        assert msg["Bcc"] is None and msg["X-Injected"] is None and msg["Cc"] is None
        assert b"\r" not in raw.split(b"\n\n", 1)[0]  # the body is git's, byte for byte
    assert parse(raws[1])["Subject"] == "[site] 01/02: Evil Bcc: victim@example.org X-Injected: yes"
    assert parse(raws[2])["Subject"] == (
        "[site] 02/02: Naïve =?utf-8?q?Bcc:_x@y?= subject Bcc: z@example.org"
    )


class _Killed(BaseException):
    """Stands for SIGKILL: no except clause catches it, nothing after it runs."""


@pytest.mark.parametrize("step", [0, 1, 2, None])
def test_killed_while_folding_a_waiting_email_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int | None
) -> None:
    """c1's email waits; announcing c2 withdraws it into a series and is killed at each file
    operation of the withdrawal. The next announcement of c2 still emails c1 and c2, once."""
    from deploybot.notify.deliver import outbox as outbox_module
    from tests.killsite import read_mbox

    repo, state, mbox = tmp_path / "site", tmp_path / "state", tmp_path / "commits.mbox"
    c0, c1, c2 = history(repo, 2)
    notify = replace(notify_for(25), transport="mbox", mbox=mbox)
    write_record(state, REF, c0)
    queue_emails(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN, host=HOST)
    done: list[str] = []

    def counted(real: Any) -> Any:
        def op(*args: object, **kwargs: object) -> None:
            if len(done) == step:
                done.append("killed")
                raise _Killed
            done.append(real.__name__)
            real(*args, **kwargs)

        return op

    real_withdraw = outbox_module.withdraw

    def withdraw(paths: list[Path]) -> None:
        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", counted(os.replace))
            patch.setattr(Path, "unlink", counted(Path.unlink))
            real_withdraw(paths)

    with monkeypatch.context() as patch:
        patch.setattr(sys.modules["deploybot.notify.announce"], "withdraw", withdraw)
        try:
            announce(RefUpdate(repo, REF, c1, c2), notify, state_dir=state, now=WHEN, host=HOST)
        except _Killed:
            announce(RefUpdate(repo, REF, c1, c2), notify, state_dir=state, now=WHEN, host=HOST)
    revs = [m["X-Git-Rev"] for m in read_mbox(mbox) if m["X-Git-Rev"]]
    assert sorted(revs) == sorted([c1, c2])
