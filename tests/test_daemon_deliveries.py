"""The delivery ids seen (deploybot.serve.deliveries): replays per site, restarts, the
bound, a store written by the first version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from deploybot.serve.deliveries import DeliveryStore


def test_a_replay_is_told_also_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "daemon" / "deliveries.sqlite"
    store = DeliveryStore(path)
    assert store.first_time("a", "x-github-delivery:1") is True
    assert store.first_time("a", "x-github-delivery:1") is False
    assert store.first_time("a", "x-gitea-delivery:1") is True
    store.close()
    again = DeliveryStore(path)
    assert again.first_time("a", "x-github-delivery:1") is False
    again.close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_one_id_is_new_to_each_site(tmp_path: Path) -> None:
    """GitLab sends one X-Gitlab-Event-UUID to every hook of one event: each site's hook
    gets its first delivery of it."""
    store = DeliveryStore(tmp_path / "deliveries.sqlite")
    uuid = "x-gitlab-event-uuid:6c0ef4b8-0d8f-4a2b-9a4c-3f5d3e1c2b1a"
    assert store.first_time("a", uuid) is True
    assert store.first_time("b", uuid) is True
    assert store.first_time("a", uuid) is False and store.first_time("b", uuid) is False
    store.close()


def test_the_store_is_bounded_and_keeps_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "deliveries.sqlite"
    store = DeliveryStore(path, cap=10)
    for n in range(250):
        assert store.first_time("a" if n % 2 else "b", f"id:{n}")
        assert len(store) <= 10 + 100  # pruned every 100 new ids
    store.close()
    store = DeliveryStore(path, cap=10)
    assert len(store) == 10
    assert not store.first_time("a", "id:249") and not store.first_time("b", "id:240")
    assert store.first_time("a", "id:239")  # forgotten: the oldest went first
    store.close()


def test_a_store_of_the_first_version_is_read(tmp_path: Path) -> None:
    """The first version keyed ids alone (``seen(id, at)``), not knowing the site: such an
    id counts as seen by every site, so no replay builds after the upgrade."""
    path = tmp_path / "deliveries.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, at REAL NOT NULL)")
        db.executemany("INSERT INTO seen VALUES (?, ?)", [(f"old:{n}", n) for n in range(20)])
    db.close()
    store = DeliveryStore(path, cap=25)
    assert store.first_time("a", "old:3") is False and store.first_time("b", "old:19") is False
    for n in range(10):
        assert store.first_time("a", f"new:{n}") is True
    store.close()
    store = DeliveryStore(path, cap=25)
    assert len(store) == 25  # the oldest 5 of the first version's ids went first
    assert store.first_time("b", "old:5") is False and store.first_time("a", "old:4") is True
    assert store.first_time("b", "new:0") is True and store.first_time("a", "new:0") is False
    store.close()
