"""``deploybot notify --commit`` and ``deploybot outbox [--retry-now]`` through the real CLI."""

from __future__ import annotations

import email
import email.policy
import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from deploybot.notify.announce import RefUpdate
from deploybot.notify.stage import announce
from tests.servers import Collector, LocalController
from tests.test_notify_email import HEADER_ORDER
from tests.test_notify_series import REF, WHEN, build, git, header_names, history

COMBINED_ORDER = HEADER_ORDER  # the combined email's headers, as in test_notify_email
SHARED = Path(__file__).resolve().parents[2] / "shared"
TVM = SHARED / "corpus" / "tvm-site"
REFERENCE = SHARED / "reference" / "asf-commit-email-202b30a.txt"


def run(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout_bytes, result.stderr


def test_notify_stdout_is_the_combined_email(tmp_path: Path) -> None:
    repo = tmp_path / "tvm-site"
    c0, c1 = history(repo, 1)
    code, out, err = run("notify", "--commit", "HEAD", "--repo", str(repo), "--transport", "stdout")
    assert code == 0, err
    assert header_names(out) == COMBINED_ORDER
    msg = email.message_from_bytes(out, policy=email.policy.default)
    assert msg["Subject"] == "[tvm-site] branch asf-site updated: Build at 1"
    assert msg["To"] == '"commits@example.org" <commits@example.org>'
    assert (msg["X-Git-Oldrev"], msg["X-Git-Rev"]) == (c0, c1)
    body = out.decode("utf-8").split("\n\n", 1)[1]
    assert body.startswith(
        "This is an automated email from the git repository.\n\n"
        "Build Bot pushed a commit to branch asf-site\n"
        f"in repository {repo.resolve()}\n\n\n"
        "The following commit(s) were added to refs/heads/asf-site by this push:\n"
        f"     new {c1[:7]}  Build at 1\n"
        f"{c1[:7]} is described below\n\n"
    )
    log = git(repo, "log", "-C", "--stat", "-p", "--cc", "-1", c1)
    assert (
        body[body.index("\ncommit ") + 1 :] == log.replace("\nDate:   ", "\nAuthorDate: ", 1) + "\n"
    )


def test_notify_bare_repository_branch_and_root_commit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    c0, _ = history(work, 1)
    bare = tmp_path / "site.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    code, out, err = run("notify", "--commit", c0[:10], "--repo", str(bare), "--branch", "gh-pages")
    assert code == 0, err
    msg = email.message_from_bytes(out, policy=email.policy.default)
    assert msg["Subject"] == f"[site] branch gh-pages created (now {c0[:7]})"
    assert msg["X-Git-Refname"] == "refs/heads/gh-pages"


def test_notify_branch_from_the_revision(tmp_path: Path) -> None:
    """A bare repo whose HEAD is an unborn master: ``--commit asf-site~0`` names the branch."""
    repo = tmp_path / "site"
    _, c1 = history(repo, 1)
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "symbolic-ref", "HEAD", "refs/heads/master")
    code, out, err = run("notify", "--commit", "asf-site~0", "--repo", str(bare))
    assert code == 0, err
    msg = email.message_from_bytes(out, policy=email.policy.default)
    assert msg["X-Git-Refname"] == REF
    assert msg["X-Git-Rev"] == c1


def test_notify_unknown_commit_exits_2(tmp_path: Path) -> None:
    repo = tmp_path / "site"
    build(repo, {"a": "1\n"}, "Build")
    code, _, err = run("notify", "--commit", "nope", "--repo", str(repo))
    assert code == 2
    assert "unknown revision 'nope'" in err


def test_outbox_lists_why_and_retry_now_delivers(tmp_path: Path) -> None:
    repo, state = tmp_path / "site", tmp_path / "state"
    c0, c1 = history(repo, 1)
    controller = LocalController(Collector())
    controller.start()
    port = controller.port
    controller.stop()
    config = tmp_path / "deploybot.toml"
    config.write_text(
        f'[source]\nurl = "src"\n[state]\ndir = "state"\n[notify]\ntransport = "smtp"\n'
        f'to = ["commits@example.org"]\nrepository_url = "https://git.example.org/site.git"\n'
        f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\n'
        "timeout = 5\n"
    )
    from deploybot.config.load import load_config

    notify = load_config(config).notify
    announce(RefUpdate(repo, REF, c0, c1), notify, state_dir=state, now=WHEN)

    code, out, _ = run("outbox", "--config", str(config))
    text = out.decode()
    assert code == 0
    assert text.startswith("1 message waiting in the outbox:\n")
    assert f"{c1}  email, failed, 1 attempt, queued " in text
    assert "    subject: [site] branch asf-site updated: Build at 1\n" in text
    assert f"    last error: SMTP 127.0.0.1:{port}: " in text
    assert re.search(r"    next attempt: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\n", text)

    assert run("outbox", "--config", str(config), "--retry-now")[0] == 75  # still down
    handler = Collector()
    controller = LocalController(handler, port=port)
    controller.start()
    try:
        code, out, err = run("outbox", "--config", str(config), "--retry-now")
    finally:
        controller.stop()
    assert code == 0, err
    assert out.decode() == f"sent {c1}\noutbox is empty\n"
    assert len(handler.messages) == 1


