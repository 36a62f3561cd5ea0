"""A fleet of workers on Redis (RQ): ``[queue] backend = "redis"``.

``deploybot serve`` then only receives webhooks, polls and queues (:mod:`.server`);
``deploybot worker`` processes on any number of machines run the builds (:mod:`.worker`,
:mod:`.job`). The rules that hold across machines live in Redis:

- :mod:`.store`: one pending build per site (coalesced), a per-site lease with a TTL,
  results and backoff, each step one Redis transaction;
- :mod:`.lease`: the lease renewed while a build runs;
- :mod:`.shared`: the notify records and the outbox, shared by every worker, fetched and
  stored at the run's checkpoints (:mod:`deploybot.state.checkpoint`): one email per build;
- :mod:`.sweep`: leases of workers down (no heartbeat) or expired, affinity fallback,
  lost jobs, retries falling due;
- :mod:`.status`: ``deploybot fleet status`` and the numbers of ``/metrics``;
- :mod:`.keys`: the Redis keys and the connection.

Why RQ: it is a small, well-kept job queue on Redis whose model (a job is a Python call,
a worker forks a process per job, ``rq info`` shows queues and workers) is what a build
needs; Celery would bring a broker abstraction, a result backend and its own worker
pool, none of which a build uses, for the same Redis.
"""
