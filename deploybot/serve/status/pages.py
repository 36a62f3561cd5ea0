"""The status page's routes (aiohttp) and their HTML (Jinja2, autoescaped).

- ``GET /[?page=N]``: every site (:data:`FRONT_SITES` a page), its source, publish branch
  and site URL, what the queue does now, its last :data:`FRONT_BUILDS` builds and what
  waits in its outbox;
- ``GET /sites/<name>[?n=N]``: one site, its last ``N`` builds (default
  :data:`SITE_BUILDS`, at most :data:`MAX_BUILDS`; a "more" link doubles it), the queue
  and the outbox;
- ``GET /sites/<name>/builds/<key>``: one build (``key``: its journal id, or its build
  commit) with its log lines and its note;
- ``GET /status.css``: the one stylesheet.

Who may read them: :mod:`.access` (a 404 when off by configuration, a 403 saying why when
off because the daemon listens beyond this machine, a 401 asking for the token). Pages are
plain HTML: no script, no resource from elsewhere (``Content-Security-Policy: default-src
'none'; style-src 'self'``), readable at 390 CSS pixels. Every value that comes from
outside (commit subjects, log lines, paths, errors) goes through Jinja2's autoescape.
Reading a site (:func:`.view.site_view`) is file reads: done in a thread, off the loop.

A build's checks beyond its result (the forge's commit status from the outbox, the broken
links its record counts): :attr:`.view.Build.checks`, shown in a "Checks" column of the
builds (when a build has any) and a "Checks" section of the build page (each of
:data:`CHECKS`, "not recorded" when the build has no result for it).
"""

from __future__ import annotations

import asyncio
import importlib.resources
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from deploybot import __version__
from deploybot.serve.settings import Settings, Site
from deploybot.serve.status import access
from deploybot.serve.status.view import SHORT, Build, SiteView, site_view

if TYPE_CHECKING:
    from deploybot.serve.fleet.server import FleetScheduler
    from deploybot.serve.scheduler import Scheduler

