"""``make demo``: publish the bundled demo site end to end with local repositories.

The first run copies ``config/demo/site/`` into a new source repository ``.demo/source`` (one
commit on ``main``), creates an empty bare publish repository ``.demo/publish.git`` and runs
``deploybot run-once`` with the mbox transport. It then prints the publish branch's log and the
commit email. Later runs reuse ``.demo/`` and so show "up to date"; ``make clean`` resets it.
"""

from __future__ import annotations

import mailbox
import shutil
import subprocess
import sys
from pathlib import Path

from dulwich import porcelain
from dulwich.refs import Ref
from dulwich.repo import Repo

from deploybot.git import repository

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_CONFIG = REPO_ROOT / "config" / "demo"
DEMO_AUTHOR = b"Demo Author <author@demo.example.org>"
EMAIL_PREVIEW_LINES = 70


def setup(demo_dir: Path) -> Path:
    """Create the demo's source and publish repositories once; return the config path."""
    config = demo_dir / "deploybot.toml"
    source = demo_dir / "source"
    if not source.exists():
        shutil.copytree(DEMO_CONFIG / "site", source)
        with Repo.init(str(source)) as repo:
            repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
            files = [p for p in sorted(source.rglob("*")) if p.is_file()]
            porcelain.add(repo, paths=[str(p) for p in files if ".git" not in p.parts])
            porcelain.commit(
                repo,
                message=b"Demo site: three posts, an about page, a logo\n",
                author=DEMO_AUTHOR,
                committer=DEMO_AUTHOR,
            )
    publish = demo_dir / "publish.git"
    if not publish.exists():
        repository.open_bare(publish).close()
    shutil.copyfile(DEMO_CONFIG / "deploybot.toml", config)
    return config


def print_publish_log(publish: Path, branch: str = "refs/heads/asf-site") -> None:
    """Print ``sha7 subject (author)`` for each commit on the publish branch, newest first."""
    with repository.bare_repo(publish) as repo:
        tip = repository.local_ref(repo, branch)
        if tip is None:
            print("(the publish branch does not exist yet)")
            return
        for entry in repo.get_walker(include=[repository.oid(tip)]):
            commit = entry.commit
            subject = commit.message.decode("utf-8", "replace").splitlines()[0]
            author = commit.author.decode("utf-8", "replace")
            print(f"{commit.id.decode()[:7]} {subject} ({author})")


def print_last_email(mbox_path: Path) -> None:
    """Print the newest message of the mbox file, headers included."""
    if not mbox_path.exists():
        print("(no email yet)")
        return
    box = mailbox.mbox(str(mbox_path))
    try:
        keys = box.keys()
        if not keys:
            print("(no email yet)")
            return
        lines = box.get_bytes(keys[-1]).decode("utf-8", "replace").splitlines()
        print("\n".join(lines[:EMAIL_PREVIEW_LINES]))
        if len(lines) > EMAIL_PREVIEW_LINES:
            rest = len(lines) - EMAIL_PREVIEW_LINES
            print(f"[... {rest} more lines: the whole email is in {mbox_path}]")
    finally:
        box.close()


def main() -> int:
    """Set up ``.demo/`` under the current folder, run ``deploybot run-once``, show the result."""
    demo_dir = Path.cwd() / ".demo"
    demo_dir.mkdir(exist_ok=True)
    config = setup(demo_dir)
    print(f"$ deploybot run-once --config {config.relative_to(Path.cwd())}")
    cmd = [sys.executable, "-m", "deploybot", "run-once", "--config", str(config)]
    status = subprocess.run(cmd, check=False).returncode
    print(f"(exit status {status})\n")
    print("== publish branch asf-site in .demo/publish.git ==")
    print_publish_log(demo_dir / "publish.git")
    print("\n== the commit email (.demo/commits.mbox, newest) ==")
    print_last_email(demo_dir / "commits.mbox")
    return status


if __name__ == "__main__":
    sys.exit(main())
