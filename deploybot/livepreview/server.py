"""The preview's HTTP server (aiohttp): the build folder as ``jekyll serve`` serves it.

``GET`` and ``HEAD`` of any path answer from the build folder by Jekyll's mapping
(:mod:`deploybot.livepreview.paths`) with the content type of :data:`CONTENT_TYPES` (else
Python's ``mimetypes``, else ``application/octet-stream``), ``charset=utf-8`` on text (as
Jekyll's servlet adds it), and ``Cache-Control: no-store`` (every answer is the latest
build). HTML gets the live-reload script (:mod:`deploybot.livepreview.inject`), in the response
only. A path that names nothing gets the site's ``404.html`` with status 404, or, without
one, a small page saying so; before any good build, a page saying the build failed (the
script shows why). :data:`~deploybot.livepreview.inject.ENDPOINT` is the live-reload stream
(:mod:`deploybot.livepreview.livereload`).
"""

from __future__ import annotations

import html
import mimetypes
from collections.abc import Callable
from pathlib import Path

from aiohttp import hdrs, web

from deploybot.livepreview import inject, paths
from deploybot.livepreview.livereload import LiveReload

CONTENT_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".css": "text/css",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".xml": "application/xml",
    ".xsl": "application/xml",
    ".rss": "application/rss+xml",
    ".atom": "application/atom+xml",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".pdf": "application/pdf",
    ".wasm": "application/wasm",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
}
"""The content types of the files a site serves, by extension (lower case): the table is
here, not the machine's ``/etc/mime.types``, so a preview answers the same everywhere."""
_TEXTUAL = ("text/", "application/json", "application/xml", "application/javascript")
_TEXTUAL_SUFFIX = ("+xml", "+json")


def content_type(path: Path) -> str:
    """The ``Content-Type`` to serve the file ``path`` with (module docstring)."""
    suffix = path.suffix.lower()
    found = CONTENT_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0]
    if found is None:
        return "application/octet-stream"
    if found.startswith(_TEXTUAL) or found.endswith(_TEXTUAL_SUFFIX):
        return f"{found}; charset=utf-8"
    return found


NO_STORE = {hdrs.CACHE_CONTROL: "no-store"}


class PreviewSite:
    """The answers for one preview: files of ``folder`` under the ``baseurl()`` of the
    latest build (:func:`~deploybot.livepreview.paths.normal_baseurl`'s form), the live-reload
    state ``live``, and ``has_build()``: whether any build succeeded yet."""

    def __init__(
        self,
        folder: Path,
        live: LiveReload,
        baseurl: Callable[[], str],
        has_build: Callable[[], bool],
    ) -> None:
        self.folder = folder
        self.live = live
        self.baseurl = baseurl
        self.has_build = has_build

    def app(self) -> web.Application:
        """The aiohttp application: the live-reload stream, and every other path."""
        app = web.Application()
        app.router.add_get(inject.ENDPOINT, self.live.handle, allow_head=False)
        app.router.add_get("/{tail:.*}", self.page)  # and HEAD
        return app

    async def page(self, request: web.Request) -> web.StreamResponse:
        """Answer ``request`` from the build folder (module docstring)."""
        found = paths.resolve(self.folder, self.baseurl(), request.path)
        if found.kind is paths.Kind.REDIRECT:
            moved = web.HTTPMovedPermanently if found.permanent else web.HTTPFound
            location = found.location + (f"?{request.query_string}" if request.query_string else "")
            raise moved(location, headers=NO_STORE)
        if found.kind is paths.Kind.FILE and found.file is not None:
            return self._file(found.file, 200)
        page = paths.not_found_page(self.folder)
        if page is not None:
            return self._file(page, 404)
        return self._fallback(request.path)

    def _file(self, file: Path, status: int) -> web.StreamResponse:
        kind = content_type(file)
        if inject.is_html(kind):
            try:
                body = file.read_bytes()
            except FileNotFoundError:  # removed by a rebuild since it was resolved
                raise web.HTTPNotFound(headers=NO_STORE) from None
            body = inject.inject(body, self.live.state.generation)
            return web.Response(body=body, status=status, headers={
                hdrs.CONTENT_TYPE: kind, **NO_STORE,
            })  # fmt: skip
        return web.FileResponse(file, status=status, headers={hdrs.CONTENT_TYPE: kind, **NO_STORE})

    def _fallback(self, path: str) -> web.Response:
        """The page for a path that names nothing, or for any path before a good build."""
        if self.has_build():
            title, text = "404 Not Found", f"Nothing is built at {path}."
        else:
            title, text = "No build yet", "The site has not built yet: fix the error and save."
        page = (
            f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>{html.escape(text)}</p></body></html>"
        ).encode()
        body = inject.inject(page, self.live.state.generation)
        headers = {hdrs.CONTENT_TYPE: "text/html; charset=utf-8", **NO_STORE}
        return web.Response(body=body, status=404, headers=headers)
