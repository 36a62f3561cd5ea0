"""The daemon's status page (``/``, ``/sites/<name>``, a build's page): real daemon processes,
real builds of local repositories, the HTML read with an HTML parser for the values shown;
the same pages after a restart and for a build ``run-once`` made; the page off or behind a
token when the daemon listens beyond this machine; and in headless Chromium, at desktop and
phone sizes (``DEPLOYBOT_WRITE_SCREENSHOTS=1`` writes docs/status-page.png; run it with
``--basetemp=/tmp/deploybot-demo`` for short paths).
"""

from __future__ import annotations

import asyncio
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import requests

from deploybot.serve.status import access
from tests.browser import PHONE, Browser
from tests.daemonproc import Daemon, GatedSite, daemon_table, github, push_commit, wait_until
from tests.fleetproc import fleet_config, make_sites, running_workers
from tests.gitrepo import commit_files
from tests.redisproc import RedisServer
from tests.servers import free_port

REPO_ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = REPO_ROOT / "docs" / "status-page.png"
TOKEN_ENV = "DEPLOYBOT_TEST_STATUS_TOKEN"
TOKEN = "status-token-0123456789"
NAME = "www"
SUBJECT = 'Add a post about <script>alert("x")</script> & more'


class Rows(HTMLParser):
    """The cells of every ``<table class="builds">`` row, by their ``data-label``, as
    text; and every ``<script>`` element seen (there must be none)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self.scripts = 0
        self.texts: list[str] = []
        self._table = False
        self._label: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "table":
            self._table = "builds" in (values.get("class") or "")
        elif tag == "tr" and self._table:
            self.rows.append({})
        elif tag == "td" and self._table and self.rows:
            self._label = values.get("data-label")
            self.rows[-1][self._label or ""] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._label = None
        if tag == "table":
            self._table = False

    def handle_data(self, data: str) -> None:
        self.texts.append(data)
        if self._label is not None and self.rows:
            cell = self.rows[-1][self._label] + data
            self.rows[-1][self._label] = re.sub(r"\s+", " ", cell)

    def text(self) -> str:
        return re.sub(r"\s+", " ", " ".join(self.texts))


def parse(html: str) -> Rows:
    rows = Rows()
    rows.feed(html)
    rows.close()
    rows.rows = [r for r in rows.rows if r]
    return rows


def _site(tmp_path: Path, **daemon: object) -> tuple[GatedSite, Path]:
    """A site ``www`` (not gated) whose config is the daemon's too (its ``[daemon]``
    table: ``daemon``'s keys), its state folder ``state``."""
    site = GatedSite(tmp_path / "site", gated=False)
    site.write_config(extra=daemon_table(name=NAME, **daemon))
    return site, site.config


def _commit(site: GatedSite, n: int, subject: str) -> str:
    post = f"---\ntitle: Post {n}\n---\nText {n}.\n".encode()
    return commit_files(site.source, {f"_posts/2023-06-0{n}-p{n}.md": post}, subject)


def _push(daemon: Daemon, site: GatedSite, commit: str) -> None:
    assert daemon.push(f"/webhook/{NAME}", github(commit)).status_code == 202
    wait_until(lambda: site.published_source() == commit)
    wait_until(lambda: daemon.idle(NAME) and daemon.runs(NAME) >= 1)


def _get(daemon: Daemon, path: str, **kw: object) -> requests.Response:
    return requests.get(daemon.url + path, timeout=30, **kw)  # type: ignore[arg-type]


