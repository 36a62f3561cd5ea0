"""``deploybot preview`` in headless Chromium: a save shows on the open page within 2 s with no
reload by hand, a broken save shows its error over the last good build, and a fix brings the
page back. The times from save to reloaded page are printed (``-s``) and kept as the test's
``record_property`` values."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from tests.browser import Browser
from tests.livepreviewproc import POST, POST_PATH, PreviewProcess, post_text, save, write_site

EDITS = 10
BANNER = "#deploybot-build-error"


def test_a_saved_post_shows_on_the_open_page_within_two_seconds(
    tmp_path: Path, browser: Browser, record_property: Callable[[str, object], None]
) -> None:
    source = write_site(tmp_path / "site")
    preview = PreviewProcess(source, tmp_path / "tmp")
    try:
        browser.open(preview.url + POST_PATH)
        assert "First words." in browser.text("#content")
        browser.wait_for(lambda: _listening(browser), timeout=5.0)
        seconds = []
        for n in range(EDITS):
            text = f"Edit number {n} of the post."
            save(source / POST, post_text(text))
            seconds.append(browser.wait_for_text(text, "#content", timeout=2.0))
        record_property("save_to_page_seconds", seconds)
        median, worst = statistics.median(seconds), max(seconds)
        print(
            f"\nsave -> reloaded page over {EDITS} edits: median {median:.3f} s, max {worst:.3f} s"
        )
        assert worst < 2.0

        save(source / POST, "---\ntitle: [Hello\n---\nBroken words.\n")
        shown = browser.wait_for_text(f"{POST}:2: front matter:", BANNER, timeout=2.0)
        record_property("save_to_error_seconds", shown)
        assert f"Edit number {EDITS - 1} of the post." in browser.text("#content")  # last good
        preview.wait_line(preview.err, rf"^error: {POST}:2: front matter: ")

        save(source / POST, post_text("Fixed at last."))
        browser.wait_for_text("Fixed at last.", "#content", timeout=2.0)
        assert browser.driver.find_elements("css selector", BANNER) == []
    finally:
        assert preview.stop() == 0
    assert preview.leftovers() == []


def _listening(browser: Browser) -> bool:
    """Whether the page's EventSource is open (readyState 1), so a save is not missed
    between the page's load and the stream's start (it would reload anyway, on connect)."""
    script = "return window.__deploybotLiveReload && window.__deploybotLiveReload.readyState"
    return browser.driver.execute_script(script) == 1
