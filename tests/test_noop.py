"""The no-op stamp (:mod:`deploybot.pipeline.noop`): a run with nothing to do is told from a few
files, and only when a full run would do nothing either."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dulwich.objects import Commit
from dulwich.repo import Repo

from deploybot.cli.entry import noop_config
from deploybot.config.load import load_config
from deploybot.pipeline import noop
from deploybot.pipeline import run as pipeline
from deploybot.state import statedir
from tests.gitrepo import commit_files, head
from tests.smallsite import SmallSite

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def site(tmp_path: Path) -> SmallSite:
    return SmallSite(tmp_path)


def run(site: SmallSite, **kwargs: bool) -> pipeline.RunResult:
    return pipeline.run_once(load_config(site.config), **kwargs)


def cli(site: SmallSite, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The real console entry point in a subprocess: (exit status, stdout, stderr)."""
    argv = [sys.executable, "-c", "from deploybot.cli.entry import main; main()", "run-once"]
    done = subprocess.run(
        [*argv, "--config", str(site.config), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=site.root,
    )
    return done.returncode, done.stdout, done.stderr


def parents(repo: Path, commit: str) -> list[str]:
    with Repo(str(repo)) as opened:
        made = opened[commit.encode()]
    assert isinstance(made, Commit)
    return [p.decode() for p in made.parents]


def shortcut(result: pipeline.RunResult) -> bool:
    return "no-op check" in result.timings


def test_a_publish_stamps_and_the_next_run_is_told_from_it(site: SmallSite) -> None:
    first = run(site)
    assert first.status == pipeline.RunStatus.PUBLISHED
    assert (site.state / noop.STAMP).is_file()
    again = run(site)
    assert again.status == pipeline.RunStatus.UP_TO_DATE and shortcut(again)
    assert (again.source_commit, again.build_commit) == (first.source_commit, first.build_commit)
    assert site.emails() == [first.build_commit]  # nothing sent twice
    code, out, err = cli(site)
    assert (code, err) == (0, "")
    assert out == f"up to date: asf-site was built from source {first.source_commit[:12]}\n"
    noop.forget(site.state)  # the full path prints the same line
    assert cli(site) == (0, out, "")


def test_a_push_to_the_source_runs_in_full(site: SmallSite) -> None:
    run(site)
    commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nNew.\n"}, "Add")
    assert cli(site)[1].startswith("published ")
    assert run(site).status == pipeline.RunStatus.UP_TO_DATE


def test_a_push_to_the_publish_branch_runs_in_full(site: SmallSite) -> None:
    first = run(site)
    commit_files(site.publish, {"CNAME": b"example.org\n"}, "By hand", branch="asf-site")
    by_hand = head(site.publish, "asf-site")
    code, out, _ = cli(site)
    assert code == 0 and out.startswith("published ")
    rebuilt = head(site.publish, "asf-site")  # rebuilt on top of the hand commit
    assert rebuilt is not None and rebuilt not in (by_hand, first.build_commit)
    assert parents(site.publish, rebuilt) == [by_hand]
    result = run(site)  # told from the stamp that run wrote: the head it made
    assert result.status == pipeline.RunStatus.UP_TO_DATE and shortcut(result)
    assert result.build_commit == rebuilt


def test_packing_the_remotes_refs_runs_in_full_once(site: SmallSite) -> None:
    run(site)
    subprocess.run(["git", "--git-dir", str(site.source), "pack-refs", "--all"], check=True)
    result = run(site)
    assert result.status == pipeline.RunStatus.UP_TO_DATE and not shortcut(result)
    assert shortcut(run(site))


def test_flags_and_a_changed_config_run_in_full(site: SmallSite) -> None:
    run(site)
    assert not shortcut(run(site, retry_now=True))
    assert shortcut(run(site))
    assert run(site, full=True).status == pipeline.RunStatus.UNCHANGED
    assert not (site.state / noop.STAMP).exists()  # --full forgot it, and made no stamp
    assert not shortcut(run(site)) and shortcut(run(site))
    site.config.write_text(site.config.read_text() + "\n# a comment\n")
    assert not shortcut(run(site))
    code, out, _ = cli(site, "--retry-now")
    assert code == 0 and out.startswith("up to date")


def test_mail_waiting_in_the_outbox_runs_in_full(site: SmallSite) -> None:
    """An email that could not be delivered: no stamp, so every run retries it."""
    mbox_config = site.config.read_text()
    smtp = mbox_config.replace('transport = "mbox"', 'transport = "smtp"')
    site.config.write_text(smtp + '[notify.smtp]\nhost = "127.0.0.1"\nport = 1\ntimeout = 5\n')
    first = run(site)  # nothing listens on port 1: delivery fails
    assert first.status == pipeline.RunStatus.PUBLISHED and first.mail_failures
    assert not (site.state / noop.STAMP).exists()
    assert not shortcut(run(site))
    site.config.write_text(mbox_config)
    delivered = run(site, retry_now=True)
    assert delivered.mail_sent and not delivered.mail_failures
    assert shortcut(run(site))


def test_a_post_held_back_keeps_the_shortcut_until_its_date(site: SmallSite) -> None:
    """A scheduled post (dated in the future) ends the stamp at its date, not at once: the
    runs before it take the shortcut; the first run at its date builds and publishes it."""
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    post = f"---\ntitle: Soon\ndate: {due:%Y-%m-%d %H:%M:%S} +0000\n---\nSoon\n"
    commit_files(site.source, {"_posts/2030-01-01-soon.md": post.encode()}, "Schedule")
    assert run(site).status == pipeline.RunStatus.PUBLISHED
    stamp = noop.read(site.state)
    assert stamp is not None and float(stamp["until"]) == due.timestamp()
    assert shortcut(run(site))
    code, out, _ = cli(site)
    assert code == 0 and out.startswith("up to date")
    at_due = lambda: due + timedelta(seconds=1)  # noqa: E731
    result = pipeline.run_once(load_config(site.config), now=at_due)
    assert (result.status, shortcut(result)) == (pipeline.RunStatus.PUBLISHED, False)
    assert result.next_future is None
    again = noop.read(site.state)
    assert again is not None and again["until"] == ""


def test_a_damaged_until_runs_in_full(site: SmallSite) -> None:
    run(site)
    stamp = site.state / noop.STAMP
    stamp.write_text(stamp.read_text().replace("until \n", "until soon\n"))
    assert noop.read(site.state) is None
    code, out, err = cli(site)
    assert (code, err) == (0, "") and out.startswith("up to date")
    assert noop.read(site.state) is not None  # the full run stamped it again


def test_a_run_that_fails_leaves_no_stamp(site: SmallSite) -> None:
    run(site)
    commit_files(site.source, {"_posts/2023-01-05-bad.md": b"---\ntitle: [\n---\n"}, "Bad")
    code, _, err = cli(site)
    assert code == 1 and "bad.md" in err
    assert not (site.state / noop.STAMP).exists()


def test_the_lock_held_is_reported_as_by_a_full_run(site: SmallSite) -> None:
    run(site)
    lock = noop.try_lock(str(site.state / "lock"))
    assert lock is not None
    try:
        code, _, err = cli(site)
    finally:
        os.close(lock)
    assert code == 75 and "lock" in err


def test_a_remote_moved_behind_a_symlink_runs_in_full(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path)
    site.write_config(source_url="link/source.git")
    run(site)
    assert cli(site)[1].startswith("up to date")
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(site.source), str(other / "source.git")])
    commit_files(other / "source.git", {"x.md": b"x\n"}, "Elsewhere")
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(other)
    assert noop.cli_check(str(site.config)) is None
    assert cli(site)[1].startswith("published ")


