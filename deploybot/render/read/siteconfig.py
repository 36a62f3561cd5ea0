"""Read ``_config.yml`` into :class:`~deploybot.render.model.SiteConfig` (Jekyll's keys).

Keys used: ``title``, ``description``, ``url`` (else Jekyll-Bootstrap's ``production_url``),
``baseurl``, ``author`` (a name or ``{name, email}``), ``permalink``, ``timezone``,
``exclude`` (Jekyll's default excludes added), ``include`` (default ``[.htaccess]``),
``future``, ``time`` (``site.time`` and the future cut-off, read as Jekyll's
``Utils.parse_date`` reads it: :func:`~.dates.front_matter_date`), ``collections``,
``collections_dir``, ``defaults``. Other keys are kept in ``SiteConfig.data`` for templates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from deploybot.render.model import MAX_YAML_SIZE, RenderWarning, SiteConfig
from deploybot.render.read.collections import read_collections
from deploybot.render.read.dates import front_matter_date
from deploybot.render.read.defaults import default_sets
from deploybot.render.read.frontmatter import reader_error
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


def load_config(
    tree: SourceTree, timezone_override: str | None = None, max_yaml_size: int = MAX_YAML_SIZE
) -> SiteConfig:
    """Return the site settings of ``tree`` (defaults when ``_config.yml`` is absent).

    ``timezone_override`` (IANA) wins over the file's ``timezone``; ``UTC`` when neither.
    Raises ``SourceError`` (path, line) for malformed YAML, YAML larger than
    ``max_yaml_size`` with its aliases expanded (:func:`~.yamlload.load_yaml`), a
    non-mapping document, a wrong value type, or an unknown timezone.
    """
    data, text = _read_yaml(tree, max_yaml_size)
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
        for keys, message in [*problems, *more]
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


def _read_yaml(tree: SourceTree, max_yaml_size: int) -> tuple[dict[str, Any], str]:
    """Return ``_config.yml``'s settings and its text (empty when there is none)."""
    try:
        raw = tree.read(CONFIG_PATH)
    except KeyError:
        return {}, ""
    try:
        text = raw.decode("utf-8-sig")
        loaded = load_yaml(text, max_yaml_size)
    except UnicodeDecodeError as exc:
        raise SourceError("not valid UTF-8", CONFIG_PATH) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise SourceError(f"{exc.problem or exc.context}", CONFIG_PATH, line) from exc
    except yaml.reader.ReaderError as exc:  # a control character: YAML 1.1 allows none
        message, line = reader_error(exc, raw.decode("utf-8-sig"))
        raise SourceError(message, CONFIG_PATH, line) from exc
    if loaded is None:
        return {}, text
    if not isinstance(loaded, dict):
        raise SourceError("the site config must be a mapping", CONFIG_PATH, 1)
    return {str(k): v for k, v in loaded.items()}, text


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
