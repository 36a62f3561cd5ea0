"""``deploybot.toml``: one schema, each key declared once.

:mod:`.schema` declares every section as a frozen dataclass (each field a key: its type,
default and doc); :mod:`.load` reads a file into them, resolving paths against the file's
folder; :mod:`.checks` and :mod:`.queue` hold the value rules that the types alone cannot
say. Every error is a :class:`~deploybot.support.errors.ConfigError` naming the key and the
file.
"""
