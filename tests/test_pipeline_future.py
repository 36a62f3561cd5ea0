"""A future-dated post appears once its date has passed, with no push: each run's future
cut-off is its wall clock, recorded in the build record (``future-cutoff``) with the date
of the next post held back (``next-future``); a run on an unchanged source builds again
when that date has passed. The record makes the same build again, byte for byte. Also:
symlinks and submodules through real git trees, and a source ``CNAME`` over a kept one."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.config.load import load_config
from deploybot.pipeline import build_folder
from deploybot.pipeline import run as pipeline
from deploybot.publish.commit import fetch_publish_head
from tests.gitcli import run_git
from tests.gitrepo import commit_files, read_branch

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
LAYOUT = b"<main>{{ content }}</main>\n"
SITE: dict[str, bytes | None] = {
    "_config.yml": b"title: Future\n",
    "_layouts/default.html": LAYOUT,
    "_posts/2024-02-01-old.md": b"---\nlayout: default\n---\nOld\n",
    "_posts/2024-03-05-soon.md": b"---\nlayout: default\ndate: 2024-03-05 09:00:00 +0000\n---\n"
    b"Soon\n",
    "index.html": b"---\nlayout: default\n---\n{% for p in site.posts %}{{ p.url }};{% endfor %}",
}
SOON = "2024/03/05/soon.html"


class Site:
    """A source and a publish repository, and runs at a given wall-clock time."""

    def __init__(self, root: Path, keep: str = "") -> None:
        self.source, self.publish = root / "source.git", root / "publish.git"
        Repo.init_bare(str(self.source), mkdir=True).close()
        Repo.init_bare(str(self.publish), mkdir=True).close()
        config = root / "deploybot.toml"
        config.write_text(
            '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
            f'author = "Bot <bot@example.org>"\n{keep}'
        )
        self.config = load_config(config)
        self.root = root

    def commit(self, files: dict[str, bytes | None], **kw: object) -> str:
        when = int((T0 - timedelta(days=1)).timestamp())
        return commit_files(self.source, files, "Site", when=when, **kw)  # type: ignore[arg-type]

    def run(self, at: datetime) -> pipeline.RunResult:
        return pipeline.run_once(self.config, now=lambda: at)

    def files(self) -> dict[str, bytes]:
        return read_branch(self.publish, self.config.publish.branch)

    def record(self) -> tuple[str | None, dict[str, str]]:
        head = fetch_publish_head(str(self.publish), "asf-site", self.root / "mirror.git")
        return head.source_commit, dict(head.record)


def future(fields: dict[str, str]) -> dict[str, str]:
    """The record's future lines."""
    return {k: v for k, v in fields.items() if k in ("future-cutoff", "next-future")}


@pytest.fixture(autouse=True)
def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="deploybot.pipeline")


def test_a_future_post_appears_once_its_date_has_passed_without_a_push(tmp_path: Path) -> None:
    site = Site(tmp_path)
    source = site.commit(SITE)
    assert site.run(T0).status == "published"
    assert SOON not in site.files()
    assert b"soon" not in site.files()["index.html"]
    recorded, fields = site.record()
    assert (recorded, future(fields)) == (
        source,
        {"future-cutoff": "2024-03-01T12:00:00Z", "next-future": "2024-03-05T09:00:00Z"},
    )
    assert (fields["reason"], fields["build"]) == ("first-build", "full")
    # the clock moves, the source does not: nothing is due yet
    assert site.run(T0 + timedelta(days=3)).status == pipeline.RunStatus.UP_TO_DATE
    # the post's date has passed: the same source is built again, incrementally
    later = datetime(2024, 3, 5, 9, 0, 1, tzinfo=UTC)
    result = site.run(later)
    assert (result.status, result.source_commit) == ("published", source)
    assert site.files()[SOON] == b"<main><p>Soon</p>\n</main>\n"
    assert b"/2024/03/05/soon.html" in site.files()["index.html"]
    recorded, fields = site.record()
    assert (recorded, future(fields)) == (source, {"future-cutoff": "2024-03-05T09:00:01Z"})
    assert (fields["reason"], fields["build"]) == ("post-due", "incremental")
    assert site.run(later + timedelta(days=30)).status == pipeline.RunStatus.UP_TO_DATE


def test_the_record_makes_the_same_build_again(tmp_path: Path) -> None:
    site = Site(tmp_path)
    source = site.commit(SITE)
    site.run(T0)
    _, fields = site.record()
    cutoff = datetime.fromisoformat(fields["future-cutoff"])
    out = tmp_path / "again"
    build_folder.build_to_folder(site.source, out, rev=source, cutoff=cutoff)
    made = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    made.pop(build_folder.MANIFEST)
    assert made == site.files()
    # without the recorded cut-off (the commit's date), the build differs: the record matters
    other = tmp_path / "other"
    build_folder.build_to_folder(site.source, other, rev=source, cutoff=T0 + timedelta(days=9))
    assert (other / SOON).exists()


