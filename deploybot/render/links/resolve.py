"""Where a link of a built page points in the published tree, as a web server would serve it.

Pure: strings in, strings out. A link (an ``href``, ``src`` or ``srcset`` URL) of the page at
output path ``page`` becomes a *target*: the URL path it asks the server for, percent-decoded,
relative to the site's root (``baseurl`` stripped), without its leading ``/``, its query or
its fragment, dot segments removed as RFC 3986 §5.2.4 does (``..`` above the root stays at the
root, as browsers and servers do), runs of ``/`` made one. ``""`` is the site's root.

Not the site's (None, not checked): a fragment-only or query-only link, or an empty one (the page
itself); a link with a scheme other than ``http``/``https`` (``mailto:``, ``data:``,
``javascript:``, ``tel:``...); an absolute or protocol-relative URL on another host, or on the
site's host (``url`` in ``_config.yml``) but outside its ``baseurl`` (another site of that host).
A root-relative link (``/about/``) outside ``baseurl`` stays the site's, with a target that
never resolves: served under ``baseurl``, the site does not have it, and this is what a missing
``relative_url`` filter looks like.

A target is served (:func:`candidates`) as GitHub Pages, nginx's ``try_files $uri $uri.html
$uri/index.html`` and Netlify serve it: ``foo/`` (or the root ``""``) by ``foo/index.html``; ``foo``
by the file ``foo``, else ``foo.html``, else ``foo/index.html``. :func:`targets_for` is the
inverse: the targets an output path serves, so a build that adds or removes that path re-checks
exactly the links that can have changed.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

OUTSIDE = "\0outside-baseurl/"
"""The target prefix of a root-relative link outside ``baseurl``: no output path has it, so it
never resolves (a NUL is never in an output path: :mod:`deploybot.git.path_rules`)."""

_SLASHES = re.compile(r"/{2,}")
_WHITESPACE = " \t\n\r\f"  # HTML's "ASCII whitespace", stripped from URL attributes


@dataclass(frozen=True)
class SiteAddress:
    """Where the site is served: ``host`` (``_config.yml``'s ``url``'s ``host[:port]``,
    lowercased; "" when ``url`` is unset) and ``baseurl`` (``/blog``, no trailing ``/``; "" at
    the root)."""

    host: str = ""
    baseurl: str = ""

    @classmethod
    def of(cls, url: str, baseurl: str) -> SiteAddress:
        """From ``_config.yml``'s ``url`` (``https://example.org``) and ``baseurl``."""
        host = urlsplit(url).netloc.lower() if url else ""
        base = "/" + baseurl.strip("/") if baseurl.strip("/") else ""
        return cls(host, base)


def target_of(link: str, page: str, site: SiteAddress, base: str | None = None) -> str | None:
    """The target of ``link`` on the page at output path ``page`` (``2020/01/01/a.html``), or
    None when it is not the site's (see the module docstring). ``base``: the page's ``<base
    href>`` as a target (a folder ending in ``/``), when it has one."""
    relative, found = _rooted(link.strip(_WHITESPACE), site)
    if not relative or found is None:
        return found
    folder = base if base is not None else posixpath.dirname(page) + "/"
    return _clean("/" + folder.lstrip("/") + found)


@functools.lru_cache(maxsize=8192)
def _rooted(link: str, site: SiteAddress) -> tuple[bool, str | None]:
    """``(False, target or None)`` for a ``link`` (stripped) whose target does not depend
    on the page (a root-relative or absolute URL, or none of the site's); ``(True, path)``
    for a relative one: its percent-decoded path. Cached: most links of a site are the
    same few (its navigation, stylesheets, posts) on every page."""
    if not link or link[0] in "#?":
        return False, None
    parts = urlsplit(link)
    path = parts.path
    if parts.scheme or parts.netloc:
        if parts.scheme not in ("", "http", "https") or not site.host:
            return False, None
        if parts.netloc.lower() != site.host:
            return False, None
        path = path or "/"  # https://example.org is its root
        if not _under(path, site.baseurl):
            return False, None  # another site on the same host
    if not path:
        return False, None  # "?q" after a scheme-less, netloc-less split: the page itself
    path = unquote(path, errors="replace")
    if path.startswith("/"):
        if not _under(path, site.baseurl):
            return False, OUTSIDE + _clean(path)
        return False, _clean(path[len(site.baseurl) :])
    return True, path


def _under(path: str, baseurl: str) -> bool:
    """Whether the URL path ``path`` is ``baseurl`` or below it."""
    return not baseurl or path == baseurl or path.startswith(baseurl + "/")


def _clean(path: str) -> str:
    """``path`` (absolute or relative to the root) as a target: dot segments removed (RFC 3986
    §5.2.4, clamped at the root), ``//`` runs made one, no leading ``/``; a trailing ``/``
    (or a last segment ``.`` or ``..``) kept as a folder."""
    path = _SLASHES.sub("/", path)
    folder = path.endswith("/") or path.rsplit("/", 1)[-1] in (".", "..")
    out: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    joined = "/".join(out)
    return joined + "/" if folder and joined else joined


def candidates(target: str) -> tuple[str, ...]:
    """The output paths that serve ``target``, in the order a server tries them (see the
    module docstring): ``foo/`` → ``foo/index.html``; ``foo`` → ``foo``, ``foo.html``,
    ``foo/index.html``; the root ``""`` → ``index.html``."""
    if target == "" or target.endswith("/"):
        return (target + "index.html",)
    return (target, target + ".html", target + "/index.html")


def targets_for(path: str) -> tuple[str, ...]:
    """The targets the output ``path`` can serve: ``t`` is among them exactly when ``path``
    is among ``candidates(t)``. ``a/index.html`` serves ``a/index.html``, ``a/index``,
    ``a/`` and ``a``; ``index.html`` also serves the root ``""``."""
    found = [path]
    if path.endswith(".html"):
        found.append(path[: -len(".html")])
    if path == "index.html":
        found.append("")
    elif path.endswith("/index.html"):
        folder = path[: -len("index.html")]
        found += [folder, folder[:-1]]
    return tuple(dict.fromkeys(found))


def is_page(path: str) -> bool:
    """Whether the output ``path`` is an HTML page whose links are checked (``.html``,
    ``.htm``)."""
    return path.endswith((".html", ".htm"))
