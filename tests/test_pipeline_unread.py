"""Never empty: a source change touching only paths the build does not read (Jekyll's
excludes, ``exclude:`` in _config.yml, ``_drafts/``, names starting with ``.`` or ``_``, an
include no layout uses) publishes nothing, says so in one line, and is recorded so the next
run is up to date; a change the build reads is built, its feeds dated by its own commit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.config.load import load_config
from deploybot.pipeline import run as pipeline
from tests.gitcli import run_git
from tests.gitrepo import commit_files, read_branch
from tests.smallsite import SmallSite

ATOM = "{http://www.w3.org/2005/Atom}"
CONFIG = b"title: Small\nurl: https://small.example.org\nexclude: [README.md, notes/]\n"
T1, T2, T3 = 1_700_000_100, 1_700_000_200, 1_700_000_300


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    made = SmallSite(tmp_path)
    commit_files(made.source, {"_config.yml": CONFIG, "README.md": b"Read me.\n"}, when=T1)
    return made


def run(site: SmallSite) -> pipeline.RunResult:
    return pipeline.run_once(load_config(site.config))


def updated(site: SmallSite) -> str:
    atom = ET.fromstring(read_branch(site.publish, "asf-site")["atom.xml"])
    return atom.findtext(f"{ATOM}updated") or ""


def note(site: SmallSite) -> str:
    args = ("notes", "--ref=deploybot", "show", "asf-site")
    return run_git(site.publish, *args, name="A", email="a@example.org")


def iso(when: int) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat()


@pytest.mark.parametrize(
    "changes",
    [
        {"README.md": b"Read me again.\n"},  # exclude: in _config.yml
        {"notes/todo.md": b"---\ntitle: t\n---\nx\n"},  # an excluded folder
        {"_drafts/2023-02-01-draft.md": b"---\ntitle: Draft\n---\nSoon.\n"},
        {".github/workflows/ci.yml": b"on: push\n", "Gemfile": b"gem 'jekyll'\n"},
        {"node_modules/x/index.js": b"1\n", "_unused/x.html": b"x\n", "#draft.md": b"x\n"},
        {"_includes/unused.html": b"<p>no layout includes it</p>\n"},
    ],
)
def test_a_change_the_build_does_not_read_publishes_nothing(
    site: SmallSite, changes: dict[str, bytes]
) -> None:
    first = run(site)
    assert first.status == pipeline.RunStatus.PUBLISHED and updated(site) == iso(T1)
    moved = commit_files(site.source, dict(changes), "Housekeeping", when=T2)
    code, out = site.run()
    assert code == 0, out
    assert out.splitlines()[0] == (
        f"nothing to publish: source moved to {moved[:12]}, but only paths the build does "
        f"not read changed ({', '.join(sorted(changes))})"
    )
    assert site.head() == first.build_commit
    assert site.emails() == [first.build_commit]
    assert note(site).startswith(f"source-commit {moved}\n")
    assert f"\nbuild-source {first.source_commit}\n" in note(site)
    assert updated(site) == iso(T1)  # the published feeds: the built commit's date
    logged = CliRunner().invoke(main, ["log", "--config", str(site.config), "-n", "1"])
    assert f"  source {(first.source_commit or '')[:12]}  full build: " in logged.output
    assert logged.output.rstrip().endswith(
        f"; source at {moved[:12]} since, with the same published tree"
    )
    again = run(site)
    assert (again.status, again.build_commit) == (pipeline.RunStatus.UP_TO_DATE, first.build_commit)


def test_a_commit_that_changes_no_path_publishes_nothing(site: SmallSite) -> None:
    first = run(site)
    with Repo(str(site.source)) as repo:
        tree = repo[repo.refs[b"refs/heads/main"]].tree  # type: ignore[attr-defined]
        empty = Commit()
        empty.tree, empty.parents = tree, [repo.refs[b"refs/heads/main"]]
        empty.author = empty.committer = b"A <a@example.org>"
        empty.author_time = empty.commit_time = T2
        empty.author_timezone = empty.commit_timezone = 0
        empty.message = b"Rebuild, please\n"
        repo.object_store.add_object(empty)
        repo.refs[b"refs/heads/main"] = empty.id
    code, out = site.run()
    assert (code, out) == (0, f"nothing to publish: source moved to {empty.id.decode()[:12]}, "
                              "but no path changed\n")  # fmt: skip
    assert site.head() == first.build_commit
    code, out = site.run("--full")  # a rebuild on purpose
    assert code == 0 and out.startswith("published "), out


def test_the_next_change_that_is_read_is_built_with_its_own_date(site: SmallSite) -> None:
    first = run(site)
    commit_files(site.source, {"README.md": b"v2\n"}, when=T2)
    assert run(site).status == pipeline.RunStatus.UNCHANGED
    post = commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"},
                        when=T3)  # fmt: skip
    result = run(site)
    assert (result.status, result.source_commit) == (pipeline.RunStatus.PUBLISHED, post)
    assert updated(site) == iso(T3)
    assert set(result.changed_paths) == {"2023/01/04/three.html", "atom.xml", "rss.xml"}
    assert site.emails() == [first.build_commit, result.build_commit]
    assert note(site).startswith(f"source-commit {post}\n") and "build-source" not in note(site)


def test_a_state_folder_without_its_cache_tells_the_same(site: SmallSite) -> None:
    """A fresh machine (no cache to say what the last build read) builds in full to find
    out, and publishes nothing either."""
    import shutil

    first = run(site)
    shutil.rmtree(site.state)
    commit_files(site.source, {"README.md": b"v2\n", "_drafts/x.md": b"x\n"}, when=T2)
    result = run(site)
    assert (result.status, result.unread_paths) == (
        pipeline.RunStatus.UNCHANGED,
        ("README.md", "_drafts/x.md"),
    )
    assert site.head() == first.build_commit
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE


LAYOUT = b"<main>{{ content }}</main>{% include foot.html %}{% include_relative notes/n.txt %}\n"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("_includes/foot.html", b"<footer>v2</footer>"),  # an include the layout uses
        ("notes/n.txt", b"v2 note"),  # an excluded file a layout reads
    ],
)
def test_a_file_a_layout_reads_is_built(site: SmallSite, path: str, expected: bytes) -> None:
    files = {
        "_layouts/default.html": LAYOUT,
        "_includes/foot.html": b"<footer>v1</footer>",
        "notes/n.txt": b"v1 note",
        "index.md": b"---\nlayout: default\n---\nWelcome.\n",
    }
    commit_files(site.source, files, when=T1)
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    commit_files(site.source, {path: expected}, when=T2)
    result = run(site)
    assert result.status == pipeline.RunStatus.PUBLISHED, result
    assert expected in read_branch(site.publish, "asf-site")["index.html"]


def test_a_symlink_to_an_excluded_file_is_read(site: SmallSite) -> None:
    commit_files(site.source, {"readme.txt": b"README.md"}, when=T1, modes={"readme.txt": 0o120000})
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, "asf-site")["readme.txt"] == b"Read me.\n"
    commit_files(site.source, {"README.md": b"New words.\n"}, when=T2)
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert read_branch(site.publish, "asf-site")["readme.txt"] == b"New words.\n"
