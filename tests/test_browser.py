"""The browser helper itself: Chromium loads a page served on 127.0.0.1 and reads it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.browser import PHONE, Browser


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A folder with one page, served on 127.0.0.1; yields the page's URL."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text(
        "<!DOCTYPE html><title>t</title><h1>Hello</h1><p class=n>one</p><p class=n>two</p>"
        "<p hidden>not shown</p>",
        encoding="utf-8",
    )

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def test_chromium_shows_the_visible_text_and_takes_a_screenshot(
    browser: Browser, served: str, tmp_path: Path
) -> None:
    browser.open(served)
    assert browser.text("h1") == "Hello"
    assert browser.texts("p.n") == ["one", "two"]
    assert "not shown" not in browser.text()
    browser.resize(PHONE)
    shot = browser.screenshot(tmp_path / "shot.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pages_from_elsewhere_are_refused(browser: Browser) -> None:
    with pytest.raises(ValueError, match="this machine only"):
        browser.open("https://example.org/")
