"""Never stale: what changes a build's output with no push to the source (a ``[render]``
setting, the bundled theme, the renderer) makes the next run build again, and publish
only when the output changed (:mod:`deploybot.render.fingerprint`)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.pipeline import noop
from deploybot.pipeline import run as pipeline
from deploybot.render import fingerprint
from tests.gitcli import run_git
from tests.gitrepo import read_branch
from tests.smallsite import SmallSite

ATOM = "{http://www.w3.org/2005/Atom}"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    return SmallSite(tmp_path)


def run(site: SmallSite) -> pipeline.RunResult:
    return pipeline.run_once(load_config(site.config))


def entries(site: SmallSite) -> int:
    atom = ET.fromstring(read_branch(site.publish, "asf-site")["atom.xml"])
    return len(atom.findall(f"{ATOM}entry"))


def shortcut(result: pipeline.RunResult) -> bool:
    return "no-op check" in result.timings


def test_a_changed_feed_limit_builds_again_then_is_up_to_date(site: SmallSite) -> None:
    first = run(site)
    assert first.status == pipeline.RunStatus.PUBLISHED and entries(site) == 2
    site.write_config(extra="[render]\nfeed_limit = 1\n")
    second = run(site)
    assert second.status == pipeline.RunStatus.PUBLISHED, second
    assert second.build_commit != first.build_commit
    assert entries(site) == 1
    assert site.emails() == [first.build_commit, second.build_commit]
    third = run(site)
    assert third.status == pipeline.RunStatus.UP_TO_DATE
    assert third.build_commit == second.build_commit


def test_a_changed_timezone_builds_again_with_the_new_dates(site: SmallSite) -> None:
    run(site)
    assert updated(site) == "2023-11-14T22:13:20+00:00"  # the source commit's date
    site.write_config(extra='[render]\ntimezone = "America/Los_Angeles"\n')
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert updated(site) == "2023-11-14T14:13:20-08:00"
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE


def updated(site: SmallSite) -> str:
    atom = ET.fromstring(read_branch(site.publish, "asf-site")["atom.xml"])
    return atom.findtext(f"{ATOM}updated") or ""


def test_a_setting_that_leaves_the_output_alone_builds_without_a_commit(
    site: SmallSite,
) -> None:
    """A limit raised: the run builds again (the note gets the new fingerprint) and finds
    the same tree, so nothing is pushed but the record; the next run is up to date."""
    first = run(site)
    site.write_config(extra="[render]\nmax_page_bytes = 60000000\n")
    again = run(site)
    assert (again.status, again.build_commit) == (pipeline.RunStatus.UNCHANGED, first.build_commit)
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE
    assert site.emails() == [first.build_commit]


def test_the_worker_count_changes_no_fingerprint(site: SmallSite) -> None:
    config = load_config(site.config)
    site.write_config(extra="[render]\njobs = 3\nhighlight_cache_bytes = 0\n")
    assert fingerprint.render_fingerprint(load_config(site.config)) == (
        fingerprint.render_fingerprint(config)
    )


def test_an_edited_bundled_theme_builds_again(
    site: SmallSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled templates changed under an installed deploybot (no version change):
    the stamp no longer holds, and the run builds the new page."""
    theme = tmp_path / "templates"
    shutil.copytree(ROOT / "templates", theme)
    monkeypatch.setattr(fingerprint, "bundled_templates_dir", lambda: str(theme))
    first = run(site)
    assert first.status == pipeline.RunStatus.PUBLISHED
    assert shortcut(run(site))
    post = theme / "post.html"
    post.write_text(post.read_text().replace("</article>", "<p>EDITED</p></article>", 1))
    assert "EDITED" in post.read_text()
    again = run(site)
    assert again.status == pipeline.RunStatus.PUBLISHED and not shortcut(again)
    assert b"EDITED" in read_branch(site.publish, "asf-site")["2023/01/02/one.html"]
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE
    assert "\nchanged-settings renderer\n" in note(site)  # the renderer itself, no setting


def note(site: SmallSite) -> str:
    args = ("notes", "--ref=deploybot", "show", "asf-site")
    return run_git(site.publish, *args, name="A", email="a@example.org")


def test_the_note_names_each_setting_that_changed(site: SmallSite) -> None:
    """Only digests of the settings are recorded (bounded, and no value itself), enough to
    name which changed."""
    run(site)
    assert "\nchanged-settings " not in note(site)
    settings = next(line for line in note(site).splitlines() if line.startswith("output-settings"))
    assert "render.feed_limit:" in settings and "render.jobs" not in settings
    assert re.fullmatch(r"output-settings ([a-z_.]+:[0-9a-f]{8},)+[a-z_.]+:[0-9a-f]{8}", settings)
    site.write_config(extra='[render]\nfeed_limit = 1\ntimezone = "America/Los_Angeles"\n')
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    assert "\nchanged-settings render.feed_limit,render.timezone\n" in note(site)
    assert "\nreason render-changed\n" in note(site)


def test_the_stamp_names_the_renderer(site: SmallSite) -> None:
    run(site)
    stamp = noop.read(site.state)
    assert stamp is not None and stamp["renderer"] == noop.renderer_state()
