"""Tests for deploybot.publish.commit: build commits on the publish branch, the record, the push.

Remotes are bare repositories in ``tmp_path``: as a path, over HTTP by dulwich.web in-process
(where another writer can move the branch right before our push), and over ``git://`` by a
real ``git daemon`` whose ``pre-receive`` hook rejects pushes. 127.0.0.1 only. git is the
oracle for what landed on the remote.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from deploybot.git import repository
from deploybot.git.repository import MODE_FILE
from deploybot.publish.commit import (
    MAX_TRIES,
    BuildCommit,
    BuildOutput,
    PublishHead,
    PublishHooks,
    StaleBaseError,
    TreePatch,
    fetch_publish_head,
    format_build_message,
    future_record,
    publish_build,
)
from deploybot.record.refs import NOTES_REF
from deploybot.support.errors import EX_CONFIG, EX_TEMPFAIL, ConfigError, PublishError, SourceError
from tests.gitcli import run_git
from tests.servers import free_port, git_daemon, serve_http

LA = ZoneInfo("America/Los_Angeles")
WHEN = datetime(2020, 7, 14, 9, 12, 4, tzinfo=LA)
BOT = "deploybot <bot@example.org>"
SRC1, SRC2, SRC3 = "1" * 40, "2" * 40, "3" * 40
SITE = {
    "index.html": b"<h1>Hi</h1>\n",
    "2020/07/post.html": b"<p>post</p>\n",
    "feed.xml": b"<feed/>",
}
KEEP = ("docs/", ".asf.yaml", "CNAME")


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (no user config) and return its stdout."""
    return run_git(repo, *args, name="A", email="a@example.org")


def remote_head(remote: Path, branch: str = "asf-site") -> str | None:
    with repository.bare_repo(remote) as repo:
        return repository.local_ref(repo, f"refs/heads/{branch}")


def remote_files(remote: Path, rev: str = "asf-site") -> dict[str, bytes]:
    names = git(remote, "ls-tree", "-r", "--name-only", "-z", rev).split("\0")
    return {n: git(remote, "cat-file", "blob", f"{rev}:{n}").encode() for n in names if n}


def other_writer_commits(remote: Path, changes: dict[str, bytes], branch: str = "asf-site") -> str:
    """Commit ``changes`` on top of ``branch`` (or as its first commit), as a person would."""
    with repository.bare_repo(remote) as repo:
        ref = f"refs/heads/{branch}"
        head = repository.local_ref(repo, ref)
        tree = repository.commit_tree_id(repo, head) if head else None
        entries = repository.tree_entries(repo, tree)
        for path, data in changes.items():
            entries[path] = (MODE_FILE, repository.add_blob(repo, data))
        new_tree = repository.write_tree(repo, entries)
        when = datetime(2020, 7, 14, 8, 0, tzinfo=LA)
        parents = [head] if head else []
        commit = repository.make_commit(
            repo,
            new_tree,
            parents,
            author="Doc Writer <doc@example.org>",
            message="docs\n",
            when=when,
        )
        repository.set_local_refs(repo, {ref: commit})
    return commit


def publish(url: str, mirror: Path, files: dict[str, bytes], source: str, **kw: Any) -> Any:
    """publish_build with this file's defaults; ``kw`` names any field of its records."""
    when = kw.pop("when", WHEN)
    build_commit = BuildCommit(
        kw.pop("author", BOT), format_build_message("Build at {date}", when), when, source,
        kw.pop("record", None) or {},
    )  # fmt: skip
    hooks = PublishHooks(kw.pop("before_push", None), kw.pop("check_head", None))
    guard = kw.pop("guard", None)
    output = BuildOutput(files, keep=kw.pop("keep", KEEP), **kw)
    return publish_build(url, "asf-site", mirror, output, build_commit, hooks=hooks, guard=guard)


# --- the commit message ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (WHEN, "Build at Tue Jul 14 09:12:04 PDT 2020"),
        (datetime(2020, 7, 5, 23, 0, 9, tzinfo=LA), "Build at Sun Jul  5 23:00:09 PDT 2020"),
        (datetime(2020, 12, 1, 0, 5, 0, tzinfo=LA), "Build at Tue Dec  1 00:05:00 PST 2020"),
        (
            datetime(2021, 1, 31, 7, 8, 9, tzinfo=UTC),
            "Build at Sun Jan 31 07:08:09 UTC 2021",
        ),
    ],
)
def test_build_message_uses_dates_default_format(when: datetime, expected: str) -> None:
    assert format_build_message("Build at {date}", when) == expected


