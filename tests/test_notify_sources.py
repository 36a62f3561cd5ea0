"""A build's email names the source commits it publishes (issue 17: after a burst, 3 emails
covered 20 source commits and named none).

Through ``run-once`` with a real source repository (tests.smallsite), the email's mbox copy
read back; oracle for the list: ``git log --format='%h %s (%an)' old..new`` in the source
mirror; from ``\\ncommit `` on, the email stays ``git log -C --stat -p --cc -1`` byte for byte.
"""

from __future__ import annotations

import dataclasses
import email
import email.policy
import mailbox
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from deploybot.notify.compose.sources import SourceCommit, SourceLog, SourceRepo, source_lines
from deploybot.notify.source_read import read_source_log
from tests.gitrepo import commit_files
from tests.servers import Collector, LocalController, free_port
from tests.smallsite import SmallSite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")

WHEN = 1_700_000_100


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def bodies(site: SmallSite) -> list[str]:
    box = mailbox.mbox(str(site.mbox))
    try:
        return [_text(message) for message in box]
    finally:
        box.close()


def _text(message: mailbox.mboxMessage) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode("utf-8")


def section(body: str) -> list[str]:
    """The intro's source section: from ``Built from`` to the empty line after it."""
    lines = body.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Built from "))
    return lines[start : lines.index("", start)]


def add_posts(site: SmallSite, count: int, start: int = 0) -> list[str]:
    """``count`` source commits, one post each, a second apart; their ids, oldest first."""
    return [
        commit_files(
            site.source,
            {f"_posts/2023-02-{n % 28 + 1:02d}-post-{n}.md": b"---\ntitle: P%d\n---\nx\n" % n},
            f"Add post {n}",
            when=WHEN + n,
        )
        for n in range(start, start + count)
    ]


def oracle(site: SmallSite, spec: str, limit: int) -> list[str]:
    """git's own list in the source mirror: ``%h %s (%an)``, newest first."""
    out = git(site.state / "source.git", "log", f"-{limit}", "--format=    %h %s (%an)", spec)
    return out.splitlines()


