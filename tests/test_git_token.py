"""An https token from the environment (issue 17): ``source.token_env``/``publish.token_env``
name the variable; the token goes as the password of HTTP basic auth (user
``x-access-token``, or the URL's own user), never into the config, a file under the state
folder, a log line or a traceback. Against real servers on 127.0.0.1 behind basic auth:
dulwich.web, and git's own ``git http-backend`` for pushes."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from deploybot.git.remote import TOKEN_USER, Remote
from deploybot.support.errors import EX_CONFIG
from deploybot.support.redact import redact_text
from tests.gitrepo import head
from tests.gitservers import BasicAuth, dulwich_app, http_backend_app, wsgi_server
from tests.smallsite import SmallSite

TOKEN = "ghp_TestToken0123456789abcdef"


def with_tokens(site: SmallSite, source: str | None = None, publish: str | None = None) -> None:
    """Add ``token_env`` keys to ``site``'s config (None: that key left out)."""
    text = site.config.read_text()
    if source is not None:
        text = text.replace("[publish]\n", f'token_env = "{source}"\n[publish]\n', 1)
    if publish is not None:
        text = text.replace("[publish]\n", f'[publish]\ntoken_env = "{publish}"\n', 1)
    site.config.write_text(text)


def nothing_holds_the_token(*folders: Path) -> None:
    """No file under ``folders`` holds the token, or its basic auth form."""
    encoded = base64.b64encode(f"{TOKEN_USER}:{TOKEN}".encode())
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                assert TOKEN.encode() not in data and encoded not in data, path


def test_the_source_is_fetched_with_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITE_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(dulwich_app(site.source), TOKEN_USER, TOKEN)
    with wsgi_server(guarded) as base:
        site.write_config(source_url=f"{base}/site.git")
        with_tokens(site, source="SITE_TOKEN")
        code, output = site.run()
    assert code == 0, output
    assert site.head() is not None
    assert set(guarded.credentials()) == {(TOKEN_USER, TOKEN)}  # sent with every request
    assert TOKEN not in site.config.read_text()
    nothing_holds_the_token(site.state)


