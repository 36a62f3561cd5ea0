"""Branch previews end to end: real bare repositories, ``deploybot run-once`` in process.

A push to a branch ``[preview] branches`` matches is built with ``baseurl`` ``/preview/<folder>``
and published as ``preview/<folder>/`` of the preview branch; the production publish branch
and its notes never move for it (docs/previews.md).
"""

from __future__ import annotations

import mailbox
from pathlib import Path

import pytest
from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.git import repository
from deploybot.record.refs import NOTES_REF
from tests.gitrepo import commit_files, head, read_branch
from tests.smallsite import SmallSite

PREVIEW = '[preview]\nbranches = ["feature/*"]\nsite_url = "https://previews.example.org"\n'


def _refs(repo_path: Path) -> dict[bytes, bytes]:
    with Repo(str(repo_path)) as repo:
        return repo.refs.as_dict()


def branch_from_main(site: SmallSite, branch: str, changes: dict[str, bytes | None]) -> str:
    """Start ``branch`` at the source's main, commit ``changes`` on it; the commit."""
    with Repo(str(site.source)) as repo:
        main = repository.local_ref(repo, "refs/heads/main")
        assert main is not None
        repository.set_local_refs(repo, {f"refs/heads/{branch}": main})
    return commit_files(site.source, changes, f"Work on {branch}", branch=branch)


def delete_branch(site: SmallSite, branch: str) -> None:
    with Repo(str(site.source)) as repo:
        repository.set_local_refs(repo, {f"refs/heads/{branch}": None})


def subject(repo_path: Path, branch: str) -> str:
    with Repo(str(repo_path)) as repo:
        tip = repository.local_ref(repo, f"refs/heads/{branch}")
        assert tip is not None
        commit = repo[repository.oid(tip)]
        assert isinstance(commit, Commit)
        return commit.message.decode().partition("\n")[0]


LINKS = b'---\ntitle: Links\n---\n[About]({{ "/about/" | relative_url }})\n'


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    """A small site published once to production, with previews of ``feature/*`` on."""
    site = SmallSite(tmp_path, extra=PREVIEW)
    code, output = site.run()
    assert code == 0, output
    return site


def test_a_feature_branch_is_previewed_under_its_baseurl_and_production_stays(
    site: SmallSite,
) -> None:
    production = _refs(site.publish)
    tip = branch_from_main(site, "feature/x", {"links.md": LINKS})
    code, output = site.run()
    assert code == 0, output
    assert "up to date: asf-site" in output
    assert "preview of feature/x at " + tip[:12] in output
    assert "https://previews.example.org/preview/feature-x/" in output
    files = read_branch(site.publish, "previews")
    assert {p.split("/")[0] for p in files} == {"preview"}
    assert "preview/feature-x/index.html" in files
    assert "preview/feature-x/links.html" in files
    page = files["preview/feature-x/links.html"].decode()
    assert 'href="/preview/feature-x/about/"' in page
    assert 'href="/preview/feature-x/assets/css/style.css"' in page
    feed = files["preview/feature-x/atom.xml"].decode()  # absolute links: preview.site_url
    assert "https://previews.example.org/preview/feature-x/2023/01/03/two" in feed
    assert "small.example.org" not in feed
    assert subject(site.publish, "previews") == f"Preview of feature/x at {tip}"
    after = _refs(site.publish)
    for ref in (b"refs/heads/asf-site", NOTES_REF.encode()):
        assert after[ref] == production[ref]  # the production branch and its notes
    assert "links.html" not in read_branch(site.publish, "asf-site")
    assert len(site.emails()) == 1  # production's first build only: notify is off
    code, output = site.run()  # nothing moved: no preview commit
    assert code == 0 and "preview of" not in output
    assert _refs(site.publish) == after


def test_a_second_branch_leaves_the_first_preview_alone_and_deletion_removes_it(
    site: SmallSite,
) -> None:
    branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
    assert site.run()[0] == 0
    first = {p: v for p, v in read_branch(site.publish, "previews").items()}
    branch_from_main(site, "feature/y", {"y.md": b"---\ntitle: Y\n---\ny\n"})
    assert site.run()[0] == 0
    both = read_branch(site.publish, "previews")
    assert {p: v for p, v in both.items() if p.startswith("preview/feature-x/")} == first
    assert "preview/feature-y/y.html" in both and "preview/feature-x/y.html" not in both
    delete_branch(site, "feature/x")
    code, output = site.run()
    assert code == 0, output
    assert "preview of feature/x: the branch is gone: removed from previews" in output
    left = read_branch(site.publish, "previews")
    assert not any(p.startswith("preview/feature-x/") for p in left)
    assert {p for p in both if p.startswith("preview/feature-y/")} == set(left)
    assert subject(site.publish, "previews") == "Remove the preview of feature/x"


