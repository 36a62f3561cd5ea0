"""The combined commit email, checked line by line against git's own ``git log`` output.

Layout: notifier-research.md §1.3-1.6 (ASF's git-multimail). Oracle: the git CLI.
"""

from __future__ import annotations

import email
import email.policy
import itertools
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from email.header import Header
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deploybot.config.schema import NotifyConfig
from deploybot.notify.commit_email import build_email
from deploybot.notify.compose.email import (
    DEFAULT_LIMITS,
    compose_combined_email,
    message_id,
    redact_url,
)
from deploybot.notify.compose.envelope import Envelope, Limits
from deploybot.notify.compose.names import repo_name_from_url
from deploybot.notify.gitlog.excerpt import abbrev_length
from deploybot.notify.gitlog.message import commit_subject, read_commit_subject
from tests.gitcli import run_git

LIST = "commits@tvm.apache.org"
WHEN = datetime(2020, 7, 14, 16, 12, 5, tzinfo=UTC)
SUBJECT = "Build at Tue Jul 14 09:12:04 PDT 2020"
HEADER_ORDER = [
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
    "X-Git-Rev",
    "X-Git-NotificationType",
    "X-Deploybot-Version",
    "Auto-Submitted",
]


# --- a real repository, made with the git CLI ---------------------------------------------


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return run_git(repo, *args, name="tqchen", email="tqchen@example.org", input=input)