def test_the_urls_own_user_goes_with_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gitea, GitLab and Bitbucket take the account name as the user with a token."""
    monkeypatch.setenv("SITE_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(dulwich_app(site.source), "site-bot", TOKEN)
    with wsgi_server(guarded) as base:
        url = base.replace("http://", "http://site-bot@") + "/site.git"
        site.write_config(source_url=url)
        with_tokens(site, source="SITE_TOKEN")
        code, output = site.run()
    assert code == 0, output
    assert set(guarded.credentials()) == {("site-bot", TOKEN)}


def test_a_push_to_github_pages_style_https_with_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue: an https push token could only be written into the URL in the config.
    Here publish.url is an https-style URL without credentials and publish.token_env
    names the token; git's own http-backend receives the push."""
    monkeypatch.setenv("PAGES_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(http_backend_app(tmp_path), TOKEN_USER, TOKEN)
    with wsgi_server(guarded) as base:
        site.write_config(publish_url=f"{base}/publish.git")
        with_tokens(site, publish="PAGES_TOKEN")
        code, output = site.run()
    assert code == 0, output
    assert head(site.publish, "asf-site") is not None
    assert set(guarded.credentials()) == {(TOKEN_USER, TOKEN)}
    nothing_holds_the_token(site.state, tmp_path / "publish.git")


def test_publish_url_unset_uses_the_source_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """publish.url unset is the source repository: its token is the source's."""
    monkeypatch.setenv("SITE_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(http_backend_app(tmp_path), TOKEN_USER, TOKEN)
    with wsgi_server(guarded) as base:
        site.write_config(source_url=f"{base}/source.git", publish_url=None)
        with_tokens(site, source="SITE_TOKEN")
        code, output = site.run()
    assert code == 0, output
    assert head(site.source, "asf-site") is not None
    assert head(site.source, "main") == site.first  # the source branch untouched


def doc_block(name: str) -> str:
    """The first TOML block of ``docs/<name>``."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / name).read_text(encoding="utf-8")
    return doc.partition("```toml\n")[2].partition("```")[0]


def test_the_docs_github_pages_config_fetches_a_private_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trial: the README put token_env under [publish] only, so the source fetch of a
    private repository got HTTP 401 (exit 78). As written there, with the URL pointing at
    a server here that wants the token for every request, fetch and push included."""
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(http_backend_app(tmp_path), TOKEN_USER, TOKEN)
    example = doc_block("github-pages.md")
    assert 'url = "https://github.com/you/site.git"' in example
    with wsgi_server(guarded) as base:
        site.config.write_text(
            example.replace("https://github.com/you/site.git", f"{base}/source.git")
            + '[state]\ndir = "state"\n'
        )
        code, output = site.run()
    assert code == 0, output
    assert head(site.source, "gh-pages") is not None
    assert head(site.source, "main") == site.first
    assert set(guarded.credentials()) == {(TOKEN_USER, TOKEN)}


def test_publish_token_env_alone_serves_both_sides_of_one_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """publish.url unset: one repository, so the token given for it under [publish]
    fetches the source too (it was used for the publish branch only: the source fetch
    got HTTP 401)."""
    monkeypatch.setenv("PAGES_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(http_backend_app(tmp_path), TOKEN_USER, TOKEN)
    with wsgi_server(guarded) as base:
        site.write_config(source_url=f"{base}/source.git", publish_url=None)
        with_tokens(site, publish="PAGES_TOKEN")
        code, output = site.run()
    assert code == 0, output
    assert head(site.source, "asf-site") is not None
    assert set(guarded.credentials()) == {(TOKEN_USER, TOKEN)}


@pytest.mark.parametrize("given", ["wrong", "none", "unset"])
def test_with_publish_url_unset_errors_name_the_keys_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """The trial: a refused token with publish.url unset named 'publish.url', a key not in
    the file (the publish branch is fetched first)."""
    if given == "wrong":
        monkeypatch.setenv("SITE_TOKEN", "wrong-token-0123456789")
    else:
        monkeypatch.delenv("SITE_TOKEN", raising=False)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(http_backend_app(tmp_path), TOKEN_USER, TOKEN)
    with wsgi_server(guarded) as base:
        url = f"{base}/source.git"
        site.write_config(source_url=url, publish_url=None)
        if given != "none":
            with_tokens(site, source="SITE_TOKEN")
        code, output = site.run()
    assert code == EX_CONFIG
    where = f"deploybot: error: {site.config}: 'source.url' {url}: "
    assert (
        output
        == {
            "wrong": f"{where}the server refused the token in SITE_TOKEN (HTTP 401): check the "
            "token, and that it may read the repository\n",
            "none": f"{where}the server wants credentials (HTTP 401): set source.token_env to the "
            "name of an environment variable holding an access token (sent as HTTP basic auth), "
            "or use an ssh:// URL with a key\n",
            "unset": f"deploybot: error: {site.config}: 'source.token_env': environment variable "
            "SITE_TOKEN is not set\n",
        }[given]
    )


@pytest.mark.parametrize("side", ["source", "publish"])
def test_an_unset_token_variable_is_a_config_error(tmp_path: Path, side: str) -> None:
    site = SmallSite(tmp_path)
    url = "http://127.0.0.1:9/site.git"  # never reached
    if side == "source":
        site.write_config(source_url=url)
        with_tokens(site, source="NO_SUCH_TOKEN_VARIABLE")
    else:
        site.write_config(publish_url=url)
        with_tokens(site, publish="NO_SUCH_TOKEN_VARIABLE")
    code, output = site.run()
    assert (code, output) == (
        EX_CONFIG,
        f"deploybot: error: {site.config}: '{side}.token_env': environment variable "
        "NO_SUCH_TOKEN_VARIABLE is not set\n",
    )


def test_the_token_is_never_in_a_log_line_or_a_traceback(tmp_path: Path) -> None:
    """``-v`` logs every library at DEBUG and prints the traceback of the error; a refused
    token (a wrong one) makes both."""
    site = SmallSite(tmp_path)
    guarded = BasicAuth(dulwich_app(site.source), TOKEN_USER, "the-right-token-xyz")
    with wsgi_server(guarded) as base:
        site.write_config(source_url=f"{base}/site.git")
        with_tokens(site, source="SITE_TOKEN")
        argv = [sys.executable, "-m", "deploybot", "-v", "run-once", "--config", str(site.config)]
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "SITE_TOKEN": TOKEN},
            check=False,
        )
    assert done.returncode == EX_CONFIG, done.stderr
    assert (
        "Traceback" in done.stderr and "the server refused the token in SITE_TOKEN" in done.stderr
    )
    encoded = base64.b64encode(f"{TOKEN_USER}:{TOKEN}".encode()).decode()
    assert TOKEN not in done.stderr + done.stdout and encoded not in done.stderr
    nothing_holds_the_token(site.state)


def test_credentials_register_the_token_as_a_secret() -> None:
    remote = Remote("https://git.example.org/site.git", token_env="T")
    assert remote.credentials({"T": "tok-1234567890"}) == (TOKEN_USER, "tok-1234567890")
    assert redact_text("said tok-1234567890 twice") == "said [...] twice"
    assert Remote("https://git.example.org/x.git").credentials({}) is None


def test_the_poller_reads_the_head_with_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deploybot serve`` polls each source's head in a ``heads`` job: with its token."""
    import io
    import json

    from deploybot.serve import build_process

    monkeypatch.setenv("SITE_TOKEN", TOKEN)
    site = SmallSite(tmp_path)
    guarded = BasicAuth(dulwich_app(site.source), TOKEN_USER, TOKEN)
    out = io.StringIO()
    before = socket.getdefaulttimeout()
    try:
        with wsgi_server(guarded) as base:
            url = f"{base}/site.git"
            sites = [["a", url, "main", "SITE_TOKEN", 30.0], ["b", url, "main", None, 30.0]]
            build_process.heads(sites, out)
    finally:
        socket.setdefaulttimeout(before)  # heads sets it for its own process
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0] == {"site": "a", "head": site.first}
    assert answers[1]["head"] is None
    assert "set source.token_env to the name of an environment variable" in answers[1]["error"]
