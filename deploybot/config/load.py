"""Load and validate ``deploybot.toml`` into the records of :mod:`deploybot.config.schema`.

Each key's type and default there is its validation rule; the value rules the types cannot
say are :mod:`deploybot.config.checks`' and :mod:`deploybot.config.queue`'s. An unknown key is a
:class:`~deploybot.support.errors.ConfigError` naming the key and the file and suggesting the
nearest known key; so is a value of the wrong type. Paths are relative to the config file.
Secrets never live in the file: ``password_env`` names an environment variable.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from deploybot.config import checks
from deploybot.config.checks import author_name
from deploybot.config.queue import check_queue
from deploybot.config.schema import Config, DaemonConfig, QueueConfig, RenderConfig, StateConfig
from deploybot.git.locations import config_base, resolve_location
from deploybot.support.errors import ConfigError

DEFAULT_CONFIG_NAME = "deploybot.toml"
GITHUB_PAGES_BRANCH = "gh-pages"
"""The branch GitHub Pages serves by default: ``publish.nojekyll`` is on for it."""
CONFIG_ENV = "DEPLOYBOT_CONFIG"


_NOT_KEYS = frozenset({"path", "base", "raw_urls"})
_TOML_NAMES = {"sender": "from"}
_TERA = 10**12
# Every integer key's range, inclusive: past the maximum a value is surely a mistake, and
# it keeps every integer inside what sqlite (the build cache) and C code take (64 bits).
# Bytes, characters and steps stop at 10**12 (far above any memory: "no limit" in effect);
# layout_max_depth at 1,000 (Python's own recursion limit stops deeper calls first).
_INT_RANGES: dict[str, tuple[int, int]] = {
    "source.max_fetch_bytes": (1, _TERA),
    "publish.max_fetch_bytes": (1, _TERA),
    "render.feed_limit": (0, 1_000_000),
    "render.layout_max_steps": (1, _TERA),
    "render.layout_max_output": (1, _TERA),
    "render.layout_max_depth": (1, 1000),
    "render.max_file_bytes": (1, _TERA),
    "render.max_page_bytes": (1, _TERA),
    "render.max_yaml_size": (1, _TERA),
    "render.markdown_max_elements": (1, _TERA),
    "render.max_site_bytes": (1, _TERA),
    "render.liquid_max_loop_iterations": (1, _TERA),
    "render.liquid_max_local_bytes": (1, _TERA),
    "render.liquid_max_depth": (1, 1000),
    "render.jobs": (0, 256),  # 0: one per CPU; more than 256 processes is surely a mistake
    "render.highlight_cache_bytes": (0, _TERA),
    "publish.min_files": (0, _TERA),
    "notify.smtp.port": (1, 65535),
    # git-multimail's limits; 0 also allowed (no limit). The smallest useful values: a cut
    # keeps N-7 (N-6) characters + " [...]".
    "notify.max_line_length": (8, 1_000_000),
    "notify.max_lines": (1, 10_000_000),
    "notify.subject_max_length": (7, 1_000_000),
    "notify.max_commit_emails": (1, 100_000),
    "daemon.poll_interval": (0, 7 * 86400),  # 0 = no polling
    "daemon.max_body_bytes": (1, 10**10),
    "daemon.workers": (1, 1024),
}
_ZERO_IS_NO_LIMIT = frozenset(
    {"notify.max_line_length", "notify.max_lines", "notify.subject_max_length",
     "notify.max_commit_emails"}
)  # fmt: skip
_CHOICES = {
    "notify.transport": ("smtp", "sendmail", "mbox", "stdout", "none"),
    "notify.smtp.security": ("none", "starttls", "ssl"),
    "render.footnotes": ("kramdown", "kramdown1", "mistune", "none"),
    "queue.backend": ("local", "redis"),
}

T = TypeVar("T")


def default_config_path() -> Path:
    """Return ``$DEPLOYBOT_CONFIG`` when set, else ``./deploybot.toml``."""
    return Path(os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG_NAME)


def load_config(path: Path) -> Config:
    """Read and validate the TOML file at ``path``.

    Returns:
        A :class:`Config` with relative paths resolved against the file's folder and every
        default filled in.

    Raises:
        ConfigError: the file is missing or not TOML, a key is unknown, a value has the wrong
            type or is not one of the allowed choices. The message names the key and the file.
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
    for key in raw:
        if key not in ("render", "state"):
            raise ConfigError(
                f"{path}: '{key}' needs a [source] table: a config for 'deploybot build' "
                "alone holds only [render] and [state]"
            )
    render = _build(RenderConfig, raw.get("render", {}), path, prefix="render.")
    state = _build(StateConfig, raw.get("state", {}), path, prefix="state.")
    _check_render(render, path)
    state_dir = _resolve_path(Path(config_base(path)), state.dir, "state.dir", path)
    checks.check_folder_location(state_dir, "state.dir", path)
    return render, state_dir


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
    daemon = _build(DaemonConfig, raw.get("daemon", {}), path, prefix="daemon.")
    state = _build(StateConfig, raw.get("state", {}), path, prefix="state.")
    queue = _build(QueueConfig, raw.get("queue", {}), path, prefix="queue.")
    base = Path(config_base(path))
    state_dir = _resolve_path(base, state.dir, "state.dir", path)
    checks.check_folder_location(state_dir, "state.dir", path)
    check_queue(queue, path)
    return _resolve_daemon(daemon, base, path), state_dir, queue


