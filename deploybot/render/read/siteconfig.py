"""Read ``_config.yml`` into :class:`~deploybot.render.model.SiteConfig` (Jekyll's keys).

Keys used: ``title``, ``description``, ``url`` (else Jekyll-Bootstrap's ``production_url``),
``baseurl``, ``author`` (a name or ``{name, email}``), ``permalink``, ``timezone``,
``exclude`` (Jekyll's default excludes added), ``include`` (default ``[.htaccess]``),
``future``, ``time`` (``site.time`` and the future cut-off, read as Jekyll's
``Utils.parse_date`` reads it: :func:`~.dates.front_matter_date`), ``collections``,
``collections_dir``, ``defaults``. Other keys are kept in ``SiteConfig.data`` for templates.

A gem theme's ``_config.yml`` (:class:`ThemeConfig`) is merged under the site's as Jekyll
4.3.1 merges it (``Site#load_theme_configuration``, ``site.rb``): not at all when the site
sets ``ignore_theme_config: true``; read with the same bounds as the site's and safely
(``Utils.safe_load_yaml_file``: a YAML error stops the build, naming the theme's file); a
document that is no mapping is ignored; the keys of ``Configuration::DEFAULTS``
(:data:`JEKYLL_DEFAULT_KEYS`: ``exclude``, ``plugins``, ``collections``, ``defaults``,
``baseurl``, ``permalink``, ``timezone``...) are dropped from it; then the site's settings
win key by key, two mappings merged deeply and a site value that is null keeping the
theme's (``Utils.deep_merge_hashes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from deploybot.render.model import MAX_YAML_SIZE, RenderWarning, SiteConfig
from deploybot.render.read.collections import read_collections
from deploybot.render.read.dates import front_matter_date
from deploybot.render.read.defaults import default_sets
from deploybot.render.read.frontmatter import reader_error
from deploybot.render.read.rouge_options import option_notes
from deploybot.render.read.source import SourceTree
from deploybot.render.read.yamlload import load_yaml
from deploybot.support.errors import SourceError

CONFIG_PATH = "_config.yml"
DEFAULT_EXCLUDE = (
    ".sass-cache",
    ".jekyll-cache",
    "gemfiles",
    "Gemfile",
    "Gemfile.lock",
    "node_modules",
    "vendor/bundle/",
    "vendor/cache/",
    "vendor/gems/",
    "vendor/ruby/",
)
"""``Configuration::DEFAULT_EXCLUDES``, added to every site's ``exclude``."""
DEFAULT_INCLUDE = (".htaccess",)
"""``include`` when ``_config.yml`` sets none."""
JEKYLL_DEFAULT_KEYS = frozenset(
    {
        "source", "destination", "collections_dir", "cache_dir", "plugins_dir", "layouts_dir",
        "data_dir", "includes_dir", "collections", "safe", "include", "exclude", "keep_files",
        "encoding", "markdown_ext", "strict_front_matter", "show_drafts", "limit_posts",
        "future", "unpublished", "whitelist", "plugins", "markdown", "highlighter", "lsi",
        "excerpt_separator", "incremental", "detach", "port", "host", "baseurl",
        "show_dir_listing", "permalink", "paginate_path", "timezone", "quiet", "verbose",
        "defaults", "liquid", "kramdown",
    }
)  # fmt: skip
"""The keys of Jekyll 4.3.1's ``Configuration::DEFAULTS`` (``configuration.rb``): a theme's
``_config.yml`` cannot set them."""


@dataclass(frozen=True)
class ThemeConfig:
    """A gem theme's ``_config.yml``: its bytes ``raw`` and ``where``, its name in messages
    (``theme minima: _config.yml``)."""

    where: str
    raw: bytes


