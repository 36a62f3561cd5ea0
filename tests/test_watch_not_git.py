"""A source URL whose server does not answer as a git server (an HTML login page, an
answer that is not pkt-lines, a redirect loop) is a configuration error (exit 78) said in
plain words in one line, not dulwich's or urllib3's ("Invalid info/refs format", "Max
retries exceeded ... too many redirects") with exit 75 on every run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from tests.gitservers import App, wsgi_server
from tests.servers import flooding_server
from tests.smallsite import SmallSite

HTML = "it sent an HTML page"
NOT_GIT = "its answer is not git's protocol"
GIT_TYPE = "application/x-git-upload-pack-advertisement"
LOGIN_PAGE = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>SSO</body></html>\n"


def _answer(content_type: str, body: bytes) -> App:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response(
            "200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))]
        )
        return [body]

    return app


def _redirect_loop(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    where = environ["PATH_INFO"] + "/again"
    start_response("302 Found", [("Location", where), ("Content-Length", "0")])
    return [b""]


def _error_line(site: SmallSite) -> str:
    done = site.run_process()
    assert done.returncode == 78, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("app", "sent"),
    [
        (_answer("text/html; charset=utf-8", LOGIN_PAGE), HTML),
        (_answer(GIT_TYPE, LOGIN_PAGE), HTML),
        (_answer(GIT_TYPE, b"zzzz not pkt-lines\n"), NOT_GIT),
        (_answer("application/json", b'{"message": "Not Found"}'), NOT_GIT),
    ],
    ids=["login page", "login page as git's type", "garbage pkt-line", "json"],
)  # fmt: skip
def test_a_server_answering_other_than_git_is_exit_78(tmp_path: Any, app: App, sent: str) -> None:
    site = SmallSite(tmp_path)
    with wsgi_server(app) as base:
        site.write_config(source_url=f"{base}/site.git")
        line = _error_line(site)
    assert line == (
        f"deploybot: error: {site.config}: 'source.url' {base}/site.git: this URL does not "
        f"answer as a git server ({sent}): is it the repository's clone URL?"
    )


def test_a_redirect_loop_is_exit_78_in_plain_words(tmp_path: Any) -> None:
    site = SmallSite(tmp_path)
    with wsgi_server(_redirect_loop) as base:
        site.write_config(source_url=f"{base}/site.git")
        line = _error_line(site)
    last = f"{base}/site.git/info/refs" + "/again" * 5
    assert line == (
        f"deploybot: error: {site.config}: 'source.url' {base}/site.git: the server redirects "
        f"more than 5 times, the last time to {last} (a loop?): is the URL the repository's "
        "clone URL?"
    )
    assert "Max retries" not in line and "ResponseError" not in line


def test_a_git_url_at_a_web_server_is_exit_78(tmp_path: Any) -> None:
    site = SmallSite(tmp_path)
    head = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>"
    with flooding_server(head, b"", 0) as (port, _sent, _stopped):
        site.write_config(source_url=f"git://127.0.0.1:{port}/site.git")
        line = _error_line(site)
    assert line.endswith(
        f"'source.url' git://127.0.0.1:{port}/site.git: this URL does not answer as a git "
        "server (its answer is not git's protocol): is it the repository's clone URL?"
    ), line
