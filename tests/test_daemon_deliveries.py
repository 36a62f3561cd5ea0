"""The delivery ids seen (deploybot.daemon.deliveries): replays, restarts, the bound."""

from __future__ import annotations

from pathlib import Path

from deploybot.daemon.deliveries import DeliveryStore


def test_a_replay_is_told_also_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "daemon" / "deliveries.sqlite"
    store = DeliveryStore(path)
    assert store.first_time("x-github-delivery:1") is True
    assert store.first_time("x-github-delivery:1") is False
    assert store.first_time("x-gitea-delivery:1") is True
    store.close()
    again = DeliveryStore(path)
    assert again.first_time("x-github-delivery:1") is False
    again.close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_the_store_is_bounded_and_keeps_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "deliveries.sqlite"
    store = DeliveryStore(path, cap=10)
    for n in range(250):
        assert store.first_time(f"id:{n}")
        assert len(store) <= 10 + 100  # pruned every 100 new ids
    store.close()
    store = DeliveryStore(path, cap=10)
    assert len(store) == 10
    assert not store.first_time("id:249") and not store.first_time("id:240")
    assert store.first_time("id:239")  # forgotten: the oldest went first
    store.close()
