"""Short commit ids as git abbreviates them (``core.abbrev`` auto), wherever the email shows one.

git's ``repo_find_unique_abbrev_r``: the length is ``ceil((msb(count) + 1) / 2)``, at least
7, ``count`` being the packed objects (``repo_approximate_object_count``); then the id is
made longer while another object shares that prefix. git-multimail takes its short ids from
``git rev-parse --short``. Oracle: ``git rev-parse --short`` and ``git log --oneline`` on
the same repository, big enough (fast-import packs thousands of blobs in a second) or with
an object crafted to share the commit's first 7 digits.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from deploybot.config.schema import NotifyConfig
from deploybot.notify.commit_email import build_email
from deploybot.notify.gitlog import git_cli
from deploybot.notify.gitlog.summary import brief_summary
from tests.smallsite import SmallSite
from tests.test_notify_gitlog import LOG_ARGS, git

NOTIFY = NotifyConfig(
    transport="stdout",
    to=("commits@example.org",),
    sender="bot@example.org",
    repository_url="https://example.org/repos/site.git",
    pusher="bot",
)
NOW = datetime(2020, 7, 14, 16, 12, 5, tzinfo=UTC)
REF = "refs/heads/asf-site"
IDENT = b"Build Bot <bot@example.org> 1594743124 -0700"


def blobs_stream(count: int, ref: bytes, *, mode_change: bool = False) -> bytes:
    """fast-import input: a commit of ``count`` small files on ``ref``, then a second one
    changing ``f/00001`` (its mode only, or its content)."""
    out = [b"commit %s\nmark :1\ncommitter %s\ndata 6\nfirst\n" % (ref, IDENT)]
    out += [b"M 100644 inline f/%05d\ndata %d\nblob %d\n\n" % (i, 6 + len(str(i)), i)
            for i in range(count)]  # fmt: skip
    out.append(b"commit %s\nmark :2\ncommitter %s\ndata 6\nBuild\nfrom :1\n" % (ref, IDENT))
    if mode_change:
        out.append(b"M 100755 inline f/00001\ndata 7\nblob 1\n\n")
    else:
        out.append(b"M 100644 inline f/00001\ndata 8\nchanged\n\n")
    return b"".join(out)


def short_of(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", "--short", rev).decode().strip()


def intro(message: bytes) -> list[str]:
    """The body lines before the ``commit`` block."""
    body = message.decode().split("\n\n", 1)[1]
    return body[: body.index("\ncommit ")].split("\n")


@pytest.fixture(params=["python", "git"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Who makes the log text: the pure-Python path (git hidden) or git (always asked)."""
    if request.param == "python":
        monkeypatch.setattr(git_cli, "git_executable", lambda: None)
    else:
        monkeypatch.setattr(git_cli, "prefer_git", lambda repo, changes: True)
    return str(request.param)