def test_builds_show_with_subject_result_time_files_and_email_after_a_restart(
    tmp_path: Path,
) -> None:
    site, config = _site(tmp_path)
    first = _commit(site, 1, SUBJECT)
    with Daemon(config) as daemon:
        _push(daemon, site, first)
        built_by_daemon = site.head()
    # Made while no daemon runs: run-once on the same config (the same state folder).
    second = _commit(site, 2, "A second post, by run-once")
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    built_by_run_once = site.head()
    # A failing build: bad front matter, in a file whose name is markup.
    commit_files(site.source, {"_posts/2023-06-09-<i>bad.md": b"---\ntitle: [x\n---\n"}, "Broken")
    assert site.run_process().returncode == 1
    with Daemon(config) as daemon:
        page = _get(daemon, "/")
        assert page.status_code == 200
        assert page.headers["Content-Type"].startswith("text/html")
        assert "script-src" not in page.headers["Content-Security-Policy"]
        shown = parse(page.text)
        assert shown.scripts == 0
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more" in page.text
        rows = shown.rows
        assert [r["Result"].strip() for r in rows] == ["failed", "published", "published"]
        failed, by_run_once, by_daemon = rows
        assert "Broken" in failed["Source"] and "_posts/2023-06-09-<i>bad.md" in failed["Source"]
        assert "_posts/2023-06-09-&lt;i&gt;bad.md" in page.text
        assert built_by_run_once and built_by_daemon  # both builds made a commit
        assert by_run_once["Source"].strip() == f"{second[:12]} A second post, by run-once"
        assert by_run_once["Build"].strip() == (built_by_run_once or "")[:12]
        assert by_daemon["Source"].strip() == f"{first[:12]} {SUBJECT}"
        assert by_daemon["Build"].strip() == (built_by_daemon or "")[:12]
        for row in (by_run_once, by_daemon):
            assert row["Email"].strip() == "delivered"
            assert re.fullmatch(r" ?\d+\.\d\d s ?", row["Took"])
            assert int(row["Files"]) > 0
            # ISO-like, in the machine's zone (the site names none), with the offset.
            assert re.fullmatch(r" ?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d\d:\d\d ?", row["Ended"])
        assert "https://small.example.org" in shown.text()
        assert f"branch asf-site of {site.publish}" in shown.text()

        site_page = parse(_get(daemon, f"/sites/{NAME}").text)
        assert [r["Result"].strip() for r in site_page.rows] == ["failed", "published", "published"]
        assert "Nothing waits in the outbox." in site_page.text()

        build = _get(daemon, f"/sites/{NAME}/builds/{(built_by_daemon or '')[:12]}")
        assert build.status_code == 200
        text = parse(build.text).text()
        assert f"source main at {first[:12]}" in text
        assert "full (the publish branch does not exist yet) build" in text
        assert f"source-commit {first}" in text
        assert "forge status not recorded" in text  # no [status]
        assert re.search(r"broken links (none|\d+ \()", text), text
        two = _get(daemon, f"/sites/{NAME}?n=2")
        assert len(parse(two.text).rows) == 2 and "More builds" in two.text
        assert len(parse(_get(daemon, f"/sites/{NAME}?n=abc").text).rows) == 3
        assert len(parse(_get(daemon, f"/sites/{NAME}?n=99999999").text).rows) == 3
        assert _get(daemon, "/sites/nope").status_code == 404
        assert _get(daemon, f"/sites/{NAME}/builds/{'0' * 12}").status_code == 404


def test_times_are_in_the_sites_timezone_and_waiting_mail_shows(tmp_path: Path) -> None:
    site = GatedSite(tmp_path / "site", gated=False)
    commit_files(site.source, {"_config.yml": b"title: S\ntimezone: Asia/Kolkata\n"}, "Zone")
    # Mail to a port nothing listens on: the email waits in the outbox.
    notify = (
        '[notify]\ntransport = "smtp"\nto = ["commits@example.org"]\nfrom = "bot@example.org"\n'
        f'[notify.smtp]\nhost = "127.0.0.1"\nport = {free_port()}\n'
    )
    text = site.config.read_text().split("[notify]")[0] + notify + '[state]\ndir = "state"\n'
    site.config.write_text(text + daemon_table(name=NAME))
    with Daemon(site.config) as daemon:
        head = _commit(site, 3, "Mail will wait")
        assert daemon.push(f"/webhook/{NAME}", github(head)).status_code == 202
        wait_until(lambda: site.published_source() == head)
        wait_until(lambda: daemon.idle(NAME))
        page = parse(_get(daemon, f"/sites/{NAME}").text)
        newest = page.rows[0]
        assert newest["Email"].strip() == "waiting"
        assert newest["Ended"].strip().endswith("+05:30")
        assert "Asia/Kolkata" in page.text()
        assert "1 message waiting or refused" in page.text()
        assert "Connection refused" in page.text()


def test_beyond_localhost_the_page_is_off_without_a_token(tmp_path: Path) -> None:
    _, config = _site(tmp_path, listen="0.0.0.0:0")
    with Daemon(config) as daemon:
        answer = _get(daemon, "/")
        assert answer.status_code == 403
        assert "listens on 0.0.0.0:0, beyond this machine" in answer.text
        assert _get(daemon, f"/sites/{NAME}").status_code == 403
        assert _get(daemon, "/healthz").status_code == 200
        assert any("status page is off" in line for line in daemon.log)


