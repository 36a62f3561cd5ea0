"""Configuration that only the run can check (the repositories, the state folder): exit 78
naming the key the user wrote and the config file, before anything is fetched or written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import fullfs
from tests.gitrepo import head
from tests.smallsite import SmallSite


def test_a_missing_source_is_named_as_source_url(tmp_path: Path) -> None:
    """publish.url defaults to source.url: the error names the key the user wrote."""
    site = SmallSite(tmp_path)
    site.write_config(source_url="nope.git", publish_url=None)
    code, out = site.run()
    assert code == 78, out
    assert out.startswith(f"deploybot: error: {site.config}: source.url: "), out
    assert "nope.git does not exist" in out and "publish.url" not in out


def test_a_local_path_with_a_colon_is_a_local_path(tmp_path: Path) -> None:
    """dulwich reads '/a/my:site.git' as ssh to host '/a/my'; a local path stays local."""
    site = SmallSite(tmp_path)
    shutil.move(site.source, tmp_path / "my:site.git")
    site.write_config(source_url="./my:site.git")
    code, out = site.run()
    assert code == 0, out
    assert "published" in out
    assert site.emails() == [head(site.publish, "asf-site")]


@pytest.mark.skipif(fullfs.unavailable() is not None, reason=fullfs.unavailable() or "")
def test_a_read_only_state_dir_exits_78(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    assert site.run()[0] == 0
    [readonly] = fullfs.run_on_tmpfs(
        site.state, [{"readonly": True}, {"run": site.argv()}], keep=tmp_path / "after"
    )
    assert readonly.code == 78, readonly
    lines = readonly.err.strip().splitlines()
    assert lines == [f"deploybot: error: {site.config}: 'state.dir' {site.state} is not writable"]


@pytest.mark.skipif(fullfs.unavailable() is not None, reason=fullfs.unavailable() or "")
@pytest.mark.parametrize("exists", [True, False])
def test_an_mbox_on_a_read_only_file_system_exits_78(tmp_path: Path, exists: bool) -> None:
    """An mbox that cannot be written (here: on a read-only mount, which root cannot write
    either) is a configuration error at load, not a delivery retried forever (exit 75)."""
    site = SmallSite(tmp_path)
    site.config.write_text(site.config.read_text().replace('"commits.mbox"', '"mail/box"'))
    mbox = tmp_path / "mail" / "box"
    mbox.parent.mkdir()
    if exists:
        mbox.write_bytes(b"")
    [readonly] = fullfs.run_on_tmpfs(
        mbox.parent, [{"readonly": True}, {"run": site.argv()}], keep=tmp_path / "after"
    )
    assert readonly.code == 78, readonly
    what = f"{mbox} is not writable" if exists else f"{mbox.parent} is not writable"
    assert readonly.err.strip().splitlines() == [
        f"deploybot: error: {site.config}: 'notify.mbox' {what}"
    ]
    assert site.head() is None  # nothing was published
