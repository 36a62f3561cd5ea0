"""``deploybot preview`` end to end: a real process on a free port serving a small site in
tmp_path, rebuilt on saves, telling the live-reload stream, and gone without a trace on
Ctrl-C."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from tests.livepreviewproc import POST, POST_PATH, PreviewProcess, post_text, save, write_site

FUTURE_POST = "_posts/2999-01-01-later.md"


class Events:
    """The live-reload stream's ``build`` events, read one at a time."""

    def __init__(self, url: str) -> None:
        self.response = requests.get(url + "/__deploybot/livereload", stream=True, timeout=10)
        assert self.response.headers["Content-Type"] == "text/event-stream"
        self.lines: Iterator[str] = self.response.iter_lines(decode_unicode=True)

    def next(self) -> dict[str, Any]:
        event, data = "", ""
        for line in self.lines:
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif not line and event == "build":
                return json.loads(data)  # type: ignore[no-any-return]
        raise AssertionError("the stream ended")


def raw_get(url: str, path: str) -> int:
    """The status of GET ``path`` sent as is (no client-side ``..`` folding)."""
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    conn.request("GET", path)
    status = conn.getresponse().status
    conn.close()
    return status


def test_preview_serves_rebuilds_tells_and_cleans_up(tmp_path: Path) -> None:
    source = write_site(tmp_path / "site", {FUTURE_POST: post_text("Later.", "Later")})
    preview = PreviewProcess(source, tmp_path / "tmp", "--drafts", "--future")
    try:
        url = preview.url
        assert preview.leftovers() != []  # its build folder, while it runs
        home = requests.get(url + "/", allow_redirects=False, timeout=10)
        assert home.status_code == 302 and home.headers["Location"] == "/blog/"
        index = requests.get(url + "/blog/", timeout=10)
        assert index.status_code == 200
        assert index.headers["Content-Type"] == "text/html; charset=utf-8"
        assert index.headers["Cache-Control"] == "no-store"
        assert '<script id="deploybot-livereload">' in index.text
        assert ">Hello</a>" in index.text and ">Idea</a>" in index.text  # --drafts
        assert ">Later</a>" in index.text  # --future
        assert "About us." in requests.get(url + "/blog/about", timeout=10).text
        css = requests.get(url + "/blog/css/site.css", timeout=10)
        assert css.headers["Content-Type"] == "text/css; charset=utf-8"
        assert css.content == (source / "css/site.css").read_bytes()  # no script in it
        lost = requests.get(url + "/blog/no/such/page", timeout=10)
        assert lost.status_code == 404 and "This page is lost." in lost.text
        assert "deploybot-livereload" in lost.text  # it reloads once the page exists
        assert requests.get(url + "/2024/03/01/hello.html", timeout=10).status_code == 404
        folder = requests.get(url + "/blog/2024", allow_redirects=False, timeout=10)
        assert folder.status_code == 301 and folder.headers["Location"] == "/blog/2024/"
        assert raw_get(url, "/blog/../../../../etc/passwd") == 404
        assert raw_get(url, "/blog/%2e%2e/%2e%2e/etc/passwd") == 404
        assert requests.post(url + POST_PATH, timeout=10).status_code == 405

        events = Events(url)
        first = events.next()
        assert first["error"] is None
        save(source / POST, post_text("Edited words."))
        edited = events.next()
        assert edited == {"generation": first["generation"] + 1, "error": None}
        assert "Edited words." in requests.get(url + POST_PATH, timeout=10).text
        preview.wait_line(preview.out, rf"built \d+ files? for {POST} in .* \(incremental\)")

        save(source / POST, "---\ntitle: [Hello\n---\nBroken words.\n")
        broken = events.next()
        assert broken["generation"] == edited["generation"]
        assert broken["error"].startswith(f"{POST}:2: front matter: ")
        preview.wait_line(preview.err, rf"^error: {POST}:2: front matter: ")
        still = requests.get(url + POST_PATH, timeout=10).text
        assert "Edited words." in still and "Broken words." not in still  # the last good build

        save(source / POST, post_text("Fixed words."))
        fixed = events.next()
        assert fixed == {"generation": edited["generation"] + 1, "error": None}
        assert "Fixed words." in requests.get(url + POST_PATH, timeout=10).text
        events.response.close()
    finally:
        status = preview.stop()
    assert status == 0
    assert preview.leftovers() == []  # the temporary folder went with it
    assert not any("Traceback" in line for line in preview.err), preview.err


def test_a_port_in_use_or_a_missing_source_is_a_usage_error(tmp_path: Path) -> None:
    source = write_site(tmp_path / "site")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = CliRunner().invoke(main, ["preview", str(source), "--port", str(port)])
    assert done.exit_code == 2, done.output
    assert f"cannot listen on 127.0.0.1:{port}: " in done.output
    assert "built" not in done.output  # it fails before building
    missing = CliRunner().invoke(main, ["preview", str(tmp_path / "nowhere"), "--port", "0"])
    assert missing.exit_code == 2 and "is not a folder" in missing.output
    Repo.init_bare(str(tmp_path / "bare.git"), mkdir=True).close()
    bare = CliRunner().invoke(main, ["preview", str(tmp_path / "bare.git"), "--port", "0"])
    assert bare.exit_code == 2 and "is a bare repository" in bare.output
