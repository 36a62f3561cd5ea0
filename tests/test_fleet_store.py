"""The fleet's Redis transactions, called directly against a real redis-server: coalescing,
the lease, expiry and recovery, affinity, backoff, lost jobs, and the fenced store of the
shared state directory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rq import Queue

from deploybot.config.schema import QueueConfig
from deploybot.serve.fleet import keys
from deploybot.serve.fleet.shared import LeaseLostError, SharedState
from deploybot.serve.fleet.store import BUILD, FleetStore, Outcome, Want
from deploybot.serve.fleet.sweep import Sweeper
from tests.fleetproc import lease_log
from tests.redisproc import RedisServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as running:
        yield running


def _store(server: RedisServer, **queue: object) -> FleetStore:
    config = QueueConfig(backend="redis", url=server.url, **queue)  # type: ignore[arg-type]
    store = FleetStore(keys.connect(config, server.folder / "daemon.toml"), config)
    store.register({"s": "deploybot"})
    return store


def _want(commit: str, why: str = "push") -> Want:
    return Want(BUILD, commit, why, time.time())


def _take(store: FleetStore, job: str, queue: str = "deploybot") -> str:
    """What a worker's RQ loop does before calling the job: take it from its queue."""
    Queue(queue, connection=store.r).remove(job)
    return job


def _queued(store: FleetStore, queue: str = "deploybot") -> list[str]:
    return Queue(queue, connection=store.r).get_job_ids()


def test_many_triggers_make_one_job_and_keep_the_newest_commit(server: RedisServer) -> None:
    store = _store(server)
    jobs = [store.trigger("s", _want(f"{n:040x}")) for n in range(50)]
    assert [j for j in jobs if j] == jobs[:1]  # one job, made by the first trigger
    assert _queued(store) == jobs[:1]
    pending = Want.loads(store.r.get(keys.pending("s")))
    assert pending is not None and pending.commit == f"{49:040x}"


def test_a_busy_lease_leaves_the_trigger_pending_for_the_holder(server: RedisServer) -> None:
    store = _store(server)
    first = store.trigger("s", _want("a" * 40))
    assert first is not None
    got = store.acquire("s", _take(store, first), "w1/t1", "w1")
    assert got.state == "acquired" and got.want is not None and got.want.commit == "a" * 40
    second = store.trigger("s", _want("b" * 40))  # a push during the build: a new job
    assert second is not None
    busy = store.acquire("s", _take(store, second), "w2/t2", "w2")
    assert busy.state == "busy" and busy.holder == "w1/t1"
    assert Want.loads(store.r.get(keys.pending("s"))) is not None  # not dropped
    store.r.set(keys.alive("w1"), "1")
    assert store.release("s", "w1/t1", "w1", Outcome("published", source_commit="a" * 40))
    [follow] = _queued(store, "deploybot@w1")  # the holder queued the next one, for itself
    again = store.acquire("s", _take(store, follow, "deploybot@w1"), "w1/t3", "w1")
    assert again.state == "acquired" and again.want is not None
    assert again.want.commit == "b" * 40
    events = [(e["event"], e["worker"]) for e in lease_log(store.r)]
    assert events == [("acquired", "w1"), ("released", "w1"), ("acquired", "w1")]


def test_an_expired_lease_is_built_again_and_its_holder_can_no_longer_write(
    server: RedisServer, tmp_path: Path
) -> None:
    store = _store(server)
    job = store.trigger("s", _want("a" * 40))
    assert job is not None
    assert store.acquire("s", _take(store, job), "w1/t1", "w1").state == "acquired"
    shared = SharedState(store.r, "s", "w1/t1", tmp_path / "state")
    shared.restore()
    store.r.delete(keys.lease("s"))  # w1 stalled past lease_ttl: its lease expired
    assert Sweeper(store).sweep(force=True)
    assert [e["event"] for e in lease_log(store.r)] == ["acquired", "expired"]
    [again] = _queued(store)  # the shared queue, not the stalled worker's own
    pending = Want.loads(store.r.get(keys.pending("s")))
    assert pending is not None and pending.commit == "a" * 40
    assert store.acquire("s", _take(store, again), "w2/t2", "w2").state == "acquired"
    (tmp_path / "state" / "notify").mkdir(parents=True)
    (tmp_path / "state" / "notify" / "last-published.json").write_text("{}")
    with pytest.raises(LeaseLostError):
        shared.save("before-push")
    assert store.r.hgetall(keys.files("s")) == {}
    assert not store.release("s", "w1/t1", "w1", Outcome("published"))
    assert store.holds("s", "w2/t2")