def test_a_build_of_several_source_commits_names_them(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    posts = add_posts(site, 3)
    assert site.run()[0] == 0
    first, second = bodies(site)
    mirror = site.state / "source.git"
    short = {sha: git(mirror, "rev-parse", "--short", sha).strip() for sha in [site.first, *posts]}
    url = site.source.resolve()
    assert section(first) == [
        f"Built from {url} (branch main):",
        f"first build, from {short[site.first]}; the newest source commits:",
        f"    {short[site.first]} Import (Site Author)",
    ]
    assert section(second) == [
        f"Built from {url} (branch main):",
        f"3 source commits, {short[site.first]}..{short[posts[-1]]}, newest first:",
        *oracle(site, f"{site.first}..{posts[-1]}", 20),
    ]
    assert section(second)[2:] == [
        f"    {short[posts[2]]} Add post 2 (Site Author)",
        f"    {short[posts[1]]} Add post 1 (Site Author)",
        f"    {short[posts[0]]} Add post 0 (Site Author)",
    ]
    # Before the intro's "The following commit(s)" block; from "commit" on, git's bytes.
    assert second.index("Built from ") < second.index("The following commit(s) were added")
    build = site.head()
    assert build is not None
    log = git(site.publish, "log", "-C", "--stat", "-p", "--cc", "-1", build)
    assert (
        second[second.index("\ncommit ") + 1 :]
        == log.replace("\nDate:   ", "\nAuthorDate: ", 1) + "\n"
    )


def test_more_than_twenty_are_counted_and_merged_commits_listed(tmp_path: Path) -> None:
    """25 commits on main and a side branch of 2 merged in: ``git log old..new`` lists all
    28 (merged commits and the merge too), the newest 20 of them, then ``and 8 more``."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    add_posts(site, 12)
    git(site.source, "branch", "side", "main")  # off main, 12 posts in
    for n in (1, 2):
        side = commit_files(
            site.source, {"side.md": b"side %d\n" % n}, f"Side {n}", when=WHEN + 49 + n,
            branch="side",
        )  # fmt: skip
    add_posts(site, 13, start=12)
    merge = _merge(site.source, "main", side, "Merge side", WHEN + 90)
    assert site.run()[0] == 0
    lines = section(bodies(site)[1])
    mirror = site.state / "source.git"
    previous = git(mirror, "rev-parse", "--short", site.first).strip()
    assert lines[1] == f"28 source commits, {previous}..{merge[: len(previous)]}, newest first:"
    assert lines[2:22] == oracle(site, f"{site.first}..{merge}", 20)
    assert lines[22:] == ["    ... and 8 more"]
    assert lines[2].endswith(" Merge side (Site Author)")
    assert any(line.endswith(" Side 2 (Site Author)") for line in lines)


def _merge(repo: Path, branch: str, other: str, message: str, when: int) -> str:
    """A merge commit of ``other`` into ``branch`` (trees merged by git in a scratch clone)."""
    work = repo.parent / "merge-work"
    env_date = f"{when} +0000"
    git(repo.parent, "clone", "-q", "-b", branch, str(repo), str(work))
    ident = ["-c", "user.name=Site Author", "-c", "user.email=author@example.org"]
    subprocess.run(
        ["git", "-C", str(work), *ident, "merge", "-q", "--no-ff", "-m", message, other],
        env={**os.environ, "GIT_AUTHOR_DATE": env_date, "GIT_COMMITTER_DATE": env_date},
        check=True,
        capture_output=True,
    )
    git(work, "push", "-q", "origin", f"HEAD:{branch}")
    return git(work, "rev-parse", "HEAD").strip()


def test_notify_commit_of_an_old_build_names_its_source_commits(tmp_path: Path) -> None:
    """``notify --commit`` with the config: the build's record (its note) and the source
    mirror give the range; without a config there is no mirror, and no section."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    posts = add_posts(site, 2)
    assert site.run()[0] == 0
    add_posts(site, 1, start=2)
    assert site.run()[0] == 0
    emailed = bodies(site)[1]
    args = ["notify", "--commit", "asf-site~1", "--transport", "stdout"]
    result = CliRunner().invoke(main, [*args, "--config", str(site.config)])
    assert result.exit_code == 0, result.output
    body = result.stdout_bytes.decode("utf-8").split("\n\n", 1)[1]
    assert section(body) == section(emailed)
    assert section(body)[1].startswith("2 source commits, ")
    assert section(body)[2].startswith(f"    {posts[1][:7]} Add post 1 ")
    bare = CliRunner().invoke(main, [*args, "--repo", str(site.publish)])
    assert bare.exit_code == 0, bare.output
    assert "Built from " not in bare.stdout_bytes.decode("utf-8")


def test_each_email_of_a_series_names_its_own_source_commits(tmp_path: Path) -> None:
    """Two builds while the SMTP server is down: once it is back, one summary and two NN/TT
    emails, each commit email naming the source commits of its own build."""
    port = free_port()
    site = SmallSite(tmp_path)
    text = site.config.read_text().replace('transport = "mbox"', 'transport = "smtp"')
    site.config.write_text(
        text + f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 5\n'
    )
    handler = Collector()
    with running(handler, port):
        assert site.run()[0] == 0
    first = add_posts(site, 2)
    assert site.run()[0] == 75
    second = add_posts(site, 1, start=2)
    assert site.run()[0] == 75
    with running(handler, port):
        assert site.run("--retry-now")[0] == 0
    subjects = [_parse(m.content)["Subject"] for m in handler.messages]
    assert [s.split(": ")[0].split("] ")[1] for s in subjects[2:]] == ["01/02", "02/02"]
    summary, one, two = (_body(m.content) for m in handler.messages[1:])
    assert "Built from " not in summary
    assert section(one)[1].endswith(f"..{first[-1][:7]}, newest first:")
    assert section(one)[2:] == oracle(site, f"{site.first}..{first[-1]}", 20)
    assert section(two)[2:] == oracle(site, f"{first[-1]}..{second[-1]}", 20)


@contextmanager
def running(handler: Collector, port: int) -> Iterator[None]:
    controller = LocalController(handler, port=port)
    controller.start()
    try:
        yield
    finally:
        controller.stop()


def _parse(raw: bytes) -> email.message.EmailMessage:
    msg = email.message_from_bytes(raw.replace(b"\r\n", b"\n"), policy=email.policy.default)
    assert isinstance(msg, email.message.EmailMessage)
    return msg


def _body(raw: bytes) -> str:
    content = _parse(raw).get_content()
    assert isinstance(content, str)
    return content


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    """A first build of a long history reads at most ``max_walk`` commits: the count then
    says "at least"."""
    site = SmallSite(tmp_path)
    add_posts(site, 30)
    assert site.run()[0] == 0
    build = site.head()
    assert build is not None
    source = SourceRepo(site.state / "source.git", "https://example.org/src.git", "main")
    log = read_source_log(site.publish, build, source, max_listed=3, max_walk=10)
    assert log is not None and not log.complete
    assert len(log.commits) == 3 and 0 < log.more <= 7
    lines = source_lines(log)
    assert lines[1].startswith("first build, from ")
    assert lines[-1] == f"    ... and at least {log.more} more"
    whole = read_source_log(site.publish, build, source, max_listed=3)
    assert whole is not None and whole.complete and whole.more == 31 - 3


def test_source_lines_redact_and_cut() -> None:
    log = SourceLog(
        url="https://user:s3cret@git.example.org/src.git",
        branch="main",
        new="bbbbbbb",
        old="aaaaaaa",
        first=False,
        commits=(SourceCommit("bbbbbbb", "Jane Doe", "x" * 600),),
        more=0,
    )
    lines = source_lines(log, 500)
    assert lines[0] == "Built from https://git.example.org/src.git (branch main):"
    assert lines[1] == "1 source commit, aaaaaaa..bbbbbbb, newest first:"
    assert len(lines[2]) == 499 and lines[2].endswith(" [...]")
    empty = SourceLog("src", "main", "aaaaaaa", "bbbbbbb", False, (), 0)
    assert source_lines(empty)[1] == "no new source commits, bbbbbbb..aaaaaaa"
    older = dataclasses.replace(empty, why="the source moved")
    assert (
        source_lines(older)[1] == "no new source commits, bbbbbbb..aaaaaaa; built: the source moved"
    )
    again = dataclasses.replace(empty, old="aaaaaaa", why="run-once --full")
    assert (
        source_lines(again)[1]
        == "no new source commits since aaaaaaa; built again: run-once --full"
    )


UNREAD = b"title: Small\nurl: https://small.example.org\nexclude: [README.md]\n"


def unread_pushes(site: SmallSite) -> tuple[str, list[str]]:
    """A first build, then three source commits touching only paths the build does not
    read (each run publishes only the record): (the source commit built, the three)."""
    built = commit_files(site.source, {"_config.yml": UNREAD}, "Exclude README", when=WHEN)
    assert site.run()[0] == 0
    unread = []
    for n, files in enumerate(
        ({"README.md": b"r\n"}, {"_drafts/x.md": b"x\n"}, {"Gemfile": b"g\n"})
    ):
        unread.append(
            commit_files(site.source, files, f"Touch {next(iter(files))}", when=WHEN + 1 + n)
        )
        code, out = site.run()
        assert code == 0 and out.startswith("nothing to publish: "), out
    return built, unread


def test_a_rebuild_after_unread_pushes_names_every_commit_since_the_build(tmp_path: Path) -> None:
    """The commits between the previous build's tree and this one are all in the source it
    is built from: ``git log <build-source>..<source>``, not the empty ``<source>..<source>``
    of the note the unread pushes rewrote."""
    site = SmallSite(tmp_path)
    built, unread = unread_pushes(site)
    first = site.head()
    site.write_config(extra="[render]\nfeed_limit = 1\n")
    code, out = site.run()
    assert code == 0 and out.startswith("published "), out
    mirror = site.state / "source.git"
    short = {sha: git(mirror, "rev-parse", "--short", sha).strip() for sha in [built, *unread]}
    assert section(bodies(site)[1]) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"3 source commits, {short[built]}..{short[unread[-1]]}, newest first:",
        *oracle(site, f"{built}..{unread[-1]}", 20),
        "built: render settings changed (feed_limit)",  # a settings rebuild, not the pushes
    ]
    # The first build's email, made again: from the commit its tree was built from.
    args = [
        "notify",
        "--commit",
        first or "",
        "--transport",
        "stdout",
        "--config",
        str(site.config),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    resent = result.stdout_bytes.decode("utf-8").split("\n\n", 1)[1]
    assert section(resent) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"first build, from {short[built]}; the newest source commits:",
        *oracle(site, built, 20),
    ]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("feed_limit", "render settings changed (feed_limit)"),
        ("nojekyll", "publish settings changed (nojekyll)"),
    ],
)
def test_a_build_of_no_new_source_commit_says_why_it_was_built(
    tmp_path: Path, change: str, why: str
) -> None:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    if change == "nojekyll":
        text = site.config.read_text()
        site.config.write_text(text.replace("[publish]\n", "[publish]\nnojekyll = true\n"))
    else:
        site.write_config(extra="[render]\nfeed_limit = 1\n")
    code, out = site.run()
    assert code == 0 and out.startswith("published "), out
    short = git(site.state / "source.git", "rev-parse", "--short", site.first).strip()
    assert section(bodies(site)[1]) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"no new source commits since {short}; built again: {why}",
    ]


