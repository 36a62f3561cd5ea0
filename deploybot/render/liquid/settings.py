"""``_config.yml``'s ``liquid:`` settings, with Jekyll's defaults.

Jekyll 4.3 ``lib/jekyll/configuration.rb`` (``DEFAULTS["liquid"]``): ``error_mode: warn``,
``strict_filters: false``, ``strict_variables: false``; a site's ``liquid:`` mapping is
merged over them key by key. ``liquid_renderer.rb`` sets ``Liquid::Template.error_mode``
from ``error_mode.to_sym``; ``renderer.rb`` passes the two ``strict_*`` keys to
``render!``. What each means for a template is in :mod:`.lax`.

Apart from :mod:`.environment` so that reading the settings does not import python-liquid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class ErrorMode(Enum):
    """Ruby Liquid's ``error_mode``: what a tag or ``{{ … }}`` its strict parser refuses
    does."""

    LAX = "lax"
    """Parsed by the lax parser, silently."""
    WARN = "warn"
    """Parsed by the lax parser, with one warning naming the file and line (Jekyll's
    default)."""
    STRICT = "strict"
    """An error: the build stops."""


@dataclass(frozen=True)
class LiquidSettings:
    """The ``liquid:`` keys of ``_config.yml`` (Jekyll's defaults when absent).

    Attributes:
        error_mode: see :class:`ErrorMode`.
        strict_filters: an unknown filter stops the build (else the value passes through).
        strict_variables: an undefined variable or key stops the build (else it is nil).
    """

    error_mode: ErrorMode = ErrorMode.WARN
    strict_filters: bool = False
    strict_variables: bool = False


def liquid_settings(config: Mapping[str, Any]) -> LiquidSettings:
    """Return the ``liquid:`` settings of the parsed ``_config.yml`` ``config``.

    A value that is not a mapping, or a key missing from it, keeps Jekyll's default. An
    ``error_mode`` other than ``lax``, ``warn`` or ``strict`` (``to_sym`` keeps case:
    ``Strict`` is one) is read as ``warn``: Ruby Liquid's ``ParserSwitching`` then reads a
    ``{{ … }}`` as in ``lax`` mode, the same output, but parses a tag with neither parser
    (a site relying on that is broken under Jekyll too), and the warnings name each markup.
    ``strict_*`` are true only for a YAML true (Ruby's truthiness: any value but ``false``
    and ``nil``; a string such as ``"no"`` is true there too).
    """
    raw = config.get("liquid")
    if not isinstance(raw, Mapping):
        return LiquidSettings()
    mode = str(raw.get("error_mode", "warn"))  # Ruby's to_sym: case and spaces count
    return LiquidSettings(
        error_mode=ErrorMode(mode) if mode in {m.value for m in ErrorMode} else ErrorMode.WARN,
        strict_filters=_ruby_true(raw.get("strict_filters", False)),
        strict_variables=_ruby_true(raw.get("strict_variables", False)),
    )


def _ruby_true(value: object) -> bool:
    return value is not None and value is not False