def test_a_network_remote_is_never_stamped(
    site: SmallSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its refs cannot be read here, even where a folder of its URL's name holds a copy."""
    first = run(site)
    config = load_config(site.config)
    paths = statedir.state_paths(config)
    noop.forget(site.state)
    pipeline._stamp(config, paths, first)  # these facts stamp, with the remotes local
    assert (site.state / noop.STAMP).is_file()
    noop.forget(site.state)
    monkeypatch.chdir(site.root)  # "git://127.0.0.1:1/x" read as a path: git:/127.0.0.1:1/x
    shutil.copytree(site.publish, site.root / "git:" / "127.0.0.1:1" / "x")
    site.write_config(publish_url="git://127.0.0.1:1/x")
    pipeline._stamp(load_config(site.config), paths, first)
    assert not (site.state / noop.STAMP).exists()
    assert noop.cli_check(str(site.config)) is None


def test_refs_are_read_loose_or_packed(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    tip = head(site.source, "main")
    loose = noop.refs_of(str(site.source), ["refs/heads/main", "refs/heads/none"])
    assert loose is not None and loose[1] == {"refs/heads/main": tip, "refs/heads/none": None}
    subprocess.run(["git", "--git-dir", str(site.source), "pack-refs", "--all"], check=True)
    packed = noop.refs_of(f"file://{site.source}", ["refs/heads/main"])
    assert packed is not None and packed[1] == {"refs/heads/main": tip}
    assert packed[0] != loose[0]
    (site.source / "refs/heads/sym").write_text("ref: refs/heads/main\n")
    assert noop.refs_of(str(site.source), ["refs/heads/sym"]) is None
    assert noop.refs_of(str(tmp_path / "nothing"), ["refs/heads/main"]) is None


def test_only_a_plain_run_once_takes_the_shortcut() -> None:
    assert noop_config(["run-once"]) in (os.environ.get("DEPLOYBOT_CONFIG"), "deploybot.toml")
    assert noop_config(["run-once", "--config", "c.toml"]) == "c.toml"
    assert noop_config(["run-once", "--config=c.toml"]) == "c.toml"
    for argv in (
        ["run-once", "--full"],
        ["run-once", "--config", "c.toml", "--retry-now"],
        ["-v", "run-once"],
        ["outbox"],
        ["run-once", "--config"],
        ["run-once", "--config", "--full"],
        [],
    ):
        assert noop_config(argv) is None, argv


def test_the_shortcut_imports_little(site: SmallSite) -> None:
    """The console entry answers a no-op without click, dulwich or the stages, and reads
    the usual ``[state] dir = "state"`` without tomllib."""
    run(site)
    probe = (
        "import sys; sys.argv = ['deploybot', 'run-once', '--config', sys.argv[1]];"
        "from deploybot.cli.entry import main; main();"
        "heavy = [m for m in ('click', 'dulwich', 'deploybot.pipeline.run', 'deploybot.notify',"
        " 'deploybot.render.engine', 'jinja2', 'pathlib', 'json', 'tomllib') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(site.config)], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == [out.splitlines()[0], "[]"]
    assert out.startswith("up to date")


def test_quiet_takes_the_shortcut_and_prints_nothing(site: SmallSite) -> None:
    """``run-once -q`` (cron's) is answered as cheaply, saying nothing."""
    assert noop_config(["run-once", "-q", "--config", "c.toml"]) == "c.toml"
    assert noop_config(["run-once", "--quiet"]) in (
        os.environ.get("DEPLOYBOT_CONFIG"),
        "deploybot.toml",
    )
    run(site)
    probe = (
        "import sys; sys.argv = ['deploybot', 'run-once', '-q', '--config', sys.argv[1]];"
        "from deploybot.cli.entry import main; main();"
        "print([m for m in ('click', 'dulwich', 'deploybot.pipeline.run') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site.config)], capture_output=True, text=True, check=True
    )
    assert (done.stdout, done.stderr) == ("[]\n", "")


def test_the_light_modules_copies_of_constants_match_their_owners() -> None:
    """noop and entry copy a few constants rather than import their heavy owners."""
    from deploybot.cli import entry
    from deploybot.notify.deliver import outbox
    from deploybot.notify.deliver.forge_status import STATUS
    from deploybot.notify.deliver.webhook import WEBHOOK
    from deploybot.support import errors

    assert noop.KEEP_SENT == outbox.KEEP_SENT
    assert (entry.EX_TEMPFAIL, entry.EX_INTERRUPTED) == (errors.EX_TEMPFAIL, errors.EX_INTERRUPTED)
    assert entry.INTERRUPTED == errors.INTERRUPTED + "\n"
    assert noop.FILED == outbox.PRUNED
    assert noop.WAITING == (outbox.EMAIL, WEBHOOK, STATUS) == tuple(outbox.KINDS)
    for key in ("a", "a.b-c_d", "0" * 200, "0" * 201, "", ".a", "-a", "a b", "a/b", "a\n", "é"):
        assert noop._is_key(key) == bool(outbox._KEY_RE.match(key)), key


def test_only_a_waiting_message_keeps_the_outbox_from_clear(site: SmallSite) -> None:
    """What a kill can leave (an orphan sidecar, a temp file of an interrupted write) is not
    a message waiting: :func:`deploybot.notify.deliver.outbox.list_pending` skips it, so the
    shortcut does too (else it would be lost for good: nothing ever removes them)."""
    from deploybot.notify.deliver import outbox

    first = run(site)
    box = site.state / "outbox"
    (box / f"{first.build_commit}.json").write_text('{"state": "sent"}\n')
    (box / f".{first.build_commit}.eml.4242.tmp").write_bytes(b"Subject: torn\n")
    (box / "-not-a-key.eml").write_bytes(b"")
    assert outbox.list_pending(box, outbox.EMAIL) == []
    assert noop.outbox_clear(box, time.time())
    assert shortcut(run(site))
    assert cli(site)[1].startswith("up to date")
    for name in ("late.eml", "late.http"):
        (box / name).write_bytes(b"Subject: waiting\n")
        assert not noop.outbox_clear(box, time.time()), name
        (box / name).unlink()
    # a delivered message due for pruning counts (the run prunes it), only there
    old = time.time() - outbox.KEEP_SENT - 60
    (box / "elsewhere").mkdir()
    (box / "elsewhere" / "old.eml").write_bytes(b"")
    os.utime(box / "elsewhere" / "old.eml", (old, old))
    assert noop.outbox_clear(box, time.time())
    os.utime(box / outbox.SENT_DIR / f"{first.build_commit}.eml", (old, old))
    assert not noop.outbox_clear(box, time.time())


def test_a_symlinked_config_is_never_answered_from_its_targets_site(tmp_path: Path) -> None:
    """a/deploybot.toml -> b/deploybot.toml: its relative paths are a's (config files'
    paths are relative to the folder holding the name given), so a is a site of its own,
    with its own stamp; b's, made from the same bytes, never answers for it."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    a, b = SmallSite(tmp_path / "a"), SmallSite(tmp_path / "b")
    a.config.unlink()
    a.config.symlink_to(b.config)
    assert cli(b)[1].startswith("published ")
    assert (b.state / noop.STAMP).is_file()
    code, out, err = cli(a)
    assert (code, err) == (0, "") and out.startswith("published ")
    # a's own publish repository got the build (b's stamp would have left it empty); the two
    # commits may be equal: same tree, author and message, made in the same second
    assert a.head() is not None
    assert (a.state / noop.STAMP).is_file()  # a's own, from its own run
    assert cli(a)[1] == f"up to date: asf-site was built from source {a.first[:12]}\n"
    commit_files(a.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nNew.\n"}, "Add")
    assert cli(a)[1].startswith("published ")
    assert cli(b)[1] == f"up to date: asf-site was built from source {b.first[:12]}\n"


# [state] dir spellings: (config text before [source], state_folder's answer)
STATE_SPELLINGS = [
    ("", ".deploybot"),
    ('[state]\ndir = "st"\n', "st"),
    ("[state]\ndir = 'st'\n", "st"),
    ('[state] # where\n  dir="st" # the state\n# dir = "no"\n', "st"),
    ('[state]\n[daemon]\nname = "dir"\n', ".deploybot"),
    ('[notify]\nto = []\n[state]\ndir = "st"\n[daemon]\nname = "x"\n', "st"),
    ("[state]\ndir = 'it\\s'\n", "it\\s"),
    ('[state]\ndir = "s\\u0074"\n', "st"),
    ('[state]\ndir = """st"""\n', "st"),
    ('["st\\u0061te"]\ndir = "st"\n', "st"),
    ('state.dir = "st"\n', "st"),
    ('state = { dir = "st" }\n', "st"),
    ('[ state ]\n"dir" = "a#b"\n', "a#b"),
    ('[state]\ndir = "a#b" # c\n', "a#b"),
    ('[state]\r\ndir = "st"\r\n', "st"),
    ('[daemon]\nsites = """\n[state]\ndir = "st"\n"""\n', ".deploybot"),
    ('\ufeff[state]\ndir = "st"\n', "st"),  # a byte order mark, as some editors write
    ('\ufeff[state]\ndir = "s\\u0074"\n', "st"),
]


@pytest.mark.parametrize(("text", "folder"), STATE_SPELLINGS)
def test_the_state_folder_is_the_one_config_loads(tmp_path: Path, text: str, folder: str) -> None:
    """Plain spellings are read from the lines, any other by tomllib: either way the
    shortcut looks in the very folder a full run uses (else it could answer for a state
    directory the run does not use)."""
    path = tmp_path / "deploybot.toml"
    path.write_text(f'{text}[source]\nurl = "src"\n', encoding="utf-8")
    assert noop.state_folder(path.read_bytes()) == folder
    found = os.path.realpath(os.path.join(str(tmp_path), noop.state_folder(path.read_bytes())))
    assert found == str(load_config(path).state.dir)


def test_the_plain_spellings_do_without_tomllib() -> None:
    """Only what the lines cannot tell surely is left to tomllib (its import costs a no-op
    run milliseconds)."""
    probe = (
        "import sys; from deploybot.pipeline.noop import state_folder;"
        "print(state_folder(sys.argv[1].encode()), 'tomllib' in sys.modules)"
    )

    def folder(text: str) -> str:
        done = subprocess.run([sys.executable, "-c", probe, text], capture_output=True, text=True)
        return done.stdout.strip()

    assert folder('[source]\nurl = "s"\n') == ".deploybot False"
    assert folder('[state]\ndir = "st" # here\n') == "st False"
    assert folder("[state]\ndir = 'st'\n[daemon]\n") == "st False"
    assert folder('[state]\ndir = "s\\u0074"\n') == "st True"
    assert folder('state.dir = "st"\n') == "st True"


def test_a_state_dir_that_is_not_a_string_runs_in_full(site: SmallSite) -> None:
    """Not a guess at the folder: the full run reports the key (exit 78)."""
    run(site)
    for text in ("[state]\ndir = 1\n", "state = 1\n", "[state]\ndir = [\n"):
        with pytest.raises((TypeError, AttributeError, ValueError)):
            noop.state_folder(text.encode())
    site.config.write_text(site.config.read_text().replace('dir = "state"', "dir = 1"))
    assert noop.cli_check(str(site.config)) is None
    code, out, err = cli(site)
    assert (code, out) == (78, "") and "state.dir" in err


def test_the_stamp_records_the_urls_as_the_config_wrote_them(tmp_path: Path) -> None:
    """From Config.raw_urls (no second parse of the file): each as written, publish.url
    defaulting to source.url; the shortcut resolves them again against the config's
    folder."""
    site = SmallSite(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path)
    site.write_config(source_url="link/source.git", publish_url="./publish.git")
    run(site)
    stamp = noop.read(site.state)
    assert stamp is not None
    assert (stamp["source_raw"], stamp["publish_raw"]) == ("link/source.git", "./publish.git")
    assert (stamp["source_url"], stamp["publish_url"]) == (str(site.source), str(site.publish))
    site.write_config(source_url="link/source.git", publish_url=None)
    assert run(site).status == pipeline.RunStatus.PUBLISHED  # into source.git's asf-site
    stamp = noop.read(site.state)
    assert stamp is not None
    assert (stamp["source_raw"], stamp["publish_raw"]) == ("link/source.git", "link/source.git")
    assert stamp["publish_url"] == str(site.source)
    assert cli(site)[1] == f"up to date: asf-site was built from source {site.first[:12]}\n"


def test_the_default_config_is_named_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script's shortcut and the loader find the same default config file."""
    from deploybot.cli.entry import noop_config
    from deploybot.config.load import default_config_path

    monkeypatch.delenv("DEPLOYBOT_CONFIG", raising=False)
    assert noop_config(["run-once"]) == "deploybot.toml" == str(default_config_path())
    monkeypatch.setenv("DEPLOYBOT_CONFIG", str(tmp_path / "site.toml"))
    assert noop_config(["run-once", "-q"]) == str(tmp_path / "site.toml")
    assert default_config_path() == tmp_path / "site.toml"