FRONT_BUILDS = 5
"""Builds per site on ``/``."""
FRONT_SITES = 50
"""Sites on one page of ``/`` (``?page=2``... for more)."""
SITE_BUILDS = 20
"""Builds on ``/sites/<name>`` without ``?n=``."""
MAX_BUILDS = 200
"""The most builds a page shows (the journal keeps as many)."""
CHECKS = ("forge status", "broken links")
"""The checks a build page lists, in order."""
_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("deploybot.serve.status", "templates"),
        autoescape=select_autoescape(("html",), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["short"] = lambda value: (value or "")[:SHORT]
    env.filters["when"] = _when
    env.filters["seconds"] = lambda s: "" if s is None else f"{s:.2f} s"
    return env


def _when(value: datetime | None) -> str:
    """An aware time as ISO 8601 with its offset, to the second, a space for the ``T``."""
    return "" if value is None else value.isoformat(sep=" ", timespec="seconds")


class StatusPages:
    """The handlers; ``settings`` returns the current settings (SIGHUP replaces them),
    ``scheduler`` gives ``/healthz``'s document (each site's queue state)."""

    def __init__(
        self, settings: Callable[[], Settings], scheduler: Scheduler | FleetScheduler
    ) -> None:
        self.settings = settings
        self.scheduler = scheduler
        self.env = _environment()
        self.css = importlib.resources.files("deploybot.serve.status").joinpath("style.css")

    def add_routes(self, app: web.Application) -> None:
        """Add the page routes to ``app``."""
        app.router.add_get("/", self.index)
        app.router.add_get("/sites/{site}", self.site)
        app.router.add_get("/sites/{site}/builds/{key}", self.build)
        app.router.add_get("/status.css", self.stylesheet)

    def gate(self) -> access.Gate:
        """The page's :class:`~.access.Gate` under the current settings."""
        return access.gate_of(self.settings())

    def _refusal(self, request: web.Request) -> web.StreamResponse | None:
        """The answer to a request the gate does not admit, or None."""
        gate = self.gate()
        given = access.given_token(request.headers, request.cookies, request.query)
        if access.admits(gate, given):
            if access.QUERY in request.query and gate.mode is access.Mode.TOKEN:
                return self._set_cookie(request, given or "")
            return None
        if gate.mode is access.Mode.OFF:
            status = 403 if self.settings().daemon.status_page else 404
            return web.Response(status=status, text=gate.why + "\n")
        text = "the status page needs its token: ?token=..., or Authorization: Bearer ...\n"
        wrong = "a wrong token\n" if given else text
        return web.Response(
            status=401, text=wrong, headers={"WWW-Authenticate": 'Bearer realm="deploybot"'}
        )

    def _set_cookie(self, request: web.Request, token: str) -> web.StreamResponse:
        """Keep a token given in the query as a cookie, and go to the page without it."""
        query = {k: v for k, v in request.query.items() if k != access.QUERY}
        target = request.path + (f"?{urlencode(query)}" if query else "")
        response = web.HTTPSeeOther(location=target)
        response.set_cookie(
            access.COOKIE, token, httponly=True, samesite="Strict", path="/", max_age=30 * 86400
        )
        return response

    async def index(self, request: web.Request) -> web.StreamResponse:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        settings = self.settings()
        live = self._live()
        page = _number(request.query.get("page"), 1, 1, 10**6)
        shown = settings.sites[(page - 1) * FRONT_SITES : page * FRONT_SITES]
        views = await asyncio.to_thread(
            lambda: [site_view(s, live.get(s.name), FRONT_BUILDS) for s in shown]
        )
        pages = (len(settings.sites) + FRONT_SITES - 1) // FRONT_SITES
        return self._page(
            "index.html", sites=views, broken=settings.broken, page=page, pages=pages,
            total=len(settings.sites),
        )  # fmt: skip

    async def site(self, request: web.Request) -> web.StreamResponse:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        found = self._site(request)
        if isinstance(found, web.Response):
            return found
        limit = _limit(request.query.get("n"))
        live = self._live().get(found.name)
        view = await asyncio.to_thread(site_view, found, live, limit)
        more = min(limit * 2, MAX_BUILDS) if view.more and limit < MAX_BUILDS else None
        return self._page("site.html", site=view, more=more)

    async def build(self, request: web.Request) -> web.StreamResponse:
        refused = self._refusal(request)
        if refused is not None:
            return refused
        found = self._site(request)
        if isinstance(found, web.Response):
            return found
        key = request.match_info["key"]
        view = await asyncio.to_thread(site_view, found, self._live().get(found.name), MAX_BUILDS)
        chosen = _find(view, key)
        if chosen is None:
            return self._page("missing.html", status=404, what=f"no build {key[:64]!r}", site=view)
        return self._page("build.html", site=view, build=chosen)

    async def stylesheet(self, request: web.Request) -> web.StreamResponse:
        if self.gate().mode is access.Mode.OFF:
            return web.Response(status=404, text="not found\n")
        return web.Response(
            text=self.css.read_text(encoding="utf-8"),
            content_type="text/css",
            headers={"Cache-Control": "max-age=300"},
        )

    def _site(self, request: web.Request) -> Site | web.Response:
        name = request.match_info["site"]
        found = self.settings().site(name)
        if found is None:
            return self._page("missing.html", status=404, what=f"no site {name[:64]!r}", site=None)
        return found

    def _live(self) -> Mapping[str, Any]:
        sites: Mapping[str, Any] = self.scheduler.health()[1].get("sites", {})
        return sites

    def _page(self, template: str, *, status: int = 200, **values: Any) -> web.Response:
        fleet = self.settings().queue.backend == "redis"
        html = self.env.get_template(template).render(
            version=__version__, fleet=fleet, checks=CHECKS, **values
        )
        return web.Response(
            status=status,
            text=html,
            content_type="text/html",
            headers={
                "Content-Security-Policy": _CSP,
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-store",
            },
        )


def _limit(value: str | None) -> int:
    """``?n=``: a number of builds from 1 to :data:`MAX_BUILDS`; :data:`SITE_BUILDS` when
    absent or not a number."""
    return _number(value, SITE_BUILDS, 1, MAX_BUILDS)


def _number(value: str | None, default: int, low: int, high: int) -> int:
    """A query parameter's whole number within ``low..high`` (past them: the bound);
    ``default`` when absent or not a number."""
    if value is None or not value.isascii() or not value.isdigit():
        return default
    return max(low, min(int(value[:9]), high))


def _find(view: SiteView, key: str) -> Build | None:
    """The build ``key`` names: its journal id or build commit (or a prefix of 12 or more
    hex digits of it)."""
    for build in view.builds:
        if key == build.key or (
            len(key) >= SHORT and build.build_commit and build.build_commit.startswith(key)
        ):
            return build
    return None