def test_the_build_again_differs_from_the_published_tree_only_as_the_readme_says(
    tmp_path: Path,
) -> None:
    """What the README says: the published tree has besides ``.nojekyll`` (with
    ``publish.nojekyll``) and what ``publish.keep`` kept; OUT has besides its list of the
    files written (``.deploybot-build``); every other file is the same, byte for byte."""
    site = Site(tmp_path, keep='nojekyll = true\nkeep = ["extra/"]\n')
    commit_files(site.publish, {"extra/kept.html": b"kept\n"}, "By hand", branch="asf-site")
    source = site.commit(SITE)
    site.run(T0)
    _, fields = site.record()
    out = tmp_path / "again"
    cutoff = datetime.fromisoformat(fields["future-cutoff"])
    build_folder.build_to_folder(site.source, out, rev=source, cutoff=cutoff)
    made = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    published = site.files()
    assert set(published) - set(made) == {".nojekyll", "extra/kept.html"}
    assert set(made) - set(published) == {build_folder.MANIFEST}
    assert all(made[path] == published[path] for path in set(made) & set(published))


@pytest.mark.parametrize("setting", [b"future: true\n", b"time: 2024-03-01 12:00:00\n"])
def test_nothing_waits_on_the_clock_with_future_or_a_fixed_time(
    tmp_path: Path, setting: bytes
) -> None:
    site = Site(tmp_path)
    site.commit({**SITE, "_config.yml": b"title: Future\n" + setting})
    site.run(T0)
    assert "next-future" not in site.record()[1]
    assert (SOON in site.files()) == (setting == b"future: true\n")
    assert site.run(T0 + timedelta(days=30)).status == pipeline.RunStatus.UP_TO_DATE


def test_symlinks_and_submodules_in_a_git_tree(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = Site(tmp_path)
    links = {
        "alias.html": b"index.html",
        "img/logo-link.png": b"logo.png",
        "up.txt": b"../../etc/passwd",
        "loop.md": b"loop.md",
    }
    site.commit(
        {**SITE, "img/logo.png": b"PNG", **links, "vendor/theme": b"1" * 40},
        modes={**{p: 0o120000 for p in links}, "vendor/theme": 0o160000},
    )
    result = site.run(T0)
    files = site.files()
    assert files["img/logo-link.png"] == b"PNG"
    assert files["alias.html"] == files["index.html"]
    assert "up.txt" not in files and "loop.md" not in files and "vendor/theme" not in files
    warnings = {(w.path, w.message.split(":")[0]) for w in result.warnings}
    assert warnings >= {
        ("up.txt", "symlink not published"),
        ("loop.md", "symlink not published"),
        ("vendor/theme", "a submodule (gitlink)"),
    }
    # the target changes: the symlink's output follows, in an incremental build
    site.commit({"img/logo.png": b"PNG2"})
    site.run(T0 + timedelta(hours=1))
    assert site.files()["img/logo-link.png"] == b"PNG2"
    assert "incremental build" in caplog.text


def test_a_source_cname_wins_over_a_kept_one(tmp_path: Path) -> None:
    site = Site(tmp_path, keep='keep = ["CNAME", ".asf.yaml"]\n')
    commit_files(
        site.publish,
        {"CNAME": b"hand.example.org\n", ".asf.yaml": b"publish: {}\n"},
        "By hand",
        branch="asf-site",
    )
    site.commit({**SITE, "CNAME": b"site.example.org\n", ".asf.yaml": b"source: {}\n"})
    site.run(T0)
    files = site.files()
    assert files["CNAME"] == b"site.example.org\n"
    assert files[".asf.yaml"] == b"publish: {}\n"  # any other kept path stays as it was


def test_build_takes_the_recorded_cutoff(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from deploybot.cli.commands import main

    site = Site(tmp_path)
    source = site.commit(SITE)
    runs = {}
    for cutoff in ("2024-03-05T08:59:59Z", "2024-03-05T09:00:00Z"):
        out = tmp_path / cutoff.replace(":", "")
        args = ["build", str(site.source), str(out), "--rev", source, "--cutoff", cutoff]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        runs[cutoff] = (out / SOON).exists()
    assert runs == {"2024-03-05T08:59:59Z": False, "2024-03-05T09:00:00Z": True}


def test_a_post_an_older_version_held_back_is_built_once_its_record_is_old(
    tmp_path: Path,
) -> None:
    """A version before future cut-offs recorded only ``source-commit``: whether it held a
    post back cannot be told, so a record with a source commit and no ``future-cutoff``
    counts as due: one rebuild (here it publishes the post), then the new record ends it."""
    site = Site(tmp_path)
    source = site.commit(SITE)
    site.run(T0)
    assert SOON not in site.files()
    old = f"source-commit {source}\n"  # what an older version wrote
    args = ("notes", "--ref=deploybot", "add", "-f", "-m", old.strip(), "asf-site")
    run_git(site.publish, *args, name="Old", email="old@example.org")
    assert site.record() == (source, {})
    later = datetime(2024, 3, 5, 9, 0, 1, tzinfo=UTC)
    result = site.run(later)
    assert (result.status, result.source_commit) == ("published", source)
    assert SOON in site.files()
    recorded, fields = site.record()
    assert (recorded, future(fields)) == (source, {"future-cutoff": "2024-03-05T09:00:01Z"})
    # the old record has no render fingerprint either: a full build
    assert (fields["reason"], fields["build"]) == ("render-changed", "full")
    assert site.run(later + timedelta(days=1)).status == pipeline.RunStatus.UP_TO_DATE
    # nothing held back: the one rebuild finds the same tree, records it, and that ends it
    run_git(site.publish, *args, name="Old", email="old@example.org")
    assert site.run(later + timedelta(days=2)).status == pipeline.RunStatus.UNCHANGED
    assert site.run(later + timedelta(days=3)).status == pipeline.RunStatus.UP_TO_DATE
