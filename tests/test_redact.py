"""Secrets never printed: credentials in URLs, the webhook URL's path, in error lines, in
-v logs and tracebacks; the state folder private (0700 folders, 0600 files)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.gitrepo import head
from tests.servers import free_port
from tests.smallsite import SmallSite
from tests.test_notify_webhook import Hook

TOKEN = "tok3n-s3cret"


def _run(site: SmallSite, *args: str) -> tuple[int, str]:
    done = site.run_process(*args)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("key", ["source", "publish"])
def test_a_token_in_a_url_is_never_printed(tmp_path: Path, key: str) -> None:
    port = free_port()  # nothing listens there: the fetch fails
    url = f"http://deploy:{TOKEN}@127.0.0.1:{port}/site.git"
    site = SmallSite(tmp_path)
    if key == "source":
        site.write_config(source_url=url)
    else:
        site.write_config(publish_url=url)
    for verbose in (False, True):
        done = _verbose(site) if verbose else site.run_process()
        assert done.returncode == 75, done
        output = done.stdout + done.stderr
        assert TOKEN not in output and "deploy:" not in output, output
        assert f"cannot fetch from http://127.0.0.1:{port}/site.git: " in output
        if not verbose:
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def _verbose(site: SmallSite):  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    argv = [sys.executable, "-m", "deploybot", "-v", "run-once", "--config", str(site.config)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_a_bad_url_in_the_config_is_named_without_its_token(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    site.write_config(source_url=f"ftp://deploy:{TOKEN}@example.org/site.git")
    code, out = _run(site)
    assert code == 78, out
    assert "'source.url'" in out and TOKEN not in out, out


def test_verbose_never_prints_the_webhook_path(tmp_path: Path) -> None:
    hook = Hook()
    try:
        site = SmallSite(tmp_path)
        site.write_config(extra=f'[notify.webhook]\nurl = "{hook.url()}"\n')
        done = _verbose(site)
    finally:
        hook.stop()
    assert done.returncode == 0, done.stderr
    assert len(hook.received) == 1  # it was posted, to the secret path
    assert "s3cret-token" not in done.stdout + done.stderr
    assert "INFO deploybot.pipeline: " in done.stderr  # -v did log


def test_the_log_filter_masks_what_any_library_logs() -> None:
    """Defence in depth: even a library's debug line (urllib3 logs each request's path)
    goes through the filter on the handler."""
    import io
    import logging

    from deploybot.support.redact import RedactingFilter, redact_url, register_url_secrets

    register_url_secrets("https://chat.example.org/hooks/T000/B000/XXXXsecret?token=abc")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("urllib3.connectionpool.test")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug('%s "POST %s HTTP/1.1" 200', "https://chat.example.org:443",
                     "/hooks/T000/B000/XXXXsecret?token=abc")  # fmt: skip
        logger.debug("fetching https://bot:%s@git.example.org/site.git", TOKEN)
    finally:
        logger.removeHandler(handler)
    logged = stream.getvalue()
    assert logged == (
        'https://chat.example.org:443 "POST [...] HTTP/1.1" 200\n'
        "fetching https://git.example.org/site.git\n"
    )
    assert redact_url(f"https://bot:{TOKEN}@h/x.git") == "https://h/x.git"
    assert redact_url("git@github.com:org/site.git") == "git@github.com:org/site.git"


def test_state_folder_is_private_and_the_publish_repo_is_not(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        site = SmallSite(tmp_path)
        site.mbox.write_bytes(b"")
        site.mbox.chmod(0o644)
        assert site.run()[0] == 0
        (tmp_path / "other").mkdir()
        other = SmallSite(tmp_path / "other")  # an mbox deploybot creates
        assert other.run()[0] == 0
    finally:
        os.umask(old)
    state = site.state
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    for folder in ("source.git", "publish.git", "cache", "outbox", "outbox/sent", "notify"):
        assert stat.S_IMODE((state / folder).stat().st_mode) == 0o700, folder
    ours = [p for p in state.iterdir() if p.is_file()]  # the lock, noop.stamp...
    assert {"lock", "noop.stamp"} <= {p.name for p in ours}
    ours += [*(state / "notify").iterdir(), *(state / "cache").iterdir()]
    ours += [p for p in (state / "outbox").rglob("*") if p.is_file()]
    assert len(ours) >= 5
    for path in ours:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # The user's mbox keeps its mode; one deploybot creates is private.
    assert stat.S_IMODE(site.mbox.stat().st_mode) == 0o644
    assert stat.S_IMODE(other.mbox.stat().st_mode) == 0o600
    # The publish repository (served by a web server) keeps git's modes for what the push wrote.
    build = head(site.publish, "asf-site") or ""
    obj = site.publish / "objects" / build[:2] / build[2:]
    packs = list((site.publish / "objects" / "pack").glob("*.pack"))
    written = obj if obj.exists() else packs[0]
    assert stat.S_IMODE(written.stat().st_mode) & 0o044 == 0o044


# --- query strings, fragments and scp-like passwords (every value, every form) ------------


@pytest.mark.parametrize(
    ("tail", "shown"),
    [
        ("?access_token=QTOK3", "?access_token=[...]"),
        ("?private_token=QTOK3&ref=main", "?private_token=[...]&ref=[...]"),
        ("?QTOK3", "?[...]"),
        ("#QTOK3", "#[...]"),
        ("?sig=QTOK3#QTOK3", "?sig=[...]#[...]"),
    ],
)
def test_a_token_in_a_query_or_fragment_is_never_printed(
    tmp_path: Path, tail: str, shown: str
) -> None:
    port = free_port()  # nothing listens there: the fetch fails
    site = SmallSite(tmp_path)
    site.write_config(source_url=f"http://127.0.0.1:{port}/x.git{tail}")
    for done in (site.run_process(), _verbose(site)):
        assert done.returncode == 75, done
        output = done.stdout + done.stderr
        assert "QTOK3" not in output, output
        assert f"cannot fetch from http://127.0.0.1:{port}/x.git{shown}: " in output
    assert len(site.run_process().stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:QTOK3@h/x.git?a=QTOK3&b=&c#QTOK3", "https://h/x.git?a=[...]&b=&[...]#[...]"),
        ("https://QTOK3@h/x.git", "https://h/x.git"),
        ("https://h/x.git?", "https://h/x.git?"),
        ("https://h/x.git#", "https://h/x.git#"),
        ("git:QTOK3@127.0.0.1:x.git", "127.0.0.1:x.git"),
        ("deploy:QTOK3@host:org/site.git", "host:org/site.git"),
        ("deploy:QT/OK3@host:org/site.git", "host:org/site.git"),
        ("git@github.com:org/site.git", "git@github.com:org/site.git"),
        ("/srv/a:b@c/site.git", "/srv/a:b@c/site.git"),
        ("site.git", "site.git"),
        # an ssh URL's user is an account name: only its password goes (the trial showed
        # ssh://127.0.0.1:2222/... for root@); over http(s) the user alone may be a token
        ("ssh://root@127.0.0.1:2222/srv/site.git", "ssh://root@127.0.0.1:2222/srv/site.git"),
        ("ssh://root:QTOK3@h/x.git", "ssh://root@h/x.git"),
        ("SSH://git@h/x.git", "SSH://git@h/x.git"),
        ("git+ssh://git@h/x.git", "git+ssh://git@h/x.git"),
        ("ssh+git://git:QTOK3@h/x.git", "ssh+git://git@h/x.git"),
        ("ssh://:QTOK3@h/x.git", "ssh://h/x.git"),
        ("http://QTOK3@h/x.git", "http://h/x.git"),
        ("git://QTOK3@h/x.git", "git://h/x.git"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    from deploybot.support.redact import redact_url

    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "cannot fetch from https://h/x.git?access_token=QTOK3: refused",
            "cannot fetch from https://h/x.git?access_token=[...]: refused",
        ),
        ("(see https://h/x?k=QTOK3&sig=QTOK3)", "(see https://h/x?k=[...]&sig=[...])"),
        ("'https://h/x#QTOK3', 1", "'https://h/x#[...]', 1"),
        ("from git:QTOK3@127.0.0.1:x.git: no", "from 127.0.0.1:x.git: no"),
        ("ssh deploy:QTOK3@host:org/site.git", "ssh host:org/site.git"),
        ("from ssh://root@h:2222/x.git: no", "from ssh://root@h:2222/x.git: no"),
        ("from ssh://root:QTOK3@h:2222/x.git: no", "from ssh://root@h:2222/x.git: no"),
        ("to https://QTOK3@h/x.git and ssh://git@h/y", "to https://h/x.git and ssh://git@h/y"),
        ("at 12:30 the mail to a@b.org: ok", "at 12:30 the mail to a@b.org: ok"),
        ('File "/x.py", line 5, in f: a?b=c', 'File "/x.py", line 5, in f: a?b=c'),
    ],
)
def test_redact_text(text: str, shown: str) -> None:
    from deploybot.support.redact import redact_text

    assert redact_text(text) == shown


@pytest.mark.parametrize(
    "shape",
    ["a" * 400_000, "a://" + "b" * 400_000, "1" + "a1" * 200_000, "x " * 200_000],
    ids=["letters", "one-scheme", "digits-and-letters", "words"],
)
def test_redact_text_ends_on_long_text(shape: str) -> None:
    """Every log line passes through redact_text: a payload's long ref or a server's long
    reply must not stall the process (the scheme search started at every letter: 100 KB of
    letters took 35 s, 400 KB would take about 10 minutes). A secret after it is masked."""
    import subprocess
    import sys

    code = (
        "import sys; from deploybot.support.redact import redact_text; "
        "text = sys.stdin.read() + ' https://u:QTOK3@h/x?k=QTOK3'; "
        "print(redact_text(text)[-20:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=shape, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == " https://h/x?k=[...]\n"


def test_a_token_in_the_repository_url_is_not_in_the_email(tmp_path: Path) -> None:
    """notify.repository_url names the repository in the subject (``[site]``) and the
    email's intro: neither shows its query or fragment."""
    site = SmallSite(tmp_path)
    url = "https://git.example.org/site.git?access_token=QTOK3#QTOK3"
    text = site.config.read_text().replace("[notify]\n", f'[notify]\nrepository_url = "{url}"\n')
    site.config.write_text(text)
    assert site.run()[0] == 0
    mail = site.mbox.read_text()
    assert "QTOK3" not in mail
    assert "Subject: [site] " in mail
    assert "https://git.example.org/site.git?access_token=[...]#[...]" in mail


