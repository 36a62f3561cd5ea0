"""``deploybot.toml``: one schema, each key declared once.

:mod:`.schema` declares every table as a frozen dataclass whose fields are its keys, each
declared with :mod:`.options` (type, default, range or choices, check, one-line help);
:mod:`.load` walks them to read a file, resolving paths against the file's folder and
reporting every error of the file at once; :mod:`.checks` and :mod:`.queue` hold the value
rules that the types alone cannot say; :mod:`.reference` writes the example config and the
reference page from the schema. Every error is a
:class:`~deploybot.support.errors.ConfigError` naming the key and the file.
"""
