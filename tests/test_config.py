"""Config loading: defaults, path resolution, and errors that name the key and the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.support.errors import EX_CONFIG, ConfigError
from deploybot.support.redact import redact_text


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deploybot.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_and_relative_paths(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[source]\nurl = "site"\n'))
    assert cfg.source.url == str(tmp_path / "site")
    assert cfg.source.branch == "main"
    assert cfg.publish.url == cfg.source.url
    assert cfg.publish.branch == "asf-site"
    assert cfg.publish.message == "Build at {date}"
    assert cfg.render.feed_limit == 20
    limits = (cfg.render.layout_max_steps, cfg.render.layout_max_output)
    assert (*limits, cfg.render.layout_max_depth) == (10_000_000, 50_000_000, 50)
    assert cfg.notify.transport == "none"
    assert cfg.notify.pusher == "deploybot"
    assert cfg.state.dir == tmp_path / ".deploybot"


def test_a_leading_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    """Some editors start a UTF-8 file with a BOM; tomllib refuses it (line 1, column 1),
    git skips it in its config files, and so does deploybot."""
    cfg = load_config(write(tmp_path, '\ufeff[source]\nurl = "site"\n'))
    assert cfg.source.url == str(tmp_path / "site")


def test_remote_urls_are_not_resolved(tmp_path: Path) -> None:
    for url in ("https://h/x.git", "git://h/x", "ssh://h/x", "git@h:x.git", "file:///x"):
        cfg = load_config(write(tmp_path, f'[source]\nurl = "{url}"\n'))
        assert cfg.source.url == url


def test_every_documented_key(tmp_path: Path) -> None:
    cfg = load_config(
        write(
            tmp_path,
            """
