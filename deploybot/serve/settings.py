"""What ``deploybot serve`` serves: the daemon's settings and its sites, read from the files.

The first ``--config`` is the daemon's config: its ``[daemon]`` table sets the daemon
(``listen``, ``poll_interval``...), its ``[state] dir`` holds the daemon's own state (in
``<state.dir>/daemon/``), its ``daemon.sites`` glob (relative to it) names site configs, and
when it has a ``[source]`` it is a site too. Every further ``--config`` is a site. A site's
config is exactly what ``run-once`` reads; of its ``[daemon]`` table only ``name`` (the
site's name in ``/webhook/<name>``; default: the file's stem) and ``secret_env`` (its own
webhook secret; default the daemon's) count, and any other ``[daemon]`` key set there is a
ConfigError, since it would silently do nothing.

Secrets come from the environment only: ``secret_env`` names the variable. A variable that
is named but unset or empty is a ConfigError; a site with no secret at all accepts no
webhook (401) and is built by the poller only, so with ``poll_interval = 0`` too it could
never be built: a ConfigError naming both keys. Every secret is registered with
:mod:`deploybot.support.redact`, so no log line shows one.

A site's file that does not load (any of the errors above) need not stop the others:
with ``partial``, :func:`load_settings` keeps it in :attr:`Settings.broken` and serves the
rest; only when no site loads is it a ConfigError. The daemon's own config (the first
``--config``) must always load.
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deploybot.config.load import config_from_dict, daemon_from_dict, read_toml
from deploybot.config.schema import Config, DaemonConfig, QueueConfig
from deploybot.support.errors import ConfigError
from deploybot.support.redact import register_secret

_SITE_KEYS = ("name", "secret_env")
"""The ``[daemon]`` keys that a site's own config may set."""
_SITE_QUEUE_KEYS = ("name",)
"""The ``[queue]`` keys that a site's own config may set (the queue its builds go to)."""


@dataclass(frozen=True)
class Site:
    """One site the daemon builds: its ``name``, its loaded ``config`` (as ``run-once``
    loads it) and its webhook ``secret`` (None: webhooks refused)."""

    name: str
    config: Config
    secret: str | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        """The site's config file (absolute)."""
        assert self.config.path is not None
        return self.config.path


@dataclass(frozen=True)
class BrokenSite:
    """A site's config file that did not load: its ``path`` (absolute) and ``error`` (the
    ConfigError's line, naming the key and the file)."""

    path: Path
    error: str


@dataclass(frozen=True)
class Settings:
    """Everything ``deploybot serve`` was configured with: the ``daemon`` table of the
    daemon's config file ``path``, the daemon's own ``state_dir`` (absolute) and the
    ``sites`` in a stable order (as listed, then as the glob sorts them); ``queue`` is the
    daemon config's ``[queue]`` table (each site's ``config.queue.name`` is the queue its
    builds go to: its own ``[queue] name``, else the daemon's). ``broken``: the site files
    that did not load (``load_settings(partial=True)`` only), not served."""

    daemon: DaemonConfig
    path: Path
    state_dir: Path
    sites: tuple[Site, ...]
    queue: QueueConfig = field(default_factory=QueueConfig)
    broken: tuple[BrokenSite, ...] = ()
    status_token: str | None = field(default=None, repr=False)
    """The status page's token (``daemon.status_token_env``'s value), or None."""

    def site(self, name: str) -> Site | None:
        """The site called ``name``, or None."""
        return next((s for s in self.sites if s.name == name), None)


def load_settings(
    paths: Sequence[Path],
    environ: Mapping[str, str] | None = None,
    *,
    secrets: bool = True,
    partial: bool = False,
) -> Settings:
    """Read the daemon's config (``paths[0]``) and every site config (see the module doc).

    Args:
        paths: the ``--config`` files, at least one.
        environ: where ``secret_env`` variables are looked up (default ``os.environ``).
        secrets: read the webhook secrets; ``deploybot worker`` never needs them (its
            sites' ``secret`` is then None).
        partial: a site file (not the daemon's) that does not load goes into
            :attr:`Settings.broken` instead of raising, while another site loads.

    Raises:
        ConfigError: the daemon's file or a key in it is wrong (the message names the key
            and the file); a site's file is (without ``partial``; with it, when no site
            loads: the first one's error); no site at all; two sites with one name or one
            state directory; a ``secret_env`` (or ``status_token_env``) variable unset or
            empty; a site with no
            webhook secret while ``poll_interval`` is 0.
    """
    env = os.environ if environ is None else environ
    # Absolute from here on, so every message names a file the same way, at start and
    # after SIGHUP, whatever the working directory and however a file was found.
    paths = [Path(p).absolute() for p in paths]
    first = paths[0]
    raw = read_toml(first)
    own: Config | None = None
    if "source" in raw or set(raw) - {"daemon", "state", "queue"}:
        own = config_from_dict(raw, first)
        daemon, state_dir, queue = own.daemon, own.state.dir, own.queue
    else:
        daemon, state_dir, queue = daemon_from_dict(raw, first)
    files = list(paths[1:])
    if daemon.sites:
        matched = sorted(glob.glob(daemon.sites))
        if not matched:
            raise ConfigError(f"{first}: 'daemon.sites' matches no file: {daemon.sites}")
        found = [Path(p).absolute() for p in matched]
        files += [p for p in found if p.resolve() != first.resolve()]
    if own is None and not files:
        raise ConfigError(f"{first}: no site: set [source], or 'daemon.sites' to site configs")
    secret_env = env if secrets else None
    sites = [_site(own, daemon, first, secret_env)] if own is not None else []
    broken: list[tuple[Path, ConfigError]] = []
    for path in _unique(files, own):
        try:
            sites.append(_site(_site_config(path, queue), daemon, first, secret_env))
        except ConfigError as exc:
            if not partial:
                raise
            broken.append((path, exc))
    if not sites:
        raise broken[0][1]
    _check_distinct(tuple(sites))
    lost = tuple(BrokenSite(path, str(exc)) for path, exc in broken)
    token = None
    if daemon.status_token_env and secrets:
        token = _secret(daemon.status_token_env, "daemon.status_token_env", first, env)
    return Settings(daemon, first.resolve(), state_dir / "daemon", tuple(sites), queue, lost, token)


