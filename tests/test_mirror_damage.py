"""A mirror in the state folder damaged on disk (a pack or its index truncated or
overwritten, garbage in a ref file) is a cache gone bad: the run says so in one warning
line, fetches that mirror again and succeeds. The user's own repositories (``deploybot build
--rev``, ``deploybot notify --repo``) cannot be fetched again: one line naming the
repository and ``git fsck``, exit 1, never a traceback."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.gitrepo import commit_files
from tests.servers import git_daemon
from tests.smallsite import SmallSite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def _pack_files(repo: Path, suffix: str) -> list[Path]:
    packs = sorted((repo / "objects" / "pack").glob(f"*.{suffix}"))
    assert packs, repo
    return packs


def _overwrite(path: Path, at: int, length: int = 64) -> None:
    path.chmod(0o644)  # git makes packs read-only
    data = bytearray(path.read_bytes())
    data[at : at + length] = b"\xff" * min(length, len(data) - at)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _pack_overwritten(repo: Path, branch: str) -> None:
    for pack in _pack_files(repo, "pack"):  # every object, not the header nor the checksum
        _overwrite(pack, 12, pack.stat().st_size - 12 - 20)


def _index_truncated(repo: Path, branch: str) -> None:
    for index in _pack_files(repo, "idx"):
        _truncate(index)


def _index_overwritten(repo: Path, branch: str) -> None:
    for index in _pack_files(repo, "idx"):  # the object ids, CRCs and offsets (version 2)
        _overwrite(index, 8 + 256 * 4, index.stat().st_size - 8 - 256 * 4 - 40)


def _index_fan_out_overwritten(repo: Path, branch: str) -> None:
    for index in _pack_files(repo, "idx"):  # version 2: after the magic and the version
        _overwrite(index, 8, 256 * 4)


def _ref_garbage(repo: Path, branch: str) -> None:
    (repo / "refs" / "heads" / branch).write_bytes(b"garbage\n")


DAMAGE: dict[str, Callable[[Path, str], None]] = {
    "pack overwritten": _pack_overwritten,
    "index truncated": _index_truncated,
    "index overwritten": _index_overwritten,
    "index fan-out overwritten": _index_fan_out_overwritten,
    "ref garbage": _ref_garbage,
}


def _site_with_packed_mirrors(tmp_path: Path) -> SmallSite:
    """A site run twice: both mirrors hold what they fetched as one pack (the publish
    mirror deleted after the first run, so the second fetches it whole) and their branch
    as a loose ref file."""
    site = SmallSite(tmp_path)
    assert site.run_process().returncode == 0
    shutil.rmtree(site.state / "publish.git")
    commit_files(site.source, {"about.md": b"About.\n"}, "About", when=1_700_000_050)
    assert site.run_process().returncode == 0
    return site


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize(
    ("mirror", "branch"), [("source.git", "main"), ("publish.git", "asf-site")]
)
def test_a_damaged_mirror_is_fetched_again_and_the_run_succeeds(
    tmp_path: Path, mirror: str, branch: str, damage: str
) -> None:
    site = _site_with_packed_mirrors(tmp_path)
    before = site.head()
    DAMAGE[damage](site.state / mirror, branch)
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: Three\n---\n3\n"},
                 "Three", when=1_700_000_100)  # fmt: skip
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(f"{site.state / mirror} "), warning
    assert warning.endswith(": the mirror is damaged, fetching it again"), warning
    build = site.head()
    assert build not in (None, before)
    assert site.emails()[-1] == build
    again = site.run_process()
    assert (again.returncode, again.stderr) == (0, ""), again


@pytest.mark.parametrize(
    ("mirror", "branch"), [("source.git", "main"), ("publish.git", "asf-site")]
)
def test_the_warning_names_a_garbage_ref(tmp_path: Path, mirror: str, branch: str) -> None:
    site = _site_with_packed_mirrors(tmp_path)
    _ref_garbage(site.state / mirror, branch)
    commit_files(site.source, {"b.md": b"B\n"}, "B", when=1_700_000_100)
    done = site.run_process()
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"{site.state / mirror} cannot be read (the ref refs/heads/{branch} holds 'garbage'): "
        "the mirror is damaged, fetching it again"
    ]


# --- the user's own repositories ---------------------------------------------------------


def _deploybot(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``deploybot ARGS`` as a subprocess in ``cwd`` (a folder with no config in it)."""
    cwd.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "deploybot", *args]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    env.pop("DEPLOYBOT_CONFIG", None)
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def _packed_source(tmp_path: Path) -> Path:
    site = SmallSite(tmp_path)
    subprocess.run(["git", "-C", str(site.source), "repack", "-adq"], check=True)
    for loose in (site.source / "objects").glob("??"):
        shutil.rmtree(loose)
    return site.source


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("damage", ["pack overwritten", "index truncated", "index overwritten"])
def test_build_from_a_damaged_repository_names_it_and_git_fsck(tmp_path: Path, damage: str) -> None:
    source = _packed_source(tmp_path)
    DAMAGE[damage](source, "main")
    done = _deploybot(
        tmp_path / "cwd", "build", "--rev", "main", str(source), str(tmp_path / "out")
    )
    line = _one_line(done)
    assert done.returncode == 1, done.stderr
    assert line.startswith("deploybot: error: "), line
    assert str(source) in line and "git -C" in line and "fsck" in line, line
    assert "damaged" in line, line


