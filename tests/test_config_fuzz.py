"""Fuzzing the config loader (hypothesis): any TOML value for any key, and random URLs, end
as a loaded Config or as a one-line ConfigError naming the key and the file; never as
another exception (exit 1 with a traceback) or a value a later stage cannot take."""

from __future__ import annotations

import datetime
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploybot.config.load import config_from_dict
from deploybot.config.options import declared, every_key
from deploybot.config.schema import Config
from deploybot.git.locations import is_remote_url
from deploybot.support.errors import ConfigError


def _keys(cls: type, prefix: str = "") -> list[tuple[str, Any]]:
    """Every TOML key of the schema, dotted, with its type hint (tables included)."""
    found: list[tuple[str, Any]] = []
    for item in declared(cls, prefix):
        found.append((item.dotted, item.record or item.kind))
        if item.record is not None:
            found += _keys(item.record, item.dotted + ".")
    return found


RANGES = {item.dotted: item.option.range for item in every_key(Config) if item.option}
KEYS = _keys(Config)
INT_KEYS = [key for key, hint in KEYS if hint is int]

# DEPLOYBOT_FUZZ_EXAMPLES=20000 for a longer search than the suite's.
SETTINGS = settings(
    max_examples=int(os.environ.get("DEPLOYBOT_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_URL_CHARS = "aA0:/@?#[]%.-_~+ \t!$&'()*,;=\x00é"
hosts = st.one_of(
    st.sampled_from(["h", "127.0.0.1", "[::1]", "[::1", "::1]", "", "h.example.org", "é.org"]),
    st.text(_URL_CHARS, max_size=8),
)
urls = st.builds(
    lambda scheme, sep, user, host, port, rest: f"{scheme}{sep}{user}{host}{port}{rest}",
    st.sampled_from(
        ["http", "https", "git", "ssh", "git+ssh", "ssh+git", "file", "ftp", "GIT", "HTTP", "", "x"]
    ),
    st.sampled_from(["://", ":", ":/", "", ":///"]),
    st.one_of(
        st.just(""),
        st.sampled_from(["u@", "u:p@", "git:TOK@", ":@", "@"]),
        st.text(_URL_CHARS, max_size=6).map(lambda t: t + "@"),
    ),
    hosts,
    st.one_of(
        st.just(""),
        st.integers(-10, 10**25).map(lambda n: f":{n}"),
        st.text(_URL_CHARS, max_size=4).map(lambda t: ":" + t),
    ),
    st.one_of(
        st.just(""),
        st.text(_URL_CHARS, max_size=20).map(lambda t: "/" + t),
        st.text(_URL_CHARS, max_size=20),
    ),
)
scalars = st.one_of(
    st.text(max_size=20),
    urls,
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64, 10**20, 10**400]),
    st.floats(),
    st.sampled_from([math.inf, -math.inf, math.nan, 0.0, -0.0, 1e308, 5e-324]),
    st.booleans(),
    st.datetimes(timezones=st.none() | st.just(datetime.UTC)),
    st.dates(),
    st.times(),
    st.sampled_from(["", "none", "mbox", "smtp", "/proc/version", "/dev/null", "/", ".", ".."]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _base() -> dict[str, Any]:
    """A valid config with every dependent key present, so one changed key alone decides."""
    return {
        "source": {"url": "src"},
        "notify": {"to": ["commits@example.org"], "mbox": "commits.mbox"},
        "state": {"dir": "state"},
    }


def _set(raw: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``dotted`` in ``raw``; nothing when a table above it was set to a non-table."""
    *tables, leaf = dotted.split(".")
    for table in tables:
        raw = raw.setdefault(table, {})
        if not isinstance(raw, dict):
            return
    raw[leaf] = value


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "deploybot.toml"


def _load(raw: dict[str, Any], path: Path) -> Config | ConfigError:
    try:
        return config_from_dict(raw, path)
    except ConfigError as exc:
        for line in str(exc).split("\n"):  # one line each error, every one naming the file
            assert line.startswith(f"{path}: "), str(exc)
        return exc


def _check_loaded(cfg: Config) -> None:
    """What the later stages need of a loaded config."""
    for key in INT_KEYS:
        section, *rest = key.split(".")
        value: Any = getattr(cfg, section)
        for name in rest:
            value = getattr(value, name)
        low, high = RANGES[key] or (0, 0)
        assert value == 0 or low <= value <= high, (key, value)
    for url in (cfg.source.url, cfg.publish.url):
        if is_remote_url(url):
            from deploybot.git.repository import _client

            _client(url)  # dulwich takes it (no AssertionError, no ValueError)
    if cfg.notify.webhook.url:
        import requests

        requests.Request("POST", cfg.notify.webhook.url).prepare()


@SETTINGS
@given(key=st.sampled_from([k for k, _ in KEYS]), value=values)
def test_any_value_for_one_key(config_path: Path, key: str, value: Any) -> None:
    raw = _base()
    _set(raw, key, value)
    outcome = _load(raw, config_path)
    if isinstance(outcome, ConfigError):
        named = (f"'{key}'", f"[{key}]", f"{key}.")  # a table: the key, or one inside it
        assert any(name in str(outcome) for name in named), (key, str(outcome))
    else:
        _check_loaded(outcome)


@SETTINGS
@given(changes=st.lists(st.tuples(st.sampled_from([k for k, _ in KEYS]), values), max_size=6))
def test_any_values_for_many_keys(config_path: Path, changes: list[tuple[str, Any]]) -> None:
    raw = _base()
    for key, value in changes:
        _set(raw, key, value)
    outcome = _load(raw, config_path)
    if isinstance(outcome, Config):
        _check_loaded(outcome)


@SETTINGS
@given(
    key=st.sampled_from(
        ["source.url", "publish.url", "notify.webhook.url", "notify.repository_url"]
    ),
    url=urls,
)
def test_any_url(config_path: Path, key: str, url: str) -> None:
    raw = _base()
    _set(raw, key, url)
    outcome = _load(raw, config_path)
    if isinstance(outcome, ConfigError):
        assert f"'{key}'" in str(outcome), str(outcome)
        # A password where a URL parser (or git, for scp-like) reads userinfo: never shown.
        userinfo = re.match(r"^[A-Za-z+]*(?:://|:)?(?:u:(p)|git:(TOK))@", url)
        if userinfo:
            assert f":{userinfo.group(1) or userinfo.group(2)}@" not in str(outcome), outcome
    else:
        _check_loaded(outcome)


@SETTINGS
@given(url=urls, token=st.sampled_from(["SECRET-TOKEN-1", "S3cr3t%2Ftoken"]),
       where=st.sampled_from(["password", "query", "fragment", "scp"]))  # fmt: skip
def test_redact_url_hides_a_token_wherever_it_is(url: str, token: str, where: str) -> None:
    from deploybot.support.redact import redact_text, redact_url

    secret_url = {
        "password": f"https://u:{token}@h/x.git",
        "query": f"https://h/x.git?a=1&access_token={token}",
        "fragment": f"https://h/x.git#{token}",
        "scp": f"deploy:{token}@h:x.git",
    }[where]
    for shown in (redact_url(secret_url), redact_text(f"from {secret_url}: {url}")):
        assert token not in shown, shown
    assert redact_text(redact_url(secret_url)) == redact_url(secret_url)


def test_every_integer_key_has_a_range() -> None:
    assert sorted(INT_KEYS) == sorted(key for key, bounds in RANGES.items() if bounds)