def _site_config(path: Path, queue: QueueConfig) -> Config:
    """A site's config, refusing ``[daemon]`` and ``[queue]`` keys that only the daemon's
    config sets; its queue is its own ``[queue] name``, else the daemon's ``queue``."""
    raw = read_toml(path)
    config = config_from_dict(raw, path)
    for table, allowed in (("daemon", _SITE_KEYS), ("queue", _SITE_QUEUE_KEYS)):
        for key in raw.get(table, {}):
            if key not in allowed:
                raise ConfigError(
                    f"{path}: '{table}.{key}' is set in a site's config, where it does "
                    "nothing: set it in the daemon's config (the first --config)"
                )
    name = raw.get("queue", {}).get("name", queue.name)
    return dataclasses.replace(config, queue=dataclasses.replace(queue, name=name))


def _unique(files: list[Path], own: Config | None) -> list[Path]:
    """Drop a file listed twice (``--config`` and the glob both naming it), or that is the
    daemon's own site (``own``)."""
    seen: set[Path | None] = {None if own is None else own.path}
    kept = []
    for path in files:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            kept.append(path)
    return kept


def _site(config: Config, daemon: DaemonConfig, first: Path, env: Mapping[str, str] | None) -> Site:
    assert config.path is not None
    name = config.daemon.name or config.path.stem
    if env is None:
        secret = None
    elif config.daemon.secret_env:
        secret = _secret(config.daemon.secret_env, "daemon.secret_env", config.path, env)
    elif daemon.secret_env:
        secret = _secret(daemon.secret_env, "daemon.secret_env", first, env)
    else:
        secret = None
    if env is not None and config.status.api:
        _status_token(config, env)
    if env is not None and secret is None and not daemon.poll_interval:
        where = "" if config.path == first.resolve() else f" (for the site {config.path})"
        raise ConfigError(
            f"{first}: 'daemon.poll_interval' is 0 and 'daemon.secret_env' is unset{where}: "
            f"no webhook is accepted and nothing polls, so site {name!r} would never be "
            "built; set either"
        )
    if not config.daemon.name and not _is_name(name):
        raise ConfigError(
            f"{config.path}: the file name {config.path.stem!r} cannot name the site in "
            "/webhook/<name>: set 'daemon.name'"
        )
    return Site(name, config, secret)


def _is_name(name: str) -> bool:
    from deploybot.config.checks import check_site_name

    try:
        check_site_name(name, "daemon.name", Path("."))
    except ConfigError:
        return False
    return True


def _status_token(config: Config, env: Mapping[str, str]) -> None:
    """A site posting commit statuses needs its token at start, not at its first build
    (:func:`deploybot.notify.deliver.forge_status.read_token`). Raises ConfigError naming
    the key, the variable and the site's file."""
    from deploybot.notify.deliver.forge_status import read_token

    try:
        read_token(config.status, env)
    except ConfigError as exc:
        raise ConfigError(f"{config.path}: {exc}") from None


def _secret(variable: str, key: str, path: Path, env: Mapping[str, str]) -> str:
    value = env.get(variable)
    if not value:
        state = "is empty" if value == "" else "is not set"
        raise ConfigError(f"{path}: '{key}': the environment variable {variable} {state}")
    register_secret(value)
    return value


def _check_distinct(sites: tuple[Site, ...]) -> None:
    """Two sites may share neither a name (their webhook URL) nor a state directory
    (their lock, outbox and mirrors).

    Raises:
        ConfigError: two of ``sites`` do, naming the key and the second one's file.
    """
    by_name: dict[str, Site] = {}
    by_state: dict[Path, Site] = {}
    for site in sites:
        if site.name in by_name:
            other = by_name[site.name].path
            raise ConfigError(
                f"{site.path}: 'daemon.name': the site name {site.name!r} is also {other}'s: "
                "set 'daemon.name' in one of them"
            )
        state = site.config.state.dir
        if state in by_state:
            other = by_state[state].path
            raise ConfigError(
                f"{site.path}: 'state.dir' {state} is also {other}'s: each site needs its own"
            )
        by_name[site.name] = site
        by_state[state] = site