def test_notify_from_a_repository_with_a_damaged_pack_names_it_and_git_fsck(
    tmp_path: Path,
) -> None:
    source = _packed_source(tmp_path)
    commit = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "main"], capture_output=True, text=True
    ).stdout.strip()
    (pack,) = _pack_files(source, "pack")
    _overwrite(pack, 12, length=pack.stat().st_size)
    done = _deploybot(
        tmp_path / "cwd",
        "notify",
        "--commit",
        commit,
        "--repo",
        str(source),
        "--transport",
        "stdout",
    )
    line = _one_line(done)
    assert done.returncode == 1, done.stderr
    assert re.fullmatch(
        f"deploybot: error: git object [0-9a-f]{{40}} in {re.escape(str(source))} cannot be read:"
        f" the repository is damaged \\(check it with: git -C {re.escape(str(source))} fsck\\)",
        line,
    ), line


def _loose_source(tmp_path: Path) -> tuple[Path, str]:
    """A work-tree repository with one commit, its objects loose; (folder, commit id)."""
    repo = tmp_path / "site"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=A", "-c", "user.email=a@example.org"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "index.md").write_text("---\ntitle: Home\n---\nHi.\n")
    subprocess.run([*git, "add", "index.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "Import"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    return repo, commit.stdout.strip()


def _object_overwritten(repo: Path, sha: str, data: bytes) -> None:
    """Overwrite the loose object ``sha`` with ``data`` (already compressed): a file
    damaged on disk, its bytes no longer hashing to its name."""
    path = repo / ".git" / "objects" / sha[:2] / sha[2:]
    path.chmod(0o644)
    path.write_bytes(data)


def _tree_of(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD^{tree}"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


@pytest.mark.parametrize(
    "garbage",
    [zlib.compress(b"tree 12\0garbagegarba"), zlib.compress(b"blob 5\0hello")],
    ids=["no entry parses", "another object's bytes"],
)
@pytest.mark.parametrize("command", ["build", "notify"])
def test_a_damaged_tree_object_says_damaged_not_refused(
    tmp_path: Path, garbage: bytes, command: str
) -> None:
    """A tree object whose bytes do not hash to its id was damaged on disk, not written so
    (a tree written so is refused as bad input, naming the entry)."""
    repo, commit = _loose_source(tmp_path)
    tree = _tree_of(repo)
    _object_overwritten(repo, tree, garbage)
    if command == "build":
        done = _deploybot(
            tmp_path / "cwd", "build", "--rev", "HEAD", str(repo), str(tmp_path / "o")
        )
    else:
        done = _deploybot(tmp_path / "cwd", "notify", "--commit", commit, "--repo", str(repo),
                          "--transport", "stdout")  # fmt: skip
    assert done.returncode == 1, done.stderr
    # the repository as dulwich found it: the work tree, or its .git folder
    assert re.fullmatch(
        f"deploybot: error: git object {tree} in {re.escape(str(repo))}(/.git)? cannot be "
        f"read: the repository is damaged \\(check it with: git -C {re.escape(str(repo))}"
        "(/.git)? fsck\\)",
        _one_line(done),
    ), done.stderr


@pytest.mark.parametrize("command", ["build", "notify"])
def test_a_damaged_commit_object_names_the_repository(tmp_path: Path, command: str) -> None:
    repo, commit = _loose_source(tmp_path)
    _object_overwritten(repo, commit, b"not zlib at all")
    if command == "build":
        done = _deploybot(
            tmp_path / "cwd", "build", "--rev", "HEAD", str(repo), str(tmp_path / "o")
        )
    else:
        done = _deploybot(tmp_path / "cwd", "notify", "--commit", "HEAD", "--repo", str(repo),
                          "--transport", "stdout")  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = _one_line(done)
    assert f"git object {commit} in {repo}" in line, line
    assert f"the repository is damaged (check it with: git -C {repo}" in line, line


# --- a pack the server sends damaged is the server's, not the mirror's --------------------


@contextmanager
def _flipping_proxy(target: int, after_pack: int = 60) -> Iterator[int]:
    """A TCP proxy on 127.0.0.1 to the port ``target`` that flips one byte of what the
    server sends, ``after_pack`` bytes after the pack's ``PACK`` signature; yields its
    port."""
    server = socket.create_server(("127.0.0.1", 0))

    def relay(client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", target))

        def up() -> None:
            with contextlib.suppress(OSError):
                while data := client.recv(65536):
                    upstream.sendall(data)

        threading.Thread(target=up, daemon=True).start()
        seen, flipped = bytearray(), False
        with contextlib.suppress(OSError), client, upstream:
            while data := bytearray(upstream.recv(65536)):
                start = len(seen)
                seen += data
                at = seen.find(b"PACK") + after_pack - start
                if not flipped and seen.find(b"PACK") >= 0 and 0 <= at < len(data):
                    data[at] ^= 0xFF
                    flipped = True
                client.sendall(bytes(data))

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                threading.Thread(target=relay, args=(server.accept()[0],), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def test_a_pack_the_server_sends_damaged_is_not_the_mirrors(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    with git_daemon(tmp_path) as base, _flipping_proxy(int(base.rsplit(":", 1)[1])) as port:
        url = f"git://127.0.0.1:{port}/source.git"
        site.write_config(source_url=url)
        done = site.run_process()
        assert done.returncode == 1, done.stderr
        line = _one_line(done)
        assert line.startswith(
            f"deploybot: error: source.url {url}: the pack the server sent cannot be read ("
        ), line
        assert line.endswith("): is its repository damaged? (run git fsck there)"), line
        site.write_config(source_url=f"{base}/source.git")  # the same server, no proxy
        again = site.run_process()
    assert (again.returncode, again.stderr) == (0, ""), again


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_deploybot_log_heals_a_damaged_publish_mirror(tmp_path: Path, damage: str) -> None:
    """`deploybot log` reads the publish mirror too: damaged, it printed a traceback (a
    KeyError, struct.error or AssertionError of dulwich's); now it is fetched anew, as a
    run does, and the log is the same as before the damage."""
    site = _site_with_packed_mirrors(tmp_path)
    argv = [sys.executable, "-m", "deploybot", "log", "--config", str(site.config)]
    before = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    DAMAGE[damage](site.state / "publish.git", "asf-site")
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(f"{site.state / 'publish.git'} "), warning
    assert warning.endswith(": the mirror is damaged, fetching it again"), warning
    assert (done.stdout, len(before.splitlines())) == (before, 2)
