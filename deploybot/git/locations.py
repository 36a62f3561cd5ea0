"""Where a config file's relative paths and local remotes point: the one rule for both
:mod:`deploybot.config.load`, which resolves them at load, and :mod:`deploybot.pipeline.noop`, which
resolves them again on the no-op path, before anything heavy is imported.

Light on purpose: ``os`` only (no ``pathlib``, ``re`` or ``typing``), as
:mod:`deploybot.pipeline.noop` is.
"""

from __future__ import annotations

import os


def config_base(config_path: str | os.PathLike[str]) -> str:
    """The folder a config file's relative paths are relative to: the folder holding the
    file as named, absolute with its symlinks resolved. A symlinked config's own folder,
    not its target's: two names of one file are two sites, each with its own repositories
    and state (``a/deploybot.toml -> ../b/deploybot.toml`` resolves against ``a``)."""
    return os.path.realpath(os.path.dirname(os.fspath(config_path)) or ".")


def is_remote_url(url: str) -> bool:
    """True for ``scheme://…`` URLs and scp-like ``[user@]host:path``; False for local
    paths. git's rule (``connect.c``, ``url_is_local_not_ssh``): a colon before any slash
    names a host (a ``scheme://`` URL has one too), so this is that test alone."""
    colon = url.find(":")
    return colon > 0 and "/" not in url[:colon]


def resolve_location(url: str, base: str) -> str:
    """A remote's location as a run uses it: a URL (``file://`` too) as written; a path
    with ``~`` expanded, made absolute against ``base`` (:func:`config_base`) and its
    symlinks resolved (a loop is left as it is: the run then finds no repository there)."""
    if is_remote_url(url):
        return url
    return os.path.realpath(os.path.join(base, os.path.expanduser(url)))