# --- the seed case: build 202b30a of the TVM site, against ASF's real email -------------------


def tvm_commit(repo: Path, folder: Path, message: str, date: str) -> str:
    for name in (
        "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html",
        "2020/07/14/bert-pytorch-tvm.html",
        "atom.xml",
        "rss.xml",
    ):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes((folder / name).read_bytes())
    env_date = ["-c", "user.name=tqchen", "-c", "user.email=tqchenml@gmail.com"]
    git(repo, "add", "-A")
    git(
        repo,
        *env_date,
        "commit",
        "-q",
        f"--date={date}",
        "--author=tqchen <tqchenml@gmail.com>",
        "-m",
        message,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def test_seed_case_matches_the_asf_email(tmp_path: Path) -> None:
    if not (TVM / "published-parent").is_dir() or not REFERENCE.is_file():
        pytest.skip(f"the shared corpus is missing at {SHARED}")
    repo = tmp_path / "incubator-tvm-site"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "asf-site")
    tvm_commit(
        repo,
        TVM / "published-parent",
        "Build at Tue Jul 14 09:04:36 PDT 2020",
        "2020-07-14T09:04:36-07:00",
    )
    new = tvm_commit(
        repo,
        TVM / "published",
        "Build at Tue Jul 14 09:12:04 PDT 2020",
        "2020-07-14T09:12:04-07:00",
    )
    code, out, err = run("notify", "--commit", "HEAD", "--repo", str(repo), "--transport", "stdout")
    assert code == 0, err
    body = out.decode("utf-8").split("\n\n", 1)[1]
    ours = html.unescape(body[body.index("\ncommit ") + 1 :]).split()
    # The archive's copy also shows '";' for a quoted URL followed by a space (its link
    # detector), the same artefact as the '";>' the corpus README names.
    theirs_text = re.sub(r'";(?=[\s>])', '"', REFERENCE.read_text(encoding="utf-8"))
    theirs = theirs_text[theirs_text.index("\ncommit ") + 1 :].split()
    # Only the commit id and the author's (hidden) address may differ.
    assert ours[:4] == ["commit", new, "Author:", "tqchen"]
    assert theirs[:4] == ["commit", "202b30a45f2d83f44e07227e2523030d199c298c", "Author:", "tqchen"]
    assert ours[4] == "<tqchenml@gmail.com>"
    assert theirs[4:6] == ["<[email", "protected]>"]
    ours, theirs = ours[5:], theirs[6:]
    diverge = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    where = (
        ""
        if diverge is None
        else f"{ours[diverge - 3 : diverge + 3]} vs {theirs[diverge - 3 : diverge + 3]}"
    )
    assert diverge is None, f"token {diverge}: {where}"
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("tag", ["clean", "resolved", "octopus"])
def test_notify_merge_commit_through_the_cli_without_git(tmp_path: Path, tag: str) -> None:
    """Issue 8.10: ``notify --commit <merge>`` printed a NotImplementedError traceback. Now
    the email holds git's ``log -C --stat -p --cc`` text, made without git (PATH has none)."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.test_notify_gitlog_merge import real_merges

    repo = real_merges(tmp_path)
    bin_dir = tmp_path / "bin"  # python only: no git on PATH
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONPATH")}
    env["PATH"] = str(bin_dir)
    assert shutil.which("git", path=env["PATH"]) is None
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "deploybot",
            "notify",
            "--commit",
            tag,
            "--repo",
            str(repo),
            "--branch",
            "main",
            "--transport",
            "stdout",
        ],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == b""
    body = proc.stdout.decode("utf-8").split("\n\n", 1)[1]
    log = git(repo, "log", "-C", "--stat", "-p", "--cc", "-1", tag)
    assert log.startswith("commit ") and "\nMerge: " in log
    assert (
        body[body.index("\ncommit ") + 1 :] == log.replace("\nDate:   ", "\nAuthorDate: ", 1) + "\n"
    )
