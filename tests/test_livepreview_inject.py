"""The live-reload script goes into served HTML (before ``</body>``), and only HTML."""

from __future__ import annotations

import json

from deploybot.livepreview import inject
from deploybot.livepreview.livereload import State


def test_before_the_last_closing_body() -> None:
    page = b"<html><body><pre>&lt;/body&gt; </body></pre>x</BODY >\n</html>\n"
    out = inject.inject(page, 7)
    tag = inject.script(7)
    assert out == b"<html><body><pre>&lt;/body&gt; </body></pre>x" + tag + b"</BODY >\n</html>\n"
    assert b"var served = 7," in tag and inject.ENDPOINT.encode() in tag


def test_without_body_before_html_else_at_the_end() -> None:
    assert inject.inject(b"<p>x</p></html>", 1) == b"<p>x</p>" + inject.script(1) + b"</html>"
    assert inject.inject(b"<p>x</p>", 1) == b"<p>x</p>" + inject.script(1)


def test_the_page_keeps_its_bytes_and_encoding() -> None:
    page = "<body>é ü 漢字</body>".encode()
    out = inject.inject(page, 3)
    assert out.replace(inject.script(3), b"") == page
    assert inject.script(3).isascii()


def test_only_html_types() -> None:
    assert inject.is_html("text/html; charset=utf-8")
    assert inject.is_html("application/xhtml+xml")
    assert not inject.is_html("application/xml; charset=utf-8")
    assert not inject.is_html("text/css")


def test_the_event_the_script_reads() -> None:
    event = State(4, "_posts/a.md:3: bad").event().decode()
    assert event.startswith("event: build\ndata: ") and event.endswith("\n\n")
    assert json.loads(event.split("data: ", 1)[1]) == {
        "generation": 4,
        "error": "_posts/a.md:3: bad",
    }