def load_config(
    tree: SourceTree,
    timezone_override: str | None = None,
    max_yaml_size: int = MAX_YAML_SIZE,
    theme: ThemeConfig | None = None,
    baseurl_override: str | None = None,
    url_override: str | None = None,
    overrides: tuple[tuple[str, bool], ...] = (),
) -> SiteConfig:
    """Return the site settings of ``tree`` (defaults when ``_config.yml`` is absent), over
    the gem theme's ``theme`` when given (the module docstring says how).

    ``timezone_override`` (IANA) wins over the file's ``timezone``; ``UTC`` when neither.
    ``baseurl_override`` (``/preview/feature-x``) wins over the file's ``baseurl``, for the
    templates' ``site.baseurl`` too, as ``jekyll build --baseurl`` does; ``url_override``
    (``https://previews.example.org``) the same for ``url``.
    Raises ``SourceError`` (path, line) for malformed YAML (the site's or the theme's: then
    the path is ``theme.where``), YAML larger than ``max_yaml_size`` with its aliases
    expanded (:func:`~.yamlload.load_yaml`), a site document that is no mapping, a wrong
    value type, or an unknown timezone. ``overrides`` (:attr:`~deploybot.render.model.
    RenderOptions.config_overrides`) are set over the merged settings, as Jekyll merges its
    command-line flags over the configuration.
    """
    data, text = _read_yaml(tree, max_yaml_size)
    if theme is not None and data.get("ignore_theme_config") is not True:
        data = merge_theme_config(_theme_settings(theme, max_yaml_size), data)
    if baseurl_override is not None:
        data = {**data, "baseurl": baseurl_override}
    if url_override is not None:
        data = {**data, "url": url_override}
    if overrides:
        data = {**data, **dict(overrides)}
    zone = timezone_override or _text(data, "timezone") or "UTC"
    _check_zone(zone, from_file=timezone_override is None)
    permalink = _text(data, "permalink") or "date"
    include = _str_list(data, "include") if data.get("include") is not None else DEFAULT_INCLUDE
    exclude = tuple(dict.fromkeys((*_str_list(data, "exclude"), *DEFAULT_EXCLUDE)))
    author = data.get("author")
    author_name = author_email = ""
    if isinstance(author, Mapping):
        author_name = _str(author.get("name"))
        author_email = _str(author.get("email"))
    elif author is not None:
        author_name = _str(author)
    collections, problems = read_collections(data, permalink)
    defaults, more = default_sets(data)
    warnings = tuple(
        RenderWarning(CONFIG_PATH, line_of_keys(text, keys), message)
        for keys, message in [*problems, *more, *option_notes(data)]
    )
    return SiteConfig(
        title=_text(data, "title"),
        description=_text(data, "description"),
        url=(_text(data, "url") or _text(data, "production_url")).rstrip("/"),
        baseurl=_text(data, "baseurl").rstrip("/"),
        author_name=author_name,
        author_email=author_email,
        permalink=permalink,
        timezone=zone,
        exclude=exclude,
        include=include,
        future=bool(data.get("future", False)),
        show_drafts=data.get("show_drafts") is True,
        data=data,
        collections=collections,
        collections_dir=_text(data, "collections_dir").strip("/"),
        defaults=defaults,
        time=_time(data, zone),
        warnings=warnings,
        text=text,
    )


def line_of_keys(text: str, keys: Sequence[str]) -> int | None:
    """Return the 1-based line of ``text`` (``_config.yml``) where the setting reached by
    ``keys`` is written (``("collections", "recipes", "order")``), or ``None`` when a key is
    not found. A best effort on the text, not the YAML: the first key must start a line (a
    plain top-level key), each next one is the first ``key:`` after the one before it (in
    block or flow style)."""
    start = 0
    found: re.Match[str] | None = None
    for depth, key in enumerate(keys):
        before = "^" if depth == 0 else r"(?:^|(?<=[\s{,-]))"
        pattern = re.compile(before + re.escape(key) + r"[ \t]*:", re.MULTILINE)
        found = pattern.search(text, start)
        if found is None:
            return None
        start = found.end()
    return None if found is None else text.count("\n", 0, found.start()) + 1