def make_commit(repo: Path, files: dict[str, str], message: str = SUBJECT) -> tuple[str, str]:
    """Commit ``files`` on branch asf-site (after an initial commit); return (old, new)."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "asf-site")
        (repo / "index.html").write_text("<p>hello</p>\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "Initial")
    old = git(repo, "rev-parse", "HEAD").strip()
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-F", "-", input=message.encode())
    return old, git(repo, "rev-parse", "HEAD").strip()


def log_text(repo: Path, commit: str) -> str:
    """The oracle: what git-multimail runs (commitLogOpts ``-C --stat -p --cc``)."""
    return git(repo, "log", "-C", "--stat", "-p", "--cc", "-1", commit)


ENVELOPE = Envelope(
    repo_name="incubator-tvm-site",
    repository_url="https://gitbox.apache.org/repos/asf/incubator-tvm-site.git",
    refname="refs/heads/asf-site",
    pusher="tqchen",
    sender="tqchen@apache.org",
    to=(LIST,),
    host="gitbox.apache.org",
    date=WHEN,
)


def compose(
    log: str,
    old: str | None,
    new: str,
    *,
    subject_line: str = SUBJECT,
    limits: Limits = DEFAULT_LIMITS,
    **envelope: Any,
) -> bytes:
    """The combined email with :data:`ENVELOPE`, any of its fields replaced by ``envelope``."""
    return compose_combined_email(
        envelope=replace(ENVELOPE, **envelope),
        log_text=log,
        old=old,
        new=new,
        subject_line=subject_line,
        limits=limits,
    )


def split(raw: bytes) -> tuple[list[str], list[str]]:
    """Return (physical header lines, body lines) of a composed message."""
    head, body = raw.decode("utf-8").split("\n\n", 1)
    assert body.endswith("\n")
    return head.split("\n"), body[:-1].split("\n")


def header_names(raw: bytes) -> list[str]:
    return [line.split(":", 1)[0] for line in split(raw)[0] if not line.startswith(" ")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tmp_path / "site"


# --- layout --------------------------------------------------------------------------------


def test_layout_line_by_line(repo: Path) -> None:
    old, new = make_commit(repo, {"atom.xml": "<feed>\n<updated>2020-07-14</updated>\n</feed>\n"})
    log = log_text(repo, new)
    raw = compose(log, old, new)
    headers, body = split(raw)
    short = new[:7]
    assert headers == [
        "Date: Tue, 14 Jul 2020 16:12:05 +0000",
        f'To: "{LIST}" <{LIST}>',
        "Subject: [incubator-tvm-site] branch asf-site updated: Build at Tue Jul 14",
        " 09:12:04 PDT 2020",  # folded at 76 like email.header.Header (research §1.3)
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
        f"Message-ID: {message_id(new, [LIST], 'gitbox.apache.org')}",
        "From: tqchen@apache.org",
        "X-Git-Host: gitbox.apache.org",
        "X-Git-Repo: incubator-tvm-site",
        "X-Git-Refname: refs/heads/asf-site",
        "X-Git-Reftype: branch",
        f"X-Git-Oldrev: {old}",
        f"X-Git-Newrev: {new}",
        f"X-Git-Rev: {new}",
        "X-Git-NotificationType: ref_changed_plus_diff",
        "X-Deploybot-Version: 0.1.0",
        "Auto-Submitted: auto-generated",
    ]
    git_lines = log.rstrip("\n").split("\n")
    assert git_lines[2] == "Date:   Tue Jul 14 09:12:04 2020 -0700"
    assert body == [
        "This is an automated email from the git repository.",
        "",
        "tqchen pushed a commit to branch asf-site",
        "in repository https://gitbox.apache.org/repos/asf/incubator-tvm-site.git",
        "",
        "",
        "The following commit(s) were added to refs/heads/asf-site by this push:",
        f"     new {short}  Build at Tue Jul 14 09:12:04 PDT 2020",
        f"{short} is described below",
        "",
        f"commit {new}",
        "Author: tqchen <tqchen@example.org>",
        "AuthorDate: Tue Jul 14 09:12:04 2020 -0700",
        *git_lines[3:],
        "",  # the footer: one empty line
    ]
    assert git_lines[3:7] == [
        "",
        "    Build at Tue Jul 14 09:12:04 PDT 2020",
        "---",
        " atom.xml | 3 +++",
    ]


def test_parses_as_utf8_8bit_text(repo: Path) -> None:
    old, new = make_commit(repo, {"café.html": "<p>naïve – ✓</p>\n"}, "Ajouter café\n\nCorps.")
    raw = compose(log_text(repo, new), old, new, subject_line="Ajouter café")
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content_charset() == "utf-8"
    assert msg["Subject"] == "[incubator-tvm-site] branch asf-site updated: Ajouter café"
    content = msg.get_content()
    assert "+<p>naïve – ✓</p>\n" in content
    assert "    Corps.\n" in content
    assert ' "caf\\303\\251.html" | 1 +\n' in content  # git's quoted path, verbatim


def test_header_order_is_asf_order(repo: Path) -> None:
    old, new = make_commit(repo, {"a.txt": "a\n"})
    assert header_names(compose(log_text(repo, new), old, new)) == HEADER_ORDER


def test_short_sha_follows_the_log_abbreviation() -> None:
    new = "abcdef0123456789abcdef0123456789abcdef01"
    log = f"commit {new}\n\ndiff --git a/x b/x\nindex 12345678..9abcdef0 100644\n"
    assert abbrev_length(log) == 8
    assert abbrev_length(f"commit {new}\n") == 7
    body = split(compose(log, "1" * 40, new))[1]
    assert body[7] == "     new abcdef01 Build at Tue Jul 14 09:12:04 PDT 2020"
    assert body[8] == "abcdef01 is described below"


def test_multiple_recipients_and_display_name_sender(repo: Path) -> None:
    old, new = make_commit(repo, {"a.txt": "a\n"})
    raw = compose(log_text(repo, new), old, new, to=(LIST, "b@x.org"), sender="Bøt <b@x.org>")
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert [a.addr_spec for a in msg["To"].addresses] == [LIST, "b@x.org"]
    assert str(msg["From"]) == "Bøt <b@x.org>"
    assert b"From: =?utf-8?q?B=C3=B8t?= <b@x.org>\n" in raw


# --- Message-ID ----------------------------------------------------------------------------


def test_message_id_is_deterministic(repo: Path) -> None:
    old, new = make_commit(repo, {"a.txt": "a\n"})
    log = log_text(repo, new)

    def mid(**kw: Any) -> str:
        raw = compose(log, old, new, **kw)
        value = email.message_from_bytes(raw)["Message-ID"]
        assert isinstance(value, str)
        return value

    first = mid()
    assert re.fullmatch(rf"<{new}\.[0-9a-f]{{12}}\.deploybot@gitbox\.apache\.org>", first)
    assert mid(date=WHEN + timedelta(hours=3), pusher="someone else") == first  # a retry
    assert mid(to=("COMMITS@tvm.apache.org",)) == first  # addresses compare without case
    assert mid(to=("dev@tvm.apache.org",)) != first  # another list, another id
    assert mid(host="other.example.org") != first


# --- size limits (research §1.6) -----------------------------------------------------------


def test_line_cut_at_exactly_500(repo: Path) -> None:
    # the diff adds "+": 499 characters make a 500-character line, 500 make 501
    old, new = make_commit(repo, {"a.txt": "k" * 499 + "\n", "b.txt": "c" * 500 + "\n"})
    body = split(compose(log_text(repo, new), old, new))[1]
    assert "+" + "k" * 499 in body
    cut = [line for line in body if line.startswith("+c")]
    assert cut == ["+" + "c" * 492 + " [...]"]
    assert len(cut[0]) == 499
    assert all(len(line) <= 500 for line in body)


def test_line_cut_configurable_and_off() -> None:
    log = "x" * 30 + "\n" + "y" * 31 + "\n"
    body = split(compose(log, "1" * 40, "2" * 40, limits=Limits(max_line_length=30)))[1]
    assert body[10:12] == ["x" * 30, "y" * 23 + " [...]"]
    off = Limits(max_line_length=0)
    body = split(compose("z" * 2000 + "\n", "1" * 40, "2" * 40, limits=off))[1]
    assert body[10] == "z" * 2000


def test_line_count_suppression_matches_asf(repo: Path) -> None:
    """research §1.6: a 12000-line new file gave ``... 2019 lines suppressed ...``."""
    old, new = make_commit(repo, {"big.txt": "".join(f"{i}\n" for i in range(12000))})
    body = split(compose(log_text(repo, new), old, new))[1]
    assert len(body) == 6 + 10000 + 1 + 1  # intro, kept body lines, notice, footer
    assert body[-2:] == ["... 2019 lines suppressed ...", ""]
    assert body[-3] == "+" + str(12000 - 2019 - 1)


def test_line_count_small_limit() -> None:
    log = "".join(f"line {i}\n" for i in range(10))
    body = split(compose(log, "1" * 40, "2" * 40, limits=Limits(max_lines=6)))[1]
    # 4 lines of "new" list + 2 log lines are kept, 8 of the 14 are suppressed
    assert body[6:] == [*body[6:10], "line 0", "line 1", "... 8 lines suppressed ...", ""]
    body = split(compose(log, "1" * 40, "2" * 40, limits=Limits(max_lines=14)))[1]
    assert body[-2:] == ["line 9", ""]


def test_long_subject_is_cut_at_500() -> None:
    for length, expected in ((500, "s" * 500), (501, "s" * 494 + " [...]")):
        raw = compose("", "1" * 40, "2" * 40, subject_line="s" * length)
        subject = email.message_from_bytes(raw, policy=email.policy.default)["Subject"]
        assert subject == f"[incubator-tvm-site] branch asf-site updated: {expected}"


# --- headers: RFC 2047, folding, injection -------------------------------------------------


def test_non_ascii_subject_is_rfc2047_and_folded() -> None:
    subject = "Mise à jour du site : les pages « Télécharger » et « Communauté » ont changé"
    raw = compose("", "1" * 40, "2" * 40, subject_line=subject)
    headers = split(raw)[0]
    assert headers[2].startswith("Subject: ")
    lines = [headers[2], *itertools.takewhile(lambda h: h.startswith(" "), headers[3:])]
    full = f"[incubator-tvm-site] branch asf-site updated: {subject}"
    expected = "Subject: " + Header(full, "utf-8", header_name="Subject").encode()
    assert lines == expected.split("\n")  # exactly what Python's Header (multimail) folds
    assert len(lines) == 3
    assert all(len(line) <= 78 for line in lines)  # RFC 5322 §2.1.1
    assert all(line.strip().startswith(("Subject: =?utf-8?q?", "=?utf-8?q?")) for line in lines)
    assert raw.split(b"\n\n", 1)[0].isascii()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == f"[incubator-tvm-site] branch asf-site updated: {subject}"


HOSTILE = [
    "evil\r\nBcc: victim@example.org",
    "evil\nX-Injected: 1",
    "evil\rX-Injected: 1",
    "evil\n\nbody takeover",
    "evil\u2028X-Injected: 1",
    "evil\x0bX-Injected: 1\x0c\x1c\x85",
    "=?utf-8?q?evil=0AX-Injected=3A_1?=",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_header_injection_is_harmless(hostile: str) -> None:
    raw = compose(
        f"commit {'2' * 40}\nAuthor: {hostile} <a@b>\n\n    {hostile}\n",
        "1" * 40,
        "2" * 40,
        subject_line=hostile,
        pusher=hostile,
        repo_name=hostile,
        repository_url=f"https://example.org/{hostile}",
        sender=f"{hostile} <bot@example.org>",
    )
    assert header_names(raw) == HEADER_ORDER
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert list(msg.keys()) == HEADER_ORDER
    assert msg["Bcc"] is None and msg["X-Injected"] is None
    assert "\n" not in msg["Subject"] and "\r" not in msg["Subject"]
    assert msg["Subject"].endswith(" updated: " + re.sub(r"[\x00-\x1f\x85\u2028]", " ", hostile))
    assert msg["To"] == f'"{LIST}" <{LIST}>'
    assert msg["From"].addresses[0].addr_spec == "bot@example.org"
    body = msg.get_content()
    assert body.startswith("This is an automated email from the git repository.\n\n")
    assert re.search(r"^ {0,8}\S.* pushed a commit to branch asf-site$", body, re.M)


@settings(max_examples=200, deadline=None)
@given(
    subject=st.text(max_size=300),
    pusher=st.text(max_size=60),
    repo_name=st.text(max_size=60),
    name=st.text(max_size=40),
    url=st.text(max_size=60),
)
def test_no_input_adds_a_header(
    subject: str, pusher: str, repo_name: str, name: str, url: str
) -> None:
    raw = compose(
        "",
        None,
        "2" * 40,
        subject_line=subject,
        pusher=pusher,
        repo_name=repo_name,
        repository_url=url,
        sender=f"{name} <bot@example.org>".replace("\x00", ""),
    )
    assert header_names(raw) == HEADER_ORDER
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert list(msg.keys()) == HEADER_ORDER
    assert msg.get_content().startswith("This is an automated email from the git repository.\n")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="new"):
        compose("", "1" * 40, "ABC")
    with pytest.raises(ValueError, match="refname"):
        compose("", "1" * 40, "2" * 40, refname="refs/tags/v1")
    with pytest.raises(ValueError, match="host"):
        compose("", "1" * 40, "2" * 40, host="evil\nX: y")
    for bad in ("a@b\nBcc: c@d", "a b@c", "<a@b>", "ä@b"):
        with pytest.raises(ValueError, match="addresses"):
            compose("", "1" * 40, "2" * 40, to=(bad,))
    with pytest.raises(ValueError, match="sender"):
        compose("", "1" * 40, "2" * 40, sender="Name <>")
    with pytest.raises(ValueError, match="to must"):
        compose("", "1" * 40, "2" * 40, to=())
    with pytest.raises(ValueError, match="timezone"):
        compose("", "1" * 40, "2" * 40, date=datetime(2020, 7, 14))


# --- a created branch ----------------------------------------------------------------------


def test_created_branch(repo: Path) -> None:
    _, new = make_commit(repo, {"a.txt": "a\n"})
    raw = compose(log_text(repo, new), None, new)
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == f"[incubator-tvm-site] branch asf-site created (now {new[:7]})"
    assert msg["X-Git-Oldrev"] == "0" * 40
    assert msg["X-Git-Newrev"] == msg["X-Git-Rev"] == new
    assert msg["X-Git-NotificationType"] == "ref_changed_plus_diff"
    assert f"     new {new[:7]}  {SUBJECT}\n" in msg.get_content()


def test_date_keeps_the_given_zone() -> None:
    pdt = timezone(timedelta(hours=-7))
    raw = compose("", "1" * 40, "2" * 40, date=WHEN.astimezone(pdt))
    assert split(raw)[0][0] == "Date: Tue, 14 Jul 2020 09:12:05 -0700"


# --- helpers and the facade ----------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "One line",
        "Two\nlines  \n\nBody",
        "\n\n  Leading blanks\nand more\n \nbody",
        "Trailing spaces   \t\nnext",
        "Ünïcödé subject",
    ],
)
def test_commit_subject_matches_git(repo: Path, message: str) -> None:
    _, new = make_commit(repo, {"a.txt": message}, message)
    expected = git(repo, "log", "--format=%s", "-1", new).rstrip("\n")
    assert commit_subject(message) == expected
    assert read_commit_subject(repo, new) == expected


def test_repo_name_and_redaction() -> None:
    assert repo_name_from_url("https://gitbox.apache.org/repos/asf/tvm-site.git") == "tvm-site"
    assert repo_name_from_url("git@github.com:apache/tvm-site.git/") == "tvm-site"
    assert repo_name_from_url("/srv/git/site") == "site"
    assert redact_url("https://bot:t0ken@github.com/a/b.git") == "https://github.com/a/b.git"
    assert redact_url("/srv/git/site") == "/srv/git/site"
    assert redact_url("https://x-access-token:gh_1@[::1]:8/a@b") == "https://[::1]:8/a@b"
    assert redact_url("git@github.com:a/b.git") == "git@github.com:a/b.git"  # no secret there


def test_build_email_facade(repo: Path) -> None:
    old, new = make_commit(repo, {"a.txt": "a\n"}, "Build at X\n\nmore")
    notify = NotifyConfig(
        to=(LIST,),
        sender="bot@example.org",
        repository_url="https://u:p@example.org/repos/tvm-site.git",
        pusher="deploybot",
    )
    raw = build_email(
        repo, "refs/heads/asf-site", old, new, notify, now=WHEN, host="bot.example.org"
    )
    assert raw == compose(
        log_text(repo, new),
        old,
        new,
        subject_line="Build at X",
        repo_name="tvm-site",
        repository_url="https://example.org/repos/tvm-site.git",
        pusher="deploybot",
        sender="bot@example.org",
        host="bot.example.org",
    )