def test_a_rewound_source_says_it_went_back_and_lists_no_dropped_commit_as_new(
    tmp_path: Path,
) -> None:
    """The source branch reset to an older commit, published with ``--allow-older``: the
    email says the branch went back, from which commit to which, and lists the commits the
    build no longer has as dropped, not as new source commits."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    posts = add_posts(site, 2)
    assert site.run()[0] == 0
    git(site.source, "update-ref", "refs/heads/main", site.first)
    code, out = site.run("--allow-older")
    assert code == 0 and out.startswith("published "), out
    mirror = site.state / "source.git"
    short = {sha: git(mirror, "rev-parse", "--short", sha).strip() for sha in [site.first, *posts]}
    assert section(bodies(site)[2]) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"the source branch went back from {short[posts[1]]} to {short[site.first]}; "
        "2 source commits dropped, newest first:",
        *oracle(site, f"{site.first}..{posts[1]}", 20),
    ]


def test_a_rewritten_source_lists_the_new_commits_and_the_dropped_ones(tmp_path: Path) -> None:
    """The source branch force-pushed to another history from an older commit: the new
    commits are listed as ``old..new`` (git's), and the dropped ones after, as dropped."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    dropped = add_posts(site, 2)
    assert site.run()[0] == 0
    git(site.source, "update-ref", "refs/heads/main", site.first)
    added = add_posts(site, 1, start=5)
    code, out = site.run()
    assert code == 0 and out.startswith("published "), out
    mirror = site.state / "source.git"
    short = {s: git(mirror, "rev-parse", "--short", s).strip() for s in [*dropped, *added]}
    assert section(bodies(site)[2]) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"1 source commit, {short[dropped[1]]}..{short[added[0]]}, newest first:",
        *oracle(site, f"{dropped[1]}..{added[0]}", 20),
        f"the source branch was rewritten from {short[dropped[1]]}; "
        "2 source commits dropped, newest first:",
        *oracle(site, f"{added[0]}..{dropped[1]}", 20),
    ]


def test_a_settings_rebuild_with_new_source_commits_says_why_too(tmp_path: Path) -> None:
    """A render setting changed and the source moved: the build is a settings rebuild
    (its note's reason), and its email lists the new commits and says so; a build of new
    commits alone says nothing more (the list is why)."""
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    [post] = add_posts(site, 1)
    site.write_config(extra="[render]\nfeed_limit = 1\n")
    assert site.run()[1].startswith("published ")
    [later] = add_posts(site, 1, start=1)
    assert site.run()[1].startswith("published ")
    mirror = site.state / "source.git"
    short = {s: git(mirror, "rev-parse", "--short", s).strip() for s in [site.first, post, later]}
    _, rebuilt, moved = bodies(site)
    assert section(rebuilt) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"1 source commit, {short[site.first]}..{short[post]}, newest first:",
        *oracle(site, f"{site.first}..{post}", 20),
        "built: render settings changed (feed_limit)",
    ]
    assert section(moved) == [
        f"Built from {site.source.resolve()} (branch main):",
        f"1 source commit, {short[post]}..{short[later]}, newest first:",
        *oracle(site, f"{post}..{later}", 20),
    ]
