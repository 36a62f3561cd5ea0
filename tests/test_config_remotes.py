"""The git remotes' keys checked at load (issue 17): no publishing onto the source branch of
the same repository in any spelling of it, no transport helpers (``ext::``, ``fd::``), and
the keys of each remote's credentials and bounds (``token_env``, ``timeout``,
``max_fetch_bytes``). Each is exit 78 naming the key and the file, for ``run-once``, for
``deploybot serve``'s site configs and for ``deploybot worker`` alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo

from deploybot.config.checks import check_not_onto_source
from deploybot.config.load import load_config
from deploybot.support.errors import EX_CONFIG, ConfigError
from deploybot.support.redact import redact_text
from tests.gitcli import run_git
from tests.gitrepo import commit_snapshot
from tests.smallsite import SmallSite


def write(folder: Path, text: str, name: str = "deploybot.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def onto(source: str, publish: str | None, branch: str = "main") -> str:
    """A config publishing ``branch`` of ``publish`` (None: unset) from ``branch`` of
    ``source``."""
    text = f'[source]\nurl = "{source}"\nbranch = "{branch}"\n[publish]\nbranch = "{branch}"\n'
    return text + (f'url = "{publish}"\n' if publish is not None else "")


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert info.value.exit_code == EX_CONFIG
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert redact_text(message) == message  # no secret of a URL in it
    return message


# --- publishing onto the source branch -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "publish"),
    [
        ("site.git", None),  # publish.url unset: the source repository (the case)
        ("site.git", "site.git"),
        ("site.git", "./site.git/"),
        ("site.git", "{tmp}/site.git"),
        ("{tmp}/site.git", "sub/../site.git"),
        ("site.git", "file://{tmp}/site.git"),
        ("file://{tmp}/site.git/", "site.git"),
        ("site.git", "link.git"),  # a symlink to site.git
        ("work", "work/.git"),  # a repository with a work tree, and its .git
        ("https://github.com/o/site.git", "https://GitHub.com/o/site/"),
        ("https://github.com/o/site", "https://github.com:443/o/site.git"),
        ("https://bot:TOKEN1234@github.com/o/site", "https://github.com/o/site"),
        ("https://github.com/o/site", "git@github.com:o/site.git"),
        ("http://git.example.org/site.git", "https://git.example.org/site.git"),
        ("ssh://git@git.example.org/srv/site.git", "git@git.example.org:/srv/site.git"),
        ("git@git.example.org:site.git", "ssh://git@git.example.org/~/site.git"),
        ("ssh://git@git.example.org:22/site.git", "ssh://git@git.example.org/site"),
        ("git://git.example.org/site.git", "git://git.example.org:9418/site"),
    ],
)
def test_publishing_onto_the_source_branch_is_refused(
    tmp_path: Path, source: str, publish: str | None
) -> None:
    """The issue: with publish.url unset and publish.branch = source.branch, run-once
    replaced the source with its build output. Every spelling of one repository counts."""
    commit_snapshot(tmp_path / "site.git", {"index.md": b"# Hi\n"})
    (tmp_path / "link.git").symlink_to(tmp_path / "site.git")
    (tmp_path / "sub").mkdir()
    run_git(tmp_path, "init", "-q", "work", name="A", email="a@example.org")
    text = onto(
        source.format(tmp=tmp_path), None if publish is None else publish.format(tmp=tmp_path)
    )
    message = refused(write(tmp_path, text))
    assert "'publish.branch'" in message and "'source.branch'" in message
    assert "same repository" in message and "'main'" in message
    assert ("'publish.url' is not set" in message) is (publish is None)
    assert "TOKEN1234" not in message


def test_two_worktrees_of_one_repository_are_one_repository(tmp_path: Path) -> None:
    """A linked worktree shares its refs/heads with the main one (git's commondir)."""
    run_git(tmp_path, "init", "-q", "-b", "main", "work", name="A", email="a@example.org")
    work = tmp_path / "work"
    run_git(work, "commit", "-q", "--allow-empty", "-m", "x", name="A", email="a@example.org")
    run_git(work, "worktree", "add", "-q", str(tmp_path / "other"), name="A", email="a@e.org")
    message = refused(write(tmp_path, onto("work", "other")))
    assert "same repository" in message


@pytest.mark.parametrize(
    ("source", "publish", "branches"),
    [
        ("site.git", None, ("main", "asf-site")),  # the defaults' shape
        ("site.git", "pub.git", ("main", "main")),
        ("https://github.com/o/site", "https://github.com/o/o.github.io", ("main", "main")),
        ("https://github.com/o/site", "https://git.example.org/o/site", ("main", "main")),
        ("git@github.com:o/site.git", "git@github.com:o/site.git", ("main", "gh-pages")),
    ],
)
def test_other_branches_or_repositories_are_accepted(
    tmp_path: Path, source: str, publish: str | None, branches: tuple[str, str]
) -> None:
    text = f'[source]\nurl = "{source}"\nbranch = "{branches[0]}"\n'
    text += f'[publish]\nbranch = "{branches[1]}"\n'
    text += f'url = "{publish}"\n' if publish else ""
    cfg = load_config(write(tmp_path, text))
    assert (cfg.source.branch, cfg.publish.branch) == branches


# --- transport helpers and schemes deploybot does not fetch ----------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ext::sh -c touch% /tmp/deploybot-pwned",
        "fd::0",
        "fd::3,4",
        "ext::ssh -o ProxyCommand=x host %S repo",
        "transport::https://git.example.org/site.git",
        "remote-helper.v2::x",
    ],
)
@pytest.mark.parametrize("key", ["source.url", "publish.url"])
def test_transport_helpers_are_refused(tmp_path: Path, url: str, key: str) -> None:
    """git runs ``<helper>::<address>`` through git-remote-<helper> (``ext::`` runs any
    command); dulwich read ``ext::sh -c ...`` as scp-like ssh to the host ``ext``."""
    text = f'[source]\nurl = "{url if key == "source.url" else "s"}"\n'
    if key == "publish.url":
        text += f'[publish]\nurl = "{url}"\n'
    message = refused(write(tmp_path, text))
    helper = url.partition("::")[0]
    assert f"'{key}' is a transport helper address ({helper}::)" in message
    assert not Path("/tmp/deploybot-pwned").exists()


