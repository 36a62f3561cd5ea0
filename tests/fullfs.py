"""Test helper: run commands with one folder on a real, small file system that can be filled.

The folder gets a tmpfs mounted over it in a private user and mount namespace
(``unshare --user --map-root-user --mount``), which needs no privileges where the kernel
allows unprivileged user namespaces, and works for root too. The folder's contents are
copied onto the tmpfs first, so a test can prepare state with ordinary runs and then go on
with a full disk. When the namespace ends the tmpfs goes away and the folder is as it was
before; the tmpfs's last contents are copied to ``keep`` for the test to inspect.

``python -m tests.fullfs SPEC`` is the part that runs inside the namespace (``SPEC`` is JSON).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Done:
    """One step's outcome: exit status, stdout and stderr (text)."""

    code: int
    out: str
    err: str


@functools.cache
def unavailable() -> str | None:
    """Return why a private tmpfs cannot be mounted here, or None when it can."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if unshare is None or mount is None:
        return "the unshare and mount commands (util-linux) are not installed"
    with tempfile.TemporaryDirectory() as folder:
        probe = [unshare, "-rm", mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder]
        done = subprocess.run(probe, capture_output=True, text=True)
    if done.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace here: {done.stderr.strip()}"
    return None


def run_on_tmpfs(folder: Path, steps: list[dict[str, Any]], keep: Path) -> list[Done]:
    """Mount a 64 MB tmpfs over ``folder`` (holding a copy of its contents) and run ``steps``.

    Steps, in order: ``{"fill": N}`` fills the tmpfs until N bytes are left; ``{"unfill":
    True}`` removes the filler; ``{"readonly": True}`` remounts it read-only (root cannot
    write it either); ``{"run": [argv...]}`` runs a command (``python`` stands for
    this interpreter) with the repository root as working folder. Returns one :class:`Done`
    per ``run`` step. Afterwards the tmpfs's contents are copied to ``keep``.
    """
    spec = {"folder": str(folder), "steps": steps, "keep": str(keep)}
    argv = ["unshare", "-rm", sys.executable, "-m", "tests.fullfs", json.dumps(spec)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"tests.fullfs failed ({done.returncode}): {done.stderr}")
    return [Done(**item) for item in json.loads(done.stdout)]


FILLER = ".filler"


def _fill(folder: Path, leave: int) -> None:
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize
    with open(folder / FILLER, "wb") as f:
        remaining = max(free - leave, 0)
        chunk = b"\0" * (1 << 20)
        while remaining > 0:
            remaining -= f.write(chunk[: min(len(chunk), remaining)])


def _main(spec: dict[str, Any]) -> None:
    folder = Path(spec["folder"])
    with tempfile.TemporaryDirectory() as seed:
        shutil.copytree(folder, seed, dirs_exist_ok=True, symlinks=True)
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "tmpfs", str(folder)], check=True
        )
        shutil.copytree(seed, folder, dirs_exist_ok=True, symlinks=True)
    results = []
    for step in spec["steps"]:
        if "fill" in step:
            _fill(folder, int(step["fill"]))
        elif "unfill" in step:
            (folder / FILLER).unlink(missing_ok=True)
        elif "readonly" in step:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        else:
            argv = [sys.executable if a == "python" else a for a in step["run"]]
            done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT)
            results.append({"code": done.returncode, "out": done.stdout, "err": done.stderr})
    if os.access(folder, os.W_OK):
        (folder / FILLER).unlink(missing_ok=True)
    shutil.copytree(folder, spec["keep"], dirs_exist_ok=True, symlinks=True)
    print(json.dumps(results))


if __name__ == "__main__":
    _main(json.loads(sys.argv[1]))
