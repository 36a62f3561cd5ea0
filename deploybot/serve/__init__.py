"""``deploybot serve``: the webhook-triggered daemon, for one site or many.

A forge's push webhook (GitHub, Gitea/Forgejo, GitLab, Bitbucket) wakes it, so a push is
live in seconds; a poller covers pushes whose webhook never came. Each site builds
exactly as ``run-once`` builds it (same state directory, lock, outbox and cache), in a
process of its own. The parts, each readable alone:

- :mod:`.settings`: the ``[daemon]`` table and the sites, from the config files;
- :mod:`.signatures`, :mod:`.payloads`, :mod:`.deliveries`: what a delivery may do;
- :mod:`.app`: the HTTP endpoints (aiohttp);
- :mod:`.scheduler`: the per-site queue (coalescing, one build per site, ``workers``
  sites at once, backoff, outbox retries); :mod:`.runner` and :mod:`.build_process`: the build
  processes; :mod:`.outboxes`: what waits to be sent;
- :mod:`.health`, :mod:`.metrics`: ``/healthz`` and ``/metrics``; :mod:`deploybot.support.logs`: log
  lines; :mod:`.status`: the status page for people (``/``, ``/sites/<name>``);
- :mod:`.service`: start, SIGHUP, stop (:func:`deploybot.serve.service.serve`).

With ``[queue] backend = "redis"`` the queue is the fleet's (:mod:`deploybot.serve.fleet`): the
daemon receives and polls, ``deploybot worker`` processes build.
"""