@pytest.mark.parametrize(
    "url",
    ["ftp://h/site.git", "rsync://h/site.git", "s3://bucket/site.git", "persistent-https://h/x"],
)
def test_schemes_deploybot_does_not_fetch_are_refused(tmp_path: Path, url: str) -> None:
    message = refused(write(tmp_path, f'[source]\nurl = "s"\n[publish]\nurl = "{url}"\n'))
    assert "'publish.url' must be a local path" in message


# --- the keys of credentials and bounds ------------------------------------------------------

_S = '[source]\nurl = "https://git.example.org/site.git"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_S + 'token_env = "NOT A NAME"\n', "'source.token_env' must be an environment variable"),
        (
            '[source]\nurl = "git@h:site.git"\ntoken_env = "TOKEN"\n',
            "'source.token_env' is for http(s):// URLs",
        ),
        (
            '[source]\nurl = "s"\n[publish]\nurl = "ssh://h/p.git"\ntoken_env = "TOKEN"\n',
            "'publish.token_env' is for http(s):// URLs",
        ),
        (
            '[source]\nurl = "https://u:pw@h/site.git"\ntoken_env = "TOKEN"\n',
            "'source.token_env' names a token and 'source.url' holds a password",
        ),
        (_S + "timeout = 0\n", "'source.timeout' must be more than 0"),
        (_S + "timeout = inf\n", "'source.timeout' must be more than 0"),
        (_S + '[publish]\nbranch = "p"\ntimeout = -1\n', "'publish.timeout' must be more than 0"),
        (_S + "max_fetch_bytes = 0\n", "'source.max_fetch_bytes' must be 1 or more"),
        (_S + "[publish]\nmax_fetch_bytes = 10000000000000\n", "'publish.max_fetch_bytes' must"),
    ],
)
def test_credential_and_bound_keys_are_checked(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in refused(write(tmp_path, text))


def test_remote_keys_defaults_and_publish_inherits_the_source_token(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, _S + 'token_env = "SITE_TOKEN"\n'))
    assert (cfg.source.timeout, cfg.source.max_fetch_bytes) == (600.0, 2**31)
    assert (cfg.publish.timeout, cfg.publish.max_fetch_bytes) == (600.0, 2**31)
    # publish.url unset: the source repository, with its token
    assert cfg.publish.url == cfg.source.url and cfg.publish.token_env == "SITE_TOKEN"
    remote = cfg.publish.remote()
    assert (remote.url, remote.key, remote.token_env) == (
        cfg.source.url,
        "source.url",  # the key the file gives it with
        "SITE_TOKEN",
    )
    assert (remote.key_of("token_env"), remote.key_of("timeout")) == (
        "source.token_env",
        "publish.timeout",
    )
    other = _S + 'token_env = "SITE_TOKEN"\n[publish]\nurl = "https://h/pub.git"\ntimeout = 5\n'
    cfg = load_config(write(tmp_path, other))
    assert cfg.publish.token_env is None and cfg.publish.timeout == 5.0
    assert cfg.source.remote().key == "source.url"


@pytest.mark.parametrize(
    ("source", "publish", "expected"),
    [
        # publish.url unset: one repository, so a token given on one side serves both
        (None, "T_PUB", (("T_PUB", "publish.token_env"), ("T_PUB", "publish.token_env"))),
        ("T_SRC", None, (("T_SRC", "source.token_env"), ("T_SRC", "source.token_env"))),
        ("T_SRC", "T_PUB", (("T_SRC", "source.token_env"), ("T_PUB", "publish.token_env"))),
        (None, None, ((None, "source.token_env"), (None, "source.token_env"))),
    ],
)
def test_with_publish_url_unset_either_token_serves_both_sides(
    tmp_path: Path,
    source: str | None,
    publish: str | None,
    expected: tuple[tuple[str | None, str], tuple[str | None, str]],
) -> None:
    text = _S + (f'token_env = "{source}"\n' if source else "") + "[publish]\n"
    text += f'token_env = "{publish}"\n' if publish else ""
    cfg = load_config(write(tmp_path, text))
    sides = (cfg.source.remote(), cfg.publish.remote())
    assert tuple((r.token_env, r.key_of("token_env")) for r in sides) == expected
    assert [r.key for r in sides] == ["source.url", "source.url"]