def test_with_a_token_the_page_asks_for_it(tmp_path: Path) -> None:
    _, config = _site(tmp_path, listen="0.0.0.0:0", status_token_env=TOKEN_ENV)
    with Daemon(config, env={TOKEN_ENV: TOKEN}) as daemon:
        none = _get(daemon, "/")
        assert none.status_code == 401 and none.headers["WWW-Authenticate"].startswith("Bearer")
        assert _get(daemon, "/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        bearer = _get(daemon, "/", headers={"Authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 200 and NAME in parse(bearer.text).text()
        once = _get(daemon, f"/sites/{NAME}?token={TOKEN}&n=3", allow_redirects=False)
        assert once.status_code == 303 and once.headers["Location"] == f"/sites/{NAME}?n=3"
        assert once.cookies[access.COOKIE] == TOKEN
        assert "HttpOnly" in once.headers["Set-Cookie"]
        kept = _get(daemon, f"/sites/{NAME}", cookies={access.COOKIE: TOKEN})
        assert kept.status_code == 200
        assert _get(daemon, "/", cookies={access.COOKIE: "x" + TOKEN}).status_code == 401
        assert not any(TOKEN in line for line in daemon.log)


def test_status_page_false_turns_it_off(tmp_path: Path) -> None:
    _, config = _site(tmp_path, status_page=False)
    with Daemon(config) as daemon:
        assert _get(daemon, "/").status_code == 404
        assert _get(daemon, "/status.css").status_code == 404


def test_in_chromium_at_desktop_and_phone_size(tmp_path: Path, browser: Browser) -> None:
    site, config = _site(tmp_path)
    first = _commit(site, 1, "Add the spring programme")
    with Daemon(config) as daemon:
        _push(daemon, site, first)
        built = site.head() or ""
        second = _commit(site, 2, "Fix a typo in the spring programme")
        _push(daemon, site, second)
        bad = {"_posts/2023-06-09-bad.md": b"---\ntitle: [x\n---\n"}
        broken = commit_files(site.source, bad, "Add the summer programme (draft)")
        assert daemon.push(f"/webhook/{NAME}", github(broken)).status_code == 202
        wait_until(lambda: daemon.runs(NAME) == 3 and daemon.idle(NAME))
        for size in (None, PHONE):
            if size is not None:
                browser.resize(size)
            browser.open(daemon.url + "/")
            body = browser.text()
            assert NAME in body
            assert "Fix a typo in the spring programme" in body
            assert "published" in body and "delivered" in body and "failed" in body
            assert "1 failure in a row; next build on a new commit" in body  # bad input
            fits = browser.driver.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            )
            assert fits, f"horizontal scroll at {size or 'desktop'} size"
            for page in (f"/sites/{NAME}", f"/sites/{NAME}/builds/{built[:12]}"):
                browser.open(daemon.url + page)
                assert "Add the spring programme" in browser.text()
                assert browser.driver.execute_script(
                    "return document.documentElement.scrollWidth <= window.innerWidth"
                ), f"horizontal scroll on {page} at {size or 'desktop'} size"
            assert f"source main at {first[:12]}" in browser.text()
            if os.environ.get("DEPLOYBOT_WRITE_SCREENSHOTS") == "1" and size is not None:
                browser.screenshot(tmp_path / "phone.png")  # to look at, not kept
        if os.environ.get("DEPLOYBOT_WRITE_SCREENSHOTS") == "1":
            browser.resize((1100, 760))
            browser.open(daemon.url + "/")
            browser.screenshot(SCREENSHOT)


@pytest.mark.parametrize(
    ("listen", "local"),
    [
        ("127.0.0.1:8787", True), ("127.1.2.3:80", True), ("[::1]:8787", True),
        ("localhost:8787", True), ("unix:/run/deploybot.sock", True), ("0.0.0.0:8787", False),
        ("[::]:8787", False), ("192.0.2.1:8787", False), ("deploy.example.org:8787", False),
    ],
)  # fmt: skip
def test_which_addresses_count_as_this_machine_only(listen: str, local: bool) -> None:
    assert access.is_local(listen) is local
    gate = access.decide(listen, True, None)
    assert gate.mode is (access.Mode.OPEN if local else access.Mode.OFF)
    assert access.decide(listen, True, TOKEN).mode is access.Mode.TOKEN
    assert access.decide(listen, False, TOKEN).mode is access.Mode.OFF


def test_the_token_is_taken_from_a_header_a_cookie_or_the_query() -> None:
    gate = access.decide("0.0.0.0:1", True, TOKEN)
    assert access.given_token({"Authorization": f"Bearer {TOKEN}"}, {}, {}) == TOKEN
    assert access.given_token({"Authorization": f"bearer  {TOKEN} "}, {}, {}) == TOKEN
    assert access.given_token({}, {access.COOKIE: TOKEN}, {}) == TOKEN
    assert access.given_token({}, {}, {access.QUERY: TOKEN}) == TOKEN
    # a token changed since: the new one in the query wins over the old cookie
    assert access.given_token({}, {access.COOKIE: "old"}, {access.QUERY: TOKEN}) == TOKEN
    assert access.given_token({"Authorization": "Basic abc"}, {}, {}) is None
    assert access.admits(gate, TOKEN)
    assert not access.admits(gate, TOKEN[:-1])
    assert not access.admits(gate, None)
    assert not access.admits(gate, TOKEN + "é")
    assert access.admits(access.decide("127.0.0.1:1", True, None), None)


