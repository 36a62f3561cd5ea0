"""Test helper: run the git CLI with a fixed identity and date and no user or system config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DATE = "2020-07-14T09:12:04-07:00"


def run_git(repo: Path, *args: str, name: str, email: str, input: bytes | None = None) -> str:
    """Run ``git -C repo args`` as ``name <email>`` (author and committer, both at
    :data:`DATE`); return stdout, decoded as UTF-8 with replacement.

    Raises:
        subprocess.CalledProcessError: git failed.
    """
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_DATE": DATE,
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, input=input, capture_output=True, check=True
    )
    return done.stdout.decode("utf-8", "replace")
