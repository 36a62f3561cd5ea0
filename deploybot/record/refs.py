"""The record's names that the no-op ``run-once`` reads (:mod:`deploybot.pipeline.noop`), in a
module that imports nothing: the rest of the format is :mod:`deploybot.record.note`'s."""

NOTES_REF = "refs/notes/deploybot"
"""The git notes ref recording which source commit each publish head was built from."""
RENDERER = "renderer"
"""The name :data:`CHANGED_SETTINGS` gives a change of the renderer (deploybot, its bundled
theme or a library it renders with), beside the dotted setting keys."""