def config_from_dict(raw: dict[str, Any], path: Path) -> Config:
    """Validate an already-parsed TOML document; see :func:`load_config`."""
    parsed = _build(Config, raw, path, prefix="", skip=_NOT_KEYS)
    return _resolve(parsed, path)


def _build(
    cls: type[T], raw: Any, path: Path, prefix: str, skip: frozenset[str] = frozenset()
) -> T:
    where = prefix.rstrip(".") or "top level"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: [{where}] must be a table")
    hints = typing.get_type_hints(cls)
    fields = {
        f.name: f
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name not in skip and f.metadata.get("key", True)
    }
    toml_to_py = {_TOML_NAMES.get(name, name): name for name in fields}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in toml_to_py:
            raise ConfigError(_unknown_key(path, prefix + key, key, list(toml_to_py)))
        name = toml_to_py[key]
        kwargs[name] = _convert(hints[name], value, path, prefix + key)
    for name, f in fields.items():
        if (
            name not in kwargs
            and f.default is dataclasses.MISSING
            and (f.default_factory is dataclasses.MISSING)
        ):
            raise ConfigError(
                f"{path}: missing required key '{prefix}{_TOML_NAMES.get(name, name)}'"
            )
    return cls(**kwargs)


def _unknown_key(path: Path, dotted: str, key: str, known: list[str]) -> str:
    near = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean '{near[0]}'?" if near else f"; known keys: {', '.join(sorted(known))}"
    shown = f"'{dotted}'" if dotted.isprintable() else ascii(dotted)
    return f"{path}: unknown key {shown}{hint}"


def _convert(hint: Any, value: Any, path: Path, dotted: str) -> Any:
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, path, prefix=dotted + ".")  # type: ignore[arg-type]
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, path, dotted)
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{path}: '{dotted}' must be a list of strings")
        return tuple(_convert(args[0], item, path, dotted) for item in value)
    if hint is Path:
        text = _expect(str, value, path, dotted)
        if "\0" in text or not text:
            raise ConfigError(f"{path}: '{dotted}' must be a path (not empty, no NUL character)")
        return Path(text)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > checks.MAX_TIMEOUT:  # float() of a huge int overflows
            return float("inf")
        return float(value)
    value = _expect(hint, value, path, dotted)
    if hint is int:
        _check_int(value, path, dotted)
    choices = _CHOICES.get(dotted)
    if choices and value not in choices:
        raise ConfigError(f"{path}: '{dotted}' must be one of {', '.join(choices)}, not {value!r}")
    return value


def _check_int(value: int, path: Path, dotted: str) -> None:
    low, high = _INT_RANGES[dotted]
    if dotted in _ZERO_IS_NO_LIMIT and value == 0:
        return
    if not low <= value <= high:
        need = (
            f"0 (no limit) or from {low} to {high}"
            if dotted in _ZERO_IS_NO_LIMIT
            else f"{low} or more and at most {high}"
        )
        raise ConfigError(f"{path}: '{dotted}' must be {need}, not {value}")


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _expect(kind: type[T], value: Any, path: Path, dotted: str) -> T:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ConfigError(
            f"{path}: '{dotted}' must be {_TYPE_NAMES.get(kind, kind.__name__)}, "
            f"not {type(value).__name__} {value!r}"
        )
    return typing.cast(T, value)


def _resolve(cfg: Config, path: Path) -> Config:
    base = Path(config_base(path))
    _check_values(cfg, path)
    source_url = checks.check_git_url(cfg.source.url, "source.url", path)
    (source_token, source_key), (publish_token, publish_key) = _tokens(cfg)
    source = dataclasses.replace(
        cfg.source,
        url=resolve_location(source_url, str(base)),
        token_env=source_token,
        token_key=source_key,
    )
    checks.check_token_env(source.token_env, source.url, source_key, "source.url", path)
    publish_url, url_key = source.url, "source.url"
    if cfg.publish.url:
        publish_url = checks.check_git_url(cfg.publish.url, "publish.url", path)
        publish_url, url_key = resolve_location(publish_url, str(base)), "publish.url"
    nojekyll = cfg.publish.nojekyll
    if nojekyll is None:
        nojekyll = cfg.publish.branch == GITHUB_PAGES_BRANCH
    publish = dataclasses.replace(
        cfg.publish, url=publish_url, token_env=publish_token, nojekyll=nojekyll,
        url_key=url_key, token_key=publish_key,
    )  # fmt: skip
    checks.check_token_env(publish.token_env, publish.url, publish_key, url_key, path)
    checks.check_not_onto_source(
        (source.url, source.branch), (publish.url, publish.branch), bool(cfg.publish.url), path
    )
    checks.check_author(publish.author, "publish.author", path)
    checks.check_timezone(publish.timezone, "publish.timezone", path)
    notify = cfg.notify
    mbox = _resolve_path(base, notify.mbox, "notify.mbox", path) if notify.mbox else None
    if notify.transport == "mbox" and mbox is None:
        raise ConfigError(f"{path}: 'notify.mbox' is required when notify.transport = \"mbox\"")
    if mbox is not None:
        checks.check_file_location(mbox, "notify.mbox", path)
    if notify.transport != "none" and not notify.to:
        raise ConfigError(f"{path}: 'notify.to' must list at least one address")
    checks.check_addresses(notify.to, notify.sender, path)
    notify = dataclasses.replace(
        notify,
        mbox=mbox,
        repository_url=notify.repository_url or publish.url,
        pusher=notify.pusher or author_name(publish.author),
    )
    state = StateConfig(dir=_resolve_path(base, cfg.state.dir, "state.dir", path))
    checks.check_folder_location(state.dir, "state.dir", path)
    daemon = _resolve_daemon(cfg.daemon, base, path)
    check_queue(cfg.queue, path)
    raw_urls = (cfg.source.url, cfg.publish.url or cfg.source.url)
    return Config(
        source, publish, cfg.render, notify, state, daemon, path=path.resolve(), queue=cfg.queue,
        base=base, raw_urls=raw_urls,
    )  # fmt: skip


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


