"""Test helper: a small real site (bare source repo, bare publish repo, config, mbox) and the
real CLI, in process or as a subprocess (for runs that need their own mount namespace)."""

from __future__ import annotations

import mailbox
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from dulwich.repo import Repo

from tests.gitrepo import commit_files, head

POSTS = {
    "_config.yml": b"title: Small\nurl: https://small.example.org\n",
    "index.md": b"---\ntitle: Home\n---\nWelcome.\n",
    "_posts/2023-01-02-one.md": b"---\ntitle: One\n---\nHello.\n",
    "_posts/2023-01-03-two.md": b"---\ntitle: Two\n---\nWorld.\n",
}


class SmallSite:
    """``tmp_path/source.git`` (branch main, the :data:`POSTS`), an empty
    ``tmp_path/publish.git``, ``tmp_path/deploybot.toml`` delivering to
    ``tmp_path/commits.mbox``, and the state folder ``tmp_path/state``."""

    def __init__(self, tmp_path: Path, *, extra: str = "", source_url: str = "source.git") -> None:
        self.root = tmp_path
        self.source = tmp_path / "source.git"
        self.publish = tmp_path / "publish.git"
        self.state = tmp_path / "state"
        self.mbox = tmp_path / "commits.mbox"
        self.config = tmp_path / "deploybot.toml"
        for repo in (self.source, self.publish):
            Repo.init_bare(str(repo), mkdir=True).close()
        self.first = commit_files(self.source, POSTS, "Import")
        self.write_config(source_url=source_url, extra=extra)

    def write_config(
        self,
        *,
        source_url: str = "source.git",
        publish_url: str | None = "publish.git",
        extra: str = "",
    ) -> None:
        """(Re)write the config; ``extra`` is appended as is (more tables). ``publish_url``
        None leaves ``publish.url`` out (it then defaults to ``source.url``)."""
        publish = f'url = "{publish_url}"\n' if publish_url is not None else ""
        self.config.write_text(
            f'[source]\nurl = "{source_url}"\n'
            f'[publish]\n{publish}author = "Build Bot <bot@example.org>"\n'
            '[notify]\ntransport = "mbox"\nmbox = "commits.mbox"\nto = ["commits@example.org"]\n'
            'from = "bot@example.org"\n'
            '[state]\ndir = "state"\n' + extra
        )

    def argv(self, *args: str) -> list[str]:
        """``python -m deploybot run-once --config C args`` (``python``: see tests.fullfs)."""
        return ["python", "-m", "deploybot", "run-once", "--config", str(self.config), *args]

    def run(self, *args: str) -> tuple[int, str]:
        """Run ``deploybot run-once`` in process; return (exit code, stdout + stderr)."""
        result = CliRunner().invoke(main_cli(), ["run-once", "--config", str(self.config), *args])
        return result.exit_code, result.output

    def run_process(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``deploybot run-once`` as a subprocess (stdout and stderr kept apart)."""
        argv = [sys.executable, *self.argv(*args)[1:]]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def head(self) -> str | None:
        """The publish branch's head commit, or None."""
        return head(self.publish, "asf-site")

    def emails(self) -> list[str]:
        """The ``X-Git-Rev`` of every email in the mbox, in order."""
        if not self.mbox.exists():
            return []
        box = mailbox.mbox(str(self.mbox))
        try:
            return [str(message["X-Git-Rev"]) for message in box]
        finally:
            box.close()


def main_cli() -> object:
    from deploybot.cli.commands import main

    return main
