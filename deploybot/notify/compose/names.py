"""Names in the emails that come from the environment: the repository's short name, the host."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

_HOST_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def is_host_name(name: str) -> bool:
    """True for a plain ASCII host name (letters, digits, ``.``, ``-``, ``_``)."""
    return bool(_HOST_RE.match(name))


def repo_name_from_url(url: str) -> str:
    """Return the repository's short name: the URL's last path component without ``.git``.

    ``https://gitbox.apache.org/repos/asf/tvm-site.git`` -> ``tvm-site``; also scp-like
    ``git@host:org/site.git`` and local paths. Empty for an empty URL. A ``scheme://``
    URL's query and fragment are left out (they may hold a token).
    """
    if "://" in url:
        url = urlsplit(url)._replace(query="", fragment="").geturl()
    last = url.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    return last.removesuffix(".git")


def repo_name_for(repository_url: str, repo_path: Path) -> str:
    """Return the ``[repo]`` name: :func:`repo_name_from_url` of ``repository_url``, or of the
    local ``repo_path`` when the URL is empty (or ends in an empty name)."""
    return repo_name_from_url(repository_url) or repo_name_from_url(str(repo_path))


def default_host() -> str:
    """Return this machine's FQDN (``socket.getfqdn()``), as git-multimail does.

    Falls back to ``socket.gethostname()`` when the FQDN is ``localhost``-ish (git-multimail
    1.6), and to ``localhost`` when neither is a plain host name.
    """
    for name in (socket.getfqdn(), socket.gethostname()):
        if not name.startswith("localhost") and is_host_name(name):
            return name
    return "localhost"
