"""The preview folders: their names, the subtree edit that replaces one folder, the history
walk that finds a folder's last preview, and the never-backwards check."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.config.load import load_config
from deploybot.git import repository, tree_edit
from deploybot.git.repository import MODE_FILE, GitTree
from deploybot.pipeline import preview as pipeline_preview
from deploybot.publish import preview
from deploybot.publish.commit import OlderSourceError
from deploybot.state import statedir
from deploybot.state.previews import preview_state
from deploybot.watch.fetch import SourceSnapshot
from deploybot.watch.preview import is_previewed
from tests.gitrepo import commit_files, head
from tests.smallsite import SmallSite
from tests.test_previews import PREVIEW, branch_from_main


@pytest.mark.parametrize(
    ("branch", "name"),
    [
        ("feature/x", "feature-x"),
        ("feature/a/b", "feature-a-b"),
        ("Fix_1.2", "Fix_1.2"),
        ("pr+42/ü", "pr-42--"),
    ],
)
def test_folder_names(branch: str, name: str) -> None:
    assert preview.folder_name(branch) == name
    assert preview.folder_of(branch) == f"preview/{name}"
    assert preview.baseurl_of(branch) == f"/preview/{name}"


def test_collisions_name_every_branch_of_one_folder() -> None:
    found = preview.collisions(["feature/x", "feature-x", "feature/y", "a/b", "a-b", "a+b"])
    assert found == {"feature-x": ("feature-x", "feature/x"), "a-b": ("a+b", "a-b", "a/b")}


def test_globs_match_whole_names_and_never_the_production_branch() -> None:
    globs = ("feature/*", "pr-*")
    assert is_previewed("feature/x", globs, "main")
    assert is_previewed("feature/x/y", globs, "main")  # fnmatch's * crosses /
    assert is_previewed("pr-7", globs, "main")
    assert not is_previewed("Feature/x", globs, "main")  # case-sensitive
    assert not is_previewed("hotfix/feature/x", globs, "main")
    assert not is_previewed("pr-7", globs, "pr-7")


def _tree(repo: Repo, files: dict[str, bytes]) -> str:
    return repository.write_tree(
        repo, {p: (MODE_FILE, repository.add_blob(repo, data)) for p, data in files.items()}
    )


def _files(repo: Repo, tree: str) -> dict[str, str]:
    return {p: sha for p, (_mode, sha) in repository.tree_entries(repo, tree).items()}


def test_replace_folder_touches_only_that_folder(tmp_path: Path) -> None:
    repo = Repo.init_bare(str(tmp_path / "r.git"), mkdir=True)
    root = _tree(repo, {"README": b"r", "preview/x/a.html": b"a", "preview/y/b.html": b"b"})
    before = _files(repo, root)
    sub = _tree(repo, {"new.html": b"n", "d/e.html": b"e"})
    replaced = _files(repo, tree_edit.replace_folder(repo, root, "preview/x", sub))
    assert set(replaced) == {
        "README",
        "preview/x/new.html",
        "preview/x/d/e.html",
        "preview/y/b.html",
    }
    assert replaced["preview/y/b.html"] == before["preview/y/b.html"]
    added = _files(repo, tree_edit.replace_folder(repo, root, "preview/z", sub))
    assert set(added) == {*before, "preview/z/new.html", "preview/z/d/e.html"}
    gone = tree_edit.replace_folder(repo, root, "preview/x", None)
    assert set(_files(repo, gone)) == {"README", "preview/y/b.html"}
    empty = tree_edit.replace_folder(repo, gone, "preview/y", None)
    assert set(_files(repo, empty)) == {"README"}  # preview/ left empty goes too
    assert tree_edit.replace_folder(repo, None, "preview/x", sub) != sub
    with pytest.raises(ValueError, match="'README' is a file"):
        tree_edit.replace_folder(repo, root, "README/x", sub)
    repo.close()


def test_last_preview_reads_the_newest_commit_of_the_folder(tmp_path: Path) -> None:
    repo = Repo.init_bare(str(tmp_path / "r.git"), mkdir=True)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    tree = _tree(repo, {"f": b"x"})
    a, b = "a" * 40, "b" * 40
    chain: list[str] = []
    for message in (
        preview.preview_message("feature/x", a),
        preview.preview_message("feature/y", b),
        preview.preview_message("feature/x", b),
        preview.removal_message("feature/y"),
    ):
        chain.append(repository.make_commit(repo, tree, chain[-1:], author="a <a@b>",
                                            message=message, when=when))  # fmt: skip
    tip = chain[-1]
    assert preview.last_preview(repo, tip, "preview/feature-x") == b
    assert preview.last_preview(repo, chain[1], "preview/feature-x") == a
    assert preview.last_preview(repo, tip, "preview/feature-y") is None  # removed
    assert preview.last_preview(repo, chain[1], "preview/feature-y") == b
    assert preview.last_preview(repo, tip, "preview/feature-z") is None
    assert preview.last_preview(repo, tip, "preview/feature-x", limit=1) is None
    repo.close()


def test_a_run_that_read_an_older_tip_does_not_publish_over_a_newer_preview(
    tmp_path: Path,
) -> None:
    site = SmallSite(tmp_path, extra=PREVIEW)
    old = branch_from_main(site, "feature/x", {"x.md": b"x\n"})
    assert site.run()[0] == 0
    new = commit_files(site.source, {"x.md": b"x2\n"}, branch="feature/x")
    assert site.run()[0] == 0
    config = load_config(site.config)
    paths = statedir.state_paths(preview_state(config))
    run = pipeline_preview._Run(config, paths, lambda: datetime.now(UTC), None, False)
    with Repo(str(paths.source)) as repo:
        tree = repository.commit_tree_id(repo, old)
    snap = SourceSnapshot(old, GitTree(paths.source, tree), 1_700_000_000, 0, None, None)
    check = run._not_backwards("feature/x", snap)
    tip = head(site.publish, "previews")
    assert tip is not None
    with Repo(str(paths.publish)) as repo, pytest.raises(OlderSourceError, match=new[:12]):
        check(repo, tip)


def test_a_rewound_branch_is_previewed_at_its_new_tip(tmp_path: Path) -> None:
    site = SmallSite(tmp_path, extra=PREVIEW)
    old = branch_from_main(site, "feature/x", {"x.md": b"x\n"})
    assert site.run()[0] == 0
    commit_files(site.source, {"x.md": b"x2\n"}, branch="feature/x")
    assert site.run()[0] == 0
    with Repo(str(site.source)) as repo:
        repository.set_local_refs(repo, {"refs/heads/feature/x": old})
    code, output = site.run()
    assert code == 0, output
    assert f"preview of feature/x at {old[:12]}: published" in output
