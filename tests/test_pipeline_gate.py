"""``run_once(before_build=...)``: the point where ``deploybot serve`` holds a run between
its fetch and its build (a worker slot), on a small real site."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.pipeline import run
from deploybot.support.errors import TemporaryError
from tests.smallsite import SmallSite


class Stop(TemporaryError):
    pass


def test_before_build_is_called_after_the_fetch_and_only_when_a_build_follows(
    tmp_path: Path,
) -> None:
    site = SmallSite(tmp_path)
    config = load_config(site.config)
    called: list[str] = []

    def refuse(commit: str) -> None:
        called.append(commit)
        raise Stop("not now")

    with pytest.raises(Stop):
        run.run_once(config, before_build=refuse)
    assert called == [site.first]
    assert site.head() is None and site.emails() == []  # nothing built, pushed or sent
    assert (site.state / "source.git").is_dir()  # but fetched
    result = run.run_once(config, before_build=called.append)
    assert result.status == "published" and called == [site.first, site.first]
    assert run.run_once(config, before_build=called.append).status == "up-to-date"
    assert len(called) == 2  # an up-to-date run needs no worker
