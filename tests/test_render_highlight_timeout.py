"""Pygments lexers with catastrophic regexes: highlighting is timed per page
(``[render] highlight_timeout``) and a block past it fails the build with one line naming
the file, the block's line and the language (deploybot.render.highlight.clock), in the main
thread (a SIGALRM timer interrupts the lexer mid-match) and in any other (checked between
tokens). Slow cases run the real CLI in a subprocess with a timeout, so a regression fails
instead of hanging the suite; the page's budget is tested with a clock a lexer drives."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dulwich.repo import Repo
from pygments.lexer import Lexer
from pygments.token import Token

from deploybot.cli.commands import main
from deploybot.render.engine.build import build_site
from deploybot.render.highlight import highlighter
from deploybot.render.highlight.clock import HighlightTimeout, highlight_budget, use_clock
from deploybot.render.highlight.highlighter import code_spans
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.gitrepo import commit_snapshot, head

SYSTEMD = " \t" * 1000 + "x"  # 2 KB; about a minute in Pygments 2.21's systemd lexer
XPP = "a\n" * 2000  # a few ms a token, seconds in all
TIMEOUT = "took over 2 s (render.highlight_timeout); the lexer is too slow on this block: "
TIMEOUT += "shorten it or tag it with another language\n"


def _build(tmp_path: Path, post: str, render: str = "highlight_timeout = 2\n") -> tuple[int, str]:
    """``deploybot build`` of a folder holding ``post``; 120 s at most."""
    src = tmp_path / "src"
    (src / "_posts").mkdir(parents=True)
    (src / "_posts" / "2020-01-01-x.md").write_text(post)
    cfg = tmp_path / "deploybot.toml"
    cfg.write_text(f'[source]\nurl = "src"\n[render]\n{render}')
    command = ["build", str(src), str(tmp_path / "out"), "--config", str(cfg)]
    done = subprocess.run(
        [sys.executable, "-m", "deploybot", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_slow_fenced_block_fails_the_build_naming_its_line(tmp_path: Path) -> None:
    post = f"---\ntitle: x\n---\nintro\n\n```ini\na=1\n```\n\n```systemd\n{SYSTEMD}\n```\n"
    code, output = _build(tmp_path, post)
    assert (code, output) == (
        1,
        f"deploybot: error: _posts/2020-01-01-x.md:10: highlighting as systemd {TIMEOUT}",
    )
    assert not (tmp_path / "out").exists()


def test_a_slow_highlight_tag_fails_the_build_naming_its_line(tmp_path: Path) -> None:
    post = f"---\ntitle: x\n---\n\n{{% highlight systemd %}}\n{SYSTEMD}\n{{% endhighlight %}}\n"
    code, output = _build(tmp_path, post)
    assert (code, output) == (
        1,
        f"deploybot: error: _posts/2020-01-01-x.md:5: highlighting as systemd {TIMEOUT}",
    )


class _Clock:
    """A clock that stands still until a lexer moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _SlowLexer(Lexer):
    """Takes ``seconds`` of ``clock``'s time to lex any block, then gives it as text."""

    def __init__(self, clock: _Clock, seconds: float) -> None:
        super().__init__(stripnl=False)
        self.clock, self.seconds = clock, seconds

    def get_tokens_unprocessed(self, text: str) -> Iterator[tuple[int, Any, str]]:
        self.clock.now += self.seconds
        yield 0, Token.Text, text


def test_the_budget_is_the_pages_not_each_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Three blocks of 0.9 s each, under a page budget of 2 s: the third passes it.
    clock = _Clock()
    lexer = _SlowLexer(clock, 0.9)
    monkeypatch.setattr(highlighter, "lexer_for", lambda lang: lexer if lang == "slow" else None)
    page = "---\ntitle: x\n---\n" + "".join(f"```slow\n{c}\n```\n\n" for c in "abc")
    tree = MemoryTree({"x.md": page.encode()})
    with use_clock(clock), pytest.raises(SourceError) as info:
        build_site(tree, RenderOptions(highlight_timeout=2.0))
    assert (info.value.path, info.value.line) == ("x.md", 12)
    assert info.value.message == "highlighting as slow " + TIMEOUT.rstrip("\n")
    assert clock.now == pytest.approx(2.7)  # each block lexed once


def test_run_once_with_a_slow_block_exits_1_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source, publish = tmp_path / "source.git", tmp_path / "publish.git"
    Repo.init_bare(str(publish), mkdir=True).close()
    post = f"---\ntitle: x\n---\n```systemd\n{SYSTEMD}\n```\n".encode()
    commit_snapshot(source, {"_posts/2020-01-01-x.md": post})
    config = tmp_path / "deploybot.toml"
    config.write_text(
        '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
        '[render]\nhighlight_timeout = 0.5\n[notify]\ntransport = "none"\n'
    )
    result = CliRunner().invoke(main, ["run-once", "--config", str(config)])
    assert (result.exit_code, result.output) == (
        1,
        "deploybot: error: _posts/2020-01-01-x.md:4: highlighting as systemd took over 0.5 s "
        "(render.highlight_timeout); the lexer is too slow on this block: shorten it or tag "
        "it with another language\n",
    )
    assert head(publish, "asf-site") is None


def test_the_timer_is_cleared_and_the_handler_restored() -> None:
    def mine(signum: int, frame: object) -> None:
        raise AssertionError("SIGALRM fired outside highlighting")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        with highlight_budget(0.2):
            assert code_spans("a = 1\n", "python").startswith('<span class="n">a</span>')
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
            with pytest.raises(HighlightTimeout):
                code_spans(SYSTEMD, "systemd")
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is mine
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_off_the_main_thread_the_time_is_checked_between_tokens() -> None:
    caught: list[BaseException] = []

    def run() -> None:
        with highlight_budget(0.2):
            try:
                code_spans(XPP, "xpp")
            except HighlightTimeout as exc:
                caught.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    assert [str(e) for e in caught] == [
        "highlighting as xpp took over 0.2 s (render.highlight_timeout); the lexer is too "
        "slow on this block: shorten it or tag it with another language"
    ]


def test_highlight_timeout_is_checked_at_load(tmp_path: Path) -> None:
    code, output = _build(tmp_path, "---\n---\nx\n", "highlight_timeout = 0\n")
    assert (code, output) == (
        78,
        f"deploybot: error: {tmp_path / 'deploybot.toml'}: 'render.highlight_timeout' must be "
        "more than 0 and at most 86400 seconds\n",
    )
