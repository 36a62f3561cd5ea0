"""Where the config file is when the command line names none: one home for the rule.

Light on purpose (``os`` only): the console script's no-op shortcut
(:mod:`deploybot.cli.entry`) and commands that read no config use it without importing the
config loader (TOML and the schema's checks).
"""

from __future__ import annotations

import os

DEFAULT_CONFIG_NAME = "deploybot.toml"
CONFIG_ENV = "DEPLOYBOT_CONFIG"


def default_config_name() -> str:
    """``$DEPLOYBOT_CONFIG`` when set and not empty, else ``deploybot.toml`` (relative to the
    working directory)."""
    return os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG_NAME
