"""The live-reload script, and its injection into the HTML the preview serves.

The script is injected into served responses only (:func:`inject`), never into the build
folder, so the files on disk are the build's, byte for byte. It needs no other JavaScript:
an ``EventSource`` (Server-Sent Events, WHATWG HTML § 9.2) on :data:`ENDPOINT`, whose
``build`` events carry ``{"generation": N, "error": TEXT|null}``
(:mod:`deploybot.livepreview.livereload`). The page was served from build ``generation`` G (written
into the script); an event with another generation reloads the page, one with an error shows
it in a banner over the page (the last good build stays below it), and one with neither
hides the banner. The stream is ``window.__deploybotLiveReload`` (its ``readyState`` says
whether the page listens). The server sends the current state on every (re)connection, so a page
opened during a broken build shows the error at once, and one that missed a rebuild while it
was loading reloads.
"""

from __future__ import annotations

import re

ENDPOINT = "/__deploybot/livereload"
"""The Server-Sent Events endpoint the script listens to (not under ``baseurl``: it is the
preview's, not the site's)."""
HTML_TYPES = ("text/html", "application/xhtml+xml")
"""The content types the script goes into."""
BANNER_ID = "deploybot-build-error"
"""The id of the banner element the script shows a build error in (tests look for it)."""

_SCRIPT = """<script id="deploybot-livereload">(function () {
  var served = %(generation)d, banner = null;
  function show(text) {
    if (!banner) {
      banner = document.createElement("div");
      banner.id = "%(banner)s";
      banner.setAttribute("role", "alert");
      banner.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:2147483647;" +
        "max-height:60vh;overflow:auto;margin:0;padding:1em;background:#b00020;color:#fff;" +
        "font:14px/1.4 monospace;white-space:pre-wrap;box-shadow:0 2px 8px rgba(0,0,0,.4)";
      (document.body || document.documentElement).appendChild(banner);
    }
    banner.textContent =
      "deploybot preview: the build failed (showing the last good build)\\n\\n" + text;
  }
  function hide() { if (banner) { banner.remove(); banner = null; } }
  var source = window.__deploybotLiveReload = new EventSource("%(endpoint)s");
  source.addEventListener("build", function (event) {
    var state = JSON.parse(event.data);
    if (state.error) { show(state.error); }
    else if (state.generation !== served) { source.close(); location.reload(); }
    else { hide(); }
  });
})();</script>"""

_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)
_HTML_END = re.compile(rb"</html\s*>", re.IGNORECASE)


def script(generation: int) -> bytes:
    """The ``<script>`` element for a page served from build ``generation`` (ASCII)."""
    text = _SCRIPT % {"generation": generation, "banner": BANNER_ID, "endpoint": ENDPOINT}
    return text.encode("ascii")


def is_html(content_type: str) -> bool:
    """Whether a response of ``content_type`` (a MIME type, parameters allowed) gets the
    script."""
    return content_type.split(";", 1)[0].strip().lower() in HTML_TYPES


def inject(html: bytes, generation: int) -> bytes:
    """Return ``html`` with the live-reload :func:`script` before its last ``</body>``, else
    its last ``</html>``, else at its end (a fragment: browsers run it there too). The
    script is ASCII, so the page's own encoding (UTF-8 or any ASCII superset) is kept."""
    tag = script(generation)
    for pattern in (_BODY_END, _HTML_END):
        ends = [m.start() for m in pattern.finditer(html)]
        if ends:
            return html[: ends[-1]] + tag + html[ends[-1] :]
    return html + tag