def email_for(repo: Path, rev: str) -> bytes:
    commit = git(repo, "rev-parse", rev).decode().strip()
    parent = git(repo, "rev-parse", f"{rev}~1").decode().strip()
    return build_email(repo, REF, parent, commit, NOTIFY, now=NOW, host="bot.example.org")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16,500 packed blobs: git's automatic length is 8; the tip changes a mode only, so
    its diff has no ``index`` line to take a length from."""
    repo = tmp_path_factory.mktemp("abbrev") / "big.git"
    git(repo.parent, "init", "-q", "--bare", str(repo))
    git(repo, "fast-import", "--quiet", stdin=blobs_stream(16_500, REF.encode(), mode_change=True))
    return repo


def test_the_intro_ids_are_as_long_as_git_makes_them(big: Path, engine: str) -> None:
    short = short_of(big, "asf-site")
    assert len(short) == 8
    assert git(big, "log", "--oneline", "-1", "asf-site").decode() == f"{short} Build\n"
    assert intro(email_for(big, "asf-site"))[-4:] == [
        "The following commit(s) were added to refs/heads/asf-site by this push:",
        f"     new {short} Build",
        f"{short} is described below",
        "",
    ]


def test_a_created_branch_subject_has_git_s_short_id(big: Path) -> None:
    commit = git(big, "rev-parse", "asf-site").decode().strip()
    message = build_email(big, REF, None, commit, NOTIFY, now=NOW, host="bot.example.org")
    subject = f"Subject: [site] branch asf-site created (now {short_of(big, 'asf-site')})"
    assert subject in message.decode().split("\n")


def craft_ambiguous_commit(repo: Path) -> tuple[str, str]:
    """On top of ``asf-site``, write a commit (loose) whose first 7 hex digits are those of
    an object already in the repository: vary its message until one matches (about 16,000
    tries against 16,000 objects; the ids are computed, not written). Returns (the commit,
    the object sharing its prefix)."""
    ids = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    prefixes = {sha[:7]: sha.decode() for sha in ids}
    parent = git(repo, "rev-parse", "asf-site").decode().strip()
    tree = git(repo, "rev-parse", "refs/heads/next^{tree}").decode().strip()
    for n in range(10_000_000):
        raw = b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\nBuild %d\n" % (
            tree.encode(), parent.encode(), IDENT, IDENT, n,
        )  # fmt: skip
        sha = hashlib.sha1(b"commit %d\0" % len(raw) + raw).hexdigest()
        twin = prefixes.get(sha[:7].encode())
        if twin is not None:
            made = git(repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=raw)
            assert made.decode().strip() == sha
            git(repo, "update-ref", REF, sha)
            return sha, twin
    raise AssertionError("no commit shares a prefix")


@pytest.fixture(scope="module")
def ambiguous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    repo = tmp_path_factory.mktemp("abbrev") / "small.git"
    git(repo.parent, "init", "-q", "--bare", str(repo))
    git(repo, "fast-import", "--quiet", stdin=blobs_stream(16_000, b"refs/heads/next"))
    git(repo, "update-ref", REF, "refs/heads/next~1")
    commit, twin = craft_ambiguous_commit(repo)
    return repo, commit, twin


def test_an_ambiguous_commit_id_is_made_longer(
    ambiguous: tuple[Path, str, str], engine: str
) -> None:
    repo, commit, twin = ambiguous
    short = short_of(repo, commit)
    assert len(short) > 7 and twin.startswith(commit[:7])
    subject = git(repo, "log", "-1", "--format=%s", commit).decode().strip()
    lines = intro(email_for(repo, commit))
    assert lines[-3:-1] == [f"     new {short} {subject}", f"{short} is described below"]
    assert brief_summary(repo, [commit]) == [(short, subject)]


def log_part(message: bytes) -> str:
    """The email's ``git log`` text: from ``commit <id>`` on."""
    body = message.decode().split("\n\n", 1)[1]
    return body[body.index("\ncommit ") + 1 :]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few objects; the tip changes the content of a file (an ``index`` line) and adds one
    (``index 0000000..``)."""
    repo = tmp_path_factory.mktemp("abbrev") / "small.git"
    git(repo.parent, "init", "-q", "--bare", str(repo))
    git(repo, "fast-import", "--quiet", stdin=blobs_stream(3, REF.encode()))
    return repo


@pytest.mark.parametrize("setting", ["12", "4", "40", "no", "false", "Off", "auto", "AUTO"])
def test_core_abbrev_is_honoured_as_git_honours_it(small: Path, engine: str, setting: str) -> None:
    """``git config core.abbrev N`` (a number from 4 to 40, ``no``/``false``/``off`` for
    full ids, ``auto``, any case): the email's short ids and its log text are git's."""
    git(small, "config", "core.abbrev", setting)
    try:
        short, blob = short_of(small, "asf-site"), short_of(small, "asf-site~1:f/00001")
        message = email_for(small, "asf-site")
        text = git(small, *LOG_ARGS, "asf-site").decode()
        assert git_cli.config_allows_git(small)  # the git engine runs git, no fallback
    finally:
        git(small, "config", "--unset", "core.abbrev")
    want = {"12": 12, "4": 4, "auto": 7, "AUTO": 7}.get(setting, 40)
    assert len(short) == want
    assert intro(message)[-3:-1] == [f"     new {short:<8} Build", f"{short} is described below"]
    assert len(blob) == want and f"\nindex {blob}.." in text
    assert log_part(message) == text.replace("\nDate:   ", "\nAuthorDate: ", 1) + "\n"


REVS = ("asf-site", "asf-site~1")


@pytest.mark.parametrize("setting", ["3", "41", "yes", "twelve"])
def test_a_core_abbrev_git_refuses_is_read_as_auto(small: Path, engine: str, setting: str) -> None:
    """git itself stops on such a value; the email is still made, with the automatic length."""
    commit, parent = (git(small, "rev-parse", rev).decode().strip() for rev in REVS)
    git(small, "config", "core.abbrev", setting)
    try:
        message = build_email(small, REF, parent, commit, NOTIFY, now=NOW, host="bot.example.org")
    finally:
        git(small, "config", "--unset", "core.abbrev")
    text = git(small, *LOG_ARGS, "asf-site").decode()
    assert log_part(message) == text.replace("\nDate:   ", "\nAuthorDate: ", 1) + "\n"
    assert intro(message)[-2] == f"{short_of(small, 'asf-site')} is described below"


def test_the_source_section_honours_core_abbrev(tmp_path: Path) -> None:
    """The source mirror's ``core.abbrev`` gives the source section's short ids."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    mirror = site.state / "source.git"
    git(mirror, "config", "core.abbrev", "12")
    args = ["notify", "--commit", "asf-site", "--transport", "stdout", "--config", str(site.config)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    short = short_of(mirror, site.first)
    assert len(short) == 12
    lines = result.stdout_bytes.decode().split("\n")
    assert f"first build, from {short}; the newest source commits:" in lines
    assert f"    {short} Import (Site Author)" in lines