def test_the_secrets_of_a_git_remote_are_masked_in_any_shape() -> None:
    """A library may print only a URL's path and query (urllib3: ``with url: /x?...``);
    the remote's secrets are registered when it is used, so those go too. Short query
    values (``ref=main``) are left to the URL rules."""
    from deploybot.support.redact import redact_text, register_url_credentials

    register_url_credentials("https://h/x.git?access_token=Q-LONG-TOKEN-1&ref=main#FRAG-TOKEN-2")
    register_url_credentials("deploy:SCP-PASSWORD-3@host:org/site.git")
    said = "with url: /x.git?access_token=Q-LONG-TOKEN-1 (FRAG-TOKEN-2, SCP-PASSWORD-3) main"
    assert redact_text(said) == "with url: /x.git?access_token=[...] ([...], [...]) main"


def test_an_unexpected_error_is_reported_without_secrets() -> None:
    """A bug (any exception that is no DeploybotError) still ends the command with exit 1
    and Python's traceback, but through the same redaction as every other output."""
    import click
    from click.testing import CliRunner

    from deploybot.cli.commands import _handle_errors

    @click.command()
    @_handle_errors
    def crash() -> None:
        raise ValueError(f"cannot use https://deploy:{TOKEN}@h/x.git?access_token=QTOK3")

    result = CliRunner().invoke(crash, [])
    assert result.exit_code == 1
    assert "QTOK3" not in result.output and TOKEN not in result.output, result.output
    assert result.output.splitlines()[0] == "Traceback (most recent call last):"
    assert result.output.rstrip().endswith(
        "ValueError: cannot use https://h/x.git?access_token=[...]"
    ), result.output