# --- serve and worker load sites with the same checks ----------------------------------------


def test_serve_and_worker_refuse_a_site_publishing_onto_its_source(tmp_path: Path) -> None:
    from deploybot.serve import build_process
    from deploybot.serve.settings import load_settings

    commit_snapshot(tmp_path / "site.git", {"index.md": b"# Hi\n"})
    site = write(tmp_path, onto("site.git", None), "site.toml")
    daemon = write(tmp_path, '[daemon]\nsites = "site*.toml"\n', "daemon.toml")
    for secrets in (True, False):  # serve reads the webhook secrets, worker does not
        with pytest.raises(ConfigError, match=r"'publish\.branch' .*same repository") as info:
            load_settings([daemon], {}, secrets=secrets)
        assert str(info.value).startswith(f"{site}: ")
    with pytest.raises(ConfigError, match=r"'publish\.branch' .*same repository"):
        build_process.run_job("build", site)
    helper = write(tmp_path, '[source]\nurl = "ext::sh -c x"\n', "site2.toml")
    (tmp_path / "site.toml").unlink()
    with pytest.raises(ConfigError, match=r"'source\.url' is a transport helper") as info:
        load_settings([daemon], {}, secrets=False)
    assert str(info.value).startswith(f"{helper}: ")


# --- branch names, not refnames ----------------------------------------------------------------


@pytest.mark.parametrize("key", ["source.branch", "publish.branch"])
@pytest.mark.parametrize(
    ("given", "name"),
    [("refs/heads/gh-pages", "gh-pages"), ("refs/heads/main", "main"), ("refs/tags/v1", None)],
)
def test_a_refname_for_a_branch_is_refused(
    tmp_path: Path, key: str, given: str, name: str | None
) -> None:
    """``refs/heads/gh-pages`` is a valid branch name to git (the branch
    ``refs/heads/refs/heads/gh-pages``), where GitHub Pages never looks."""
    section = key.partition(".")[0]
    text = '[source]\nurl = "s"\n[publish]\n'.replace(
        f"[{section}]\n", f'[{section}]\nbranch = "{given}"\n'
    )
    message = refused(write(tmp_path, text))
    if name is not None:
        assert message == (
            f"{tmp_path / 'deploybot.toml'}: '{key}' must be a branch name, not a refname: "
            f"give the branch name, {name}, not the refname {given}"
        )
    else:
        assert f"'{key}' must be a branch name, not a refname" in message


def test_a_refname_for_the_publish_branch_never_reaches_the_source_repository(
    tmp_path: Path,
) -> None:
    """The trial: publish.url unset and ``branch = "refs/heads/main"`` published to
    ``refs/heads/refs/heads/main`` of the source repository, exit 0."""
    site = SmallSite(tmp_path)
    site.write_config(publish_url=None)
    site.config.write_text(
        site.config.read_text().replace("[publish]\n", '[publish]\nbranch = "refs/heads/main"\n')
    )
    code, output = site.run()
    assert code == EX_CONFIG, output
    assert output == (
        f"deploybot: error: {site.config}: 'publish.branch' must be a branch name, not a "
        "refname: give the branch name, main, not the refname refs/heads/main\n"
    )
    with Repo(str(site.source)) as repo:
        assert sorted(repo.refs.keys()) == [b"HEAD", b"refs/heads/main"]


@pytest.mark.parametrize(
    ("source", "publish"),
    [("main", "refs/heads/main"), ("refs/heads/main", "main"), ("main", "/main"),
     ("release//1", "release/1")],
)  # fmt: skip
def test_the_same_branch_is_seen_after_git_normalises_the_names(
    tmp_path: Path, source: str, publish: str
) -> None:
    """The check compares what git would name (``check-ref-format --normalize``, and a
    refname under refs/heads/ as its branch), whoever calls it."""
    with pytest.raises(ConfigError, match="same repository"):
        check_not_onto_source(("s.git", source), ("s.git", publish), False, tmp_path / "c.toml")


@pytest.mark.parametrize(
    ("source", "publish"),
    [
        ("https://github.com/o//site", "https://github.com/o/site"),
        ("https://github.com//o/site.git", "https://github.com/o/site/"),
        ("git@github.com:o//site.git", "https://github.com/o/site"),
        ("ssh://git@git.example.org//srv//site.git", "git@git.example.org:/srv/site.git"),
    ],
)
def test_repeated_slashes_name_the_same_repository(
    tmp_path: Path, source: str, publish: str
) -> None:
    """Forges collapse repeated slashes of a path (``github.com/o//r`` is ``o/r``)."""
    message = refused(write(tmp_path, onto(source, publish)))
    assert "same repository" in message