def test_in_fleet_mode_the_page_shows_the_queue_and_the_fleets_last_run(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    (site,) = make_sites(tmp_path, ["fl"])
    config = fleet_config(tmp_path, redis_server.url)
    with Daemon(config) as daemon, running_workers(config, tmp_path, "w1"):
        commit = push_commit(daemon, site, 1)
        wait_until(lambda: site.published_source() == commit)
        wait_until(lambda: (daemon.last_run("fl") or {}).get("result") == "published")
        page = _get(daemon, "/sites/fl")
        assert page.status_code == 200
        text = parse(page.text).text()
        assert "fleet (Redis)" in text
        assert "published by worker w1 at" in text
        assert f"source {commit[:12]}" in text
        # The worker built in its own state folder (--state): no journal here.
        assert "No build recorded yet." in text


def test_the_front_page_shows_the_sites_a_page_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from deploybot.serve.settings import load_settings
    from deploybot.serve.status import pages

    for name in ("a", "b", "c"):
        GatedSite(tmp_path / "sites" / name, gated=False, extra=f'[daemon]\nname = "{name}"\n')
    config = tmp_path / "daemon.toml"
    config.write_text(daemon_table(sites="sites/*/deploybot.toml") + '[state]\ndir = "d"\n')
    settings = load_settings([config], {"DEPLOYBOT_TEST_WEBHOOK_SECRET": "s"})
    monkeypatch.setattr(pages, "FRONT_SITES", 2)

    class Idle:
        def health(self) -> tuple[int, dict[str, object]]:
            return 200, {"sites": {}}

    async def fetch(*paths: str) -> list[str]:
        app = web.Application()
        pages.StatusPages(lambda: settings, Idle()).add_routes(app)  # type: ignore[arg-type]
        async with TestClient(TestServer(app)) as client:
            return [await (await client.get(path)).text() for path in paths]

    first, second, beyond = asyncio.run(fetch("/", "/?page=2", "/?page=9"))
    heads = [[h.strip() for h in re.findall(r"<h2><a [^>]*>(\w+)</a>", p)] for p in (first, second)]
    assert heads == [["a", "b"], ["c"]]
    assert "Sites page 1 of 2 (3 sites)" in parse(first).text() and 'href="/?page=2"' in first
    assert 'href="/?page=1"' in second
    assert re.findall(r"<h2><a [^>]*>(\w+)</a>", beyond) == []


def test_a_running_build_and_the_one_queued_after_it_show(tmp_path: Path) -> None:
    site = GatedSite(tmp_path / "site")  # each push waits at the publish repository's gate
    site.write_config(extra=daemon_table(name=NAME))
    with Daemon(site.config) as daemon:
        first = _commit(site, 1, "Held in its push")
        assert daemon.push(f"/webhook/{NAME}", github(first)).status_code == 202
        wait_until(lambda: site.pushes_reached() == 1)
        second = _commit(site, 2, "Queued behind it")
        assert daemon.push(f"/webhook/{NAME}", github(second)).status_code == 202
        text = parse(_get(daemon, f"/sites/{NAME}").text).text()
        assert "Queue building, and another build is queued" in text
        site.open_gate()
        wait_until(lambda: site.published_source() == second)
        wait_until(lambda: daemon.idle(NAME))
        text = parse(_get(daemon, f"/sites/{NAME}").text).text()
        assert "Queue idle" in text
        assert "Queued behind it" in text and "Held in its push" in text


def test_a_token_in_the_source_url_is_not_shown(tmp_path: Path) -> None:
    site = GatedSite(tmp_path / "site", gated=False)
    url = "https://deploy:s3cr3t-token-42@127.0.0.1:9/o/site.git?access_token=abcdef123456"
    site.write_config(source_url=url, extra=daemon_table(name=NAME))
    with Daemon(site.config) as daemon:
        page = _get(daemon, "/")
        assert page.status_code == 200
        assert "s3cr3t-token-42" not in page.text and "abcdef123456" not in page.text
        assert "https://127.0.0.1:9/o/site.git?access_token=[...]" in parse(page.text).text()
