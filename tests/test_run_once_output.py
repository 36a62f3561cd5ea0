"""What ``deploybot run-once`` prints from cron, where every byte on stderr is a mail.

A warning about the settings (``_config.yml``: no ``url``, a key the build cannot use) is
told when the settings are read anew: in a full build (the first, ``--full``, the
settings or the renderer changed; a changed ``_config.yml`` always builds in full), not
again in each incremental publish. Warnings about the source's content are told as before.
``-q``/``--quiet`` prints errors only.

Real ``python -m deploybot run-once`` processes (stdout and stderr apart) on a small site.
"""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

NO_URL = "warning: _config.yml: no 'url' set: feed links are not absolute\n"
BAD_POST = {"_posts/2023-01-05-bad.md": b"---\ntitle: Bad\ncategories: {a: 1}\n---\nX\n"}
BAD_POST_WARNING = (
    "warning: _posts/2023-01-05-bad.md:3: categories: a mapping is no category or tag name: "
    "left out\n"
)


def _post(n: int) -> dict[str, bytes]:
    return {f"_posts/2023-02-{n:02d}-p{n}.md": f"---\ntitle: P{n}\n---\n{n}\n".encode()}


def _stderr(site: SmallSite, *args: str) -> str:
    """Run ``run-once ARGS``; assert it published (or found nothing to do); its stderr."""
    result = site.run_process(*args)
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_a_missing_url_is_told_in_full_builds_not_in_every_publish(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    commit_files(site.source, {"_config.yml": b"title: Small\n"}, "No url")
    assert _stderr(site) == NO_URL  # the first build
    commit_files(site.source, _post(1))
    assert _stderr(site) == ""  # an incremental publish: the setting did not change
    commit_files(site.source, {"_config.yml": b"title: Smaller\n"})
    assert _stderr(site) == NO_URL  # the settings changed: read anew
    commit_files(site.source, _post(2))
    assert _stderr(site) == ""
    assert _stderr(site, "--full") == NO_URL


def test_content_warnings_are_told_as_before(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    commit_files(site.source, {"_config.yml": b"title: Small\n", **BAD_POST})
    assert _stderr(site) == NO_URL + BAD_POST_WARNING
    commit_files(site.source, _post(1))
    assert _stderr(site) == BAD_POST_WARNING


def test_a_source_without_config_file_says_so(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    commit_files(site.source, {"_config.yml": None}, "No config")
    assert _stderr(site) == (
        "warning: _config.yml: not in the source, so no 'url': feed links are not absolute\n"
    )
    commit_files(site.source, _post(1))
    assert _stderr(site) == ""


def test_quiet_prints_errors_only(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    commit_files(site.source, {"_config.yml": b"title: Small\n", **BAD_POST})
    for args in (("-q",), ("--quiet",), ("-q",)):  # publishes, nothing to do, the no-op
        result = site.run_process(*args)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), result
        assert site.emails() and site.emails()[-1] == site.head()
    commit_files(site.source, _post(1))
    site.config.write_text(site.config.read_text() + "[render]\nfeed_limit = -1\n")
    result = site.run_process("-q")
    assert result.returncode == 78
    assert result.stdout == "" and result.stderr.startswith("deploybot: error: ")