[source]
url = "src"
branch = "trunk"
[publish]
url = "pub.git"
branch = "gh-pages"
author = "Bot <bot@x.org>"
message = "Site build {date}"
timezone = "Europe/Berlin"
keep = ["docs/", "CNAME"]
[render]
theme = "_theme"
timezone = "America/Los_Angeles"
feed_limit = 5
[notify]
transport = "smtp"
to = ["commits@x.org"]
from = "bot@x.org"
repository_url = "https://x.org/site.git"
pusher = "ci"
[notify.smtp]
host = "127.0.0.1"
port = 2525
security = "starttls"
username = "u"
password_env = "PW"
timeout = 5
[state]
dir = "/var/lib/deploybot"
""",
        )
    )
    assert cfg.publish.url == str(tmp_path / "pub.git")
    assert cfg.publish.keep == ("docs/", "CNAME")
    assert cfg.render.theme == "_theme"
    assert cfg.notify.sender == "bot@x.org"
    assert cfg.notify.smtp.timeout == 5.0
    assert cfg.notify.smtp.security == "starttls"
    assert cfg.state.dir == Path("/var/lib/deploybot")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[source]\nurl = "s"\nbrnch = "x"\n',
            "unknown key 'source.brnch'; did you mean 'branch'?",
        ),
        (
            '[source]\nurl = "s"\n[render]\nfeed_limit = "x"\n',
            "'render.feed_limit' must be an integer",
        ),
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "pigeon"\n',
            "'notify.transport' must be one of",
        ),
        (
            '[source]\nurl = "s"\n[notify.smtp]\nsecurity = "tls"\n',
            "'notify.smtp.security' must be one of",
        ),
        ('[source]\nurl = "s"\n[publish]\nkeep = "docs/"\n', "'publish.keep' must be a list"),
        ('[source]\nurl = "s"\n[publish]\nauthor = "nobody"\n', "'publish.author' must look like"),
        (
            '[source]\nurl = "s"\n[render]\ntimezone = "Mars/Base"\n',
            "'render.timezone' is not a known",
        ),
        (
            '[source]\nurl = "s"\n[notify]\ntransport = "mbox"\nto = ["a@b"]\n',
            "'notify.mbox' is required",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_steps = 0\n',
            "'render.layout_max_steps' must be 1 or more",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_output = -5\n',
            "'render.layout_max_output' must be 1 or more",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_depth = "deep"\n',
            "'render.layout_max_depth' must be an integer",
        ),
        ('[sorce]\nurl = "s"\n', "unknown key 'sorce'; did you mean 'source'?"),
        ('[source]\nbranch = "x"\n', "missing required key 'source.url'"),
        ("[source\n", "not valid TOML"),
        ('[source]\nurl = "s"\n[notify]\nto = ["TVM <c@x.org>"]\n', "'notify.to' entries must be"),
        ('[source]\nurl = "s"\n[notify]\nto = ["nobody"]\n', "'notify.to' entries must be"),
        ('[source]\nurl = "s"\n[notify]\nfrom = "not an address"\n', "'notify.from' must be"),
        ("", "missing required key 'source'"),
    ],
)
def test_errors_name_key_and_file(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)
    assert info.value.exit_code == EX_CONFIG


def test_sender_with_display_name(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[source]\nurl = "s"\n[notify]\nfrom = "Bot <b@x.org>"\n'))
    assert cfg.notify.sender == "Bot <b@x.org>"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


# --- every key checked at load (issue 8 point 9) ---------------------------------------------

_SMTP = '[source]\nurl = "s"\n[notify.smtp]\n'
_HOOK = '[source]\nurl = "s"\n[notify.webhook]\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_SMTP + "timeout = -5\n", "'notify.smtp.timeout' must be"),
        (_SMTP + "timeout = nan\n", "'notify.smtp.timeout' must be"),
        (_SMTP + "timeout = 0\n", "'notify.smtp.timeout' must be"),
        (_HOOK + "timeout = inf\n", "'notify.webhook.timeout' must be"),
        (_SMTP + "port = -1\n", "'notify.smtp.port' must be"),
        (_SMTP + "port = 99999\n", "'notify.smtp.port' must be"),
        (_SMTP + 'host = ""\n', "'notify.smtp.host' must be"),
        (_SMTP + 'host = "mail example.org"\n', "'notify.smtp.host' must be"),
        (_SMTP + 'password_env = "NOT A NAME"\n', "'notify.smtp.password_env' must be"),
        (_HOOK + 'url = "file:///etc/passwd"\n', "'notify.webhook.url' must be"),
        (_HOOK + 'url = "chat.example.org/hooks/x"\n', "'notify.webhook.url' must be"),
        (_HOOK + 'url = "https:///hooks/x"\n', "'notify.webhook.url' must name a host"),
        (_HOOK + 'url_env = "1X"\n', "'notify.webhook.url_env' must be"),
        ('[source]\nurl = "ftp://example.org/site.git"\n', "'source.url' must be"),
        ('[source]\nurl = "s3://bucket/site.git"\n', "'source.url' must be"),
        ('[source]\nurl = "https:///site.git"\n', "'source.url' must name a host"),
        ('[source]\nurl = ""\n', "'source.url' must be"),
        ('[source]\nurl = "s"\n[publish]\nurl = "ftp://h/p.git"\n', "'publish.url' must be"),
        ('[source]\nurl = "s"\nbranch = "a..b"\n', "'source.branch' is not a valid"),
        ('[source]\nurl = "s"\n[publish]\nbranch = "gh pages"\n', "'publish.branch' is not"),
        ('[source]\nurl = "s"\n[publish]\nbranch = "x.lock"\n', "'publish.branch' is not"),
        ('[source]\nurl = "s"\n[publish]\nbranch = "-x"\n', "'publish.branch' is not"),
        ('[source]\nurl = "s"\n[publish]\nbranch = "@{u}"\n', "'publish.branch' is not"),
        ('[source]\nurl = "s"\n[publish]\nbranch = ""\n', "'publish.branch' is not"),
        ('[source]\nurl = "s"\n[publish]\nkeep = ["../x"]\n', "'publish.keep' entries must be"),
        ('[source]\nurl = "s"\n[publish]\nkeep = ["/docs"]\n', "'publish.keep' entries must be"),
        ('[source]\nurl = "s"\n[publish]\nkeep = [""]\n', "'publish.keep' entries must be"),
        ('[source]\nurl = "s"\n[publish]\nmessage = ""\n', "'publish.message' must"),
        ('[source]\nurl = "s"\n[publish]\ntimezone = "Mars/Base"\n', "'publish.timezone' is not"),
        ('[source]\nurl = "s"\n[render]\ntheme = "../outside"\n', "'render.theme' must be"),
        ('[source]\nurl = "s"\n[render]\ntheme = "/etc"\n', "'render.theme' must be"),
        ('[source]\nurl = "s"\n[notify]\nrepository_url = "a\\nb"\n', "'notify.repository_url'"),
        ('[source]\nurl = "s"\n[notify]\npusher = "a\\u0000b"\n', "'notify.pusher' must"),
        # issue 8 red team: these crashed (exit 1) or retried forever (exit 75)
        (
            '[source]\nurl = "s"\n[render]\nfeed_limit = 100000000000000000000\n',
            "'render.feed_limit' must be 0 or more and at most",
        ),
        (
            '[source]\nurl = "s"\n[render]\nmax_file_bytes = 9223372036854775808\n',
            "'render.max_file_bytes' must be 1 or more and at most",
        ),
        (
            '[source]\nurl = "s"\n[render]\nlayout_max_depth = 100000\n',
            "'render.layout_max_depth' must be 1 or more and at most",
        ),
        (
            '[source]\nurl = "s"\n[notify]\nmax_lines = 100000000000000000000\n',
            "'notify.max_lines' must be 0 (no limit) or from 1 to",
        ),
        (_HOOK + 'url = "http://[::1"\n', "'notify.webhook.url' is not a valid URL"),
        ('[source]\nurl = "https://[::1/x.git"\n', "'source.url' is not a valid URL"),
        ('[source]\nurl = "file://[::1/x.git"\n', "'source.url' is not a valid URL"),
        ('[source]\nurl = "file://h/x.git"\n', "'source.url' must name no host after file://"),
        ('[source]\nurl = "git:TOK9@127.0.0.1:x.git"\n', "'source.url' has a password before '@'"),
        ('[source]\nurl = "deploy:TOK9@host:site.git"\n', "'source.url' has a password before '@'"),
        (
            '[source]\nurl = "ssh:site.git"\n',
            "'source.url' reads as the URL scheme ssh: with no '//'",
        ),
        (
            '[source]\nurl = "s"\n[publish]\nurl = "git:site.git"\n',
            "'publish.url' reads as the URL scheme git:",
        ),
        (
            '[source]\nurl = "s"\n[notify]\nmbox = "/proc/version"\n',
            "'notify.mbox' /proc/version is on the kernel's /proc",
        ),
        (
            '[source]\nurl = "s"\n[notify]\nmbox = "/sys/kernel/x/mbox"\n',
            "'notify.mbox' /sys/kernel/x/mbox is on the kernel's /sys",
        ),
        (
            '[source]\nurl = "s"\n[notify]\nmbox = "/dev/null"\n',
            "'notify.mbox' /dev/null is a character device, not a regular file",
        ),
        ('[source]\nurl = "s"\n[notify]\nmbox = "a\\u0000b"\n', "'notify.mbox' must be"),
        ('[source]\nurl = "s"\n[state]\ndir = "a\\u0000b"\n', "'state.dir' must be"),
    ],
)
def test_bad_values_are_refused_at_load(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)
    assert redact_text(str(info.value)) == str(info.value)  # the CLI prints it unmangled


def test_mbox_path_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "mail").mkdir()
    path = write(
        tmp_path, '[source]\nurl = "s"\n[notify]\ntransport = "mbox"\nto = ["a@b"]\nmbox = "mail"\n'
    )
    with pytest.raises(ConfigError, match=r"'notify\.mbox' .*mail is a folder") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_mbox_that_is_a_fifo_or_under_a_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("")
    base = '[source]\nurl = "s"\n[notify]\nmbox = '
    for mbox, expected in (("fifo", "fifo is a FIFO, not a regular file"),
                           ("file/box", "file is a file, not a folder")):  # fmt: skip
        path = write(tmp_path, f'{base}"{mbox}"\n')
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert str(info.value) == f"{path}: 'notify.mbox' {tmp_path / expected}"


def test_state_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("not a folder\n")
    path = write(tmp_path, '[source]\nurl = "s"\n[state]\ndir = "state/inner"\n')
    with pytest.raises(ConfigError, match=r"'state\.dir' .*state is a file") as info:
        load_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://h/x.git",
        "http://127.0.0.1:8080/x.git",
        "git://h/x",
        "ssh://h/x",
        "git+ssh://git@h/x",
        "git@h:x.git",
        "h.example.org:x.git",
        "file:///x",
    ],
)
def test_supported_remote_urls(tmp_path: Path, url: str) -> None:
    assert load_config(write(tmp_path, f'[source]\nurl = "{url}"\n')).source.url == url


def test_ssh_plus_git_is_read_as_ssh(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[source]\nurl = "ssh+git://h/x.git"\n'))
    assert cfg.source.url == "ssh://h/x.git"  # git's alias; dulwich only knows ssh and git+ssh


def test_valid_branch_names(tmp_path: Path) -> None:
    text = '[source]\nurl = "s"\nbranch = "release/1.x"\n[publish]\nbranch = "gh-pages"\n'
    cfg = load_config(write(tmp_path, text))
    assert (cfg.source.branch, cfg.publish.branch) == ("release/1.x", "gh-pages")


def test_the_example_config_loads(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "config" / "deploybot.example.toml"
    copy = tmp_path / "deploybot.toml"
    copy.write_text(example.read_text())
    cfg = load_config(copy)
    assert cfg.notify.smtp.timeout == 30.0 and cfg.notify.webhook.timeout == 10.0


def test_a_symlinked_config_resolves_against_its_own_folder(tmp_path: Path) -> None:
    """a/deploybot.toml -> ../b/deploybot.toml: a's paths are under a (the no-op stamp
    resolves them so too: tests/test_noop.py)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    target = write(tmp_path / "b", '[source]\nurl = "site"\n')
    (tmp_path / "a" / "deploybot.toml").symlink_to(target)
    cfg = load_config(tmp_path / "a" / "deploybot.toml")
    assert (cfg.source.url, cfg.state.dir) == (
        str(tmp_path / "a" / "site"),
        tmp_path / "a" / ".deploybot",
    )
    assert (cfg.path, cfg.base, cfg.raw_urls) == (target, tmp_path / "a", ("site", "site"))


def test_a_symlink_loop_in_a_remote_path_is_a_config_error(tmp_path: Path) -> None:
    """Not Path.resolve's RuntimeError (a traceback, exit 1): the run finds no repository."""
    from deploybot.pipeline import run

    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    path = write(tmp_path, '[source]\nurl = "loop/x"\n[publish]\nurl = "p"\n')
    cfg = load_config(path)
    assert cfg.raw_urls == ("loop/x", "p")
    with pytest.raises(ConfigError, match=r"source\.url: .*loop/x does not exist") as info:
        run.run_once(cfg)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("url", "remote"),
    [
        ("https://h/x.git", True),
        ("file:///x", True),
        ("git@h:x.git", True),
        ("h:x", True),
        ("u@h:/x", True),
        ("x", False),
        ("./h:x", False),
        ("/srv/a:b", False),
        ("a/b:c", False),
        (":x", False),
        ("~/site.git", False),
    ],
)
def test_remote_or_local_as_git_tells(url: str, remote: bool) -> None:
    """A colon before any slash names a host (git's connect.c, url_is_local_not_ssh)."""
    from deploybot.git.locations import is_remote_url

    assert is_remote_url(url) is remote