@pytest.mark.skipif(shutil.which("date") is None, reason="date(1) is not installed")
@pytest.mark.parametrize("stamp", [1594743124, 1593990000, 1604217600, 1615712400, 1636275600])
def test_build_message_matches_date_itself(stamp: int) -> None:
    """Around both DST switches in Los Angeles, date(1) in the C locale is the oracle."""
    env = {"TZ": "America/Los_Angeles", "LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["date", "-d", f"@{stamp}"], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("date(1) does not take -d @SECONDS")
    when = datetime.fromtimestamp(stamp, LA)
    assert format_build_message("{date}", when) == proc.stdout.strip()


def test_build_message_wants_an_aware_time() -> None:
    with pytest.raises(ValueError):
        format_build_message("Build at {date}", datetime(2020, 7, 14))


# --- building and pushing ----------------------------------------------------------------


def test_first_publish_creates_the_branch_as_a_root_commit(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "state" / "publish.git"
    repository.open_bare(remote).close()
    assert fetch_publish_head(str(remote), "asf-site", mirror) == PublishHead(None, None)

    result = publish(str(remote), mirror, SITE, SRC1)

    assert result.old is None and result.new is not None
    assert result.refname == "refs/heads/asf-site"
    assert result.repo_path == mirror
    assert result.changed_paths == tuple(sorted(SITE))
    assert remote_head(remote) == result.new
    assert remote_files(remote) == SITE
    raw = git(remote, "cat-file", "commit", result.new)
    assert "\nparent " not in raw
    assert f"author {BOT} 1594743124 -0700\n" in raw
    assert f"committer {BOT} 1594743124 -0700\n" in raw
    assert raw.endswith("\n\nBuild at Tue Jul 14 09:12:04 PDT 2020\n")
    git(remote, "fsck", "--strict")
    with repository.bare_repo(mirror) as repo:  # the mirror shows what was pushed
        assert repository.local_ref(repo, "refs/heads/asf-site") == result.new


def test_same_output_makes_no_commit_but_updates_the_record(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    notes_before = git(remote, "rev-parse", NOTES_REF).strip()

    again = publish(str(remote), mirror, SITE, SRC1)
    assert (again.old, again.new, again.changed_paths) == (first.new, None, ())
    assert git(remote, "rev-parse", NOTES_REF).strip() == notes_before  # nothing pushed

    newer_source = publish(str(remote), mirror, SITE, SRC2)
    assert newer_source.new is None
    assert remote_head(remote) == first.new
    head = fetch_publish_head(str(remote), "asf-site", tmp_path / "fresh.git")
    assert head == PublishHead(first.new, SRC2)


def test_record_survives_a_fresh_mirror_and_git_reads_it(tmp_path: Path) -> None:
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    publish(str(remote), tmp_path / "m1.git", SITE, SRC1)
    second = publish(str(remote), tmp_path / "m1.git", {**SITE, "new.html": b"new"}, SRC2)

    head = fetch_publish_head(str(remote), "asf-site", tmp_path / "brand-new.git")
    assert head == PublishHead(second.new, SRC2)
    assert second.new is not None
    assert git(remote, "notes", "--ref=deploybot", "show", second.new) == f"source-commit {SRC2}\n"
    assert len(git(remote, "rev-list", NOTES_REF).split()) == 2  # each record is a notes commit


def test_every_build_commit_keeps_its_note(tmp_path: Path) -> None:
    """The notes tree gains one note per build (it held only the newest): git reads each
    build's own record, and the record of a head whose tree did not change is updated."""
    remote, mirror = tmp_path / "site.git", tmp_path / "m.git"
    repository.open_bare(remote).close()
    builds = []
    for n, source in enumerate((SRC1, SRC2, SRC3)):
        builds.append(publish(str(remote), mirror, {**SITE, "n.html": b"%d" % n}, source).new)
    for build, source in zip(builds, (SRC1, SRC2, SRC3), strict=True):
        assert git(remote, "notes", "--ref=deploybot", "show", build) == f"source-commit {source}\n"
    listed = git(remote, "notes", "--ref=deploybot", "list").split("\n")
    assert sorted(line.split()[1] for line in listed if line) == sorted(builds)
    same = publish(str(remote), mirror, {**SITE, "n.html": b"2"}, "4" * 40)
    assert same.new is None
    # the tree was built from SRC3: the record says so (build-source), for the emails
    assert git(remote, "notes", "--ref=deploybot", "show", builds[2]) == (
        f"source-commit {'4' * 40}\nbuild-source {SRC3}\n"
    )
    assert git(remote, "notes", "--ref=deploybot", "show", builds[0]) == f"source-commit {SRC1}\n"
    git(remote, "fsck", "--strict")


def test_notes_git_wrote_are_read_and_kept(tmp_path: Path) -> None:
    """A note added by hand with git (its own tree layout) is read, and stays when a build
    adds its note; so does an older version's single-note tree."""
    remote, mirror = tmp_path / "site.git", tmp_path / "m.git"
    repository.open_bare(remote).close()
    theirs = other_writer_commits(remote, {"docs/a.md": b"a"})
    git(remote, "notes", "--ref=deploybot", "add", "-m", f"source-commit {SRC1}", theirs)
    assert fetch_publish_head(str(remote), "asf-site", mirror) == PublishHead(theirs, SRC1)
    built = publish(str(remote), mirror, SITE, SRC2).new
    assert git(remote, "notes", "--ref=deploybot", "show", theirs) == f"source-commit {SRC1}\n"
    assert git(remote, "notes", "--ref=deploybot", "show", built) == f"source-commit {SRC2}\n"
    fresh = fetch_publish_head(str(remote), "asf-site", tmp_path / "fresh.git")
    assert fresh == PublishHead(built, SRC2)


def test_the_future_record_reads_back_as_written(tmp_path: Path) -> None:
    cutoff = datetime(2024, 3, 1, 13, 0, 30, 500, tzinfo=timezone(timedelta(hours=1)))
    waiting = datetime(2024, 3, 5, 9, tzinfo=UTC)
    record = future_record(cutoff, waiting)
    assert record == {
        "future-cutoff": "2024-03-01T12:00:30Z",
        "next-future": "2024-03-05T09:00:00Z",
    }
    assert future_record(cutoff, None) == {"future-cutoff": "2024-03-01T12:00:30Z"}
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    publish(str(remote), tmp_path / "m.git", SITE, SRC1, record=record)
    head = fetch_publish_head(str(remote), "asf-site", tmp_path / "m.git")
    assert (dict(head.record), head.next_future) == (record, waiting)
    for other in ({}, {"next-future": "soon"}, {"next-future": "2024-03-05T09:00:00"}):
        assert PublishHead(head.commit, SRC1, record=other).next_future is None, other


def test_head_without_a_record_has_an_unknown_source(tmp_path: Path) -> None:
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    publish(str(remote), tmp_path / "m.git", SITE, SRC1)
    theirs = other_writer_commits(remote, {"docs/guide.md": b"guide"})
    assert fetch_publish_head(str(remote), "asf-site", tmp_path / "m.git") == PublishHead(
        theirs, None
    )


def test_keep_paths_survive_and_stay_byte_identical(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    kept = {"docs/guide.md": b"hand-written", ".asf.yaml": b"publish: {}\n", "CNAME/x": b"c"}
    theirs = other_writer_commits(remote, {**kept, "stale.html": b"old build"})
    ids_before = {p: git(remote, "rev-parse", f"{theirs}:{p}").strip() for p in kept}

    result = publish(str(remote), mirror, {**SITE, "docs/guide.md": b"generated"}, SRC1)

    assert result.old == theirs
    assert remote_files(remote) == {**SITE, **kept}
    assert {p: git(remote, "rev-parse", f"asf-site:{p}").strip() for p in kept} == ids_before
    assert result.changed_paths == tuple(sorted([*SITE, "stale.html"]))
    assert git(remote, "rev-parse", "asf-site^").strip() == theirs


def test_dropped_outputs_are_deleted(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    smaller = {k: v for k, v in SITE.items() if k != "2020/07/post.html"}
    second = publish(str(remote), mirror, {**smaller, "index.html": b"v2"}, SRC2)
    assert second.old == first.new
    assert second.changed_paths == ("2020/07/post.html", "index.html")
    assert remote_files(remote) == {**smaller, "index.html": b"v2"}


def test_patch_edits_the_base_tree_and_leaves_the_rest(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    other_writer_commits(remote, {".asf.yaml": b"publish: {}\n"})
    first = publish(str(remote), mirror, SITE, SRC1)
    deletions = frozenset({"feed.xml", ".asf.yaml", "absent.html"})  # kept and absent: ignored

    result = publish(
        str(remote), mirror, {"index.html": b"v2"}, SRC2, patch=TreePatch(first.new, deletions)
    )

    assert (result.old, result.changed_paths) == (first.new, ("feed.xml", "index.html"))
    expected = {"index.html": b"v2", "2020/07/post.html": SITE["2020/07/post.html"]}
    assert remote_files(remote) == {**expected, ".asf.yaml": b"publish: {}\n"}
    assert fetch_publish_head(str(remote), "asf-site", mirror) == PublishHead(result.new, SRC2)


def test_patch_on_a_moved_head_is_refused(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    theirs = other_writer_commits(remote, {"docs/news.md": b"news"})
    with pytest.raises(StaleBaseError):
        publish(str(remote), mirror, {"index.html": b"v2"}, SRC2, patch=TreePatch(first.new))
    assert remote_head(remote) == theirs
    assert remote_files(remote)["index.html"] == SITE["index.html"]


def test_patch_keeps_kept_paths_and_names_a_clash(tmp_path: Path) -> None:
    """The incremental path honours keep as the full one does: a kept file the build also
    makes stays as it is (but for the site's own CNAME: the source wins), and an output
    where a kept folder stands is a config error."""
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    other_writer_commits(
        remote, {"CNAME": b"site.example.org\n", ".asf.yaml": b"kept\n", "docs/a.md": b"a"}
    )
    base = fetch_publish_head(str(remote), "asf-site", mirror).commit
    assert base is not None
    result = publish(
        str(remote),
        mirror,
        {"CNAME": b"other\n", ".asf.yaml": b"built\n", "index.html": b"v2"},
        SRC2,
        patch=TreePatch(base),
    )
    files = remote_files(remote)
    assert (files["CNAME"], files[".asf.yaml"]) == (b"other\n", b"kept\n")
    assert files["index.html"] == b"v2"
    assert result.changed_paths == ("CNAME", "index.html") and first.new != result.new
    with pytest.raises(ConfigError, match=r"^publish\.keep: "):
        publish(str(remote), mirror, {"docs": b"a file"}, SRC3, patch=TreePatch(result.new or ""))
    assert remote_head(remote) == result.new


def test_output_clashing_with_a_kept_folder_is_a_config_error(tmp_path: Path) -> None:
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    other_writer_commits(remote, {"docs/guide.md": b"guide"})
    with pytest.raises(ConfigError, match=r"publish\.keep"):
        publish(str(remote), tmp_path / "m.git", {"docs": b"a file"}, SRC1, keep=["docs/"])
    with pytest.raises(SourceError, match=r"^\.\./escape: refused output path: a '\.\.' name$"):
        publish(str(remote), tmp_path / "m.git", {"../escape": b"x"}, SRC1)


@pytest.mark.parametrize(
    ("blobs", "deletions"),
    [
        ({".git/config": ""}, ()),
        ({"x/.GIT/hooks/post-checkout": ""}, ()),
        ({"a\nb.html": ""}, ()),
        ({}, ("../outside",)),
    ],
)
def test_refused_output_paths_write_no_tree(
    tmp_path: Path, blobs: dict[str, str], deletions: tuple[str, ...]
) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "m.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1).new
    with repository.bare_repo(mirror) as repo:
        blob = repository.add_blob(repo, b"pwned")
    blobs = {path: blob for path in blobs}
    patch = TreePatch(first, frozenset(deletions))
    with pytest.raises(SourceError, match="refused output path"):
        publish(str(remote), mirror, {}, SRC2, blobs=blobs, patch=patch)
    assert remote_head(remote) == first
    assert remote_files(remote) == SITE


def test_lost_race_is_rebuilt_on_the_new_tip(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    moved: list[str] = []

    def someone_pushes_docs() -> None:
        if not moved:  # once: between our fetch and our push
            moved.append(other_writer_commits(remote, {"docs/news.md": b"news"}))

    with serve_http(remote, someone_pushes_docs) as url:
        result = publish(url, mirror, {**SITE, "index.html": b"v2"}, SRC2)

    assert moved and result.old == moved[0]
    assert git(remote, "rev-list", "--parents", "-n1", "asf-site").split() == [result.new, moved[0]]
    assert git(remote, "rev-parse", f"{moved[0]}^").strip() == first.new
    assert remote_files(remote) == {**SITE, "index.html": b"v2", "docs/news.md": b"news"}
    assert result.changed_paths == ("index.html",)
    assert fetch_publish_head(url="file://" + str(remote), branch="asf-site", mirror=mirror) == (
        PublishHead(result.new, SRC2)
    )


def test_remote_that_keeps_moving_is_given_up(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    publish(str(remote), mirror, SITE, SRC1)
    pushes: list[str] = []

    def someone_always_pushes() -> None:
        pushes.append(other_writer_commits(remote, {"docs/n.md": str(len(pushes)).encode()}))

    with serve_http(remote, someone_always_pushes) as url, pytest.raises(PublishError) as err:
        publish(url, mirror, {**SITE, "index.html": b"v2"}, SRC2)
    assert len(pushes) == MAX_TRIES
    assert "gave up" in str(err.value)
    assert remote_head(remote) == pushes[-1]  # only the other writer's commits landed


def test_server_side_rejection_by_a_hook_is_a_config_error(tmp_path: Path) -> None:
    """A hook declining the push does so again on every run: no wait mends it (exit 78)."""
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    first = publish(str(remote), mirror, SITE, SRC1)
    hook = remote / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'site frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    notes_before = git(remote, "rev-parse", NOTES_REF).strip()

    with git_daemon(tmp_path) as base, pytest.raises(ConfigError) as err:
        publish(f"{base}/site.git", mirror, {**SITE, "index.html": b"v2"}, SRC2)

    message = str(err.value)
    assert err.value.exit_code == EX_CONFIG
    assert message.startswith(f"'publish.url' {base}/site.git: a hook of the repository")
    assert "pre-receive hook declined" in message and "(remote: site frozen" in message
    assert "\n" not in message
    assert remote_head(remote) == first.new  # nothing half-published
    assert git(remote, "rev-parse", NOTES_REF).strip() == notes_before
    with repository.bare_repo(mirror) as repo:  # and the mirror does not pretend otherwise
        assert repository.local_ref(repo, "refs/heads/asf-site") == first.new
        assert repository.local_ref(repo, NOTES_REF) == notes_before


def test_publish_over_git_daemon(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "site.git", tmp_path / "publish.git"
    repository.open_bare(remote).close()
    with git_daemon(tmp_path) as base:
        url = f"{base}/site.git"
        first = publish(url, mirror, SITE, SRC1)
        second = publish(url, mirror, {**SITE, "index.html": b"v3"}, SRC3)
        head = fetch_publish_head(url, "asf-site", tmp_path / "fresh.git")
    assert second.old == first.new
    assert head == PublishHead(second.new, SRC3)
    assert remote_files(remote)["index.html"] == b"v3"


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_local_remote_runs_its_hooks(tmp_path: Path, scheme: str) -> None:
    """A publish repo given as a path or file:// still runs its pre-receive and post-receive
    hooks (dulwich's LocalGitClient alone would skip them)."""
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    url = f"{scheme}{remote}"
    first = publish(url, tmp_path / "m.git", SITE, SRC1)
    post = remote / "hooks" / "post-receive"
    post.write_text(f"#!/bin/sh\ncat > {tmp_path / 'post-receive.log'}\n")
    post.chmod(0o755)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'site is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(ConfigError, match="site is frozen"):
        publish(url, tmp_path / "m.git", {**SITE, "index.html": b"v2"}, SRC2)
    assert remote_head(remote) == first.new
    hook.unlink()
    second = publish(url, tmp_path / "m.git", {**SITE, "index.html": b"v2"}, SRC2)
    log = (tmp_path / "post-receive.log").read_text()
    assert f"{first.new} {second.new} refs/heads/asf-site" in log


def test_local_publish_path_without_a_repository_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^publish\.url: .* does not exist"):
        fetch_publish_head(str(tmp_path / "nowhere.git"), "asf-site", tmp_path / "m.git")


def test_unreachable_remote_is_a_publish_error(tmp_path: Path) -> None:
    url = f"git://127.0.0.1:{free_port()}/site.git"
    with pytest.raises(PublishError) as err:
        publish(url, tmp_path / "m.git", SITE, SRC1)
    assert err.value.exit_code == EX_TEMPFAIL and url in str(err.value)
    with pytest.raises(PublishError):
        fetch_publish_head(url, "asf-site", tmp_path / "m.git")


def test_commit_time_keeps_the_utc_offset(tmp_path: Path) -> None:
    remote = tmp_path / "site.git"
    repository.open_bare(remote).close()
    when = datetime(2020, 7, 14, 21, 42, 4, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    result = publish(str(remote), tmp_path / "m.git", SITE, SRC1, when=when)
    raw = git(remote, "cat-file", "commit", result.new)
    assert f"committer {BOT} 1594743124 +0530\n" in raw