def test_shared_files_move_with_the_lease(server: RedisServer, tmp_path: Path) -> None:
    store = _store(server)
    one, two = tmp_path / "one", tmp_path / "two"
    (one / "outbox" / "sent").mkdir(parents=True)
    (one / "notify").mkdir()
    (one / "notify" / "last-emailed.json").write_text('{"r": 1}')
    (one / "outbox" / "k.eml").write_bytes(b"message")
    (one / "outbox" / "k.json").write_text('{"state": "sending"}')
    (one / "outbox" / ".k.eml.9.tmp").write_bytes(b"half")  # a write in progress: not shared
    (one / "outbox" / "sent" / "old.eml").write_bytes(b"delivered")
    (one / "outbox" / "sent" / "old.json").write_text('{"state": "sent"}')
    store.r.set(keys.lease("s"), "w1/t")
    first = SharedState(store.r, "s", "w1/t", one)
    first.restore()
    first.save()
    (two / "outbox").mkdir(parents=True)
    (two / "outbox" / "stale.eml").write_bytes(b"sent by the fleet long ago")
    store.r.set(keys.lease("s"), "w2/t")
    second = SharedState(store.r, "s", "w2/t", two)
    second.restore()
    assert (two / "notify" / "last-emailed.json").read_text() == '{"r": 1}'
    assert (two / "outbox" / "k.eml").read_bytes() == b"message"
    assert (two / "outbox" / "k.json").read_text() == '{"state": "sending"}'
    assert not (two / "outbox" / "stale.eml").exists()
    assert not (two / "outbox" / ".k.eml.9.tmp").exists()
    assert (two / "outbox" / "sent" / "old.eml").read_bytes() == b""  # it exists: that counts
    (two / "outbox" / "k.eml").unlink()
    second.save()
    # outbox/k.eml, gone from the second worker's outbox, is gone from the record too.
    assert sorted(store.r.hkeys(keys.files("s"))) == [
        b".present", b"notify/last-emailed.json", b"outbox/k.json", b"outbox/sent/old.eml",
        b"outbox/sent/old.json",
    ]  # fmt: skip


def test_a_failure_backs_off_unless_a_new_commit_comes(server: RedisServer) -> None:
    store = _store(server)
    job = store.trigger("s", _want("a" * 40))
    assert job is not None
    assert store.acquire("s", _take(store, job), "w1/t", "w1").state == "acquired"
    failed = Outcome("failed", source_commit="a" * 40, error="network", temporary=True)
    assert store.release("s", "w1/t", "w1", failed)
    assert _queued(store) == []  # retried in 60 s, not now
    retry = store.r.zscore(keys.DELAYED, "s")
    assert retry is not None and 55 < retry - time.time() <= 60
    assert store.trigger("s", _want("a" * 40, "poll")) is None  # the same commit waits
    assert store.trigger("s", _want("b" * 40, "push")) is not None  # a new one goes now


def test_a_job_lost_before_it_took_the_lease_is_replaced(server: RedisServer) -> None:
    store = _store(server, lease_ttl=1.0, affinity_timeout=1.0)
    job = store.trigger("s", _want("a" * 40))
    assert job is not None
    store.r.delete(f"rq:job:{job}")  # e.g. `rq empty`, or a worker that died holding it
    Queue("deploybot", connection=store.r).empty()
    Sweeper(store).queued_jobs(time.time() + 2)
    [replacement] = _queued(store)
    assert replacement != job
    assert store.acquire("s", replacement, "w1/t", "w1").state == "acquired"


def test_a_job_for_a_worker_gone_moves_to_the_shared_queue(server: RedisServer) -> None:
    store = _store(server, affinity_timeout=30.0, lease_ttl=1.0)
    store.r.set(keys.alive("w1"), "1")
    store.r.hset(keys.site("s"), "worker", "w1")
    job = store.trigger("s", _want("a" * 40))
    assert _queued(store, "deploybot@w1") == [job]
    Sweeper(store).queued_jobs(time.time() + 2)
    assert _queued(store, "deploybot@w1") == [job]  # w1 runs: it may still come
    store.r.delete(keys.alive("w1"))
    Sweeper(store).queued_jobs(time.time() + 2)
    assert _queued(store, "deploybot@w1") == []
    assert _queued(store) == [job]


def test_a_trigger_naming_the_commit_being_built_needs_no_second_build(
    server: RedisServer,
) -> None:
    store = _store(server)
    job = store.trigger("s", _want("a" * 40))
    assert job is not None
    assert store.acquire("s", _take(store, job), "w1/t", "w1").state == "acquired"
    again = store.trigger("s", _want("a" * 40, "poll"))  # the commit the build fetched
    assert again is not None
    assert store.release("s", "w1/t", "w1", Outcome("published", source_commit="a" * 40))
    assert store.r.get(keys.pending("s")) is None
    assert store.acquire("s", _take(store, again), "w2/t", "w2").state == "idle"


