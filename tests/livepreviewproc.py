"""Test helper: ``python -m deploybot preview`` as a real process on a free port, and a small
Jekyll site in a folder for it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from tests.daemonproc import wait_until

LAYOUT = (
    "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>{{ page.title }}</title></head>\n"
    '<body><main id="content">{{ content }}</main></body></html>\n'
)
SITE = {
    "_config.yml": "title: Preview test\nbaseurl: /blog\n",
    "_layouts/default.html": LAYOUT,
    "index.html": (
        "---\nlayout: default\ntitle: Home\n---\n"
        '<ul>{% for p in site.posts %}<li><a href="{{ p.url | relative_url }}">{{ p.title }}'
        "</a></li>{% endfor %}</ul>\n"
    ),
    "404.html": "---\nlayout: default\ntitle: Lost\n---\n<p>This page is lost.</p>\n",
    "about.md": "---\nlayout: default\ntitle: About\npermalink: /about\n---\nAbout us.\n",
    "css/site.css": "body { color: #222; }\n",
    "_posts/2024-03-01-hello.md": "---\nlayout: default\ntitle: Hello\n---\nFirst words.\n",
    "_drafts/idea.md": "---\nlayout: default\ntitle: Idea\n---\nA draft.\n",
}
POST = "_posts/2024-03-01-hello.md"
POST_PATH = "/blog/2024/03/01/hello.html"


def write_site(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write :data:`SITE` (and ``files`` over it) into ``root``; returns ``root``."""
    for rel, text in {**SITE, **(files or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def post_text(body: str, title: str = "Hello") -> str:
    """The text of :data:`POST` with ``body``."""
    return f"---\nlayout: default\ntitle: {title}\n---\n{body}\n"


def save(path: Path, text: str) -> None:
    """Write ``text`` into ``path`` as an editor saves: a new file renamed over the old."""
    temporary = path.with_name(path.name + ".saving~")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class PreviewProcess:
    """``deploybot preview SOURCE --port 0 ARGS`` with ``TMPDIR`` set to ``tmp`` (so its
    temporary folder can be checked); ``url`` is the address it prints; ``out`` and ``err``
    collect its stdout and stderr lines."""

    def __init__(self, source: Path, tmp: Path, *args: str) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.tmp = tmp
        env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
        env.pop("DEPLOYBOT_CONFIG", None)
        argv = [sys.executable, "-m", "deploybot", "preview", str(source), "--port", "0", *args]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, cwd=tmp,
        )  # fmt: skip
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=_collect, args=(stream, lines), daemon=True).start()
        line = self.wait_line(self.out, r"serving at (\S+)")
        self.url = re.search(r"serving at (http://\S+?)/blog/", line).group(1)  # type: ignore[union-attr]

    def wait_line(self, lines: list[str], pattern: str, timeout: float = 30.0) -> str:
        """The first line of ``lines`` matching ``pattern`` (waiting for it)."""
        regex = re.compile(pattern)

        def found() -> str | None:
            if self.proc.poll() is not None:
                time.sleep(0.1)  # let the readers catch the last lines
                if not any(regex.search(x) for x in lines):
                    raise AssertionError(f"exited {self.proc.returncode}: {self.out} {self.err}")
            return next((x for x in list(lines) if regex.search(x)), None)

        return wait_until(found, timeout, f"a line {pattern!r} in {lines}")

    def stop(self) -> int:
        """Ctrl-C (SIGINT) and wait; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def leftovers(self) -> list[str]:
        """What the process left in its ``TMPDIR`` (its preview folder, if any)."""
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("deploybot-"))


def _collect(stream: IO[str], lines: list[str]) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))