def test_a_new_branch_is_previewed_by_run_once_as_a_process_too(site: SmallSite) -> None:
    """The no-op shortcut (deploybot.cli.entry, before click) must not skip previews: a
    site with previews writes no no-op stamp."""
    assert site.run_process().returncode == 0
    assert not (site.state / "noop.stamp").exists()
    tip = branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    assert f"preview of feature/x at {tip[:12]}: published" in done.stdout
    assert "preview/feature-x/x.html" in read_branch(site.publish, "previews")


def test_a_branch_the_globs_do_not_match_is_not_previewed(site: SmallSite) -> None:
    branch_from_main(site, "hotfix/y", {"y.md": b"---\ntitle: Y\n---\ny\n"})
    code, output = site.run()
    assert code == 0 and "preview" not in output
    assert head(site.publish, "previews") is None


def test_a_push_to_production_moves_only_production(site: SmallSite) -> None:
    branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
    assert site.run()[0] == 0
    previews = head(site.publish, "previews")
    before = site.head()
    commit_files(site.source, {"about.md": b"---\ntitle: About\n---\nAbout.\n"})
    code, output = site.run()
    assert code == 0, output
    assert site.head() != before and "about.html" in read_branch(site.publish, "asf-site")
    assert head(site.publish, "previews") == previews
    assert (
        'href="/assets/css/style.css"'
        in read_branch(site.publish, "asf-site")["index.html"].decode()
    )  # production keeps its own baseurl


def _mails(site: SmallSite) -> list[mailbox.mboxMessage]:
    box = mailbox.mbox(str(site.mbox))
    try:
        return list(box)
    finally:
        box.close()


def test_the_preview_email_says_preview_when_notify_is_on(tmp_path: Path) -> None:
    site = SmallSite(tmp_path, extra=PREVIEW + "notify = true\n")
    assert site.run()[0] == 0
    tip = branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
    code, output = site.run()
    assert code == 0, output
    mails = _mails(site)
    assert len(mails) == 2
    mail = mails[1]
    assert mail["Subject"] == f"[publish] Preview of feature/x at {tip[:12]}"
    assert mail["X-Deploybot-Preview"] == "feature/x"
    assert mail["X-Git-Refname"] == "refs/heads/previews"
    body = mail.get_payload(decode=True).decode()
    assert (
        body.splitlines()[0] == "This is a preview of the branch feature/x, not the published site."
    )
    assert "See it at https://previews.example.org/preview/feature-x/" in body
    assert "preview email for" in output and "sent via mbox" in output


def test_two_branches_with_one_folder_name_are_both_refused(tmp_path: Path) -> None:
    site = SmallSite(tmp_path, extra='[preview]\nbranches = ["feature*"]\n')
    assert site.run()[0] == 0
    branch_from_main(site, "feature/x", {"x.md": b"x\n"})
    branch_from_main(site, "feature-x", {"y.md": b"y\n"})
    code, output = site.run()
    assert code == 0, output  # the production run is what the exit status is about
    assert "preview of feature-x: refused: the branches feature-x, feature/x would all be" in output
    assert head(site.publish, "previews") is None


def test_a_preview_that_fails_tells_it_and_production_still_publishes(site: SmallSite) -> None:
    branch_from_main(site, "feature/bad", {"bad.md": b"---\ntitle: [unclosed\n---\nx\n"})
    commit_files(site.source, {"about.md": b"---\ntitle: About\n---\nAbout.\n"})
    code, output = site.run()
    assert code == 0, output
    assert "published " in output and "preview of feature/bad: failed: " in output
    assert head(site.publish, "previews") is None
    code, output = site.run()  # bad input waits for a new commit to the branch
    assert code == 0 and "preview of" not in output
    delete_branch(site, "feature/bad")  # nothing published: nothing to remove, no branch made
    code, output = site.run()
    assert code == 0 and head(site.publish, "previews") is None
    branch_from_main(site, "feature/bad", {"bad.md": b"---\ntitle: [unclosed\n---\nx\n"})
    commit_files(site.source, {"bad.md": b"---\ntitle: Fixed\n---\nx\n"}, branch="feature/bad")
    code, output = site.run()
    assert code == 0 and "preview of feature/bad at " in output and ": published " in output


def test_previews_go_to_a_preview_repository_of_their_own(tmp_path: Path) -> None:
    site = SmallSite(
        tmp_path, extra=PREVIEW + 'url = "previews.git"\npublish_branch = "asf-site"\n'
    )
    Repo.init_bare(str(tmp_path / "previews.git"), mkdir=True).close()
    assert site.run()[0] == 0
    branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
    production = _refs(site.publish)
    assert site.run()[0] == 0
    assert _refs(site.publish) == production
    assert "preview/feature-x/x.html" in read_branch(tmp_path / "previews.git", "asf-site")
