"""An ssh:// source runs the ssh program ``GIT_SSH_COMMAND`` or ``GIT_SSH`` names, as git
does (dulwich alone always ran ``ssh``, so a deploy key other than ~/.ssh's could not be
chosen). The "ssh" here is a script that records its arguments and runs the git command it
is given on this machine; the URL names 127.0.0.1, port 1 (closed), so a real ssh run
instead reaches nothing either."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.git.repository import ssh_command
from tests.smallsite import SmallSite

FAKE_SSH = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_SSH_LOG"
for last; do :; done
exec sh -c "$(printf %s "$last" | sed 's/^git-/git /')"
"""
"""Records its argv, one per line; runs the last one (``git-upload-pack '/path'``) here."""


def _fake_ssh(folder: Path) -> Path:
    program = folder / "fake ssh"  # a space in the path: GIT_SSH names a program, unsplit
    program.write_text(FAKE_SSH)
    program.chmod(0o755)
    return program


def _run(site: SmallSite, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("GIT_SSH", "GIT_SSH_COMMAND")}
    full["FAKE_SSH_LOG"] = str(site.root / "argv.log")
    argv = [sys.executable, *site.argv()[1:]]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**full, **env})


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    if shutil.which("git") is None:
        pytest.skip("needs git upload-pack")
    return SmallSite(tmp_path, source_url=f"ssh://deploy@127.0.0.1:1{tmp_path}/source.git")


def test_git_ssh_command_chooses_the_key(site: SmallSite) -> None:
    program = _fake_ssh(site.root)
    key = site.root / "deploy_key"
    command = f"'{program}' -i '{key}' -o IdentitiesOnly=yes"
    done = _run(site, {"GIT_SSH_COMMAND": command, "GIT_SSH": "/nonexistent/ssh"})
    assert done.returncode == 0, done.stderr
    argv = (site.root / "argv.log").read_text().splitlines()
    assert argv[:6] == ["-i", str(key), "-o", "IdentitiesOnly=yes", "-x", "-p"]
    assert argv[-2:] == ["deploy@127.0.0.1", f"git-upload-pack '{site.root}/source.git'"]
    assert site.head() is not None


def test_git_ssh_names_the_program(site: SmallSite) -> None:
    program = _fake_ssh(site.root)
    done = _run(site, {"GIT_SSH": str(program)})
    assert done.returncode == 0, done.stderr
    argv = (site.root / "argv.log").read_text().splitlines()
    assert argv[:3] == ["-x", "-p", "1"] and argv[-2] == "deploy@127.0.0.1"
    assert site.head() is not None


def test_ssh_command_follows_gits_precedence() -> None:
    assert ssh_command({}) is None
    assert ssh_command({"GIT_SSH": "/opt/my ssh"}) == "'/opt/my ssh'"
    both = {"GIT_SSH": "/opt/ssh", "GIT_SSH_COMMAND": "ssh -i k"}
    assert ssh_command(both) == "ssh -i k"
    assert ssh_command({"GIT_SSH_COMMAND": "  ", "GIT_SSH": ""}) is None
