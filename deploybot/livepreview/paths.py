"""Which file of the build folder a request path names, as ``jekyll serve`` answers it.

Jekyll's servlet (``lib/jekyll/commands/serve/servlet.rb``, over WEBrick's file handler)
serves the site under its ``baseurl``, and for a path:

- ``/foo/`` serves ``foo/index.html`` (or ``index.htm``, ``index.xhtml``, ``index.xml``);
- ``/foo`` serves the file ``foo``, else ``foo.html`` (or ``.xhtml``) when it exists (what
  GitHub Pages and Netlify do: ``permalink: /about`` writes ``about.html``);
- ``/foo`` that is a folder redirects to ``/foo/`` (WEBrick's 301);
- anything else is not found: Jekyll serves the site's ``404.html`` with status 404.

:func:`resolve` is that mapping, pure but for looking at the folder. Every path it gives is
inside the build folder: a ``..``, ``.`` or empty segment, a backslash or NUL is refused, and
the file's real path (symlinks resolved) must lie inside the folder's.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path

INDEX_NAMES = ("index.html", "index.htm", "index.xhtml", "index.xml")
"""The files a folder's URL serves, in WEBrick's ``DirectoryIndex`` order (Jekyll's)."""
EXTENSIONS = (".html", ".xhtml")
"""The extensions ``/foo`` tries after ``foo`` itself (Jekyll's servlet ``set_filename``)."""
NOT_FOUND_PAGE = "404.html"
"""The site's own not-found page, at the root of the build (Jekyll serves it for a 404)."""


class Kind(enum.Enum):
    """What a request path resolves to."""

    FILE = "file"
    REDIRECT = "redirect"
    NOT_FOUND = "not found"


@dataclass(frozen=True)
class Resolution:
    """What to answer: ``FILE`` (``file``: the absolute path to send), ``REDIRECT``
    (``location``: the URL path to send the browser to; ``permanent``: 301, else 302) or
    ``NOT_FOUND``."""

    kind: Kind
    file: Path | None = None
    location: str = ""
    permanent: bool = False


NOT_FOUND = Resolution(Kind.NOT_FOUND)


def normal_baseurl(baseurl: str) -> str:
    """``_config.yml``'s ``baseurl`` as a URL prefix: ``""`` for none, else ``/blog``
    (one leading slash, no trailing one), as Jekyll mounts its servlet."""
    stripped = baseurl.strip().strip("/")
    return f"/{stripped}" if stripped else ""


def resolve(root: Path, baseurl: str, url_path: str) -> Resolution:
    """Return what the (percent-decoded) ``url_path`` of a request names in the build
    folder ``root``, served under ``baseurl`` (:func:`normal_baseurl`'s form).

    ``/`` redirects to ``baseurl + "/"`` when there is a baseurl (``jekyll serve`` would
    answer 404; the redirect saves a person a lookup); any other path outside ``baseurl``
    is not found. Never raises for a request's path.
    """
    if baseurl and url_path in ("", "/"):
        return Resolution(Kind.REDIRECT, location=baseurl + "/")
    if baseurl:
        if url_path == baseurl:
            return Resolution(Kind.REDIRECT, location=baseurl + "/")
        if not url_path.startswith(baseurl + "/"):
            return NOT_FOUND
        url_path = url_path[len(baseurl) :]
    parts = _segments(url_path)
    if parts is None:
        return NOT_FOUND
    return _in_folder(root, parts, url_path.endswith("/"), baseurl)


def _segments(url_path: str) -> list[str] | None:
    """The path's segments below the root, or None for one that could leave it (``..``,
    ``.``, an empty segment inside, a backslash, a NUL) or does not start with ``/``."""
    if not url_path.startswith("/"):
        return None
    inner = url_path[1:]
    if inner.endswith("/"):
        inner = inner[:-1]
    if not inner:
        return []
    parts = inner.split("/")
    for part in parts:
        if part in ("", ".", "..") or "\\" in part or "\0" in part:
            return None
    return parts


def _in_folder(root: Path, parts: list[str], slash: bool, baseurl: str) -> Resolution:
    """Jekyll's mapping (module docstring) of the segments ``parts`` in ``root``."""
    target = root.joinpath(*parts)
    if slash or not parts:
        for name in INDEX_NAMES:
            found = _file_inside(root, target / name)
            if found is not None:
                return Resolution(Kind.FILE, found)
        return NOT_FOUND
    found = _file_inside(root, target)
    if found is not None:
        return Resolution(Kind.FILE, found)
    if _inside(root, target) and target.is_dir():
        location = f"{baseurl}/{'/'.join(parts)}/"
        return Resolution(Kind.REDIRECT, location=location, permanent=True)
    for ext in EXTENSIONS:
        found = _file_inside(root, target.with_name(target.name + ext))
        if found is not None:
            return Resolution(Kind.FILE, found)
    return NOT_FOUND


def not_found_page(root: Path) -> Path | None:
    """The site's ``404.html`` in ``root`` (:data:`NOT_FOUND_PAGE`), or None."""
    return _file_inside(root, root / NOT_FOUND_PAGE)


def _file_inside(root: Path, path: Path) -> Path | None:
    """``path`` when it is a regular file whose real path lies inside ``root``'s."""
    if not _inside(root, path):
        return None
    return path if path.is_file() else None


def _inside(root: Path, path: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies inside ``root`` (resolved)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root + os.sep)
