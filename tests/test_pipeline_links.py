"""``publish.broken_links`` end to end: real repositories, the real CLI, the mbox transport; the
log's warning lines, the email's section, the build record, the state folder's list, and a
``"fail"`` that publishes nothing."""

from __future__ import annotations

import json
import mailbox
from pathlib import Path

from click.testing import CliRunner

from deploybot.config.load import load_config
from deploybot.notify.source_read import read_record
from deploybot.record.note import BROKEN_LINKS, BROKEN_LINKS_FIRST, BUILD_KIND
from deploybot.serve.settings import Site
from deploybot.serve.status.view import site_view
from tests.gitrepo import commit_files, read_branch
from tests.smallsite import SmallSite, main_cli

LINKING = (
    b"---\ntitle: Links\n---\nSee [two](/2023/01/03/two.html), [gone](/gone/) and\n\n"
    b"![pic](/img/missing.png) [top](#top) [ext](https://other.example.org/x)\n"
)
POST = "_posts/2023-01-04-links.md"
PAGE = "2023/01/04/links.html"


def _site(tmp_path: Path, mode: str | None = None) -> SmallSite:
    site = SmallSite(tmp_path)
    if mode is not None:
        text = site.config.read_text().replace(
            "[publish]\n", f'[publish]\nbroken_links = "{mode}"\n'
        )
        site.config.write_text(text)
    return site


def _record(site: SmallSite) -> dict[str, str]:
    build = site.head()
    assert build is not None
    return read_record(site.publish, build)


def _line_of(site: SmallSite, page: str, needle: str) -> int:
    """The 1-based line of the published ``page`` holding ``needle``."""
    text = read_branch(site.publish, "asf-site")[page].decode()
    [line] = [n for n, row in enumerate(text.splitlines(), 1) if needle in row]
    return line


def _bodies(site: SmallSite) -> list[str]:
    box = mailbox.mbox(str(site.mbox))
    try:
        return [m.get_payload(decode=True).decode() for m in box]  # type: ignore[union-attr]
    finally:
        box.close()


def test_warn_publishes_and_tells_the_log_the_email_and_the_record(tmp_path: Path) -> None:
    site = _site(tmp_path)
    code, out = site.run()
    assert code == 0, out
    assert _record(site)[BROKEN_LINKS] == "0"
    commit_files(site.source, {POST: LINKING}, "A post with broken links")
    code, out = site.run()
    assert code == 0, out
    assert "published" in out
    gone, pic = _line_of(site, PAGE, '"/gone/"'), _line_of(site, PAGE, '"/img/missing.png"')
    assert f"broken link: {PAGE}:{gone}: /gone/" in out
    assert f"broken link: {PAGE}:{pic}: /img/missing.png" in out
    assert "two.html" not in out and "#top" not in out and "other.example.org" not in out
    assert "2 broken links on 1 page (publish.broken_links = warn)" in out
    record = _record(site)
    assert record[BUILD_KIND] == "incremental"
    assert record[BROKEN_LINKS] == "2"
    assert json.loads(record[BROKEN_LINKS_FIRST]) == [
        [PAGE, "/gone/", gone],
        [PAGE, "/img/missing.png", pic],
    ]
    body = _bodies(site)[-1]
    section = (
        "Broken links: 2 on the published pages (page:line: link):\n"
        f"    {PAGE}:{gone}: /gone/\n"
        f"    {PAGE}:{pic}: /img/missing.png\n\n"
    )
    assert section in body
    assert body.index(section) < body.index("The following commit(s) were added")
    assert "Broken links" not in _bodies(site)[0]
    told = CliRunner().invoke(main_cli(), ["log", "--config", str(site.config)]).output
    assert "incremental build: the source moved (1 source path changed); 2 broken links" in told
    listed = CliRunner().invoke(main_cli(), ["log", "--json", "--config", str(site.config)])
    assert [b["broken_links"] for b in json.loads(listed.output)] == [2, 0]
    kept = json.loads((site.state / "broken-links.json").read_text())
    assert kept["published"] is True and kept["mode"] == "warn" and kept["total"] == 2
    assert kept["links"][0] == {"page": PAGE, "link": "/gone/", "line": gone}
    newest, first = site_view(Site("s", load_config(site.config)), None, 5).builds
    assert dict(newest.checks)["broken links"] == (
        f"2 ({PAGE}:{gone}: /gone/, {PAGE}:{pic}: /img/missing.png)"
    )
    assert dict(first.checks)["broken links"] == "none"


def test_fail_exits_1_naming_the_links_and_publishes_nothing(tmp_path: Path) -> None:
    site = _site(tmp_path, "fail")
    assert site.run()[0] == 0
    before, emails = site.head(), site.emails()
    commit_files(site.source, {POST: LINKING}, "A post with broken links")
    code, out = site.run()
    assert code == 1, out
    assert site.head() == before and site.emails() == emails
    kept = json.loads((site.state / "broken-links.json").read_text())
    assert kept["published"] is False and kept["total"] == 2
    gone, pic = (link["line"] for link in kept["links"])
    assert (
        "2 broken links, nothing published (publish.broken_links = fail): "
        f"{PAGE}:{gone}: /gone/; {PAGE}:{pic}: /img/missing.png"
    ) in out
    code, out = site.run()
    assert code == 1, out  # the same commit fails the same way
    code, out = site.run("--force")
    assert code == 0, out
    assert "publishing past publish.broken_links = fail: --force given" in out
    assert site.head() != before and _record(site)[BROKEN_LINKS] == "2"
    before = site.head()
    commit_files(
        site.source,
        {POST: LINKING.replace(b"/gone/", b"/").replace(b"/img/missing.png", b"/index.html")},
        "Fix",
    )
    code, out = site.run()
    assert code == 0, out
    assert site.head() != before and _record(site)[BROKEN_LINKS] == "0"


def test_a_deleted_page_breaks_the_links_of_pages_that_did_not_change(tmp_path: Path) -> None:
    site = _site(tmp_path)
    commit_files(site.source, {"about.md": b"---\ntitle: About\n---\n[two](/2023/01/03/two)\n"})
    assert site.run()[0] == 0
    assert _record(site)[BROKEN_LINKS] == "0"
    commit_files(site.source, {"_posts/2023-01-03-two.md": None}, "Drop two")
    code, out = site.run()
    assert code == 0, out
    record = _record(site)
    assert record[BUILD_KIND] == "incremental"
    line = _line_of(site, "about.html", '"/2023/01/03/two"')
    assert json.loads(record[BROKEN_LINKS_FIRST]) == [["about.html", "/2023/01/03/two", line]]


def test_off_checks_nothing(tmp_path: Path) -> None:
    site = _site(tmp_path, "off")
    commit_files(site.source, {POST: LINKING})
    code, out = site.run()
    assert code == 0, out
    assert "broken link" not in out and BROKEN_LINKS not in _record(site)
    assert not (site.state / "broken-links.json").exists()