def _resolve_daemon(daemon: DaemonConfig, base: Path, path: Path) -> DaemonConfig:
    """Check ``[daemon]``'s values; make a ``unix:`` listen path and the ``sites`` glob
    absolute (relative to the config file's folder)."""
    checks.check_listen(daemon.listen, "daemon.listen", path)
    checks.check_env_name(daemon.secret_env, "daemon.secret_env", path)
    checks.check_timeout(daemon.stop_timeout, "daemon.stop_timeout", path)
    checks.check_timeout(daemon.read_timeout, "daemon.read_timeout", path)
    if daemon.name:
        checks.check_site_name(daemon.name, "daemon.name", path)
    listen = daemon.listen
    where = checks.parse_listen(listen)
    if isinstance(where, Path):
        socket_path = _resolve_path(base, where, "daemon.listen", path)
        checks.check_socket_path(socket_path, "daemon.listen", path)
        listen = checks.UNIX_PREFIX + str(socket_path)
    sites = daemon.sites
    if sites:
        if "\0" in sites or not sites.strip():
            raise ConfigError(f"{path}: 'daemon.sites' must be a glob pattern of site configs")
        sites = str(base / os.path.expanduser(sites))
    return dataclasses.replace(daemon, listen=listen, sites=sites)


def _check_values(cfg: Config, path: Path) -> None:
    """The per-key rules of :mod:`deploybot.config.checks`, for every key that has one."""
    checks.check_branch(cfg.source.branch, "source.branch", path)
    checks.check_branch(cfg.publish.branch, "publish.branch", path)
    checks.check_timeout(cfg.source.timeout, "source.timeout", path)
    checks.check_timeout(cfg.publish.timeout, "publish.timeout", path)
    checks.check_one_line(cfg.publish.message, "publish.message", path, empty_ok=False)
    checks.check_fraction(cfg.publish.max_removed, "publish.max_removed", path)
    for prefix in cfg.publish.keep:
        checks.check_relative_path(
            prefix, "publish.keep", path, "entries must be paths relative to the branch root"
        )
    _check_render(cfg.render, path)
    notify, smtp, webhook = cfg.notify, cfg.notify.smtp, cfg.notify.webhook
    checks.check_one_line(notify.repository_url, "notify.repository_url", path, url=True)
    checks.check_one_line(notify.pusher, "notify.pusher", path)
    checks.check_host(smtp.host, "notify.smtp.host", path)
    checks.check_timeout(smtp.timeout, "notify.smtp.timeout", path)
    if smtp.username is not None:
        checks.check_one_line(smtp.username, "notify.smtp.username", path)
    checks.check_env_name(smtp.password_env, "notify.smtp.password_env", path)
    if webhook.url:
        checks.check_http_url(webhook.url, "notify.webhook.url", path)
    checks.check_env_name(webhook.url_env, "notify.webhook.url_env", path)
    checks.check_timeout(webhook.timeout, "notify.webhook.timeout", path)


def _check_render(render: RenderConfig, path: Path) -> None:
    """The per-key rules of ``[render]`` (:mod:`deploybot.config.checks`)."""
    if render.theme != "default":
        checks.check_relative_path(
            render.theme, "render.theme", path, 'must be "default" or a folder in the source'
        )
    checks.check_timezone(render.timezone, "render.timezone", path)
    checks.check_timeout(render.highlight_timeout, "render.highlight_timeout", path)


def _resolve_path(base: Path, value: Path, key: str, path: Path) -> Path:
    """``value`` made absolute against ``base``, symlinks resolved; ConfigError (naming
    ``key``) for what cannot be resolved (a symlink loop, a name too long)."""
    try:
        return (base / value).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's symlink loop
        raise ConfigError(f"{path}: '{key}' {base / value} cannot be resolved: {exc}") from None
