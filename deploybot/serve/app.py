"""The daemon's HTTP endpoints (aiohttp): ``POST /webhook[/<site>]``, ``GET /healthz``,
``GET /metrics``, and the status page for people (``GET /``, ``/sites/<name>``:
:mod:`deploybot.serve.status`).

A webhook delivery is checked in this order, and the first refusal answers:

1. ``/webhook/<site>`` names no site: **404**.
2. A declared ``Content-Length`` over ``max_body_bytes``: **413**, before any byte of the
   body is read; no signature header at all: **401** (nor is the body read). A client
   that sent ``Expect: 100-continue`` is refused before it sends its body.
3. The body, read with the cap counted as it streams in (a sender that keeps going past
   it gets **413** and the connection is closed) and within ``read_timeout`` (else
   **408**).
4. The signature, over the raw bytes, in constant time (:mod:`.signatures`), against the
   site's secret (``/webhook/<site>``) or each site's (``/webhook``): **401** when no
   secret verifies it. The body has not been parsed.
5. The payload (:mod:`.payloads`): not JSON, or a commit id that is not hex, **400**;
   ``ping`` **200**; another event, a repository no site builds (``/webhook``), another
   branch, a tag or a deletion: **200** ``ignored`` with the reason.
6. A delivery id the site has seen before (:mod:`.deliveries`; per site, since GitLab
   sends one id to every hook of an event): no build for that site; **200**
   ``duplicate`` when no site builds.
7. A push to a site's ``source.branch``, or a push or deletion of a branch its
   ``preview.branches`` matches (docs/previews.md): the site's build is queued (it builds
   the previews that changed too), **202** at once.

Every answer is one line of UTF-8 text, logged and counted (``/metrics``): whatever a
payload's strings hold (control characters, NUL, lone surrogates) is escaped, and what it
quotes of them is cut at :data:`ANSWER_LIMIT` characters. Headers come within
``read_timeout`` too: aiohttp's keep-alive timer runs from the connection's start and
closes a connection whose request is not in by then (a client trickling its headers).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from aiohttp import web

from deploybot.serve import payloads
from deploybot.serve.deliveries import DeliveryStore
from deploybot.serve.health import with_broken
from deploybot.serve.metrics import CONTENT_TYPE, Metrics
from deploybot.serve.scheduler import Scheduler
from deploybot.serve.settings import Settings, Site
from deploybot.serve.signatures import Signature, find_signature
from deploybot.serve.status.pages import StatusPages
from deploybot.support.errors import DeploybotError, one_line
from deploybot.support.logs import printable

if TYPE_CHECKING:
    from deploybot.serve.fleet.server import FleetScheduler

log = logging.getLogger("deploybot.daemon")
P = ParamSpec("P")
R = TypeVar("R")

_THREAD_ABOVE = 64 * 1024
"""Bodies larger than this are verified and parsed in a thread, off the event loop."""
ANSWER_LIMIT = 1000
"""Characters an answer's text (and so its log line) keeps of what it quotes: a payload's
ref may be megabytes."""


class _TooLarge(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    """A webhook answer: HTTP ``status``, the ``result`` counted in ``/metrics`` and the
    one-line ``text``; ``close`` ends the connection (a body left unread)."""

    status: int
    result: str
    text: str
    close: bool = False


class Endpoints:
    """The handlers; ``settings`` returns the current settings (SIGHUP replaces them)."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        scheduler: Scheduler | FleetScheduler,
        store: DeliveryStore,
        metrics: Metrics,
    ) -> None:
        self.settings = settings
        self.scheduler = scheduler
        self.store = store
        self.metrics = metrics

    def application(self) -> web.Application:
        """The aiohttp application with every route."""
        app = web.Application()
        for path in ("/webhook", "/webhook/{site}"):
            app.router.add_post(path, self.webhook, expect_handler=self.expect)
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/metrics", self.metrics_text)
        StatusPages(self.settings, self.scheduler).add_routes(app)
        return app

    async def healthz(self, request: web.Request) -> web.Response:
        status, document = with_broken(self.scheduler.health(), self.settings().broken)
        return web.json_response(document, status=status, dumps=lambda d: json.dumps(d, indent=1))

    async def metrics_text(self, request: web.Request) -> web.Response:
        body = self.metrics.render()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def expect(self, request: web.Request) -> None:
        """``Expect: 100-continue`` (RFC 9110 §10.1.1): invite the body only when it would
        be read; else the handler's refusal is the final answer, and the body never comes."""
        wants = request.headers.get("Expect", "").lower() == "100-continue"
        if wants and request.version >= (1, 1) and _early_refusal(request, self.settings()) is None:
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    async def webhook(self, request: web.Request) -> web.Response:
        """``POST /webhook[/<site>]``: see the module doc."""
        answer = await self._decide(request)
        self.metrics.delivery(answer.result)
        delivery = printable(payloads.delivery_id(request.headers) or "(no delivery id)", 120)
        text = printable(answer.text, ANSWER_LIMIT)  # it may quote the payload (a ref)
        level = logging.WARNING if answer.status in (401, 413) else logging.INFO
        log.log(level, "webhook %s: %d %s", delivery, answer.status, text)
        response = web.Response(status=answer.status, text=text + "\n")
        if answer.close:
            response.force_close()
        return response

    async def _decide(self, request: web.Request) -> Answer:
        settings = self.settings()
        early = _early_refusal(request, settings)
        if early is not None:
            return early
        signature = find_signature(request.headers)
        assert signature is not None
        name = request.match_info.get("site")
        sites = [s for s in settings.sites if name in (None, s.name) and s.secret]
        if not sites:
            return Answer(401, "bad_signature", "no webhook secret is set for this site")
        limit = settings.daemon.max_body_bytes
        try:
            body = await _read_body(request, limit, settings.daemon.read_timeout)
        except _TooLarge:
            return Answer(413, "too_large", f"the body is over {limit} bytes", close=True)
        except TimeoutError:
            return Answer(408, "timeout", "the body did not arrive in time", close=True)
        verified = await _off_loop(body, _verified, signature, body, sites)
        if not verified:
            return Answer(401, "bad_signature", f"{signature.header} does not verify")
        return await self._verified_delivery(request, body, verified, by_path=name is not None)

    async def _verified_delivery(
        self, request: web.Request, body: bytes, sites: list[Site], *, by_path: bool
    ) -> Answer:
        try:
            event = await _off_loop(body, payloads.read_event, request.headers, body)
        except payloads.PayloadError as exc:
            return Answer(400, "bad_request", str(exc))
        if event.kind == payloads.PING:
            return Answer(200, "ignored", "pong")
        if event.kind == payloads.OTHER:
            return Answer(200, "ignored", f"event {one_line(event.name)[:60]!r} is not a push")
        if not by_path:
            sites = [s for s in sites if payloads.names_repository(event, s.config.source.url)]
            if not sites:
                return Answer(200, "ignored", "no site builds this repository")
        if self.scheduler.stopping:
            return Answer(503, "ignored", "stopping: try again later")
        return self._route(event, sites, payloads.delivery_id(request.headers))

    def _route(self, event: payloads.Event, sites: Sequence[Site], delivery: str | None) -> Answer:
        """Queue the build of each of ``sites`` the push is for, unless that site has seen
        ``delivery`` before (ids are per site: GitLab sends one to every hook)."""
        queued, reasons, seen = [], [], 0
        for site in sites:
            update, why = payloads.push_to(event, site.config.source.branch)
            source = site.config.source
            preview, branch = payloads.preview_push(event, site.config.preview.branches,
                                                    source.branch)  # fmt: skip
            if update is None and preview is None:
                reasons.append(f"{site.name}: {why}")
                continue
            if delivery is not None and not self._first_time(site.name, delivery):
                seen += 1
                reasons.append(f"{site.name}: delivery seen before")
                continue
            if update is None and preview is not None:
                what = _preview_words(branch, preview)
                if not self.scheduler.trigger(site.name, what, preview.after, preview=True):
                    reasons.append(f"{site.name}: no longer served")
                    continue
                queued.append(f"{site.name} ({what})")
                continue
            assert update is not None
            commit = update.after
            if not self.scheduler.trigger(site.name, f"push {(commit or '?')[:12]}", commit):
                reasons.append(f"{site.name}: no longer served")
                continue
            queued.append(f"{site.name} ({(commit or '?')[:12]})")
        if queued:
            return Answer(202, "accepted", "build queued: " + ", ".join(queued))
        if seen:
            return Answer(200, "duplicate", "delivery seen before: ignored")
        return Answer(200, "ignored", "ignored: " + "; ".join(reasons))

    def _first_time(self, site: str, delivery: str) -> bool:
        """True unless ``site`` has seen ``delivery``; a store that cannot record it (a full
        disk) lets the build go, unrecorded."""
        try:
            return self.store.first_time(site, delivery)
        except DeploybotError as exc:
            log.error("delivery ids: %s", exc)
            return True