def test_sent_messages_shared_are_the_newest_and_those_of_a_waiting_batch(
    tmp_path: Path,
) -> None:
    import os

    from deploybot.serve.fleet.shared import SENT_KEPT, read_files

    sent = tmp_path / "outbox" / "sent"
    sent.mkdir(parents=True)
    for n in range(SENT_KEPT + 10):
        (sent / f"k{n:02d}.eml").write_bytes(b"x" * 1000)
        (sent / f"k{n:02d}.json").write_text("{}")
        os.utime(sent / f"k{n:02d}.json", (1000 + n, 1000 + n))  # k00 the oldest
    batch = '{"batch_keys": ["k00", "k99"], "state": "failed"}'
    (tmp_path / "outbox" / "k99.json").write_text(batch)
    (tmp_path / "outbox" / "k99.eml").write_bytes(b"waiting")
    shared = read_files(tmp_path)
    kept = sorted(rel for rel in shared if rel.startswith("outbox/sent/") and rel.endswith(".json"))
    newest = [f"outbox/sent/k{n:02d}.json" for n in range(10, SENT_KEPT + 10)]
    assert kept == ["outbox/sent/k00.json", *newest]
    assert shared["outbox/sent/k00.eml"] == b""  # it was sent: that is what counts
    assert shared["outbox/k99.eml"] == b"waiting"


def test_an_email_refused_for_good_goes_with_the_site_to_other_workers(tmp_path: Path) -> None:
    """outbox/failed/ is shared like the outbox: a worker that files a refused email there
    must not keep it to itself (deploybot outbox on any worker lists it)."""
    from deploybot.serve.fleet.shared import read_files

    failed = tmp_path / "outbox" / "failed"
    failed.mkdir(parents=True)
    (failed / "k1.eml").write_bytes(b"refused")
    (failed / "k1.json").write_text('{"state": "refused"}')
    shared = read_files(tmp_path)
    assert (shared["outbox/failed/k1.eml"], shared["outbox/failed/k1.json"]) == (
        b"refused",
        b'{"state": "refused"}',
    )


def test_a_job_taken_by_a_worker_that_lost_redis_at_once_is_replaced(
    server: RedisServer,
) -> None:
    store = _store(server, lease_ttl=1.0, affinity_timeout=30.0)
    t0 = time.time()
    job = store.trigger("s", _want("a" * 40), now=t0)
    assert job is not None
    _take(store, job)  # popped from the queue; the worker died before marking it started
    assert store.r.hget(f"rq:job:{job}", "status") == b"queued"
    sweeper = Sweeper(store)
    sweeper.queued_jobs(t0 + 0.5)
    assert _queued(store) == []  # not yet: its worker may still be starting it
    sweeper.queued_jobs(t0 + 2)
    [replacement] = _queued(store)
    assert store.acquire("s", _take(store, replacement), "w1/t", "w1").state == "acquired"


@pytest.mark.parametrize("how", ["its heartbeat expired", "it restarted: another instance"])
def test_a_lease_whose_worker_is_down_is_taken_over_at_once(
    server: RedisServer, tmp_path: Path, how: str
) -> None:
    store = _store(server, lease_ttl=600.0)
    store.r.set(keys.alive("w1"), "i1")
    job = store.trigger("s", _want("a" * 40))
    assert job is not None
    token = keys.lease_token("w1", "i1")
    assert store.acquire("s", _take(store, job), token, "w1").state == "acquired"
    shared = SharedState(store.r, "s", token, tmp_path / "state")
    shared.restore()
    assert Sweeper(store).expired_leases() == []  # w1's heartbeat is there: it builds
    if how == "its heartbeat expired":
        store.r.delete(keys.alive("w1"))
    else:
        store.r.set(keys.alive("w1"), "i2")
    assert Sweeper(store).sweep(force=True)
    assert store.r.get(keys.lease("s")) is None  # 600 s before it would have expired
    [expired] = [e for e in lease_log(store.r) if e["event"] == "expired"]
    assert expired["worker"] == "w1"
    assert expired["why"] == (
        "worker w1 is down (no heartbeat for 10 s)"
        if how == "its heartbeat expired"
        else "worker w1 restarted since it took the lease"
    )
    [again] = _queued(store)
    pending = Want.loads(store.r.get(keys.pending("s")))
    assert pending is not None and pending.commit == "a" * 40
    assert store.acquire("s", _take(store, again), "w2/i9/t", "w2").state == "acquired"
    # w1, back from a stall, can neither renew, nor store the shared records, nor release.
    assert not store.renew("s", token)
    (tmp_path / "state" / "notify").mkdir(parents=True)
    (tmp_path / "state" / "notify" / "last-published.json").write_text("{}")
    with pytest.raises(LeaseLostError):
        shared.save("before-push")
    assert not store.release("s", token, "w1", Outcome("published"))
    assert store.holds("s", "w2/i9/t")


def test_a_down_workers_queue_moves_to_the_shared_queue_at_once(server: RedisServer) -> None:
    store = _store(server, affinity_timeout=600.0, lease_ttl=600.0)
    store.r.set(keys.alive("w1"), "i1")
    store.r.hset(keys.WORKERS, "w1", time.time())
    store.r.hset(keys.site("s"), "worker", "w1")
    job = store.trigger("s", _want("a" * 40))
    assert _queued(store, "deploybot@w1") == [job]
    assert Sweeper(store).sweep(force=True)
    assert _queued(store, "deploybot@w1") == [job]  # w1 is up: the build waits for it
    store.r.delete(keys.alive("w1"))
    assert Sweeper(store).sweep(force=True)
    assert _queued(store, "deploybot@w1") == []
    assert _queued(store) == [job]
