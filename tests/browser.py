"""Headless Chromium for the tests that check a web page as a person sees it.

Debian's ``chromium`` and ``chromium-driver`` packages (``make chromium`` installs them when
missing), driven through Selenium's WebDriver (W3C WebDriver protocol) with the driver path
given, so Selenium Manager never looks for a driver on the network. A test that needs the
browser takes the ``browser`` fixture (tests/conftest.py), which skips, saying why, when
either program is missing.

Every page a test loads is on 127.0.0.1; the browser runs with a profile folder of its own
in the test's ``tmp_path`` and is quit when the test ends.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser")
DRIVER_NAMES = ("chromedriver",)
WINDOW = (1280, 900)
"""The window size, in CSS pixels, of a desktop screenshot."""
PHONE = (390, 844)
"""A phone's viewport in CSS pixels (an iPhone 12-15's), for "readable on a phone"."""
SKIP_REASON = (
    "headless Chromium is not installed (Debian's chromium and chromium-driver; "
    "`make chromium` installs them)"
)


def find_programs() -> tuple[str, str] | None:
    """The paths of Chromium and ChromeDriver, or None when either is missing."""
    browser = next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)
    driver = next((p for p in map(shutil.which, DRIVER_NAMES) if p), None)
    if browser is None or driver is None:
        return None
    return browser, driver


class Browser:
    """One headless Chromium window.

    ``open(url)`` loads a page and waits for its ``load`` event; ``text(css)`` is the
    visible text of the first element a CSS selector matches (``body`` by default);
    ``wait_for_text(needle, timeout)`` polls until the page shows ``needle`` and returns
    the seconds it took; ``screenshot(path)`` writes a PNG of the viewport.
    ``driver`` is the Selenium WebDriver for anything else.
    """

    def __init__(self, profile: Path, *, size: tuple[int, int] = WINDOW) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        programs = find_programs()
        if programs is None:
            raise RuntimeError(SKIP_REASON)
        binary, driver_path = programs
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--window-size={size[0]},{size[1]}",
        ):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(options=options, service=Service(driver_path))
        self.driver.set_page_load_timeout(30)

    def open(self, url: str) -> None:
        """Load ``url`` (it must be on 127.0.0.1 or localhost) and wait for it to load."""
        if not url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise ValueError(f"tests load pages from this machine only, not {url!r}")
        self.driver.get(url)

    def text(self, css: str = "body") -> str:
        """The visible text of the first element ``css`` matches (raises when none does)."""
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.CSS_SELECTOR, css).text)

    def texts(self, css: str) -> list[str]:
        """The visible text of every element ``css`` matches, in document order."""
        from selenium.webdriver.common.by import By

        return [str(e.text) for e in self.driver.find_elements(By.CSS_SELECTOR, css)]

    def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> float:
        """Poll ``check`` every 20 ms until it is true; the seconds it took.

        Raises TimeoutError when it is still false after ``timeout`` seconds.
        """
        start = time.monotonic()
        while True:
            if check():
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"still not true after {timeout} s")
            time.sleep(0.02)

    def wait_for_text(self, needle: str, css: str = "body", timeout: float = 10.0) -> float:
        """Wait until the element ``css`` shows ``needle``; the seconds it took."""
        return self.wait_for(lambda: needle in self._text_or_empty(css), timeout)

    def _text_or_empty(self, css: str) -> str:
        from selenium.common.exceptions import WebDriverException

        try:
            return self.text(css)
        except WebDriverException:
            return ""  # between two page loads the element may be gone for a moment

    def screenshot(self, path: Path) -> Path:
        """Write a PNG of the viewport to ``path``; returns it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if not self.driver.save_screenshot(str(path)):
            raise RuntimeError(f"Chromium wrote no screenshot to {path}")
        return path

    def resize(self, size: tuple[int, int]) -> None:
        """Set the window to ``size`` CSS pixels (width, height)."""
        self.driver.set_window_size(*size)

    def quit(self) -> None:
        """Close the browser and its driver."""
        self.driver.quit()
