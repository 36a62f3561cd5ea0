"""Names in the emails that come from the environment: the repository's short name, the host."""

from __future__ import annotations

import socket

from deploybot.notify.email import is_host_name


def repo_name_from_url(url: str) -> str:
    """Return the repository's short name: the URL's last path component without ``.git``.

    ``https://gitbox.apache.org/repos/asf/tvm-site.git`` -> ``tvm-site``; also scp-like
    ``git@host:org/site.git`` and local paths. Empty for an empty URL.
    """
    last = url.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    return last.removesuffix(".git")


def default_host() -> str:
    """Return this machine's FQDN (``socket.getfqdn()``), as git-multimail does.

    Falls back to ``socket.gethostname()`` when the FQDN is ``localhost``-ish (git-multimail
    1.6), and to ``localhost`` when neither is a plain host name.
    """
    for name in (socket.getfqdn(), socket.gethostname()):
        if not name.startswith("localhost") and is_host_name(name):
            return name
    return "localhost"
