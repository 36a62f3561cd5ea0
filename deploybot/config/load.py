"""Load and validate ``deploybot.toml`` into the records of :mod:`deploybot.config.schema`.

The loader walks the schema (:func:`deploybot.config.options.declared`): for each key the
file sets, its type, then its range or choices, then its check; for each it does not, its
default. An unknown key is an error suggesting the nearest known key. Then the rules that
join several keys (:func:`_resolve`), each skipped when a key it reads is already wrong.
Every error is one line naming the key and the file, and all the errors of a file are
raised together, one line each, as one :class:`~deploybot.support.errors.ConfigError`.
Paths are relative to the config file. Secrets never live in the file: ``password_env``
names an environment variable.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from deploybot.config import checks
from deploybot.config.checks import author_name
from deploybot.config.options import Declared, declared
from deploybot.config.schema import (
    Config,
    DaemonConfig,
    PreviewConfig,
    PublishConfig,
    QueueConfig,
    RenderConfig,
    SourceConfig,
    StateConfig,
    StatusConfig,
)
from deploybot.config.where import default_config_name
from deploybot.git.locations import config_base, resolve_location
from deploybot.support.errors import ConfigError

GITHUB_PAGES_BRANCH = "gh-pages"
"""The branch GitHub Pages serves by default: ``publish.nojekyll`` is on for it."""

T = TypeVar("T")

_REMOTE_KEYS = ("source.url", "source.token_env", "publish.url", "publish.token_env")


def default_config_path() -> Path:
    """Return ``$DEPLOYBOT_CONFIG`` when set, else ``./deploybot.toml``."""
    return Path(default_config_name())


def load_config(path: Path) -> Config:
    """Read and validate the TOML file at ``path``.

    Returns:
        A :class:`Config` with relative paths resolved against the file's folder and every
        default filled in.

    Raises:
        ConfigError: the file is missing or not TOML (tomllib's message gives the line),
            keys are unknown, values have the wrong type, are out of range, not one of the
            allowed choices or fail their check: every such error of the file, one line
            each, naming the key and the file.
    """
    path = Path(path)
    return config_from_dict(read_toml(path), path)


def load_build_config(path: Path) -> tuple[RenderConfig, Path]:
    """``[render]`` and ``state.dir`` (absolute) of the TOML file at ``path``, for
    ``deploybot build``: a whole deploybot config (loaded and checked as by
    :func:`load_config`), or a file holding only ``[render]`` and ``[state]``.

    Raises:
        ConfigError: as :func:`load_config`; or, without ``[source]``, a table other than
            those two (named, with the file).
    """
    path = Path(path)
    raw = read_toml(path)
    if "source" in raw:
        config = config_from_dict(raw, path)
        return config.render, config.state.dir
    walk = _Walk(path)
    for key in raw:
        if key not in ("render", "state"):
            walk.error(
                f"{path}: '{key}' needs a [source] table: a config for 'deploybot build' "
                "alone holds only [render] and [state]"
            )
    render = walk.table(RenderConfig, raw.get("render", {}), "render.")
    state = walk.table(StateConfig, raw.get("state", {}), "state.")
    walk.raise_errors()
    return render, state.dir


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``; ConfigError (naming the file) when it is missing,
    unreadable or not TOML. A leading UTF-8 byte order mark (an editor's) is skipped, as
    git skips one in its config files; tomllib refuses it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def daemon_from_dict(raw: dict[str, Any], path: Path) -> tuple[DaemonConfig, Path, QueueConfig]:
    """Validate the ``[daemon]``, ``[state]`` and ``[queue]`` tables of a file that has no
    ``[source]`` (a daemon config listing its sites in ``daemon.sites``); return them
    resolved as in :func:`config_from_dict` (``state.dir`` absolute). Raises ConfigError."""
    walk = _Walk(path)
    daemon = walk.table(DaemonConfig, raw.get("daemon", {}), "daemon.")
    state = walk.table(StateConfig, raw.get("state", {}), "state.")
    queue = walk.table(QueueConfig, raw.get("queue", {}), "queue.")
    daemon = _resolve_daemon(daemon, walk)
    _check_queue(queue, walk)
    walk.raise_errors()
    return daemon, state.dir, queue


def config_from_dict(raw: dict[str, Any], path: Path) -> Config:
    """Validate an already-parsed TOML document; see :func:`load_config`."""
    walk = _Walk(path)
    parsed = walk.table(Config, raw, "")
    config = _resolve(parsed, walk)
    walk.raise_errors()
    return config


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


class _Walk:
    """One walk of the schema over one file: the errors found so far (in the order found:
    each key's in the file's order, then the rules'), the keys that failed (so that no rule
    reading one runs, and no error follows from another), and each key's value as the file
    wrote it (before its check rewrote it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = Path(config_base(path))
        self.errors: list[str] = []
        self.failed: set[str] = set()
        self.written: dict[str, Any] = {}

    def error(self, message: str, *keys: str) -> None:
        """Record ``message`` (once) and the ``keys`` that are wrong."""
        if message not in self.errors:
            self.errors.append(message)
        self.failed.update(keys)

    def raise_errors(self) -> None:
        """Raise every error found, one line each, as one ConfigError."""
        if self.errors:
            raise ConfigError("\n".join(self.errors))

    def ok(self, keys: Iterable[str]) -> bool:
        """None of ``keys`` (dotted) is wrong, nor any table holding one."""
        return not any(
            key in self.failed or any(key.startswith(t + ".") for t in self.failed) for key in keys
        )

    def rule(self, keys: Iterable[str], check: Callable[[], T]) -> T | None:
        """Run ``check`` (a rule reading ``keys``) unless one of them is wrong; its
        ConfigError is recorded, and its keys then count as wrong. Returns its result, or
        None when it did not run or failed."""
        keys = tuple(keys)
        if not self.ok(keys):
            return None
        try:
            return check()
        except ConfigError as exc:
            self.error(str(exc), *keys)
            return None

    def table(self, cls: type[T], raw: Any, prefix: str) -> T:
        """The record ``cls`` read from the table ``raw`` (its keys named ``prefix`` + key).
        A key that is wrong (or missing) gets its default (or a blank), so that the walk
        goes on: the record is used only when no error was found."""
        items = declared(cls, prefix)
        if not isinstance(raw, dict):
            self.error(f"{self.path}: [{prefix.rstrip('.') or 'top level'}] must be a table",
                       prefix.rstrip("."))  # fmt: skip
            return _blank(cls)
        by_toml = {item.toml: item for item in items}
        values: dict[str, Any] = {}
        for name, value in raw.items():
            item = by_toml.get(name)
            if item is None:
                self.error(_unknown_key(self.path, prefix + name, name, list(by_toml)))
            elif item.record is not None:
                values[item.name] = self.table(item.record, value, item.dotted + ".")
            else:
                values[item.name] = self.value(item, value)
        for item in items:
            if item.name in values:
                continue
            if item.required:
                self.error(f"{self.path}: missing required key '{item.dotted}'", item.dotted)
                values[item.name] = _blank(item.record) if item.record else item.kind()
            elif item.record is not None:
                values[item.name] = self.table(item.record, {}, item.dotted + ".")
            else:
                values[item.name] = self.value(item, item.default, given=False)
        return cls(**values)

    def value(self, item: Declared, value: Any, given: bool = True) -> Any:
        """One key's value: converted to its type (when the file ``given`` it), within its
        range or choices, a path resolved against the file's folder, and checked; on an
        error, recorded, its default."""
        assert item.option is not None
        option, dotted = item.option, item.dotted
        try:
            if given:
                value = _convert(item.kind, value, self.path, dotted)
                if item.kind is int:
                    _check_range(value, item, self.path)
                if option.choices and value not in option.choices:
                    raise ConfigError(
                        f"{self.path}: '{dotted}' must be one of {', '.join(option.choices)}, "
                        f"not {value!r}"
                    )
            self.written[dotted] = value
            if isinstance(value, Path):
                value = _resolve_path(self.base, value, dotted, self.path)
            if value is not None and option.check is not None:
                checked = option.check(value, dotted, self.path)
                value = value if checked is None else checked
        except ConfigError as exc:
            self.error(str(exc), dotted)
            return item.default if not item.required else item.kind()
        return value


def _blank(cls: type[T]) -> T:
    """A record ``cls`` of defaults, its required keys blank (for a walk that goes on)."""
    values = {
        item.name: _blank(item.record) if item.record else item.kind()
        for item in declared(cls)
        if item.required
    }
    return cls(**values)


def _unknown_key(path: Path, dotted: str, key: str, known: list[str]) -> str:
    near = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean '{near[0]}'?" if near else f"; known keys: {', '.join(sorted(known))}"
    shown = f"'{dotted}'" if dotted.isprintable() else ascii(dotted)
    return f"{path}: unknown key {shown}{hint}"


def _convert(hint: Any, value: Any, path: Path, dotted: str) -> Any:
    """``value`` as the type ``hint`` (str, int, float, bool, Path, tuple[str, ...]) of the
    key ``dotted``; ConfigError when it is not one."""
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{path}: '{dotted}' must be a list of strings")
        return tuple(_convert(typing.get_args(hint)[0], v, path, dotted) for v in value)
    if hint is Path:
        text = _expect(str, value, path, dotted)
        if "\0" in text or not text:
            raise ConfigError(f"{path}: '{dotted}' must be a path (not empty, no NUL character)")
        return Path(text)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > checks.MAX_TIMEOUT:  # float() of a huge int overflows
            return float("inf")
        return float(value)
    return _expect(hint, value, path, dotted)


def _check_range(value: int, item: Declared, path: Path) -> None:
    """An integer key's declared range, inclusive (and 0, for a key where it is no limit)."""
    assert item.option is not None and item.option.range is not None, item.dotted
    (low, high), no_limit = item.option.range, item.option.zero_is_no_limit
    if no_limit and value == 0:
        return
    if not low <= value <= high:
        need = f"0 (no limit) or from {low} to {high}" if no_limit else (
            f"{low} or more and at most {high}"
        )  # fmt: skip
        raise ConfigError(f"{path}: '{item.dotted}' must be {need}, not {value}")


def _expect(kind: type[T], value: Any, path: Path, dotted: str) -> T:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ConfigError(
            f"{path}: '{dotted}' must be {_TYPE_NAMES.get(kind, kind.__name__)}, "
            f"not {type(value).__name__} {value!r}"
        )
    return typing.cast(T, value)


def _resolve(cfg: Config, walk: _Walk) -> Config:
    """The rules joining several keys: the remotes (``publish.url`` and ``token_env``
    defaults, tokens for http(s) only, never onto the source branch), the notify
    defaults and requirements, the daemon's paths, the queue's URL."""
    path, written = walk.path, walk.written
    remotes = walk.rule(_REMOTE_KEYS, lambda: _remotes(cfg, walk.base, path))
    source, publish = remotes or (cfg.source, cfg.publish)
    walk.rule(
        (*_REMOTE_KEYS, "source.branch", "publish.branch"),
        lambda: checks.check_not_onto_source(
            (source.url, source.branch), (publish.url, publish.branch), bool(cfg.publish.url),
            path,
        ),
    )  # fmt: skip
    notify = cfg.notify
    mbox_keys, to_keys = ("notify.transport", "notify.mbox"), ("notify.transport", "notify.to")
    if notify.transport == "mbox" and notify.mbox is None and walk.ok(mbox_keys):
        walk.error(
            f"{path}: 'notify.mbox' is required when notify.transport = \"mbox\"",
            "notify.mbox",
        )
    if notify.transport != "none" and not notify.to and walk.ok(to_keys):
        walk.error(f"{path}: 'notify.to' must list at least one address", "notify.to")
    notify = dataclasses.replace(
        notify,
        repository_url=notify.repository_url or publish.url,
        pusher=notify.pusher or author_name(publish.author),
    )
    daemon = _resolve_daemon(cfg.daemon, walk)
    _check_queue(cfg.queue, walk)
    preview = _resolve_preview(cfg.preview, source, publish, walk) or cfg.preview
    status = _resolve_status(cfg.status, source, publish, daemon.name, walk)
    source_raw = written.get("source.url", "")
    raw_urls = (source_raw, written.get("publish.url") or source_raw)
    return Config(
        source, publish, cfg.render, notify, cfg.state, daemon, path=path.resolve(),
        queue=cfg.queue, base=walk.base, raw_urls=raw_urls, preview=preview, status=status,
    )  # fmt: skip


_PREVIEW_KEYS = ("preview.url", "preview.publish_branch", "preview.token_env")


def _resolve_preview(
    preview: PreviewConfig, source: SourceConfig, publish: PublishConfig, walk: _Walk
) -> PreviewConfig | None:
    """``[preview]`` with ``url`` resolved against the config's folder (default
    ``publish.url``, and then ``token_env`` defaults to ``publish.token_env``), its branch never
    ``publish.branch`` nor ``source.branch`` of the same repository; None when a key it
    joins already failed (the walk has the error). Unchecked while previews are off."""
    joined = (*_REMOTE_KEYS, *_PREVIEW_KEYS, "source.branch", "publish.branch")
    if not preview.branches or not walk.ok(joined):
        return None
    path = walk.path
    if preview.url:
        url, url_key = resolve_location(preview.url, str(walk.base)), "preview.url"
        token = preview.token_env
    else:
        url, url_key, token = publish.url, publish.url_key, preview.token_env or publish.token_env
    resolved = dataclasses.replace(preview, url=url, url_key=url_key, token_env=token)
    target = (url, preview.publish_branch)
    walk.rule(
        _PREVIEW_KEYS,
        lambda: checks.check_not_onto_branch(
            target, (publish.url, publish.branch), ("preview.publish_branch", "publish.branch"),
            path,
        ),
    )  # fmt: skip
    walk.rule(
        _PREVIEW_KEYS,
        lambda: checks.check_not_onto_branch(
            target, (source.url, source.branch), ("preview.publish_branch", "source.branch"),
            path,
        ),
    )  # fmt: skip
    walk.rule(
        _PREVIEW_KEYS,
        lambda: checks.check_token_env(token, url, "preview.token_env", url_key, path),
    )
    return resolved


def _remotes(cfg: Config, base: Path, path: Path) -> tuple[SourceConfig, PublishConfig]:
    """``[source]`` and ``[publish]`` with their URLs resolved against ``base``, the
    publish side defaulting to the source's, and the tokens each side uses (checked)."""
    (source_token, source_key), (publish_token, publish_key) = _tokens(cfg)
    source = dataclasses.replace(
        cfg.source,
        url=resolve_location(cfg.source.url, str(base)),
        token_env=source_token,
        token_key=source_key,
    )
    checks.check_token_env(source.token_env, source.url, source_key, "source.url", path)
    publish_url, url_key = source.url, "source.url"
    if cfg.publish.url:
        publish_url, url_key = resolve_location(cfg.publish.url, str(base)), "publish.url"
    nojekyll = cfg.publish.nojekyll
    if nojekyll is None:
        nojekyll = cfg.publish.branch == GITHUB_PAGES_BRANCH
    publish = dataclasses.replace(
        cfg.publish, url=publish_url, token_env=publish_token, nojekyll=nojekyll,
        url_key=url_key, token_key=publish_key,
    )  # fmt: skip
    checks.check_token_env(publish.token_env, publish.url, publish_key, url_key, path)
    return source, publish


def _tokens(cfg: Config) -> tuple[tuple[str | None, str], tuple[str | None, str]]:
    """``(token_env, the key that gives it)`` of the source and of the publish side.

    Each side's ``token_env`` is its own. With ``publish.url`` unset both sides are one
    repository, so a ``token_env`` set on one side only serves both (a token that may
    push may read too); without any, the key to set is ``source.token_env``."""
    source, publish = cfg.source.token_env, cfg.publish.token_env
    if cfg.publish.url:
        return (source, "source.token_env"), (publish, "publish.token_env")
    source_key = "publish.token_env" if source is None and publish is not None else None
    publish_key = "publish.token_env" if publish is not None else None
    return (
        (source or publish, source_key or "source.token_env"),
        (publish or source, publish_key or "source.token_env"),
    )


def _resolve_daemon(daemon: DaemonConfig, walk: _Walk) -> DaemonConfig:
    """Make a ``unix:`` listen path and the ``sites`` glob absolute (relative to the config
    file's folder), checking the socket path's length and the glob."""
    path = walk.path
    listen = walk.rule(("daemon.listen",), lambda: _listen(daemon.listen, walk.base, path))
    sites = daemon.sites
    if sites and walk.ok(("daemon.sites",)):
        if "\0" in sites or not sites.strip():
            walk.error(
                f"{path}: 'daemon.sites' must be a glob pattern of site configs", "daemon.sites"
            )
        else:
            sites = str(walk.base / os.path.expanduser(sites))
    return dataclasses.replace(daemon, listen=listen or daemon.listen, sites=sites)


def _listen(listen: str, base: Path, path: Path) -> str:
    where = checks.parse_listen(listen)
    if not isinstance(where, Path):
        return listen
    socket_path = _resolve_path(base, where, "daemon.listen", path)
    checks.check_socket_path(socket_path, "daemon.listen", path)
    return checks.UNIX_PREFIX + str(socket_path)


_STATUS_KEYS = tuple(f"status.{f.name}" for f in dataclasses.fields(StatusConfig))


def _resolve_status(
    status: StatusConfig,
    source: SourceConfig,
    publish: PublishConfig,
    site_name: str,
    walk: _Walk,
) -> StatusConfig:
    """``[status]`` with its defaults filled in (:mod:`deploybot.config.forges`):
    the forge's API base, the repository read off ``source.url``, the context
    ``deploybot/<daemon.name or publish.branch>``, the GitHub Pages URL as the target. A
    ``[status]`` setting keys without ``api`` is an error (it would post nothing), as are
    ``api`` without ``token_env``, gitea without ``url``, and a repository the forge cannot
    name."""
    path = walk.path
    if not status.api:
        default = StatusConfig()
        given = [f"'status.{f.name}'" for f in dataclasses.fields(StatusConfig)
                 if getattr(status, f.name) != getattr(default, f.name)]  # fmt: skip
        if given and walk.ok(_STATUS_KEYS):
            walk.error(
                f"{path}: 'status.api' must be set (github, gitea or gitlab): [status] sets "
                f"{', '.join(given)}, and without it no commit status is posted",
                "status.api",
            )
        return status
    from deploybot.config.forges import FORGES, check_repository, pages_url, repository_of

    forge = FORGES[status.api]
    if not status.token_env and walk.ok(("status.token_env",)):
        walk.error(
            f"{path}: 'status.token_env' is required when 'status.api' is set: the environment "
            "variable holding the forge's API token",
            "status.token_env",
        )
    if not (status.url or forge.default_url) and walk.ok(("status.url",)):
        walk.error(
            f"{path}: 'status.url' is required when 'status.api' is \"{forge.api}\": its API "
            f"base, https://HOST{forge.prefix}",
            "status.url",
        )
    repository = status.repository or repository_of(forge, source.url, status.url) or ""
    if walk.ok(("status.repository", "status.url", "source.url")):
        problem = check_repository(forge, repository) if repository else None
        if not repository:
            walk.error(
                f"{path}: 'status.repository' is required when 'status.api' is set: source.url "
                f"names no repository on {forge.title} (a local path); set {_shape(forge)}",
                "status.repository",
            )
        elif problem:
            derived = "" if status.repository else " (read off source.url: set it)"
            walk.error(
                f"{path}: 'status.repository' {problem}, not {repository!r}{derived}",
                "status.repository",
            )
    return dataclasses.replace(
        status,
        url=forge.api_base(status.url),
        repository=repository,
        context=status.context or f"deploybot/{site_name or publish.branch}",
        target_url=status.target_url or pages_url(forge, publish.url, publish.branch),
    )


def _shape(forge: Any) -> str:
    return "the project's id or group/project path" if forge.nested else "owner/name"


def _check_queue(queue: QueueConfig, walk: _Walk) -> None:
    """A Redis backend needs ``queue.url``."""
    if queue.backend == "redis" and not queue.url and walk.ok(("queue.url", "queue.backend")):
        walk.error(
            f"{walk.path}: 'queue.url' is required when queue.backend = \"redis\"", "queue.url"
        )


def _resolve_path(base: Path, value: Path, key: str, path: Path) -> Path:
    """``value`` made absolute against ``base``, symlinks resolved; ConfigError (naming
    ``key``) for what cannot be resolved (a symlink loop, a name too long)."""
    try:
        return (base / value).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's symlink loop
        raise ConfigError(f"{path}: '{key}' {base / value} cannot be resolved: {exc}") from None
