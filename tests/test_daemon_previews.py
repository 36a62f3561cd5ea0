"""Branch previews through the daemon: a real ``deploybot serve`` process and signed GitHub
pushes of previewed branches, their deletion, and branches no glob matches."""

from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo

from deploybot.record.refs import NOTES_REF
from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until
from tests.gitrepo import head, read_branch
from tests.test_daemon_webhooks import _documented_answers
from tests.test_previews import PREVIEW, branch_from_main, delete_branch

HOOK = "/webhook/deploybot"


def _production(site: GatedSite) -> tuple[bytes | None, bytes | None]:
    with Repo(str(site.publish)) as repo:
        refs = repo.refs.as_dict()
    return refs.get(b"refs/heads/asf-site"), refs.get(NOTES_REF.encode())


def _folder(site: GatedSite, name: str) -> set[str]:
    if head(site.publish, "previews") is None:
        return set()
    return {p for p in read_branch(site.publish, "previews") if p.startswith(f"preview/{name}/")}


def test_webhook_pushes_and_deletions_of_previewed_branches(tmp_path: Path) -> None:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table() + PREVIEW)
    assert site.run()[0] == 0  # production published first, by run-once
    production = _production(site)
    with Daemon(site.config) as daemon:
        tip = branch_from_main(site, "feature/x", {"x.md": b"---\ntitle: X\n---\nx\n"})
        answer = daemon.push(HOOK, github(tip, ref="refs/heads/feature/x"))
        assert answer.status_code == 202, answer.text
        assert f"build queued: deploybot (preview of feature/x at {tip[:12]})" in answer.text
        answers = [f"202 {answer.text.strip()}"]
        wait_until(lambda: "preview/feature-x/x.html" in _folder(site, "feature-x"))
        daemon.wait_log(
            r"site deploybot: preview of feature/x at \w+: published \w+ in "
            r"preview/feature-x/: https://previews.example.org/preview/feature-x/"
        )
        other = branch_from_main(site, "hotfix/y", {"y.md": b"y\n"})
        answer = daemon.push(HOOK, github(other, ref="refs/heads/hotfix/y"))
        assert answer.status_code == 200 and "refs/heads/hotfix/y is not" in answer.text
        delete_branch(site, "feature/x")
        answer = daemon.push(HOOK, github(tip, ref="refs/heads/feature/x", deleted=True))
        assert answer.status_code == 202, answer.text
        assert "preview of feature/x: branch deleted" in answer.text
        answers.append(f"202 {answer.text.strip()}")
        wait_until(lambda: not _folder(site, "feature-x"))
        daemon.wait_log(r"site deploybot: preview of feature/x: removed \w+ in preview/feature-x/")
        wait_until(lambda: daemon.idle("deploybot"))
    assert _production(site) == production  # neither the branch nor its notes moved
    assert not any("hotfix" in p for p in read_branch(site.publish, "previews"))
    documented = _documented_answers()  # docs/daemon.md's table words them so
    assert all(any(p.fullmatch(text) for p in documented) for text in answers), answers


def test_preview_push_names_the_first_previewed_branch_a_push_moved() -> None:
    from deploybot.serve.payloads import PUSH, Event, RefUpdate, preview_push

    moved = (
        RefUpdate("refs/tags/feature/t", "a" * 40, False),
        RefUpdate("refs/heads/main", "b" * 40, False),
        RefUpdate("refs/heads/feature/x", None, True),
    )
    event = Event(PUSH, "push", moved)
    assert preview_push(event, ("feature/*",), "main") == (moved[2], "feature/x")
    assert preview_push(event, ("main", "m*"), "main") == (None, "")  # production never
    assert preview_push(event, ("hotfix/*",), "main") == (None, "")