def _time(data: Mapping[str, Any], zone: str) -> datetime | None:
    """``time`` (``Site#reset``: ``Utils.parse_date(config["time"].to_s)``), or ``None``."""
    value = data.get("time")
    if value is None:
        return None
    try:
        return front_matter_date(value, ZoneInfo(zone))
    except ValueError as exc:
        raise SourceError(f"time: {exc}", CONFIG_PATH) from exc


def named_timezone(
    tree: SourceTree, timezone_override: str | None = None, max_yaml_size: int = MAX_YAML_SIZE
) -> str | None:
    """The IANA zone the site names: ``timezone_override``, else ``_config.yml``'s
    ``timezone``; None when neither does (:func:`load_config` then takes UTC; the daemon's
    status page, the machine's zone). Raises ``SourceError`` as :func:`load_config` does
    for malformed YAML."""
    if timezone_override:
        return timezone_override
    data, _ = _read_yaml(tree, max_yaml_size)
    return _text(data, "timezone") or None


def _read_yaml(tree: SourceTree, max_yaml_size: int) -> tuple[dict[str, Any], str]:
    """Return ``_config.yml``'s settings and its text (empty when there is none)."""
    try:
        raw = tree.read(CONFIG_PATH)
    except KeyError:
        return {}, ""
    loaded, text = _parse_yaml(raw, CONFIG_PATH, max_yaml_size)
    if loaded is None:
        return {}, text
    if not isinstance(loaded, dict):
        raise SourceError("the site config must be a mapping", CONFIG_PATH, 1)
    return {str(k): v for k, v in loaded.items()}, text


def _theme_settings(theme: ThemeConfig, max_yaml_size: int) -> dict[str, Any]:
    """The settings of the theme's ``_config.yml`` Jekyll merges: none when it is no
    mapping, never a key of :data:`JEKYLL_DEFAULT_KEYS`."""
    loaded, _ = _parse_yaml(theme.raw, theme.where, max_yaml_size)
    if not isinstance(loaded, dict):
        return {}
    return {str(k): v for k, v in loaded.items() if str(k) not in JEKYLL_DEFAULT_KEYS}


def merge_theme_config(theme: Mapping[str, Any], site: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``theme``'s settings with ``site``'s over them, as Jekyll's
    ``Utils.deep_merge_hashes(theme_config, config)`` makes them: a key of both takes the
    site's value, but the theme's when the site's is null, and the two merged the same way
    when both are mappings; the theme's keys first, in their order, then the site's others."""
    merged = dict(theme)
    for key, value in site.items():
        if key not in merged:
            merged[key] = value
        elif value is None:
            continue
        elif isinstance(value, Mapping) and isinstance(merged[key], Mapping):
            merged[key] = merge_theme_config(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parse_yaml(raw: bytes, where: str, max_yaml_size: int) -> tuple[Any, str]:
    """Return the YAML document of ``raw`` (a config file, named ``where`` in errors) and
    its text. Raises ``SourceError`` for bytes that are not UTF-8 or YAML that is not
    valid, or too large (:func:`~.yamlload.load_yaml`)."""
    try:
        text = raw.decode("utf-8-sig")
        return load_yaml(text, max_yaml_size), text
    except UnicodeDecodeError as exc:
        raise SourceError("not valid UTF-8", where) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise SourceError(f"{exc.problem or exc.context}", where, line) from exc
    except yaml.reader.ReaderError as exc:  # a control character: YAML 1.1 allows none
        message, line = reader_error(exc, raw.decode("utf-8-sig"))
        raise SourceError(message, where, line) from exc


def _str(value: object) -> str:
    return "" if value is None else str(value)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if isinstance(value, Mapping | list):
        raise SourceError(f"'{key}' must be a string", CONFIG_PATH)
    return _str(value).strip()


def _str_list(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise SourceError(f"'{key}' must be a list of paths", CONFIG_PATH)
    return tuple(str(v) for v in value)


def _check_zone(zone: str, *, from_file: bool) -> None:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        where = CONFIG_PATH if from_file else None
        raise SourceError(f"unknown timezone {zone!r} (expected an IANA name)", where) from exc