def _preview_words(branch: str, update: payloads.RefUpdate) -> str:
    """What a push to a previewed ``branch`` asks, for the answer and the log."""
    if update.deleted:
        return f"preview of {branch}: branch deleted"
    return f"preview of {branch} at {(update.after or '?')[:12]}"


def _early_refusal(request: web.Request, settings: Settings) -> Answer | None:
    """The refusals decided by the request line and headers alone (steps 1-2)."""
    name = request.match_info.get("site")
    if name is not None and settings.site(name) is None:
        return Answer(404, "not_found", f"no site {one_line(name)[:64]!r}", close=True)
    limit = settings.daemon.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        return Answer(413, "too_large", f"the body is over {limit} bytes", close=True)
    if find_signature(request.headers) is None:
        return Answer(401, "bad_signature", "no signature header", close=True)
    return None


async def _read_body(request: web.Request, limit: int, timeout: float) -> bytes:
    """The whole body, at most ``limit`` bytes (``_TooLarge`` as soon as more came), within
    ``timeout`` s (``TimeoutError``)."""
    chunks: list[bytes] = []
    size = 0
    async with asyncio.timeout(timeout):
        while chunk := await request.content.readany():
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
    return b"".join(chunks)


def _verified(signature: Signature, body: bytes, sites: list[Site]) -> list[Site]:
    """The sites whose secret verifies ``signature`` (each distinct secret checked once)."""
    results: dict[str, bool] = {}
    kept = []
    for site in sites:
        assert site.secret is not None
        if site.secret not in results:
            results[site.secret] = signature.verify(body, site.secret)
        if results[site.secret]:
            kept.append(site)
    return kept


async def _off_loop(body: bytes, func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``func(*args)``, in a thread when ``body`` is large (hashing or parsing megabytes
    would hold up every other connection)."""
    if len(body) > _THREAD_ABOVE:
        return await asyncio.to_thread(func, *args, **kwargs)
    return func(*args, **kwargs)
